/**
 * The matching rules of Kubernetes RBAC (D-AUTH-16), as kube-apiserver's RBAC authorizer applies
 * them: whether one `PolicyRule` of a Role or ClusterRole allows a request, whether one subject of
 * a binding names a user, and how an allowing binding is described in the decision's reason.
 *
 * Upstream's rules, which differ from the devcluster's own rule list (`rules.ts`): `resources`
 * entries are `res` (the main resource only), `res/sub` (one subresource), `*` (everything) or
 * a star, a slash and a subresource name (that subresource of any resource) — `res/*` is not a pattern; `resourceNames` restricts
 * by name, and an empty name (create, list) never matches a rule that has it; `nonResourceURLs`
 * entries are exact paths, `*`, or prefixes ending in `*`; `verbs` and `apiGroups` entries are
 * exact or `*`. Nothing in a rule denies.
 */
import * as json from '../json.js';
import type * as rules from './rules.js';
import * as users from './users.js';

/** `rbac.authorization.k8s.io/v1` `PolicyRule`, as stored. */
export interface PolicyRule {
  verbs: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  resourceNames?: readonly string[];
  nonResourceURLs?: readonly string[];
}

/** `rbac.authorization.k8s.io/v1` `Subject`. */
export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

/** A binding as the authorizer reads it: its kind, name, namespace (RoleBindings), role and subjects. */
export interface Binding {
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  name: string;
  /** `""` for ClusterRoleBindings. */
  namespace: string;
  roleRef: { kind: string; name: string };
  subjects: readonly Subject[];
}

const has = (list: readonly string[] | undefined, value: string): boolean => (list ?? []).some((e) => e === '*' || e === value);

/** Whether `rule` allows the request (upstream's `RuleAllows`). */
export function ruleAllows(rule: PolicyRule, attributes: rules.RequestAttributes): boolean {
  if (!has(rule.verbs, attributes.verb)) return false;
  if (attributes.kind === 'nonResource') return (rule.nonResourceURLs ?? []).some((p) => urlMatches(p, attributes.path));
  const subresource = attributes.subresource ?? '';
  const combined = subresource ? `${attributes.resource}/${subresource}` : attributes.resource;
  return (
    has(rule.apiGroups, attributes.apiGroup) &&
    (rule.resources ?? []).some((r) => resourceMatches(r, combined, subresource)) &&
    nameMatches(rule.resourceNames, attributes.name ?? '')
  );
}

function resourceMatches(entry: string, combined: string, subresource: string): boolean {
  if (entry === '*' || entry === combined) return true;
  return subresource !== '' && entry === `*/${subresource}`;
}

function nameMatches(names: readonly string[] | undefined, name: string): boolean {
  if (!names || names.length === 0) return true;
  return names.includes(name);
}

/** `*`, an exact path, or a prefix ending in `*` (`/apis/*` matches `/apis/x` and `/apis/`). */
export function urlMatches(pattern: string, path: string): boolean {
  if (pattern === '*' || pattern === path) return true;
  return pattern.endsWith('*') && path.startsWith(pattern.slice(0, -1));
}

/**
 * Whether `subject` names `user` (upstream's `appliesToUser`): a `User` by name, a `Group` by one
 * of the user's groups, a `ServiceAccount` by the user name `system:serviceaccount:<ns>:<name>`,
 * its namespace defaulting to the binding's.
 */
export function subjectMatches(subject: Subject, user: users.UserInfo, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return namespace !== '' && user.username === users.serviceAccountUsername(namespace, subject.name);
    }
    default:
      return false;
  }
}

/**
 * The user name a subject stands for, the key under which the index files it: `User` and
 * `ServiceAccount` subjects name one user, `Group` subjects one group (`undefined` when the
 * subject can match no one).
 */
export function subjectKey(subject: Subject, bindingNamespace: string): { user: string } | { group: string } | undefined {
  if (subject.kind === 'User') return { user: subject.name };
  if (subject.kind === 'Group') return { group: subject.name };
  if (subject.kind === 'ServiceAccount') {
    const namespace = subject.namespace || bindingNamespace;
    return namespace ? { user: users.serviceAccountUsername(namespace, subject.name) } : undefined;
  }
  return undefined;
}

/**
 * The reason of an allowing decision, worded as upstream: `RBAC: allowed by ClusterRoleBinding
 * "b" of ClusterRole "r" to User "u"`, `… RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"`.
 */
export function allowedBy(binding: Binding, subject: Subject): string {
  const name = binding.kind === 'RoleBinding' ? `${binding.name}/${binding.namespace}` : binding.name;
  return `RBAC: allowed by ${binding.kind} ${quote(name)} of ${binding.roleRef.kind} ${quote(binding.roleRef.name)} to ${describeSubject(subject, binding.namespace)}`;
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') return `${subject.kind} ${quote(`${subject.name}/${subject.namespace || bindingNamespace}`)}`;
  return `${subject.kind} ${quote(subject.name)}`;
}

const quote = (s: string): string => JSON.stringify(s);

// ---------------------------------------------------------------------------------------------
// Reading stored objects

const strings = (value: unknown): string[] | undefined => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined);

/** The `rules` of a stored Role or ClusterRole (malformed entries dropped). */
export function rulesOf(role: json.JsonObject): PolicyRule[] {
  const list = role['rules'];
  if (!Array.isArray(list)) return [];
  return list.filter(json.isObject).map((r) => {
    const rule: PolicyRule = { verbs: strings(r['verbs']) ?? [] };
    for (const field of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const value = strings(r[field]);
      if (value) rule[field] = value;
    }
    return rule;
  });
}

/** A stored ClusterRoleBinding or RoleBinding as the authorizer reads it. */
export function bindingOf(kind: Binding['kind'], object: json.JsonObject): Binding {
  const metadata = json.isObject(object['metadata']) ? object['metadata'] : {};
  const ref = json.isObject(object['roleRef']) ? object['roleRef'] : {};
  const subjects = Array.isArray(object['subjects']) ? object['subjects'].filter(json.isObject) : [];
  return {
    kind,
    name: String(metadata['name'] ?? ''),
    namespace: kind === 'RoleBinding' ? String(metadata['namespace'] ?? '') : '',
    roleRef: { kind: String(ref['kind'] ?? ''), name: String(ref['name'] ?? '') },
    subjects: subjects.map((s) => {
      const subject: Subject = { kind: String(s['kind'] ?? ''), name: String(s['name'] ?? '') };
      if (typeof s['namespace'] === 'string' && s['namespace']) subject.namespace = s['namespace'];
      return subject;
    }),
  };
}
