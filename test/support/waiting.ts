/**
 * Waiting for what a system under test does on its own time. An operator's I/O is real even when
 * its clock is virtual, so a test that expects an effect (a patch stored, a log line written)
 * polls for it in real time, with a deadline that names what never came. One copy for every
 * suite, so that all of them fail with the same clear message.
 *
 * Waiting is only for what must happen. A test that asserts that nothing happens does not wait
 * "long enough": it moves a virtual clock past the deadline, or waits for a signal from the
 * system under test that the work in question is over (`test/support/signals.ts` for the
 * operator's log lines, `flushed()` here for code that is purely in memory).
 *
 * This module is the one place of the suite where test code lets real time pass between polls;
 * the other `setTimeout`s of the suite are deadlines (a timeout that fails a test) or the
 * deliberate delays of a fake, each commented where it stands.
 */

/** How often the predicates are polled (real milliseconds). */
const INTERVAL_MS = 10;

/**
 * Polls `read` until it returns a value other than `undefined`, and returns that value; rejects
 * after `timeoutMs` real milliseconds with an error naming `what`.
 */
export async function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 10_000, intervalMs = INTERVAL_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Resolves once `predicate` holds; rejects naming `what` after `timeoutMs` real milliseconds. */
export async function eventually(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  await until(async () => ((await predicate()) ? true : undefined), what, timeoutMs);
}

/**
 * Resolves once every promise callback queued so far has run (one turn of the event loop). For
 * code that is purely in memory, this is the explicit signal that it has done all it can do on
 * its own: a test asserts right after it that something did not happen (still waiting for a
 * toggle, a populate, readiness) instead of sleeping "long enough". Not for real I/O.
 */
export function flushed(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A virtual clock as these helpers move it (`VirtualClock` of the runtime). */
export interface MovableClock {
  now(): number;
  advance(ms: number): Promise<void>;
}

/**
 * Keeps a virtual clock moving until `predicate` holds, and returns the virtual milliseconds it
 * took: for what waits on the clock at a moment the test cannot know (a watcher's reconnection, a
 * Lease's expiry) while doing real I/O on the way. Each step checks the predicate, lets real I/O
 * progress for `pauseMs` real milliseconds, checks again, then moves the clock by `stepMs`; fails
 * naming `what` once `limitMs` virtual milliseconds have passed.
 */
export async function advanceUntil(
  clock: MovableClock,
  predicate: () => boolean,
  what: string,
  options: { readonly stepMs?: number; readonly limitMs?: number; readonly pauseMs?: number } = {},
): Promise<number> {
  const { stepMs = 100, limitMs = 60_000, pauseMs = 5 } = options;
  const since = clock.now();
  while (!predicate()) {
    if (clock.now() - since >= limitMs) throw new Error(`Virtual time ran out (${limitMs} ms) waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    if (!predicate()) await clock.advance(stepMs);
  }
  return clock.now() - since;
}

/**
 * Keeps a virtual clock moving until `work` settles, and returns (or throws) what it settled with:
 * for work that sleeps on the virtual clock while doing real I/O, such as an operator's graceful
 * stop. Each step moves the clock by `stepMs` virtual milliseconds, then lets `pauseMs` real
 * milliseconds pass so that real I/O can progress (none with `pauseMs: 0`).
 */
export async function advanceUntilSettled<T>(
  clock: { advance(ms: number): Promise<void> },
  work: Promise<T>,
  options: { readonly stepMs?: number; readonly pauseMs?: number } = {},
): Promise<T> {
  const { stepMs = 1000, pauseMs = 10 } = options;
  let settled = false;
  const observed = work.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  while (!settled) {
    if (pauseMs > 0) await Promise.race([observed, new Promise((resolve) => setTimeout(resolve, pauseMs))]);
    else await flushed();
    if (!settled) await clock.advance(stepMs);
  }
  return work;
}
