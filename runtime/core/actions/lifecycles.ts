/**
 * Lifecycles: which of the awakened handlers run in this processing cycle (R-HANDLERS-5).
 *
 * `execution` offers a lifecycle the handlers that are awakened (not finished, not delayed) in
 * registration order, plus the progress `State`; the lifecycle returns the ones to invoke now, in
 * the order to invoke them. The default, `asap`, picks exactly one — the handler with the fewest
 * retries so far, ties broken by registration order — so every handler normally runs in its own
 * cycle with a PATCH of progress records in between, and a failing handler never blocks the others.
 *
 * The default can be replaced process-wide with `setDefaultLifecycle()`; embedded operators and
 * `execute()` of sub-handlers may pass one explicitly.
 */

import type * as loggers from '../../cogs/structs/loggers.js';
import * as logging from './logging.js';
import type * as progression from './progression.js';

/** Anything with a handler id. */
export interface Identified {
  readonly id: string;
}

/** What a lifecycle gets besides the handlers: the progress state, and any kwargs of the cause. */
export interface LifecycleContext {
  readonly state: progression.State;
  readonly [key: string]: unknown;
}

/**
 * A lifecycle: `(handlers, { state, ...kwargs }) => handlers` (Kopf's signature). It must return a
 * subset of `handlers` and must not mutate the input.
 */
export type Lifecycle = <H extends Identified>(handlers: readonly H[], context: LifecycleContext) => H[];

/** All awakened handlers, in registration order, in one cycle. */
export const allAtOnce: Lifecycle = (handlers) => [...handlers];

/** Only the first awakened handler (a failing one blocks the rest until it finishes). */
export const oneByOne: Lifecycle = (handlers) => handlers.slice(0, 1);

/** One awakened handler chosen at random. */
export const randomized: Lifecycle = (handlers) => (handlers.length === 0 ? [] : [handlers[Math.floor(Math.random() * handlers.length)]!]);

/** All awakened handlers in a random order. */
export const shuffled: Lifecycle = (handlers) => {
  const result = [...handlers];
  for (let i = result.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [result[i], result[j]] = [result[j]!, result[i]!];
  }
  return result;
};

/**
 * The default: exactly one handler, the one with the fewest retries so far (ties: the first
 * registered). Handlers unknown to the state count as never retried.
 */
export const asap: Lifecycle = (handlers, { state }) => {
  let best: (typeof handlers)[number] | undefined;
  let fewest = Infinity;
  for (const handler of handlers) {
    const retries = state.has(handler.id) ? state.get(handler.id).retries : 0;
    if (retries < fewest) {
      best = handler;
      fewest = retries;
    }
  }
  return best === undefined ? [] : [best];
};

let defaultLifecycle: Lifecycle | null = null;

/** The process-wide default lifecycle: the one set with `setDefaultLifecycle()`, else `asap`. */
export function getDefaultLifecycle(): Lifecycle {
  return defaultLifecycle ?? asap;
}

/**
 * Replaces the process-wide default lifecycle (`null` restores `asap`). Replacing one that was
 * already set logs a WARNING, as it usually means two modules fight over it.
 */
export function setDefaultLifecycle(lifecycle: Lifecycle | null, logger: loggers.Logger = logging.getLogger('kopf.lifecycles')): void {
  if (defaultLifecycle !== null && lifecycle !== null) {
    logger.warning(`The default lifecycle is already set to ${nameOf(defaultLifecycle)}, overriding it to ${nameOf(lifecycle)}.`);
  }
  defaultLifecycle = lifecycle;
}

function nameOf(lifecycle: Lifecycle): string {
  return lifecycle.name || 'an anonymous lifecycle';
}
