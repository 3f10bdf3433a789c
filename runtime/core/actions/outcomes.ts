/**
 * Outcomes: the result of invoking one handler once, as a value rather than a thrown error (so that
 * the retry rules read one kind of thing, in one place), and delivering the results of successful
 * invocations to the object's status (R-STORAGE-14).
 *
 * `execution` returns one `Outcome` per invoked handler instead of throwing; `progression` applies
 * outcomes to the progress state; the reactor reads them (never exceptions) and calls
 * `deliverResults()` to write `status.<handler id>` into the cycle's patch.
 */

import * as dicts from '../../cogs/structs/dicts.js';
import type * as patches from '../../cogs/structs/patches.js';

/**
 * The result of invoking one handler once (Kopf's `Outcome`). The reactor reads outcomes, never
 * exceptions, so that the decisions on results and errors are made in one place.
 */
export interface Outcome {
  /** Whether the handler is finished for this change (succeeded, or failed for good). */
  readonly final: boolean;
  /** Seconds until the next attempt, for unfinished handlers; `null`/absent: the next cycle. */
  readonly delay?: number | null;
  /** The handler's return value (successful invocations only). */
  readonly result?: unknown;
  /** Why the invocation failed; absent on success (and for errors ignored by `ErrorsMode.IGNORED`). */
  readonly error?: Error;
  /** Ids of all sub-handlers (any depth) seen during the invocation. */
  readonly subrefs?: readonly string[];
}

/**
 * Writes the results of successful invocations to `status.<handler id>` (R-STORAGE-14): plain
 * objects are merged key by key; other non-null values replace `status.<id>`; `null`/`undefined`
 * results and failed invocations write nothing. Values go through JSON (a `Date` becomes a string).
 */
export function deliverResults(outcomes: ReadonlyMap<string, Outcome>, patch: patches.PatchBase<object>): void {
  for (const [id, outcome] of outcomes) {
    if (outcome.error !== undefined || outcome.result === null || outcome.result === undefined) continue;
    const result = toJson(outcome.result);
    if (result === undefined || result === null) continue;
    if (dicts.isObject(result)) {
      if (!dicts.isObject(patch.getAt(['status', id]))) patch.setAt(['status', id], {});
      for (const [key, value] of Object.entries(result)) patch.setAt(['status', id, key], value);
    } else {
      patch.setAt(['status', id], result);
    }
  }
}

function toJson(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}
