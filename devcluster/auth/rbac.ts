/**
 * The RBAC authorizer (D-AUTH-16..18): the stored `ClusterRole`, `Role`, `ClusterRoleBinding` and
 * `RoleBinding` objects decide, as kube-apiserver's RBAC authorizer does. It answers "allowed, by
 * which binding" or "no opinion" (RBAC never denies); `authorization.ts` chains it after the
 * devcluster's own rule list and the `system:masters` group, and turns "no opinion" into a 403.
 *
 * Requests must not scan every RBAC object, so the objects are indexed: bindings by the user name
 * or group each subject names (ClusterRoleBindings once, RoleBindings per namespace), roles by
 * name. The index is built on the first request after any write to one of the four kinds (the
 * store's change feed marks it stale) and kept until the next such write, so a test that loads
 * RBAC objects once and then runs an operator pays for one build.
 *
 * ClusterRole aggregation (`aggregationRule.clusterRoleSelectors`) is evaluated here rather than
 * written into the aggregated role by a controller: the role's effective rules are those of the
 * ClusterRoles its selectors match (their own `rules`), while its stored `rules` stay as written.
 */
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as selectors from '../meta/selectors.js';
import * as rbacrules from './rbacrules.js';
import type * as rules from './rules.js';
import type * as users from './users.js';

export type { PolicyRule, Subject, Binding } from './rbacrules.js';

const GROUP = 'rbac.authorization.k8s.io';
/** The storages of the four RBAC kinds (`group/resource`). */
export const STORAGES = Object.freeze({
  clusterRoles: `${GROUP}/clusterroles`,
  roles: `${GROUP}/roles`,
  clusterRoleBindings: `${GROUP}/clusterrolebindings`,
  roleBindings: `${GROUP}/rolebindings`,
});
const WATCHED = new Set<string>(Object.values(STORAGES));

/** Where the objects come from: the cluster's store (its `list` and change feed). */
export interface RbacSource {
  list(storage: string): JsonObject[];
  subscribe(listener: (change: { readonly storage: string }) => void): () => void;
}

/** The RBAC authorizer's answer: allowed (with upstream's reason) or no opinion (with resolution errors as the reason). */
export interface RbacDecision {
  allowed: boolean;
  /** `RBAC: allowed by …`, or `RBAC: <errors>` when bound roles could not be found; empty otherwise. */
  reason: string;
}

/** The rules bound to a user in a namespace (SelfSubjectRulesReview) and the roles that could not be resolved. */
export interface BoundRules {
  rules: rbacrules.PolicyRule[];
  errors: string[];
}

interface Index {
  readonly clusterRoles: Map<string, JsonObject>;
  /** `namespace/name` → Role. */
  readonly roles: Map<string, JsonObject>;
  /** `u:<user>` / `g:<group>` → ClusterRoleBindings naming it. */
  readonly cluster: Map<string, rbacrules.Binding[]>;
  /** namespace → (`u:`/`g:` key → RoleBindings of that namespace naming it). */
  readonly namespaced: Map<string, Map<string, rbacrules.Binding[]>>;
  /** Effective rules of aggregated ClusterRoles, computed on first use. */
  readonly aggregated: Map<string, rbacrules.PolicyRule[]>;
}

/**
 * Decides from the stored RBAC objects.
 *
 * @example
 * const rbac = new RbacAuthorizer(store);
 * rbac.authorize({ kind: 'resource', verb: 'list', apiGroup: '', resource: 'pods', namespace: 'apps' }, saUser);
 * // { allowed: true, reason: 'RBAC: allowed by RoleBinding "read/apps" of Role "pods-reader" to ServiceAccount "op/apps"' }
 */
export class RbacAuthorizer {
  readonly #source: RbacSource;
  #index: Index | undefined;
  #builds = 0;

  constructor(source: RbacSource) {
    this.#source = source;
    source.subscribe((change) => {
      if (WATCHED.has(change.storage)) this.#index = undefined;
    });
  }

  /** How many times the index was built (it is rebuilt only after RBAC writes). */
  get builds(): number {
    return this.#builds;
  }

  /** Whether a role bound to `user` allows the request (upstream's `Authorize`). */
  authorize(attributes: rules.RequestAttributes, user: users.UserInfo): RbacDecision {
    const errors: string[] = [];
    const namespace = attributes.kind === 'resource' ? (attributes.namespace ?? '') : '';
    for (const binding of this.#bindingsFor(user, namespace)) {
      const subject = binding.subjects.find((s) => rbacrules.subjectMatches(s, user, binding.namespace));
      if (!subject) continue;
      const resolved = this.#rulesOfRole(binding);
      if (typeof resolved === 'string') {
        errors.push(resolved);
        continue;
      }
      if (resolved.some((rule) => rbacrules.ruleAllows(rule, attributes))) {
        return { allowed: true, reason: rbacrules.allowedBy(binding, subject) };
      }
    }
    return { allowed: false, reason: errors.length ? `RBAC: ${aggregate(errors)}` : '' };
  }

  /** Every rule bound to `user` that applies in `namespace`: ClusterRoleBindings first, then the namespace's RoleBindings. */
  rulesFor(user: users.UserInfo, namespace: string): BoundRules {
    const out: BoundRules = { rules: [], errors: [] };
    for (const binding of this.#bindingsFor(user, namespace)) {
      if (!binding.subjects.some((s) => rbacrules.subjectMatches(s, user, binding.namespace))) continue;
      const resolved = this.#rulesOfRole(binding);
      if (typeof resolved === 'string') out.errors.push(resolved);
      else out.rules.push(...resolved.map(copyRule));
    }
    return out;
  }

  /** The bindings that may name `user`: ClusterRoleBindings, then (with a namespace) that namespace's RoleBindings, each in name order. */
  #bindingsFor(user: users.UserInfo, namespace: string): rbacrules.Binding[] {
    const index = this.#current();
    const keys = [`u:${user.username}`, ...user.groups.map((g) => `g:${g}`)];
    const out = collect(index.cluster, keys);
    const local = namespace ? index.namespaced.get(namespace) : undefined;
    if (local) out.push(...collect(local, keys));
    return out;
  }

  /** The rules of the binding's role, or the error upstream reports when it cannot be found. */
  #rulesOfRole(binding: rbacrules.Binding): rbacrules.PolicyRule[] | string {
    const index = this.#current();
    const { kind, name } = binding.roleRef;
    if (kind === 'ClusterRole') {
      const role = index.clusterRoles.get(name);
      return role ? this.#effectiveRules(index, name, role) : `clusterrole.${GROUP} ${JSON.stringify(name)} not found`;
    }
    if (kind === 'Role' && binding.kind === 'RoleBinding') {
      const role = index.roles.get(`${binding.namespace}/${name}`);
      return role ? rbacrules.rulesOf(role) : `role.${GROUP} ${JSON.stringify(name)} not found`;
    }
    return `unsupported role reference kind: ${JSON.stringify(kind)}`;
  }

  #effectiveRules(index: Index, name: string, role: JsonObject): rbacrules.PolicyRule[] {
    const aggregation = role['aggregationRule'];
    if (!json.isObject(aggregation) || !Array.isArray(aggregation['clusterRoleSelectors'])) return rbacrules.rulesOf(role);
    const cached = index.aggregated.get(name);
    if (cached) return cached;
    const matchers = aggregation['clusterRoleSelectors'].flatMap((s) => {
      try {
        return [selectors.labelSelectorFromObject(s)];
      } catch {
        return [];
      }
    });
    const seen = new Set<string>();
    const collected: rbacrules.PolicyRule[] = [];
    for (const [otherName, other] of index.clusterRoles) {
      if (otherName === name) continue;
      const labels = labelsOf(other);
      if (!matchers.some((m) => selectors.matchesLabels(m, labels))) continue;
      for (const rule of rbacrules.rulesOf(other)) {
        const key = JSON.stringify(rule);
        if (seen.has(key)) continue;
        seen.add(key);
        collected.push(rule);
      }
    }
    index.aggregated.set(name, collected);
    return collected;
  }

  #current(): Index {
    if (!this.#index) {
      this.#index = build(this.#source);
      this.#builds += 1;
    }
    return this.#index;
  }
}

function build(source: RbacSource): Index {
  const index: Index = { clusterRoles: new Map(), roles: new Map(), cluster: new Map(), namespaced: new Map(), aggregated: new Map() };
  for (const role of source.list(STORAGES.clusterRoles)) index.clusterRoles.set(nameOf(role), role);
  for (const role of source.list(STORAGES.roles)) index.roles.set(`${namespaceOf(role)}/${nameOf(role)}`, role);
  for (const object of source.list(STORAGES.clusterRoleBindings)) file(index.cluster, rbacrules.bindingOf('ClusterRoleBinding', object));
  for (const object of source.list(STORAGES.roleBindings)) {
    const binding = rbacrules.bindingOf('RoleBinding', object);
    let local = index.namespaced.get(binding.namespace);
    if (!local) {
      local = new Map();
      index.namespaced.set(binding.namespace, local);
    }
    file(local, binding);
  }
  return index;
}

/** Files a binding under the key of each of its subjects (once per key). */
function file(map: Map<string, rbacrules.Binding[]>, binding: rbacrules.Binding): void {
  const keys = new Set<string>();
  for (const subject of binding.subjects) {
    const key = rbacrules.subjectKey(subject, binding.namespace);
    if (key) keys.add('user' in key ? `u:${key.user}` : `g:${key.group}`);
  }
  for (const key of keys) {
    const list = map.get(key);
    if (list) list.push(binding);
    else map.set(key, [binding]);
  }
}

/** The bindings filed under any of `keys`, each once, in name order (the store lists by key). */
function collect(map: Map<string, rbacrules.Binding[]>, keys: readonly string[]): rbacrules.Binding[] {
  const found = new Set<rbacrules.Binding>();
  for (const key of keys) for (const binding of map.get(key) ?? []) found.add(binding);
  return [...found].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function copyRule(rule: rbacrules.PolicyRule): rbacrules.PolicyRule {
  const out: rbacrules.PolicyRule = { verbs: [...rule.verbs] };
  for (const field of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
    const value = rule[field];
    if (value) out[field] = [...value];
  }
  return out;
}

/** Upstream's aggregate error text: one error as it is, several as `[a, b]`. */
function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

function metadataOf(object: JsonObject): JsonObject {
  return json.isObject(object['metadata']) ? object['metadata'] : {};
}
const nameOf = (object: JsonObject): string => String(metadataOf(object)['name'] ?? '');
const namespaceOf = (object: JsonObject): string => String(metadataOf(object)['namespace'] ?? '');

function labelsOf(object: JsonObject): Record<string, string> {
  const labels = metadataOf(object)['labels'];
  if (!json.isObject(labels)) return {};
  return Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
