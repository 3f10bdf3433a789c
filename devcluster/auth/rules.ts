/**
 * Authorization rules of D-AUTH-5 and the request attributes they are matched against.
 *
 * A rule is a flat record of optional lists; every list that is absent (or contains `*`) matches
 * anything, and a rule matches a request when every present list does. `authorization.ts` walks
 * an ordered rule list with `ruleMatches` (first match decides); this module knows nothing about
 * ordering, defaults or error messages.
 *
 * Caveats, chosen to keep rules predictable:
 * - `resources` entries are `res` (the resource and all its subresources; narrow with
 *   `subresources`), `res/sub` (only that subresource), `res/*` (any subresource, not the main
 *   resource); a `*` before the slash stands for any resource (`*` + `/scale`).
 * - `subresources` entries are subresource names; `""` stands for the main resource.
 * - A rule with `nonResourceURLs` matches only non-resource requests; a rule with any of
 *   `apiGroups`, `resources`, `subresources`, `namespaces`, `names` matches only resource requests.
 * - `nonResourceURLs` entries are exact paths, `*`, or prefixes ending in `*` (`/apis/*`).
 * - `namespaces` entry `""` matches cluster-scoped and all-namespace requests.
 */
import type * as users from './users.js';

/** One rule (D-AUTH-5). */
export interface AuthorizationRule {
  effect: 'allow' | 'deny';
  users?: readonly string[];
  groups?: readonly string[];
  verbs?: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  subresources?: readonly string[];
  namespaces?: readonly string[];
  names?: readonly string[];
  nonResourceURLs?: readonly string[];
  /** Appended to the 403 message as `: <reason>`; reported in access reviews. */
  reason?: string;
}

/** A request on a resource: `verb` as in D-AUTH-5, `apiGroup` `""` for core. */
export interface ResourceAttributes {
  kind: 'resource';
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
  /** Empty or absent for cluster-scoped resources and all-namespace requests. */
  namespace?: string;
  /** Empty or absent for create and collection verbs. */
  name?: string;
}

/** A request on a non-resource path (`/version`, `/apis`, …); `verb` is the lower-case method. */
export interface NonResourceAttributes {
  kind: 'nonResource';
  verb: string;
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

/** A rule list that does not have the shape of D-AUTH-5. */
export class InvalidAuthorizationRuleError extends Error {
  readonly code = 'InvalidAuthorizationRule' as const;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidAuthorizationRuleError';
  }
}

const LIST_FIELDS = ['users', 'groups', 'verbs', 'apiGroups', 'resources', 'subresources', 'namespaces', 'names', 'nonResourceURLs'] as const;
const RESOURCE_FIELDS = ['apiGroups', 'resources', 'subresources', 'namespaces', 'names'] as const;

/**
 * Checks a rule list (e.g. from options or a test-control request) and returns a deep, frozen
 * copy. Throws `InvalidAuthorizationRuleError` naming the first offending rule and field.
 */
export function validateRules(rules: readonly unknown[]): readonly AuthorizationRule[] {
  if (!Array.isArray(rules)) throw new InvalidAuthorizationRuleError('rules must be an array');
  return Object.freeze(rules.map((raw, i) => validateRule(raw, i)));
}

function validateRule(raw: unknown, index: number): AuthorizationRule {
  const where = `rules[${index}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InvalidAuthorizationRuleError(`${where} must be an object`);
  const record = raw as Record<string, unknown>;
  const known = new Set<string>(['effect', 'reason', ...LIST_FIELDS]);
  for (const key of Object.keys(record)) {
    if (!known.has(key)) throw new InvalidAuthorizationRuleError(`${where}.${key} is not a rule field`);
  }
  if (record['effect'] !== 'allow' && record['effect'] !== 'deny') {
    throw new InvalidAuthorizationRuleError(`${where}.effect must be "allow" or "deny"`);
  }
  const rule: AuthorizationRule = { effect: record['effect'] };
  for (const field of LIST_FIELDS) {
    const value = record[field];
    if (value === undefined) continue;
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      throw new InvalidAuthorizationRuleError(`${where}.${field} must be a list of strings`);
    }
    rule[field] = Object.freeze([...(value as string[])]);
  }
  if (rule.nonResourceURLs && RESOURCE_FIELDS.some((f) => rule[f] !== undefined)) {
    throw new InvalidAuthorizationRuleError(`${where} mixes nonResourceURLs with resource fields`);
  }
  if (record['reason'] !== undefined) {
    if (typeof record['reason'] !== 'string') throw new InvalidAuthorizationRuleError(`${where}.reason must be a string`);
    rule.reason = record['reason'];
  }
  return Object.freeze(rule);
}

/** Whether `rule` names `user` (by `users` and `groups`), whatever it allows or denies. */
export function appliesToUser(rule: AuthorizationRule, user: users.UserInfo): boolean {
  if (!listMatches(rule.users, user.username)) return false;
  return !rule.groups || rule.groups.some((g) => g === '*' || user.groups.includes(g));
}

/** Whether a rule speaks about non-resource requests (`nonResourceURLs`), resource requests, or both. */
export function ruleKinds(rule: AuthorizationRule): { resource: boolean; nonResource: boolean } {
  if (rule.nonResourceURLs !== undefined) return { resource: false, nonResource: true };
  return { resource: true, nonResource: !RESOURCE_FIELDS.some((f) => rule[f] !== undefined) };
}

/** Whether `rule` applies to `attributes` requested by `user`. */
export function ruleMatches(rule: AuthorizationRule, attributes: RequestAttributes, user: users.UserInfo): boolean {
  if (!appliesToUser(rule, user)) return false;
  if (!listMatches(rule.verbs, attributes.verb)) return false;
  if (attributes.kind === 'nonResource') {
    if (RESOURCE_FIELDS.some((f) => rule[f] !== undefined)) return false;
    return rule.nonResourceURLs === undefined || rule.nonResourceURLs.some((p) => pathMatches(p, attributes.path));
  }
  if (rule.nonResourceURLs !== undefined) return false;
  const subresource = attributes.subresource ?? '';
  return (
    listMatches(rule.apiGroups, attributes.apiGroup) &&
    (rule.resources === undefined || rule.resources.some((r) => resourceMatches(r, attributes.resource, subresource))) &&
    listMatches(rule.subresources, subresource) &&
    listMatches(rule.namespaces, attributes.namespace ?? '') &&
    listMatches(rule.names, attributes.name ?? '')
  );
}

function listMatches(list: readonly string[] | undefined, value: string): boolean {
  return list === undefined || list.some((entry) => entry === '*' || entry === value);
}

function resourceMatches(entry: string, resource: string, subresource: string): boolean {
  if (entry === '*') return true;
  const slash = entry.indexOf('/');
  if (slash < 0) return entry === resource;
  const res = entry.slice(0, slash);
  const sub = entry.slice(slash + 1);
  if (res !== '*' && res !== resource) return false;
  if (sub === '*') return subresource !== '';
  return sub === subresource;
}

/** Exact path, `*`, or a prefix pattern ending in `*` (`/apis/*` matches `/apis/x` but not `/apis`). */
export function pathMatches(pattern: string, path: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return path.startsWith(pattern.slice(0, -1));
  return pattern === path;
}
