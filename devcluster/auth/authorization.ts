/**
 * Authorization (D-AUTH-5..8, D-AUTH-16): decides whether a user may perform a request, words the
 * 403 that a refusal becomes, and evaluates the spec of access reviews (answered in `reviews.ts`).
 *
 * The `Authorizer` has two modes. In `"rules"` mode (the default) it holds an ordered rule list
 * (`rules.ts`) that tests replace at run time: the first matching rule decides; when none
 * matches, the discovery defaults of D-AUTH-7 apply to non-resource reads, authenticated users may
 * ask about themselves (the self reviews, D-AUTH-11), and everything else gets `defaultDecision`.
 * In `"rbac"` mode it is a chain, as kube-apiserver chains its authorizers: the rule list first (a
 * matching rule decides, so tests can still inject a denial or a grant), then the `system:masters`
 * group (always allowed, as upstream's privileged-group authorizer), then the stored RBAC objects
 * (`rbac.ts`); what none of them allows is denied, and `defaultDecision` is not consulted.
 *
 * The request pipeline builds the attributes, calls `authorize` after authentication
 * (`authentication.ts`), and throws `forbiddenError(…)` on a refusal; the admin of `auth: "none"`
 * is subject to rules like anyone else (nothing is forbidden unless rules say so).
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as statuses from '../server/statuses.js';
import type * as rbac from './rbac.js';
import * as rules from './rules.js';
import * as users from './users.js';
import * as json from '../json.js';

export type { AuthorizationRule, RequestAttributes, ResourceAttributes, NonResourceAttributes } from './rules.js';

export type Effect = 'allow' | 'deny';

/** What decides: the devcluster's rule list alone, or the rule list chained with RBAC (D-AUTH-16). */
export type AuthorizationMode = 'rules' | 'rbac';

/** The outcome of `Authorizer.authorize`. */
export interface Decision {
  allowed: boolean;
  /** The deciding rule's `reason`, when it has one. */
  reason?: string;
  /**
   * What decided: a rule (with its index), the discovery defaults, the self-review grant, or
   * `defaultDecision`; in RBAC mode also the `system:masters` group (`privileged`) or RBAC.
   */
  source: 'rule' | 'discovery' | 'self-review' | 'default' | 'privileged' | 'rbac';
  ruleIndex?: number;
}

export interface AuthorizerOptions {
  /** Ordered rules; validated and copied. Default: none. */
  rules?: readonly rules.AuthorizationRule[];
  /** Decision when no rule matches (rule mode only). Default `"allow"`. */
  defaultDecision?: Effect;
  /** Default `"rules"`; `"rbac"` needs `rbac`. */
  mode?: AuthorizationMode;
  /** The RBAC authorizer of `"rbac"` mode. */
  rbac?: rbac.RbacAuthorizer;
}

/** Non-resource paths that authenticated users may `get` unless a rule says otherwise (D-AUTH-7). */
export const DISCOVERY_PATHS: readonly string[] = Object.freeze([
  '/version',
  '/version/',
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/openapi',
  '/openapi/*',
  '/healthz',
  '/livez',
  '/readyz',
]);

/**
 * The subset of `DISCOVERY_PATHS` that unauthenticated (anonymous) users may also `get`, as
 * upstream's `system:public-info-viewer` role grants.
 */
export const PUBLIC_INFO_PATHS: readonly string[] = Object.freeze(['/version', '/version/', '/healthz', '/livez', '/readyz']);

/**
 * The reviews about oneself that authenticated users may create unless a rule says otherwise
 * (D-AUTH-11), as upstream's `system:basic-user` role grants: group → resources.
 */
export const SELF_REVIEWS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'authorization.k8s.io': Object.freeze(['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
  'authentication.k8s.io': Object.freeze(['selfsubjectreviews']),
});

/**
 * Decides requests from a replaceable rule list (D-AUTH-5).
 *
 * @example
 * const authz = new authorization.Authorizer({ defaultDecision: 'allow' });
 * authz.setRules([{ effect: 'deny', users: ['alice'], verbs: ['delete'], resources: ['widgets'] }]);
 * authz.authorize({ kind: 'resource', verb: 'delete', apiGroup: 'example.com', resource: 'widgets',
 *                   namespace: 'default', name: 'w1' }, alice); // { allowed: false, source: 'rule', ruleIndex: 0 }
 */
export class Authorizer {
  #rules: readonly rules.AuthorizationRule[];
  #defaultDecision: Effect;
  readonly #mode: AuthorizationMode;
  readonly #rbac: rbac.RbacAuthorizer | undefined;

  constructor(options: AuthorizerOptions = {}) {
    this.#rules = rules.validateRules(options.rules ?? []);
    this.#defaultDecision = checkEffect(options.defaultDecision ?? 'allow');
    this.#mode = options.mode ?? 'rules';
    if (this.#mode !== 'rules' && this.#mode !== 'rbac') throw new rules.InvalidAuthorizationRuleError(`mode must be "rules" or "rbac"`);
    if (this.#mode === 'rbac' && !options.rbac) throw new rules.InvalidAuthorizationRuleError('mode "rbac" needs an RBAC authorizer');
    this.#rbac = options.rbac;
  }

  get mode(): AuthorizationMode {
    return this.#mode;
  }

  /** The RBAC authorizer of `"rbac"` mode (undefined in rule mode). */
  get rbac(): rbac.RbacAuthorizer | undefined {
    return this.#rbac;
  }

  /** The current rules (frozen). */
  get rules(): readonly rules.AuthorizationRule[] {
    return this.#rules;
  }

  get defaultDecision(): Effect {
    return this.#defaultDecision;
  }

  /** Replaces the rules; requests authorized afterwards see the new list. */
  setRules(next: readonly rules.AuthorizationRule[]): void {
    this.#rules = rules.validateRules(next);
  }

  setDefaultDecision(decision: Effect): void {
    this.#defaultDecision = checkEffect(decision);
  }

  /**
   * Decides one request: first matching rule; then, in rule mode, the discovery defaults, else
   * `defaultDecision`; in RBAC mode, `system:masters`, else RBAC (deny when it has no opinion).
   */
  authorize(attributes: rules.RequestAttributes, user: users.UserInfo): Decision {
    const list = this.#rules;
    for (let i = 0; i < list.length; i++) {
      const rule = list[i]!;
      if (!rules.ruleMatches(rule, attributes, user)) continue;
      const decision: Decision = { allowed: rule.effect === 'allow', source: 'rule', ruleIndex: i };
      if (rule.reason) decision.reason = rule.reason;
      return decision;
    }
    if (this.#rbac && this.#mode === 'rbac') {
      if (user.groups.includes(users.MASTERS_GROUP)) return { allowed: true, source: 'privileged' };
      const answer = this.#rbac.authorize(attributes, user);
      const decision: Decision = { allowed: answer.allowed, source: 'rbac' };
      if (answer.reason) decision.reason = answer.reason;
      return decision;
    }
    if (isDefaultDiscovery(attributes, user)) return { allowed: true, source: 'discovery' };
    if (isSelfReview(attributes, user)) return { allowed: true, source: 'self-review' };
    return { allowed: this.#defaultDecision === 'allow', source: 'default' };
  }
}

function checkEffect(value: Effect): Effect {
  if (value !== 'allow' && value !== 'deny') throw new rules.InvalidAuthorizationRuleError(`defaultDecision must be "allow" or "deny"`);
  return value;
}

/** Whether D-AUTH-7 grants the request by default (only `get` on discovery paths). */
export function isDefaultDiscovery(attributes: rules.RequestAttributes, user: users.UserInfo): boolean {
  if (attributes.kind !== 'nonResource' || attributes.verb !== 'get') return false;
  const paths = users.isAuthenticated(user) ? DISCOVERY_PATHS : PUBLIC_INFO_PATHS;
  return paths.some((p) => rules.pathMatches(p, attributes.path));
}

/** Whether the self-review grant of D-AUTH-11 allows the request (`create` of a self review, authenticated users). */
export function isSelfReview(attributes: rules.RequestAttributes, user: users.UserInfo): boolean {
  if (attributes.kind !== 'resource' || attributes.verb !== 'create' || attributes.subresource || !users.isAuthenticated(user)) return false;
  return SELF_REVIEWS[attributes.apiGroup]?.includes(attributes.resource) ?? false;
}

/**
 * The 403 of a refused request, worded as D-AUTH-6:
 * `widgets.example.com "w1" is forbidden: User "alice" cannot delete resource "widgets" in API
 * group "example.com" in the namespace "default"` (no `"<name>" ` for nameless requests,
 * `at the cluster scope` without a namespace, `forbidden: User "u" cannot get path "/apis"` for
 * non-resource paths, and `: <reason>` appended when a reason is given).
 */
export function forbiddenError(attributes: rules.RequestAttributes, user: users.UserInfo, reason?: string): statuses.ApiError {
  const suffix = reason ? `: ${reason}` : '';
  if (attributes.kind === 'nonResource') {
    return statuses.forbidden(`forbidden: User "${user.username}" cannot ${attributes.verb} path "${attributes.path}"${suffix}`);
  }
  const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  const scope = attributes.namespace ? `in the namespace "${attributes.namespace}"` : 'at the cluster scope';
  const why = `User "${user.username}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup}" ${scope}${suffix}`;
  const qualified = statuses.qualifiedResource({ group: attributes.apiGroup, resource: attributes.resource, kind: '' });
  const name = attributes.name ?? '';
  const subject = name ? `${qualified} "${name}"` : qualified;
  const details: statuses.StatusDetails = { group: attributes.apiGroup, kind: attributes.resource };
  if (name) details.name = name;
  return statuses.forbidden(`${subject} is forbidden: ${why}`, details);
}

/** `spec` of a SelfSubjectAccessReview (authorization.k8s.io/v1). */
export interface AccessReviewSpec {
  resourceAttributes?: {
    namespace?: string;
    verb?: string;
    group?: string;
    version?: string;
    resource?: string;
    subresource?: string;
    name?: string;
  };
  nonResourceAttributes?: { path?: string; verb?: string };
}

/** `status` of an access review. */
export interface AccessReviewStatus {
  allowed: boolean;
  /** Set when a deny rule decided (as opposed to "no rule allowed it"). */
  denied?: boolean;
  reason?: string;
}

const ACCESS_REVIEWS: statuses.ResourceIdent = {
  group: 'authorization.k8s.io',
  resource: 'selfsubjectaccessreviews',
  kind: 'SelfSubjectAccessReview',
};

/**
 * The field errors of an access review `spec` about its attributes: exactly one of
 * `resourceAttributes` and `nonResourceAttributes` (upstream's messages).
 */
export function attributeErrors(spec: unknown): fielderrors.FieldError[] {
  const record = json.isObject(spec) ? spec : {};
  const hasResource = json.isObject(record['resourceAttributes']);
  const hasNonResource = json.isObject(record['nonResourceAttributes']);
  if (hasResource && hasNonResource) {
    return [fielderrors.invalid('spec.nonResourceAttributes', record['nonResourceAttributes'], 'cannot be specified in combination with resourceAttributes')];
  }
  if (!hasResource && !hasNonResource) {
    return [fielderrors.invalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified')];
  }
  return [];
}

/** The request an access review `spec` asks about (check `attributeErrors` first). */
export function reviewedAttributes(spec: unknown): rules.RequestAttributes {
  const record = json.isObject(spec) ? spec : {};
  const resourceAttributes = record['resourceAttributes'];
  if (json.isObject(resourceAttributes)) {
    return {
      kind: 'resource',
      verb: stringField(resourceAttributes, 'verb'),
      apiGroup: stringField(resourceAttributes, 'group'),
      resource: stringField(resourceAttributes, 'resource'),
      subresource: stringField(resourceAttributes, 'subresource'),
      namespace: stringField(resourceAttributes, 'namespace'),
      name: stringField(resourceAttributes, 'name'),
    };
  }
  const nonResourceAttributes = record['nonResourceAttributes'];
  return { kind: 'nonResource', verb: stringField(nonResourceAttributes, 'verb'), path: stringField(nonResourceAttributes, 'path') };
}

/** The `status` of an access review from a decision: `denied` only when a deny rule decided. */
export function reviewStatus(decision: Decision): AccessReviewStatus {
  const status: AccessReviewStatus = { allowed: decision.allowed };
  if (!decision.allowed && decision.source === 'rule') status.denied = true;
  if (decision.reason) status.reason = decision.reason;
  return status;
}

/**
 * Evaluates a SelfSubjectAccessReview `spec` for `user` (D-AUTH-8), as `kubectl auth can-i`
 * asks. Throws a 422 `Invalid` `ApiError` unless exactly one of `resourceAttributes` and
 * `nonResourceAttributes` is given.
 */
export function accessReview(spec: unknown, authorizer: Authorizer, user: users.UserInfo): AccessReviewStatus {
  const errors = attributeErrors(spec);
  if (errors.length) throw statuses.invalid(ACCESS_REVIEWS, '', errors);
  return reviewStatus(authorizer.authorize(reviewedAttributes(spec), user));
}

function stringField(record: unknown, key: string): string {
  const value = json.isObject(record) ? record[key] : undefined;
  return typeof value === 'string' ? value : '';
}
