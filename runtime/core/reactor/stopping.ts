/**
 * What stops an operator, and how its tasks are waited for while it stops (R-LIFE-3/4/6,
 * R-ACTIVITY-3). A stop request can come from several places — the user's stop flag (an
 * `AbortSignal`, a promise, or an object with `wait()`), SIGINT/SIGTERM when the operator owns the
 * process — and every wait during the stop must have a deadline, or one stuck task would keep the
 * process alive forever. Hence, here: the stop and ready flags in all their accepted shapes, OS
 * signal handlers (installed only when asked to), the forced "ultimate exit" after a termination
 * signal, and waiting for tasks with a deadline. The root tasks of `roots` watch and raise the
 * flags; `running` composes the rest into the graceful stop sequence.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import * as clocks from '../../cogs/aio/clocks.js';

/** A stop flag (R-LIFE-1): an abort signal, a promise, or anything with `wait()`; raised when it settles. */
export type StopFlag = AbortSignal | PromiseLike<unknown> | { wait(): PromiseLike<unknown> };

/** A ready flag (R-ACTIVITY-3): anything with `set()`, or a function; raised after the startup activity. */
export type ReadyFlag = { set(): void } | ((...args: unknown[]) => void);

/** The OS signals that stop an operator that owns its process. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = Object.freeze(['SIGINT', 'SIGTERM'] as NodeJS.Signals[]);

/**
 * Waits until the stop flag is raised (a promise or `wait()` rejecting counts as raised too).
 *
 * @returns `true` when the flag was raised, `false` when `signal` aborted first.
 */
export async function waitForStopFlag(flag: StopFlag, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  let raised: PromiseLike<unknown>;
  if (flag instanceof AbortSignal) {
    if (flag.aborted) return true;
    raised = new Promise<void>((resolve) => flag.addEventListener('abort', () => resolve(), { once: true }));
  } else if ('wait' in flag && typeof flag.wait === 'function') {
    raised = flag.wait();
  } else {
    raised = flag as PromiseLike<unknown>;
  }
  let onAbort = (): void => undefined;
  const stopped = new Promise<boolean>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      Promise.resolve(raised).then(
        () => true,
        () => true,
      ),
      stopped,
    ]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Raises a ready flag: calls `set()`, or the function itself. */
export function raiseReadyFlag(flag: ReadyFlag): void {
  if (typeof flag === 'function') flag();
  else flag.set();
}

/**
 * Installs SIGINT/SIGTERM handlers on the process (only for operators that own it, R-LIFE-6).
 *
 * @returns a function that removes them again.
 */
export function installSignalHandlers(onSignal: (name: NodeJS.Signals) => void): () => void {
  const listeners = STOP_SIGNALS.map((name) => [name, () => onSignal(name)] as const);
  for (const [name, listener] of listeners) process.on(name, listener);
  return () => {
    for (const [name, listener] of listeners) process.off(name, listener);
  };
}

/**
 * Schedules the forced exit of R-LIFE-4: `exit(1)` after `timeout` seconds (`null`: never) on the
 * operator's clock. A real timer does not keep the process alive: it only fires if something else
 * does.
 */
export function scheduleUltimateExit(timeout: number | null, exit: (code: number) => void, clock: clocks.Clock = clocks.realClock): void {
  if (timeout === null || timeout === undefined) return;
  clocks.scheduleUnreferenced(clock, Math.max(0, timeout * 1000), () => exit(1));
}

/** A task as the stop sequence sees it. */
export interface Awaited {
  readonly name: string;
  /** Never rejects (errors are collected elsewhere). */
  readonly settled: Promise<void>;
  /** Whether it has settled. */
  isSettled(): boolean;
}

/**
 * Waits for tasks to settle, but at most `ms` on `clock`.
 *
 * @returns the tasks still pending when the time ran out (empty if all settled).
 */
export async function settleWithin(tasks: readonly Awaited[], ms: number, clock: clocks.Clock): Promise<Awaited[]> {
  const pending = tasks.filter((task) => !task.isSettled());
  if (pending.length === 0) return [];
  const done = new AbortController();
  const timer = aborts.sleepOrAbort(clock, ms, done.signal);
  await Promise.race([Promise.all(pending.map((task) => task.settled)), timer]);
  done.abort();
  await timer;
  return pending.filter((task) => !task.isSettled());
}
