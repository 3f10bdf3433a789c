/**
 * Error throttling of one object's processing (R-QUEUE-8).
 *
 * Handler errors are handled by `execution`; what reaches here are unexpected errors of a whole
 * processing cycle (framework bugs, API errors escalated after the client's retries). Instead of
 * retrying in a tight loop, the object's processing is suspended for a delay taken from
 * `settings.queueing.errorDelays` (the last one repeats once the sequence is exhausted; an empty
 * sequence disables throttling). Events arriving while suspended are skipped, except that when a
 * delay fully elapses, the event being processed at that moment goes ahead. A successful cycle
 * resets the sequence. The state lives in memory only (one `Throttler` per object).
 *
 * The suspension sleeps are interruptible by the object's *pressure* (a newer event queued,
 * R-QUEUE-3), given as an `AbortSignal`: an interrupted sleep keeps the throttling active and skips
 * the event, so only the newest one is processed when the delay is over.
 *
 * A cycle that failed on a 403 (the operator's RBAC lacks a rule) is throttled the same way, but
 * logged at DEBUG: the client reported the denial once already (R-SEC-1).
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import * as clientErrors from '../../cogs/client/errors.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as errors from './errors.js';

/** The throttling state of one object (Kopf's `Throttler`). */
export class Throttler {
  /** While set, processing is suspended until this moment (ms since the epoch). */
  activeUntil: number | null = null;
  /** The delay used last, repeated when the sequence is exhausted. */
  lastUsedDelay: number | null = null;
  /** @internal The remaining delays of the active sequence; `null` when not throttling. */
  sourceOfDelays: Iterator<number> | null = null;
}

/** What happened to the throttled block. */
export type ThrottledResult<T> =
  | { readonly status: 'skipped' }
  | { readonly status: 'done'; readonly value: T }
  | { readonly status: 'failed'; readonly error: unknown };

const OVER = 'Throttling is over. Switching back to normal operations.';

/** Python-like `repr()` of an error for the throttling log: `TypeName('message')`. */
export function reprError(error: unknown): string {
  const message = errors.errorMessage(error);
  return `${errors.typeNameOf(error)}(${message ? `'${message}'` : ''})`;
}

/**
 * Runs `body` unless the object is throttled; throttles it after an unexpected error (which is
 * logged with its stack trace and not re-thrown) and sleeps out the delay right away.
 *
 * @param options.delays seconds, e.g. `settings.queueing.errorDelays`.
 * @param options.wakeup the object's pressure: aborts when a newer event arrives (or a function
 *   giving it, asked only when there is a sleep to interrupt).
 * @param options.errors which errors are throttled (default: all); others are re-thrown.
 * @example
 * const result = await throttled({ throttler, delays: settings.queueing.errorDelays, clock, logger, wakeup },
 *   () => processCycle(event));
 */
export async function throttled<T>(
  options: {
    readonly throttler: Throttler;
    readonly delays: readonly number[];
    readonly clock: clocks.Clock;
    readonly logger: loggers.Logger;
    readonly wakeup?: AbortSignal | (() => AbortSignal);
    readonly errors?: (error: unknown) => boolean;
  },
  body: () => T | Promise<T>,
): Promise<ThrottledResult<T>> {
  const { throttler, clock, logger, wakeup } = options;
  const sleepOut = async (): Promise<void> => {
    if (throttler.activeUntil === null) return;
    if (await aborts.sleepOrAbort(clock, throttler.activeUntil - clock.now(), typeof wakeup === 'function' ? wakeup() : wakeup)) {
      throttler.activeUntil = null;
      logger.info(OVER);
    }
  };

  // Not throttled (nearly always): no sleep to await at all.
  if (throttler.activeUntil !== null) await sleepOut();
  if (throttler.activeUntil !== null) return { status: 'skipped' };

  let result: ThrottledResult<T>;
  try {
    result = { status: 'done', value: await body() };
    throttler.sourceOfDelays = null;
    throttler.lastUsedDelay = null;
  } catch (error) {
    if (options.errors !== undefined && !options.errors(error)) throw error;
    throttler.sourceOfDelays ??= options.delays[Symbol.iterator]();
    const next = throttler.sourceOfDelays.next();
    const delay = next.done ? throttler.lastUsedDelay : next.value;
    if (delay !== null) {
      throttler.lastUsedDelay = delay;
      throttler.activeUntil = clock.now() + delay * 1000;
      // A 403 is the RBAC's, reported once by the client (R-SEC-1): not again for every object.
      if (clientErrors.isForbidden(error)) logger.debug(`Throttling for ${delay} seconds due to a forbidden request: ${reprError(error)}`);
      else logger.error(`Throttling for ${delay} seconds due to an unexpected error: ${reprError(error)}`, { error });
    }
    result = { status: 'failed', error };
  }
  if (throttler.activeUntil !== null) await sleepOut();
  return result;
}
