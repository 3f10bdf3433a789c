/**
 * K8s-events as queued values: what the event helpers and the per-object loggers hand to the
 * background poster (R-POST-1/2).
 *
 * Producing an event never does I/O: `kopf.event()` and friends (`engines/posting`) and the
 * per-object loggers (`logging`, when `settings.posting.loggers` is on) build a `QueuedEvent` and
 * pass it to an `EventSink`; the poster task in `engines/posting` drains the queue and POSTs the
 * payload of R-POST-3. This module holds the shared shapes, so `logging` (here, in actions) and
 * the poster (in engines) agree without importing each other.
 */

import * as dicts from '../../cogs/structs/dicts.js';

/** The `involvedObject` of an event, without empty fields (Kopf: `build_object_reference`). */
export interface ObjectReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly namespace?: string;
}

/** One k8s-event waiting to be posted. */
export interface QueuedEvent {
  readonly ref: ObjectReference;
  /** `Normal`, `Warning`, `Error`, or anything the user passes to `event()`. */
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

/** Accepts events for background posting; never blocks and never throws. */
export type EventSink = (event: QueuedEvent) => void;

/**
 * The reference to an object in events and JSON logs: `apiVersion`, `kind`, `name`, `uid`,
 * `namespace`, in that order, empty ones omitted.
 */
export function buildObjectReference(body: unknown): ObjectReference {
  const field = (path: readonly string[]): string | undefined => {
    const value = dicts.resolve(body, path);
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const ref: Record<string, string> = {};
  const entries: Array<[string, string | undefined]> = [
    ['apiVersion', field(['apiVersion'])],
    ['kind', field(['kind'])],
    ['name', field(['metadata', 'name'])],
    ['uid', field(['metadata', 'uid'])],
    ['namespace', field(['metadata', 'namespace'])],
  ];
  for (const [key, value] of entries) if (value !== undefined) ref[key] = value;
  return ref;
}
