/**
 * The `ConversionReview` wire format as the conversion engine reads and writes it (R-CONVERT-203):
 * the counterpart of `reviews.ts` for conversion webhooks.
 *
 * A review is checked before anything is converted: JSON, an object of kind `ConversionReview` in
 * `apiextensions.k8s.io/v1` or `v1beta1` (both have the same shape and are answered in kind), with a
 * `request` that has a `uid`, a `desiredAPIVersion` and a list of `objects`. A review that fails
 * these checks cannot be answered with a review at all (there is no uid to echo): it is a
 * `WebhookRequestError` (`malformed`, HTTP 400), as admission answers a malformed `AdmissionReview`.
 * What is wrong with the objects themselves is the conversion's business: a `Failure` result.
 * Pure functions: the request path that calls them is `converting.ts`.
 */

import * as dicts from '../../cogs/structs/dicts.js';
import * as structErrors from '../../cogs/structs/errors.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as reviews from './reviews.js';

/** The review's kind and the API versions it comes in (answered in the version it came in). */
export const KIND = 'ConversionReview';
export const API_VERSIONS: readonly string[] = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'];

/** A review that passed the checks. */
export interface ConversionReview {
  /** Echoed in the reply. */
  readonly apiVersion: string;
  readonly request: webhooks.ConversionRequest;
}

function malformed(message: string): structErrors.WebhookRequestError {
  return new structErrors.WebhookRequestError('malformed', message);
}

/** The payload as JSON (raw text or bytes parsed); not JSON → `malformed` (HTTP 400). */
export function decoded(payload: unknown): unknown {
  return reviews.decoded(payload, 'conversion');
}

/** The kind a payload claims (`AdmissionReview`, `ConversionReview`, …), if it is an object with one. */
export function kindOf(payload: unknown): unknown {
  return dicts.isObject(payload) ? payload['kind'] : undefined;
}

/**
 * Checks that a (decoded) payload is a `ConversionReview` that can be answered.
 *
 * @throws WebhookRequestError (`malformed`, HTTP 400) for a non-object, another kind or API
 *   version, or a request without a uid, a desired API version or a list of objects.
 */
export function parseConversionReview(review: unknown): ConversionReview {
  if (!dicts.isObject(review)) throw malformed('The conversion request is not a ConversionReview: not a JSON object.');
  const { apiVersion, kind, request } = review;
  if (kind !== KIND) throw malformed(`The conversion request is not a ConversionReview: its kind is ${JSON.stringify(kind) ?? 'missing'}.`);
  if (typeof apiVersion !== 'string' || !API_VERSIONS.includes(apiVersion)) {
    throw malformed(`The conversion request has an unsupported apiVersion ${JSON.stringify(apiVersion) ?? '(none)'}: expected ${API_VERSIONS.join(' or ')}.`);
  }
  if (!dicts.isObject(request)) throw malformed('The conversion request has no request in its ConversionReview.');
  if (typeof request['uid'] !== 'string' || request['uid'] === '') throw malformed('The conversion request has no uid.');
  if (typeof request['desiredAPIVersion'] !== 'string' || request['desiredAPIVersion'] === '') {
    throw malformed('The conversion request has no desiredAPIVersion.');
  }
  if (!Array.isArray(request['objects'])) throw malformed('The conversion request has no list of objects.');
  return { apiVersion, request: request as unknown as webhooks.ConversionRequest };
}

/** The reply of a successful conversion: the converted objects in the request's order. */
export function successResponse(review: ConversionReview, converted: readonly Record<string, unknown>[]): webhooks.ConversionReviewResponse {
  return {
    apiVersion: review.apiVersion,
    kind: KIND,
    response: { uid: review.request.uid, convertedObjects: converted, result: { status: 'Success' } },
  };
}

/** The reply of a failed conversion (R-CONVERT-203): no objects, `Failure` with the message. */
export function failureResponse(review: ConversionReview, message: string): webhooks.ConversionReviewResponse {
  return {
    apiVersion: review.apiVersion,
    kind: KIND,
    response: { uid: review.request.uid, convertedObjects: [], result: { status: 'Failure', message } },
  };
}
