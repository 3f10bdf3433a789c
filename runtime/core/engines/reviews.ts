/**
 * The `AdmissionReview` wire format as the admission engine reads and writes it (R-ADMISSION-4/5).
 *
 * A webhook server hands the operator whatever it received: parsed JSON, or raw text (or bytes)
 * when it could not parse it. Before any handler runs, the review is checked in Kopf's order: is
 * it JSON and an `AdmissionReview` with a `request` (uid, resource)? Is the resource one that
 * admission handlers serve — exactly one of them? Does the request carry `userInfo` and at least
 * one of `object`/`oldObject`? Each "no" is a `WebhookRequestError` with its HTTP status (400, 404,
 * 409) and a one-line message; nothing else is ever answered with an HTTP error.
 *
 * After the handlers ran, `buildResponse` turns their errors, warnings and merged patch into the
 * reply: `allowed` iff nothing failed, the warnings, the JSON-Patch relative to the request's body
 * (Base64), and one error's message and code chosen by priority. Pure functions: the request path
 * that calls them is `admission.ts`.
 */

import type * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import type * as jsonpatches from '../../cogs/structs/jsonpatches.js';
import type * as references from '../../cogs/structs/references.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as errors from '../actions/errors.js';
import type * as callbacks from '../intents/callbacks.js';
import * as structErrors from '../../cogs/structs/errors.js';

/** The review's defaults when the request names none (Kopf's). */
export const DEFAULT_API_VERSION = 'admission.k8s.io/v1';
export const DEFAULT_KIND = 'AdmissionReview';

const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** A review that passed the first checks: JSON, an `AdmissionReview`, a request with a uid and resource. */
export interface Review {
  /** Echoed in the reply. */
  readonly apiVersion: string;
  readonly kind: string;
  readonly request: webhooks.AdmissionRequest;
}

/** What a request offers to handlers once it passed all checks. */
export interface RequestData {
  /** `object`, or `oldObject` when `object` is null (deletions). */
  readonly body: bodies.RawBody;
  readonly old: bodies.RawBody | null;
  readonly new: bodies.RawBody | null;
  readonly userInfo: callbacks.UserInfo;
  readonly operation: callbacks.WebhookOperation | null;
  /** `null` for the main body. */
  readonly subresource: string | null;
  readonly dryRun: boolean;
}

function malformed(message: string): structErrors.WebhookRequestError {
  return new structErrors.WebhookRequestError('malformed', message);
}

/** The payload as JSON: a server hands over raw text (or bytes) when it could not parse it; `what` names the review in the error. */
export function decoded(payload: unknown, what: 'admission' | 'conversion' = 'admission'): unknown {
  const text =
    typeof payload === 'string'
      ? payload
      : payload instanceof Uint8Array
        ? Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8')
        : undefined;
  if (text === undefined) return payload;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw malformed(`The ${what} request is not valid JSON.`);
  }
}

function isGroupVersionResource(value: unknown): value is webhooks.GroupVersionResource {
  return (
    dicts.isObject(value) &&
    typeof value['group'] === 'string' &&
    typeof value['version'] === 'string' &&
    typeof value['resource'] === 'string' &&
    value['resource'] !== ''
  );
}

/**
 * Checks that a payload is an `AdmissionReview` with a request that can be answered.
 *
 * @throws WebhookRequestError (`malformed`, HTTP 400) for non-JSON text, a non-object, another
 *   kind, or a request without a uid, a resource or a known operation.
 */
export function parseReview(payload: unknown): Review {
  const review = decoded(payload);
  if (!dicts.isObject(review)) throw malformed('The admission request is not an AdmissionReview: not a JSON object.');
  const { apiVersion, kind, request } = review;
  if (kind === 'ConversionReview') {
    // R-CONVERT-205: a CRD's conversion webhook pointed at an admission path.
    throw malformed('The admission request is a ConversionReview: conversion webhooks are served at convert/<plural>.<group> below the server root.');
  }
  if (kind !== undefined && kind !== DEFAULT_KIND) throw malformed(`The admission request is not an AdmissionReview: its kind is ${JSON.stringify(kind)}.`);
  if (!dicts.isObject(request)) throw malformed('The admission request has no request in its AdmissionReview.');
  if (typeof request['uid'] !== 'string') throw malformed('The admission request has no uid.');
  if (!isGroupVersionResource(request['resource'])) {
    throw malformed('The admission request has no resource (group, version and resource are required).');
  }
  const operation = request['operation'];
  if (operation !== undefined && operation !== null && !OPERATIONS.includes(operation as string)) {
    throw malformed(`The admission request has an unknown operation: ${JSON.stringify(operation)}.`);
  }
  return {
    apiVersion: typeof apiVersion === 'string' && apiVersion ? apiVersion : DEFAULT_API_VERSION,
    kind: DEFAULT_KIND,
    request: request as unknown as webhooks.AdmissionRequest,
  };
}

function describe(gvr: webhooks.GroupVersionResource): string {
  return gvr.group ? `${gvr.resource}.${gvr.version}.${gvr.group}` : `${gvr.resource}.${gvr.version}`;
}

/**
 * The served resource a request is for: its group, version and plural among the resources that
 * admission handlers select.
 *
 * @throws WebhookRequestError `unknown-resource` (404) if none matches, `ambiguous-resource` (409)
 *   if several do.
 */
export function findResource(request: webhooks.AdmissionRequest, served: readonly references.Resource[]): references.Resource {
  const { group, version, resource: plural } = request.resource;
  const found = served.filter((r) => r.group === group && r.version === version && r.plural === plural);
  if (found.length === 0) {
    throw new structErrors.WebhookRequestError('unknown-resource', `The resource ${describe(request.resource)} has no admission handlers.`);
  }
  if (found.length > 1) {
    throw new structErrors.WebhookRequestError(
      'ambiguous-resource',
      `The resource ${describe(request.resource)} is ambiguous: it is served ${found.length} times.`,
    );
  }
  return found[0]!;
}

function bodyOf(value: unknown, name: string): bodies.RawBody | null {
  if (value === undefined || value === null) return null;
  if (!dicts.isObject(value)) throw malformed(`The admission request's ${name} is not an object.`);
  return value as bodies.RawBody;
}

/**
 * What handlers get from a request: the bodies, the user, the operation and subresource.
 *
 * @throws WebhookRequestError (`malformed`, HTTP 400) without `userInfo`, or with neither `object`
 *   nor `oldObject`.
 */
export function requestData(request: webhooks.AdmissionRequest): RequestData {
  const raw = request as unknown as Record<string, unknown>;
  const userInfo = raw['userInfo'];
  if (!dicts.isObject(userInfo)) throw malformed('The admission request has no userInfo.');
  const now = bodyOf(raw['object'], 'object');
  const old = bodyOf(raw['oldObject'], 'oldObject');
  const body = now ?? old;
  if (body === null) throw malformed('The admission request has neither an object nor an oldObject.');
  const subresource = raw['subResource'];
  return {
    body,
    old,
    new: now,
    userInfo: userInfo as callbacks.UserInfo,
    operation: (request.operation ?? null) as callbacks.WebhookOperation | null,
    subresource: typeof subresource === 'string' && subresource !== '' ? subresource : null,
    dryRun: raw['dryRun'] === true,
  };
}

/**
 * The priority of a handler's error for the reply's status (R-ADMISSION-5), lowest first:
 * `AdmissionError`, other permanent errors, temporary errors, anything else.
 */
export function errorPriority(error: unknown): number {
  if (error instanceof errors.AdmissionError) return 0;
  if (error instanceof errors.PermanentError) return 1;
  if (error instanceof errors.TemporaryError) return 2;
  return 9;
}

/** The `status` of a reply for the most important of the handlers' errors; `undefined` if none. */
export function statusOf(failures: readonly unknown[]): { readonly message: string; readonly code: number } | undefined {
  if (failures.length === 0) return undefined;
  const chosen = [...failures].sort((a, b) => errorPriority(a) - errorPriority(b))[0];
  const code = chosen instanceof errors.AdmissionError && Number.isInteger(chosen.status) && chosen.status > 0 ? chosen.status : 500;
  return { message: errors.describeError(chosen), code };
}

/** What the handlers of one request left behind. */
export interface Results {
  /** The errors of failed handlers, in invocation order. */
  readonly failures: readonly unknown[];
  readonly warnings: readonly unknown[];
  /** The merged patch as JSON-Patch operations relative to the request's body. */
  readonly jsonPatch: readonly jsonpatches.JsonPatchOperation[];
}

/**
 * The reply to a review (R-ADMISSION-5): the request's `apiVersion` and `kind` echoed,
 * `response.uid` and `allowed`, then the warnings, the patch and the status when there are any.
 *
 * @example
 * buildResponse(review, { failures: [new AdmissionError('Meh!', 555)], warnings: [], jsonPatch: [] })
 * // {apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
 * //  response: {uid, allowed: false, status: {message: 'Meh!', code: 555}}}
 */
export function buildResponse(review: Review, results: Results): webhooks.AdmissionReviewResponse {
  const response: { -readonly [K in keyof webhooks.AdmissionResponse]: webhooks.AdmissionResponse[K] } = {
    uid: review.request.uid,
    allowed: results.failures.length === 0,
  };
  if (results.warnings.length > 0) response.warnings = results.warnings.map((warning) => String(warning));
  if (results.jsonPatch.length > 0) {
    response.patch = Buffer.from(JSON.stringify(results.jsonPatch), 'utf8').toString('base64');
    response.patchType = 'JSONPatch';
  }
  const status = statusOf(results.failures);
  if (status !== undefined) response.status = status;
  return { apiVersion: review.apiVersion, kind: review.kind, response };
}
