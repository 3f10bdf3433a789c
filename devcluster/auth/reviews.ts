/**
 * The review APIs (D-AUTH-11..15): create-only kinds that ask the API server a question and are
 * never stored — may a subject do something (`SubjectAccessReview`, `LocalSubjectAccessReview`,
 * `SelfSubjectAccessReview`), what may I do here (`SelfSubjectRulesReview`), whose is this token
 * (`TokenReview`), who am I (`SelfSubjectReview`). `kubectl auth can-i`, `can-i --list` and
 * `whoami` ask them, and so do webhook and proxy servers that delegate authentication and
 * authorization to the API server. They are answered from the devcluster's own rule list
 * (`authorization.ts`, `rulesreview.ts`) and token table (`tokens.ts`).
 *
 * Answers have upstream's shape: the access and token reviews return the request with `status`
 * filled and the `metadata` the API server gives them (`creationTimestamp: null` and the writer's
 * `managedFields` entry); the rules review and the self review return fresh objects. Validation
 * errors and refusals use upstream's messages.
 *
 * `reviewTypes` returns the served types; the cluster registers them after the built-in catalog.
 */
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as managedfields from '../patching/managedfields.js';
import * as statuses from '../server/statuses.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as authorization from './authorization.js';
import * as rulesreview from './rulesreview.js';
import type * as tokens from './tokens.js';
import type * as users from './users.js';

/** Where the answers come from. */
export interface ReviewContext {
  readonly authorizer: authorization.Authorizer;
  readonly tokens: tokens.TokenTable;
  now(): Date;
}

/** The audiences of the devcluster's API (upstream: `--api-audiences`, by default the service-account issuer). */
export const API_AUDIENCES: readonly string[] = Object.freeze(['https://kubernetes.default.svc.cluster.local']);

/** The error of a TokenReview whose token does not authenticate (upstream's bearer-token authenticator's). */
export const INVALID_TOKEN = 'invalid bearer token';

const AUTHORIZATION = 'authorization.k8s.io';
const AUTHENTICATION = 'authentication.k8s.io';

type Answer = (ctx: ReviewContext, req: resources.AnswerRequest, body: JsonObject) => JsonObject;

interface ReviewKind {
  group: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  answer: Answer;
}

const KINDS: readonly ReviewKind[] = [
  {
    group: AUTHORIZATION,
    resource: 'subjectaccessreviews',
    kind: 'SubjectAccessReview',
    namespaced: false,
    answer: subjectAccessReview(false),
  },
  {
    group: AUTHORIZATION,
    resource: 'localsubjectaccessreviews',
    kind: 'LocalSubjectAccessReview',
    namespaced: true,
    answer: subjectAccessReview(true),
  },
  {
    group: AUTHORIZATION,
    resource: 'selfsubjectaccessreviews',
    kind: 'SelfSubjectAccessReview',
    namespaced: false,
    answer: selfSubjectAccessReview,
  },
  {
    group: AUTHORIZATION,
    resource: 'selfsubjectrulesreviews',
    kind: 'SelfSubjectRulesReview',
    namespaced: false,
    answer: selfSubjectRulesReview,
  },
  { group: AUTHENTICATION, resource: 'tokenreviews', kind: 'TokenReview', namespaced: false, answer: tokenReview },
  {
    group: AUTHENTICATION,
    resource: 'selfsubjectreviews',
    kind: 'SelfSubjectReview',
    namespaced: false,
    answer: selfSubjectReview,
  },
];

/** Nothing of a review is stored, so its strategy is never asked anything beyond these. */
const UNSTORED: resources.Strategy = { nameRule: 'subdomain', putCreates: false, requireResourceVersion: false, deleteReturnsObject: false };

/** The served types of the review kinds, answered from `ctx` (D-AUTH-11: create only, in discovery). */
export function reviewTypes(ctx: ReviewContext): resources.ResourceType[] {
  return KINDS.map((k) => ({
    group: k.group,
    version: 'v1',
    resource: k.resource,
    singular: k.kind.toLowerCase(),
    kind: k.kind,
    listKind: `${k.kind}List`,
    namespaced: k.namespaced,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    storage: `${k.group}/${k.resource}`,
    subresources: [],
    builtin: true,
    strategy: UNSTORED,
    answer: (req, body) => k.answer(ctx, req, body),
  }));
}

// ---------------------------------------------------------------------------------------------
// Access reviews (D-AUTH-12)

/** A review of the subject in `spec` (user, groups, uid, extra); `local`: in the namespace of the URL. */
function subjectAccessReview(local: boolean): Answer {
  return (ctx, req, body) => {
    const spec = objectAt(body, 'spec');
    const errors = [...authorization.attributeErrors(spec), ...subjectErrors(spec), ...metadataErrors(body, local)];
    if (local) errors.push(...localErrors(spec, req.namespace ?? ''));
    if (errors.length) throw invalid(local ? 'LocalSubjectAccessReview' : 'SubjectAccessReview', errors);
    const subject: users.UserInfo = { username: stringAt(spec, 'user'), uid: stringAt(spec, 'uid'), groups: stringsAt(spec, 'groups') };
    const extra = extraOf(spec['extra']);
    if (extra) subject.extra = extra;
    return echo(ctx, req, body, accessStatus(ctx, spec, subject), local ? req.namespace : undefined);
  };
}

function selfSubjectAccessReview(ctx: ReviewContext, req: resources.AnswerRequest, body: JsonObject): JsonObject {
  const spec = objectAt(body, 'spec');
  const errors = [...authorization.attributeErrors(spec), ...metadataErrors(body, false)];
  if (errors.length) throw invalid('SelfSubjectAccessReview', errors);
  return echo(ctx, req, body, accessStatus(ctx, spec, userOf(req)), undefined);
}

function accessStatus(ctx: ReviewContext, spec: JsonObject, subject: users.UserInfo): JsonObject {
  const status = authorization.reviewStatus(ctx.authorizer.authorize(authorization.reviewedAttributes(spec), subject));
  return { ...status };
}

/** Upstream's rule for (Local)SubjectAccessReviews: a user or at least one group. */
function subjectErrors(spec: JsonObject): fielderrors.FieldError[] {
  if (stringAt(spec, 'user') || stringsAt(spec, 'groups').length) return [];
  return [fielderrors.invalid('spec.user', stringAt(spec, 'user'), 'at least one of user or group must be specified')];
}

/** LocalSubjectAccessReviews ask about their own namespace, and only about resources. */
function localErrors(spec: JsonObject, namespace: string): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  const resourceAttributes = spec['resourceAttributes'];
  if (json.isObject(resourceAttributes) && stringAt(resourceAttributes, 'namespace') !== namespace) {
    errors.push(fielderrors.invalid('spec.resourceAttributes.namespace', stringAt(resourceAttributes, 'namespace'), 'must match metadata.namespace'));
  }
  if (json.isObject(spec['nonResourceAttributes'])) {
    errors.push(fielderrors.invalid('spec.nonResourceAttributes', spec['nonResourceAttributes'], 'disallowed on this kind of request'));
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Rules review (D-AUTH-13)

function selfSubjectRulesReview(ctx: ReviewContext, req: resources.AnswerRequest, body: JsonObject): JsonObject {
  const namespace = stringAt(objectAt(body, 'spec'), 'namespace');
  if (!namespace) throw statuses.badRequest('no namespace on request');
  const status = rulesreview.rulesFor(ctx.authorizer, userOf(req), namespace);
  return { kind: 'SelfSubjectRulesReview', apiVersion: `${AUTHORIZATION}/v1`, metadata: { creationTimestamp: null }, spec: {}, status: { ...status } };
}

// ---------------------------------------------------------------------------------------------
// Token and self reviews (D-AUTH-14, D-AUTH-15)

function tokenReview(ctx: ReviewContext, req: resources.AnswerRequest, body: JsonObject): JsonObject {
  const spec = objectAt(body, 'spec');
  const token = stringAt(spec, 'token');
  if (!token) throw statuses.badRequest('token is required for TokenReview in authentication');
  const requested = stringsAt(spec, 'audiences');
  const wanted = requested.length ? requested : API_AUDIENCES;
  const checked = ctx.tokens.check(token, ctx.now(), wanted);
  const audiences = checked.ok ? checked.audiences.filter((a) => wanted.includes(a)) : [];
  let status: JsonObject;
  if (checked.ok && audiences.length) status = { authenticated: true, user: userInfoOf(checked.user), audiences };
  else status = { user: {}, error: checked.ok || checked.problem === 'unknown' ? INVALID_TOKEN : TOKEN_PROBLEMS[checked.problem] };
  return echo(ctx, req, body, status, undefined);
}

/** Why a known token does not authenticate (informative; upstream's wording varies by authenticator). */
const TOKEN_PROBLEMS = {
  expired: 'token has expired',
  notYetValid: 'token is not valid yet',
  audience: 'token audiences do not match the requested audiences',
} as const;

function selfSubjectReview(ctx: ReviewContext, req: resources.AnswerRequest): JsonObject {
  return {
    kind: 'SelfSubjectReview',
    apiVersion: `${AUTHENTICATION}/v1`,
    metadata: { creationTimestamp: timestamp(ctx.now()) },
    status: { userInfo: userInfoOf(userOf(req)) },
  };
}

/** An `authentication.k8s.io/v1` `UserInfo`: empty members are omitted, as upstream serialises it. */
function userInfoOf(user: users.UserInfo): JsonObject {
  const out: JsonObject = { username: user.username };
  if (user.uid) out['uid'] = user.uid;
  if (user.groups.length) out['groups'] = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) out['extra'] = json.deepCopy(user.extra);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shared parts

/**
 * The reviewed request sent back with `status` filled: `metadata` as the API server returns it
 * (the namespace of a local review, `creationTimestamp: null`, and the `managedFields` entry its
 * field manager records on the way in), the `spec` as sent.
 */
function echo(ctx: ReviewContext, req: resources.AnswerRequest, body: JsonObject, status: JsonObject, namespace: string | undefined): JsonObject {
  const apiVersion = String(body['apiVersion']);
  const metadata: JsonObject = {};
  if (namespace) metadata['namespace'] = namespace;
  metadata['creationTimestamp'] = null;
  const managed = managedfields.recordUpdate({
    before: zeroValueOf(String(body['kind'])),
    after: body,
    manager: req.fieldManager,
    apiVersion,
    now: timestamp(ctx.now()),
    listSemantics: managedfields.atomicLists,
    subresource: undefined,
    statusSubresource: false,
  });
  if (managed.length) metadata['managedFields'] = managed;
  return { kind: body['kind'], apiVersion, metadata, spec: objectAt(body, 'spec'), status };
}

/**
 * The empty object of a kind as upstream's field manager compares against it: members without
 * `omitempty` are present with their zero values, so a client sending them owns nothing by it.
 */
function zeroValueOf(kind: string): JsonObject {
  return kind === 'TokenReview' ? { spec: {}, status: { user: {} } } : { spec: {}, status: { allowed: false } };
}

/** Reviews carry no metadata of their own: anything set but `managedFields` (and a local review's namespace) → 422. */
function metadataErrors(body: JsonObject, allowNamespace: boolean): fielderrors.FieldError[] {
  const metadata = objectAt(body, 'metadata');
  const set = Object.entries(metadata).some(([k, v]) => k !== 'managedFields' && !(allowNamespace && k === 'namespace') && !isZero(v));
  if (!set) return [];
  return [fielderrors.invalid('metadata', metadata, allowNamespace ? 'must be empty except for namespace' : 'must be empty')];
}

function invalid(kind: string, errors: fielderrors.FieldError[]): statuses.ApiError {
  return statuses.invalid({ group: AUTHORIZATION, resource: '', kind }, '', errors);
}

const isZero = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  v === '' ||
  v === 0 ||
  v === false ||
  (Array.isArray(v) && v.length === 0) ||
  (json.isObject(v) && Object.keys(v).length === 0);

function userOf(req: resources.AnswerRequest): users.UserInfo {
  const user: users.UserInfo = { username: req.user.username, uid: req.user.uid, groups: [...req.user.groups] };
  if (req.user.extra) user.extra = Object.fromEntries(Object.entries(req.user.extra).map(([k, v]) => [k, [...v]]));
  return user;
}

function extraOf(value: unknown): Record<string, string[]> | undefined {
  if (!json.isObject(value)) return undefined;
  const entries = Object.entries(value).map(([k, v]) => [k, Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []] as const);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

const objectAt = (obj: JsonObject, key: string): JsonObject => (json.isObject(obj[key]) ? obj[key] : {});
const stringAt = (obj: JsonObject, key: string): string => (typeof obj[key] === 'string' ? obj[key] : '');
const stringsAt = (obj: JsonObject, key: string): string[] => (Array.isArray(obj[key]) ? obj[key].filter((s): s is string => typeof s === 'string') : []);

/** Second-precision RFC 3339 UTC, as `Time` fields are written. */
const timestamp = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
