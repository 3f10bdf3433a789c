/**
 * Object bodies and watch-events in their raw form: the values every layer above passes around
 * between the API client and the handlers, defined once at the bottom so that none of those layers
 * needs another's types. Also the identity by which per-object work is keyed (R-QUEUE-1); what
 * handlers get are read-only views over these bodies (R-WATCH-1/3, R-KWARGS-1/8).
 */
import type * as resources from './resources.js';

/** An object as received from the API (plain JSON). */
export type RawBody = resources.KubernetesObject & { [key: string]: unknown };

/** `type: null` marks events synthesised from the initial listing (R-WATCH-1). */
export type RawEventType = null | 'ADDED' | 'MODIFIED' | 'DELETED';

export interface RawEvent<Body extends object = RawBody> {
  readonly type: RawEventType;
  readonly object: Body;
}

/** The object identity of R-QUEUE-1: the uid, or a synthetic key for objects without one. */
export function objectKey(body: RawBody): string {
  const meta = body.metadata ?? {};
  if (meta.uid) return meta.uid;
  const part = (v: unknown): string => (v === undefined || v === null || v === '' ? '-' : String(v));
  return [part(body.kind), part(body.apiVersion), part(meta.name), part(meta.namespace), part(meta.creationTimestamp)].join('//');
}
