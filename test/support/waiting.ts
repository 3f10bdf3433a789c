/**
 * Waiting for what a system under test does on its own time. An operator's I/O is real even when
 * its clock is virtual, so a test that expects an effect (a patch stored, a log line written)
 * polls for it in real time, with a deadline that names what never came. One copy for every
 * suite, so that all of them fail with the same clear message.
 *
 * Waiting is only for what must happen. A test that asserts that nothing happens does not wait
 * "long enough": it moves a virtual clock past the deadline, or waits for a signal from the
 * system under test that the work in question is over (see `test/support/cluster.ts` for the
 * devcluster's side).
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
    if (!settled) await clock.advance(stepMs);
  }
  return work;
}
