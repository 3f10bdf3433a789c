/**
 * Clocks: the only source of time for the runtime, injected wherever time matters so that tests can
 * run the runtime on virtual time.
 *
 * Daemons, timers, back-offs, retries and progress timestamps never read wall time directly: they
 * take a `Clock` and call `clock.now()`, `clock.sleep()` and `clock.schedule()`. Production uses
 * `realClock`; tests use a `VirtualClock`, where time moves only when the test moves it, so a test
 * can assert exact virtual durations ("two timer ticks took exactly 1.3 s") without waiting for
 * them. Kopf gets the same effect with `looptime`; kube-rs with tokio's paused clock.
 *
 * The devcluster takes a clock of the same shape without sleeping (`now()` and `schedule()`,
 * declared on its side, since neither imports the other). Every clock here is therefore also a
 * devcluster clock, and a test can pass one `VirtualClock` to both its cluster and its operator.
 *
 * Units: the `Clock` interface works in **milliseconds** (it is an internal seam). Public settings
 * and handler options stay in seconds; converting is the caller's job.
 *
 * The abort helpers built on top of clocks live in `aborts`.
 */

import { AsyncResource } from 'node:async_hooks';

/** A source of time and of sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch (may be fractional). */
  now(): number;
  /**
   * Resolves after `ms` milliseconds (immediately for `ms <= 0`). If `signal` aborts first, rejects
   * with the signal's reason; an already aborted signal rejects at once.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `callback` once after `ms` milliseconds unless the returned function is called first: a
   * timeout without a promise and a signal. (This and `now()` are all the devcluster needs.)
   */
  schedule(ms: number, callback: () => void): () => void;
  /**
   * Optional: marks real work in flight (an API request and its response) that virtual time waits
   * for before it moves on, so that code racing real I/O against virtual sleeps stays on schedule.
   * Returns `work` itself (settling as it does).
   */
  busy?<T>(work: Promise<T>): Promise<T>;
}

/** The largest delay a Node timer accepts in one go. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * A real timer of any length (longer than a Node timer can wait: chained). An unreferenced one does
 * not keep the process alive.
 */
function realTimer(ms: number, callback: () => void, referenced: boolean): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (left: number): void => {
    timer = left > MAX_TIMER_MS ? setTimeout(() => arm(left - MAX_TIMER_MS), MAX_TIMER_MS) : setTimeout(callback, Math.max(0, left));
    if (!referenced) timer.unref();
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/** Wall-clock time and real timers. */
export const realClock: Clock = Object.freeze({
  now(): number {
    return Date.now();
  },
  schedule(ms: number, callback: () => void): () => void {
    return realTimer(ms, callback, true);
  },
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const deadline = Date.now() + Math.max(0, ms);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const arm = (): void => {
        const left = deadline - Date.now();
        if (left <= 0) {
          signal?.removeEventListener('abort', onAbort);
          resolve();
          return;
        }
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (ms <= 0) {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      } else {
        timer = setTimeout(arm, Math.min(ms, MAX_TIMER_MS));
      }
    });
  },
});

/**
 * Like `clock.schedule()`, but a timer of the real clock does not keep the process alive: for a
 * deadline that matters only while something else keeps the process running (the forced exit after
 * a termination signal). On any other clock it is an ordinary scheduled callback.
 */
export function scheduleUnreferenced(clock: Clock, ms: number, callback: () => void): () => void {
  return clock === realClock ? realTimer(ms, callback, false) : clock.schedule(ms, callback);
}

interface Sleeper {
  readonly due: number;
  readonly seq: number;
  readonly resolve: () => void;
  readonly detach: () => void;
}

/** Lets pending promise continuations run (they may start new sleeps at the current time). */
async function settle(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A clock whose time advances only when told to. Sleepers wake in order of their due time (ties in
 * the order they started sleeping), and code resumed by a wake-up runs before time moves further,
 * so chains of sleeps land on exact virtual times.
 *
 * Real I/O marked with `busy()` (the runtime's API requests) is waited for, too: time does not
 * move while a request is in flight, up to `quiescenceTimeout` real milliseconds per step (so that
 * a request that never ends — a hung server — does not stop virtual time for good). An operator on
 * a virtual clock therefore talks to a real API server (the devcluster) and still keeps its
 * schedule: a timer that patches its object every 10 s fires exactly 60 times in 10 virtual minutes.
 *
 * @example
 * const clock = new VirtualClock({ start: 0 });
 * const done = clock.sleep(1500).then(() => clock.now());
 * await clock.advance(1500);
 * await done; // 1500
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly sleepers: Sleeper[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly quiescenceTimeout: number;

  /**
   * @param options.start initial time in ms since the epoch (default: 0).
   * @param options.quiescenceTimeout real milliseconds to wait for in-flight `busy()` work at each
   *   step before moving time on anyway (default: 2000).
   */
  constructor(options?: { readonly start?: number; readonly quiescenceTimeout?: number }) {
    this.current = options?.start ?? 0;
    this.quiescenceTimeout = options?.quiescenceTimeout ?? 2000;
  }

  /** How much `busy()` work is in flight. */
  get busyCount(): number {
    return this.inFlight.size;
  }

  busy<T>(work: Promise<T>): Promise<T> {
    const tracked: Promise<unknown> = work
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.inFlight.delete(tracked);
      });
    this.inFlight.add(tracked);
    return work;
  }

  /** Lets resumed code run, and waits for the real work it started (see `busy()`). */
  private async quiesce(): Promise<void> {
    await settle();
    const deadline = Date.now() + this.quiescenceTimeout;
    while (this.inFlight.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all([...this.inFlight]),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, left);
        }),
      ]);
      clearTimeout(timer);
      await settle();
    }
  }

  now(): number {
    return this.current;
  }

  /** How many sleeps are pending. */
  get pending(): number {
    return this.sleepers.length;
  }

  /** The due time of the earliest pending sleep, if any. */
  nextDue(): number | undefined {
    return this.sleepers[0]?.due;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      if (!(ms > 0)) {
        resolve();
        return;
      }
      const onAbort = (): void => {
        this.drop(sleeper);
        reject(abortReason(signal!));
      };
      const sleeper: Sleeper = {
        due: this.current + ms,
        seq: this.seq++,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.insert(sleeper);
    });
  }

  /**
   * As a Node timer does, the callback runs in the async context of the code that scheduled it
   * (not in the context of whoever moves the clock): `AsyncLocalStorage` stores, such as the
   * operator's context that gives handlers their `client`, are what they were when it was scheduled.
   */
  schedule(ms: number, callback: () => void): () => void {
    let done = false;
    const run = AsyncResource.bind(callback);
    const sleeper: Sleeper = {
      due: this.current + Math.max(0, ms),
      seq: this.seq++,
      resolve: () => {
        if (!done) {
          done = true;
          run();
        }
      },
      detach: () => undefined,
    };
    this.insert(sleeper);
    return () => {
      if (done) return;
      done = true;
      this.drop(sleeper);
    };
  }

  /**
   * Moves time forward by `ms`, waking every sleeper due on the way in order, and letting resumed
   * code run (and schedule new sleeps) before moving on. Ends exactly at `now() + ms`.
   */
  async advance(ms: number): Promise<void> {
    if (ms < 0) throw new RangeError('A virtual clock cannot go backwards.');
    const target = this.current + ms;
    await this.quiesce();
    for (;;) {
      const next = this.sleepers[0];
      if (next === undefined || next.due > target) break;
      this.wakeUpTo(next.due);
      await this.quiesce();
    }
    // Never backwards, even if another advance() moved further meanwhile.
    this.current = Math.max(this.current, target);
    await this.quiesce();
  }

  /** Advances to an absolute virtual time (no-op if it is in the past). */
  async advanceTo(time: number): Promise<void> {
    await this.advance(Math.max(0, time - this.current));
  }

  /**
   * Wakes sleepers one due time after another until none is pending (or `limit` ms have passed,
   * default one virtual day, which guards against endless timer loops). Returns the time advanced.
   */
  async runUntilIdle(options?: { readonly limit?: number }): Promise<number> {
    const started = this.current;
    const deadline = started + (options?.limit ?? 86_400_000);
    await this.quiesce();
    for (;;) {
      const next = this.sleepers[0];
      if (next === undefined || next.due > deadline) break;
      this.wakeUpTo(next.due);
      await this.quiesce();
    }
    return this.current - started;
  }

  private wakeUpTo(due: number): void {
    this.current = Math.max(this.current, due);
    while (this.sleepers.length > 0 && this.sleepers[0]!.due <= due) this.sleepers.shift()!.resolve();
  }

  private insert(sleeper: Sleeper): void {
    let index = this.sleepers.length;
    while (index > 0) {
      const before = this.sleepers[index - 1]!;
      if (before.due < sleeper.due || (before.due === sleeper.due && before.seq < sleeper.seq)) break;
      index -= 1;
    }
    this.sleepers.splice(index, 0, sleeper);
  }

  private drop(sleeper: Sleeper): void {
    const index = this.sleepers.indexOf(sleeper);
    if (index >= 0) this.sleepers.splice(index, 1);
    sleeper.detach();
  }
}
