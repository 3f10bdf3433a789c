/**
 * The ConversionReview on the wire (D-CONV-401, D-CONV-402): which review version a CRD's webhook
 * gets (the first of its `conversionReviewVersions` the server knows), the request a real API server
 * sends, and the checks it makes of the answer before it trusts a converted object — the review's
 * type, the echoed uid, a `Success` result, one object per object sent, each in the desired
 * apiVersion with its kind, name, namespace and uid unchanged, and its metadata restored from the
 * original except labels and annotations (which are validated as object metadata is).
 *
 * Pure functions over JSON; the call itself is the webhook client's (`admission/calling.ts`), the
 * order of calls and errors are `conversion.ts`'s.
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as objectmeta from '../meta/objectmeta.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** The review versions the server speaks, newest first. */
export const KNOWN_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type ReviewVersion = (typeof KNOWN_REVIEW_VERSIONS)[number];

/** The first listed version the server knows, or undefined (the call then fails). */
export function negotiate(conversionReviewVersions: readonly string[] | undefined): ReviewVersion | undefined {
  for (const v of conversionReviewVersions ?? []) {
    if ((KNOWN_REVIEW_VERSIONS as readonly string[]).includes(v)) return v as ReviewVersion;
  }
  return undefined;
}

/** The review sent to the webhook. */
export function buildRequest(version: ReviewVersion, uid: string, desiredAPIVersion: string, objects: readonly JsonObject[]): JsonObject {
  return {
    kind: 'ConversionReview',
    apiVersion: `apiextensions.k8s.io/${version}`,
    request: { uid, desiredAPIVersion, objects },
  };
}

/** The outcome of reading an answer: the converted objects, or the detail of why not. */
export type ReadResult = { ok: true; objects: JsonObject[] } | { ok: false; detail: string };

/**
 * The converted objects of a webhook's answer, checked as upstream checks them. v1beta1 answers
 * are not checked for their type and uid (upstream skips those for compatibility).
 */
export function readResponse(version: ReviewVersion, uid: string, answer: JsonObject): ReadResult {
  if (version === 'v1') {
    const got = `${String(answer['apiVersion'] ?? '')}, Kind=${String(answer['kind'] ?? '')}`;
    if (answer['apiVersion'] !== 'apiextensions.k8s.io/v1' || answer['kind'] !== 'ConversionReview') {
      return { ok: false, detail: `expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${got}` };
    }
  }
  const response = answer['response'];
  if (!json.isObject(response)) return { ok: false, detail: 'no response provided' };
  if (version === 'v1' && response['uid'] !== uid) {
    return { ok: false, detail: `expected response.uid="${uid}", got "${String(response['uid'] ?? '')}"` };
  }
  const result = json.isObject(response['result']) ? response['result'] : {};
  if (result['status'] !== 'Success') {
    const message = typeof result['message'] === 'string' ? result['message'] : '';
    return { ok: false, detail: message || `response.result.status was '${String(result['status'] ?? '')}', not 'Success'` };
  }
  const converted = response['convertedObjects'];
  return { ok: true, objects: Array.isArray(converted) ? (converted as JsonObject[]) : [] };
}

/** Whether a converted object has the desired apiVersion and the original's kind; a string names the problem. */
export function typeProblem(original: JsonObject, converted: JsonObject, desiredAPIVersion: string): string | undefined {
  if (converted['apiVersion'] !== desiredAPIVersion) {
    return `invalid groupVersion (expected ${desiredAPIVersion}, received ${String(converted['apiVersion'] ?? '')})`;
  }
  if (converted['kind'] !== original['kind']) return `invalid kind (expected ${String(original['kind'])}, received ${String(converted['kind'] ?? '')})`;
  return undefined;
}

/** Whether a converted object keeps the original's kind, name, namespace and uid (upstream's validateConvertedObject). */
export function identityProblem(original: JsonObject, converted: JsonObject): string | undefined {
  if (converted['kind'] !== original['kind']) return `must have the same kind: ${String(original['kind'])} != ${String(converted['kind'] ?? '')}`;
  const before = metaOf(original);
  const after = metaOf(converted);
  for (const [field, label] of [
    ['name', 'name'],
    ['namespace', 'namespace'],
    ['uid', 'UID'],
  ] as const) {
    const e = String(before[field] ?? '');
    const a = String(after[field] ?? '');
    if (e !== a) return `must have the same ${label}: ${e} != ${a}`;
  }
  return undefined;
}

/**
 * The converted object with the original's metadata, except labels and annotations, which are the
 * converted object's (validated when they changed); a string names the problem (upstream's
 * restoreObjectMeta).
 */
export function restoreMetadata(original: JsonObject, converted: JsonObject): JsonObject | string {
  const answered = converted['metadata'];
  if (answered === undefined) return 'missing metadata in converted object';
  if (!json.isObject(answered)) return `invalid metadata of type ${typeName(answered)} in converted object`;
  const restored: JsonObject = structuredClone(metaOf(original));
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete restored[field];
      continue;
    }
    if (!json.isObject(value)) return `invalid metadata.${field} of type ${typeName(value)} in converted object`;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') return `metadata.${field}[${k}] must be a string, but is ${typeName(v)} in converted object`;
    }
    const strings = value as Record<string, string>;
    if (!json.deepEqual(strings, restored[field] ?? {})) {
      // Upstream names the annotations' path `metadata.annotation`.
      const errors =
        field === 'labels' ? objectmeta.validateLabels(strings, 'metadata.labels') : objectmeta.validateAnnotations(strings, 'metadata.annotation');
      if (errors.length) return fielderrors.renderList(errors);
    }
    restored[field] = strings;
  }
  return { ...converted, metadata: restored };
}

const metaOf = (o: JsonObject): JsonObject => (json.isObject(o['metadata']) ? o['metadata'] : {});

function typeName(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'object' && v !== null) return 'map[string]interface {}';
  return typeof v;
}
