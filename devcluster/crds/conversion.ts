/**
 * Conversion of custom objects between the versions of their CRD (D-CRD-5, D-CRD-22, D-CONV-401..):
 * what lets one stored object be served through every served version. With `conversion.strategy:
 * None` only `apiVersion` changes, synchronously, as before. With `Webhook` the server POSTs a
 * `ConversionReview` to the CRD's webhook, as kube-apiserver does, and checks its answer
 * (`conversionreview.ts`).
 *
 * The design, since a webhook call is asynchronous and the request pipeline's conversion hooks
 * (`Strategy.toExternal`/`toStorage`/`convertTo`) are synchronous: a CRD with a webhook gets an
 * extra asynchronous hook, `Strategy.convertObjects`, which the API layer (`api/converting.ts`)
 * runs as a step of its own — before the synchronous code that shows stored objects (get, list,
 * watch, tables, deletes, write responses), and after mutating admission on writes (to the storage
 * version, right before storing). The synchronous hooks then only ever see objects already in their
 * target version; handed one that is not, they fail with the 500 of a conversion that was not done
 * (a bug of the caller, never silently unconverted fields). `None` CRDs and built-in kinds have no
 * `convertObjects` and take the synchronous path as before, with no extra step.
 */
import * as calling from '../admission/calling.js';
import * as statuses from '../server/statuses.js';
import * as review from './conversionreview.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import type * as schemas from './schemas.js';

/** Converts an object of the CRD (in any of its versions) to `apiVersion`, as a shallow copy; throws an `ApiError` when it cannot. */
export type Converter = (obj: JsonObject, apiVersion: string) => JsonObject;

/**
 * Converts the objects not already in `apiVersion` with one webhook call (none when every object
 * is), keeping the others and the order; rejects with a 500 `ApiError` when the call or its answer fails.
 */
export type AsyncConverter = (objs: readonly JsonObject[], apiVersion: string) => Promise<JsonObject[]>;

/** Upstream's timeout of conversion webhook calls (its webhook client's default; not configurable on the CRD). */
export const CONVERSION_TIMEOUT_SECONDS = 30;

/** One finished conversion webhook call, as seen from the API server's side. */
export interface ConversionCallRecord {
  /** Upstream's name of the webhook client: `conversion_webhook_for_<crd name>`. */
  readonly name: string;
  readonly kind: 'conversion';
  readonly ms: number;
  readonly ok: boolean;
}

export interface WebhookConversionOptions {
  /** Service resolution and TLS leniency, shared with admission webhooks (D-ADM-10, D-ADM-11). */
  readonly call: calling.CallOptions;
  /** Posts the review (the admission webhook client, injected to keep this module pure of I/O). */
  readonly post: typeof calling.callWebhook;
  /** A fresh request uid. */
  readonly uid: () => string;
  /** The call's timeout (default upstream's 30 s; tests inject a small one). */
  readonly timeoutSeconds?: number;
  /** Observes every finished call. */
  readonly onCall?: (call: ConversionCallRecord) => void;
}

/**
 * The synchronous converter of a CRD's conversion strategy: `None` rewrites apiVersion; `Webhook`
 * accepts only objects already in the target version (the webhook call happened before).
 *
 * @example
 * converterFor(webhookCrd)({ apiVersion: 'example.com/v1', kind: 'Widget', … }, 'example.com/v2')
 * // throws 500: conversion webhook for example.com/v1, Kind=Widget failed: the conversion was not prepared
 */
export function converterFor(crd: schemas.CustomResourceDefinition): Converter {
  const kind = crd.spec.names.kind;
  if (crd.spec.conversion?.strategy !== 'Webhook') return (obj, apiVersion) => ({ ...obj, apiVersion });
  return (obj, apiVersion) => {
    const from = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
    if (from !== apiVersion) throw conversionNotPrepared(from, kind, apiVersion);
    return { ...obj };
  };
}

/** The 500 of a conversion the synchronous path was handed unprepared (a caller's bug). */
export function conversionNotPrepared(fromApiVersion: string, kind: string, toApiVersion: string): statuses.ApiError {
  return failure(`conversion webhook for ${fromApiVersion}, Kind=${kind} failed: the conversion to ${toApiVersion} was not prepared (a devcluster bug)`);
}

const failure = (message: string): statuses.ApiError => statuses.internal(message, [{ message }]);

/** The asynchronous converter of a CRD whose strategy is `Webhook`, or undefined for `None`. */
export function webhookConverterFor(crd: schemas.CustomResourceDefinition, opts: WebhookConversionOptions): AsyncConverter | undefined {
  const conversion = crd.spec.conversion;
  if (conversion?.strategy !== 'Webhook') return undefined;
  const spec = (conversion.webhook ?? {}) as unknown as JsonObject;
  const name = `conversion_webhook_for_${crd.metadata?.name ?? ''}`;
  // Upstream's conversion client is built by the webhook client manager shared with admission: its
  // default client configuration sets the `kube-apiserver-admission` agent and the 30 s timeout
  // (which client-go also sends as `?timeout=30s`).
  const shape: calling.CallShape = { defaultTimeoutSeconds: opts.timeoutSeconds ?? CONVERSION_TIMEOUT_SECONDS, userAgent: calling.ADMISSION_USER_AGENT };
  return async (objs, apiVersion) => {
    const toSend = objs.filter((o) => o['apiVersion'] !== apiVersion);
    if (toSend.length === 0) return [...objs];
    const version = review.negotiate(conversion.webhook?.conversionReviewVersions);
    if (!version) throw failure('no supported conversion review versions');
    const first = toSend[0]!;
    const what = `${String(first['apiVersion'] ?? '')}, Kind=${String(first['kind'] ?? '')}`;
    const uid = opts.uid();
    const started = performance.now();
    const answer = await opts.post(spec, review.buildRequest(version, uid, apiVersion, toSend), opts.call, shape);
    const read: review.ReadResult = answer.ok ? review.readResponse(version, uid, answer.response) : answer;
    opts.onCall?.({ name, kind: 'conversion', ms: performance.now() - started, ok: read.ok });
    if (!read.ok) throw failure(`conversion webhook for ${what} failed: ${read.detail}`);
    if (read.objects.length !== toSend.length) {
      throw failure(`conversion webhook for ${what} returned ${read.objects.length} objects, expected ${toSend.length}`);
    }
    const converted = toSend.map((original, i) => checked(original, read.objects[i], apiVersion, what, objs.length > 1 ? i : undefined));
    let next = 0;
    return objs.map((o) => (o['apiVersion'] === apiVersion ? o : converted[next++]!));
  };
}

/**
 * One converted object checked against its original and given the original's metadata (except
 * labels and annotations); `index` is set for reviews of several objects (upstream's list
 * messages, which count from one once an object was read).
 */
function checked(original: JsonObject, converted: unknown, apiVersion: string, what: string, index: number | undefined): JsonObject {
  const at = index === undefined ? 'invalid object' : `invalid converted object at index ${index}`;
  if (!json.isObject(converted)) throw failure(`conversion webhook for ${what} returned ${at}: the converted object is not an object`);
  const shown = index === undefined ? 'invalid object at index 0' : `invalid converted object at index ${index + 1}`;
  const typeProblem = review.typeProblem(original, converted, apiVersion);
  if (typeProblem) throw failure(`conversion webhook for ${what} returned ${shown}: ${typeProblem}`);
  const identityProblem = review.identityProblem(original, converted);
  if (identityProblem) throw failure(`conversion webhook for ${what} returned ${index === undefined ? at : shown}: ${identityProblem}`);
  const restored = review.restoreMetadata(original, converted);
  if (typeof restored === 'string') {
    const where = index === undefined ? 'invalid metadata' : `invalid metadata in object at index ${index + 1}`;
    throw failure(`conversion webhook for ${what} returned ${where}: ${restored}`);
  }
  return restored;
}
