/**
 * What a user may do in a namespace, as a list of rules: the status of a SelfSubjectRulesReview
 * (`kubectl auth can-i --list`, D-AUTH-12). Upstream answers with the RBAC rules bound to the user;
 * the devcluster's authorization is instead an ordered allow/deny rule list (D-AUTH-5), so this
 * module translates: every allow rule that names the user and applies in the namespace becomes a
 * resource rule (and, when it does not restrict resources, a non-resource rule too); a default
 * decision of `allow` adds the wildcard rules of upstream's allow-all authorizer; a default of
 * `deny` adds the grants every authenticated user has (discovery paths, self reviews). Deny rules
 * cannot be written as such rules: when one applies to the user the list is still returned and
 * `evaluationError` says that denials are not shown. In RBAC mode (D-AUTH-18) the rule list's allow
 * rules are followed by the RBAC rules bound to the user, as upstream lists them, and no default
 * grants are added (the bootstrap roles grant them); a binding whose role is missing makes the
 * answer `incomplete`, with upstream's error text.
 */
import * as authorization from './authorization.js';
import type * as rbac from './rbac.js';
import * as rules from './rules.js';
import * as users from './users.js';

/** `status.resourceRules[*]` (authorization.k8s.io/v1 `ResourceRule`). */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

/** `status.nonResourceRules[*]` (authorization.k8s.io/v1 `NonResourceRule`). */
export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

/** `status` of a SelfSubjectRulesReview. */
export interface RulesReviewStatus {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  evaluationError?: string;
}

/** Reported when deny rules name the user: the listed rules may then allow more than is allowed. */
export const DENIALS_NOT_LISTED = 'deny rules apply to this user and cannot be listed as rules; the listed rules may allow more than the user may do';

const ALL = ['*'];

/**
 * The rules `user` has in `namespace` under `authorizer`'s current rules and default decision.
 *
 * @example
 * authz.setRules([{ effect: 'allow', users: ['alice'], verbs: ['get', 'list'], resources: ['pods'] }]);
 * authz.setDefaultDecision('deny');
 * rulesFor(authz, alice, 'default').resourceRules[0]
 * // { verbs: ['get', 'list'], apiGroups: ['*'], resources: ['pods', 'pods/*'] }
 */
export function rulesFor(authorizer: authorization.Authorizer, user: users.UserInfo, namespace: string): RulesReviewStatus {
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  let denials = false;
  for (const rule of authorizer.rules) {
    if (!rules.appliesToUser(rule, user) || !inNamespace(rule, namespace)) continue;
    if (rule.effect === 'deny') {
      denials = true;
      continue;
    }
    const kinds = rules.ruleKinds(rule);
    if (kinds.resource) resourceRules.push(resourceRuleOf(rule));
    if (kinds.nonResource) nonResourceRules.push({ verbs: [...(rule.verbs ?? ALL)], nonResourceURLs: [...(rule.nonResourceURLs ?? ALL)] });
  }
  if (authorizer.mode === 'rbac' && authorizer.rbac) {
    const bound = authorizer.rbac.rulesFor(user, namespace);
    for (const rule of bound.rules) {
      if (rule.resources?.length) resourceRules.push(boundResourceRule(rule));
      if (rule.nonResourceURLs?.length) nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs] });
    }
    const status: RulesReviewStatus = { resourceRules, nonResourceRules, incomplete: bound.errors.length > 0 };
    const errors = [...bound.errors, ...(denials ? [DENIALS_NOT_LISTED] : [])];
    if (errors.length) status.evaluationError = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
    return status;
  }
  if (authorizer.defaultDecision === 'allow') {
    resourceRules.push({ verbs: ALL, apiGroups: ALL, resources: ALL });
    nonResourceRules.push({ verbs: ALL, nonResourceURLs: ALL });
  } else {
    resourceRules.push(...defaultResourceGrants(user));
    nonResourceRules.push(...defaultNonResourceGrants(user));
  }
  const status: RulesReviewStatus = { resourceRules, nonResourceRules, incomplete: false };
  if (denials) status.evaluationError = DENIALS_NOT_LISTED;
  return status;
}

/** An RBAC rule as a rules-review resource rule (upstream omits empty lists). */
function boundResourceRule(rule: rbac.PolicyRule): ResourceRule {
  const out: ResourceRule = { verbs: [...rule.verbs] };
  if (rule.apiGroups?.length) out.apiGroups = [...rule.apiGroups];
  if (rule.resources?.length) out.resources = [...rule.resources];
  if (rule.resourceNames?.length) out.resourceNames = [...rule.resourceNames];
  return out;
}

/** A rule without `namespaces` (or with `*`) applies everywhere; otherwise in the listed ones. */
function inNamespace(rule: rules.AuthorizationRule, namespace: string): boolean {
  return rule.namespaces === undefined || rule.namespaces.includes('*') || rule.namespaces.includes(namespace);
}

/**
 * An allow rule as an RBAC-style rule. A devcluster rule's `res` covers the resource and its
 * subresources (`res`, `res/*` in RBAC terms); `subresources` narrow it to `res/sub` (`""` is the
 * main resource); `names` become `resourceNames`.
 */
function resourceRuleOf(rule: rules.AuthorizationRule): ResourceRule {
  const out: ResourceRule = { verbs: [...(rule.verbs ?? ALL)], apiGroups: [...(rule.apiGroups ?? ALL)], resources: resourcesOf(rule) };
  if (rule.names && !rule.names.includes('*')) out.resourceNames = [...rule.names];
  return out;
}

function resourcesOf(rule: rules.AuthorizationRule): string[] {
  const bases = rule.resources ?? ALL;
  const subs = rule.subresources;
  const out: string[] = [];
  for (const base of bases) {
    if (base === '*' && subs === undefined) out.push('*');
    else if (base.includes('/')) out.push(base);
    else if (subs === undefined) out.push(base, `${base}/*`);
    else for (const sub of subs) out.push(sub === '' ? base : sub === '*' ? `${base}/*` : `${base}/${sub}`);
  }
  return [...new Set(out)];
}

/** The self reviews of D-AUTH-11, for authenticated users. */
function defaultResourceGrants(user: users.UserInfo): ResourceRule[] {
  if (!users.isAuthenticated(user)) return [];
  return Object.entries(authorization.SELF_REVIEWS).map(([group, resources]) => ({ verbs: ['create'], apiGroups: [group], resources: [...resources] }));
}

/** The discovery paths of D-AUTH-7 (public ones only, for anonymous users). */
function defaultNonResourceGrants(user: users.UserInfo): NonResourceRule[] {
  const paths = users.isAuthenticated(user) ? authorization.DISCOVERY_PATHS : authorization.PUBLIC_INFO_PATHS;
  return [{ verbs: ['get'], nonResourceURLs: [...paths] }];
}
