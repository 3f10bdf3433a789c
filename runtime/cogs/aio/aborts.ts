/**
 * AbortSignal helpers: the runtime's cancellation vocabulary. Cancellation is never a flag polled
 * here and there: it always travels as an `AbortSignal` handed to the work that may be cancelled.
 *
 * Every long-running function takes a `signal`; daemons receive one in their arguments; shutdown
 * aborts the root signal. These helpers combine signals and tie them to a `Clock` (see `clocks`),
 * so timeouts and interruptible sleeps run on virtual time in tests:
 *
 * - `sleepOrAbort(clock, ms, signal)` — the interruptible sleep of R-PATCH-7 and daemons;
 * - `anySignal(signals)` — aborted when any input is (like `AbortSignal.any`, with listener cleanup);
 * - `timeoutSignal(clock, ms)` — aborted after `ms` on the given clock (like `AbortSignal.timeout`);
 * - `follow(signals)` and `onAbort(signal, callback)` — O(1) attachment to long-lived signals.
 */

import type * as clocks from './clocks.js';

/**
 * Sleeps for `ms` on `clock` unless `signal` aborts first. Never rejects.
 *
 * @returns `true` if the full duration elapsed, `false` if the signal aborted (or was aborted).
 * @example
 * if (!(await sleepOrAbort(clock, 10_000, stopSignal))) return; // interrupted
 */
export async function sleepOrAbort(clock: clocks.Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await clock.sleep(ms, signal);
    return !signal?.aborted;
  } catch (error) {
    if (signal?.aborted) return false;
    throw error;
  }
}

/**
 * A signal that aborts when any of `signals` aborts, with that signal's reason. An input that is
 * already aborted gives an already aborted result. Listeners are removed once it aborts.
 */
export function anySignal(signals: Iterable<AbortSignal | undefined | null>): AbortSignal {
  const controller = new AbortController();
  const inputs = [...signals].filter((signal): signal is AbortSignal => signal != null);
  const already = inputs.find((signal) => signal.aborted);
  if (already) {
    controller.abort(already.reason);
    return controller.signal;
  }
  const listeners: Array<[AbortSignal, () => void]> = [];
  const cleanup = (): void => {
    for (const [signal, listener] of listeners) signal.removeEventListener('abort', listener);
  };
  for (const signal of inputs) {
    const listener = (): void => {
      cleanup();
      controller.abort(signal.reason);
    };
    listeners.push([signal, listener]);
    signal.addEventListener('abort', listener, { once: true });
  }
  return controller.signal;
}

/**
 * A signal that aborts after `ms` on `clock`, with a `TimeoutError` `DOMException` as its reason.
 * If `options.cancel` aborts first, the timer is dropped and the returned signal never aborts
 * (use it to release the clock's pending sleep once the guarded work is done).
 */
export function timeoutSignal(clock: clocks.Clock, ms: number, options?: { readonly cancel?: AbortSignal }): AbortSignal {
  const controller = new AbortController();
  sleepOrAbort(clock, ms, options?.cancel).then(
    (elapsed) => {
      if (elapsed) controller.abort(new DOMException(`The operation timed out after ${ms} ms.`, 'TimeoutError'));
    },
    () => undefined,
  );
  return controller.signal;
}

/** Whether an error is the rejection of an aborted operation (`AbortError` or `TimeoutError`). */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/**
 * One listener per long-lived signal, fanned out to its many short-lived dependents.
 *
 * Node's `EventTarget` scans all listeners of a signal on every add and remove, so thousands of
 * objects each attaching a listener to the operator's signal for every event make each event cost
 * O(objects). A fan-out attaches once and keeps its dependents in a `Set` instead: following and
 * releasing are O(1).
 */
class Fanout {
  readonly dependents = new Set<AbortController>();
  readonly callbacks = new Set<() => void>();

  constructor(parent: AbortSignal) {
    parent.addEventListener(
      'abort',
      () => {
        for (const dependent of this.dependents) dependent.abort(parent.reason);
        this.dependents.clear();
        const callbacks = [...this.callbacks];
        this.callbacks.clear();
        for (const callback of callbacks) callback();
      },
      { once: true },
    );
  }
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

function fanoutOf(signal: AbortSignal): Fanout {
  let fanout = fanouts.get(signal);
  if (!fanout) {
    fanout = new Fanout(signal);
    fanouts.set(signal, fanout);
  }
  return fanout;
}

/**
 * Calls `callback` once when `signal` aborts (at once if it already has), attached in O(1) through
 * the signal's shared fan-out; the returned function detaches it. Cheaper than `follow()` when
 * nothing needs a signal of its own: e.g. to stop waiting for a promise on the operator's signal,
 * which thousands of running daemons do at the same time. Pass a distinct function per call.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => undefined;
  }
  const fanout = fanoutOf(signal);
  fanout.callbacks.add(callback);
  return () => {
    fanout.callbacks.delete(callback);
  };
}

/**
 * A signal that aborts when any of `signals` aborts (with that reason), attached in O(1) to each
 * input through a shared fan-out; `release()` detaches it when the work it guards is done.
 *
 * @example
 * const cancellation = follow([operatorSignal, queueSignal]);
 * try { await work(cancellation.signal); } finally { cancellation.release(); }
 */
export function follow(signals: Iterable<AbortSignal | undefined | null>): { readonly signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const joined: Fanout[] = [];
  for (const input of signals) {
    if (!input) continue;
    if (input.aborted) {
      controller.abort(input.reason);
      break;
    }
    const fanout = fanoutOf(input);
    fanout.dependents.add(controller);
    joined.push(fanout);
  }
  return {
    signal: controller.signal,
    release: () => {
      for (const fanout of joined) fanout.dependents.delete(controller);
    },
  };
}

/** How many `follow()` dependents and `onAbort()` callbacks currently wait on `signal` (diagnostics and leak tests). */
export function followers(signal: AbortSignal): number {
  const fanout = fanouts.get(signal);
  return fanout === undefined ? 0 : fanout.dependents.size + fanout.callbacks.size;
}
