/**
 * The stop flag of daemons and timers (R-DAEMON-5): why a daemon is asked to stop, and the
 * `stopped` object a daemon receives in its arguments.
 *
 * The daemons engine owns one `DaemonStopper` per running daemon; it sets the flag with a reason
 * (filters mismatch, deletion, pausing, exit…) and, at the forced stage of R-DAEMON-6, aborts the
 * signal. The daemon sees the read-only side, `DaemonStopped`: `isSet()`, `reason`, `wait()` and
 * `signal`. Kopf keeps the same pair in `_core/intents/stoppers.py`.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';

/**
 * Why a daemon is being stopped: a bit-flag set (several reasons may accumulate).
 * Kopf: `kopf.DaemonStoppingReason`.
 */
export const DaemonStoppingReason = Object.freeze({
  DONE: 1,
  FILTERS_MISMATCH: 2,
  RESOURCE_DELETED: 4,
  OPERATOR_PAUSING: 8,
  OPERATOR_EXITING: 16,
  DAEMON_SIGNALLED: 32,
  DAEMON_CANCELLED: 64,
  DAEMON_ABANDONED: 128,
} as const);
/** A combination of `DaemonStoppingReason` flags. */
export type DaemonStoppingReason = number;

/** The names of the flags set in a reason, e.g. `['RESOURCE_DELETED', 'OPERATOR_EXITING']`. */
export function reasonNames(reason: DaemonStoppingReason | null): string[] {
  if (reason === null) return [];
  return Object.entries(DaemonStoppingReason)
    .filter(([, flag]) => (reason & flag) !== 0)
    .map(([name]) => name);
}

/** What a daemon sees of its stop flag (the `stopped` argument). */
export interface DaemonStopped {
  /** Whether the daemon has been asked to stop. (JavaScript has no truthiness overloading.) */
  isSet(): boolean;
  /** The accumulated reasons, or `null` while not stopped. */
  readonly reason: DaemonStoppingReason | null;
  /**
   * Waits until the flag is set or `timeout` seconds pass (forever without a timeout).
   * @returns whether the flag is set.
   */
  wait(timeout?: number): Promise<boolean>;
  /** Aborted at the forced termination stage, or when the operator cancels everything. */
  readonly signal: AbortSignal;
}

/**
 * Where timed wake-ups go: the operator's scheduler (one heap of due times for all daemons and
 * timers, `engines/scheduling.ts`). `at` is in the clock's milliseconds; the result cancels.
 */
export interface Wakeups {
  schedule(at: number, callback: () => void): () => void;
}

/**
 * The owning side of a stop flag; hand `stopper` itself to the daemon as `stopped`.
 *
 * Cheap while nothing happens (one per running daemon, thousands at once): the abort controller
 * is created only when someone reads `signal`, and waiters are kept only while they wait. With
 * `wakeups`, a `wait(timeout)` is an entry on the operator's scheduler, not a timer of its own.
 */
export class DaemonStopper implements DaemonStopped {
  private flags: number | null = null;
  private stoppedAt: number | null = null;
  /** One-shot callbacks for the moment the flag is set (an array: usually one or none). */
  private waiters: (() => void)[] | undefined;
  private controller: AbortController | undefined;
  private parentLink: { release(): void } | undefined;

  /**
   * @param clock the clock of `wait()` timeouts and of `when`.
   * @param parent a signal that also aborts `signal` (the operator's cancellation of everything).
   * @param wakeups where `wait(timeout)` schedules its timeout (default: a sleep on `clock`).
   */
  constructor(
    private readonly clock: clocks.Clock,
    private readonly parent?: AbortSignal,
    private readonly wakeups?: Wakeups,
  ) {}

  /**
   * Calls `callback` once when the flag is set (at once if it is set already), unless `unwait()`
   * removes it first: the engines' way to wait without a promise or a closure.
   */
  whenSet(callback: () => void): void {
    if (this.isSet()) callback();
    // An exact-size array: `[]` then `push` would reserve room for 17.
    else if (this.waiters === undefined) this.waiters = [callback];
    else this.waiters.push(callback);
  }

  /** Removes a callback of `whenSet()` that has not been called. */
  unwait(callback: () => void): void {
    const waiters = this.waiters;
    const at = waiters?.indexOf(callback) ?? -1;
    if (at >= 0) waiters!.splice(at, 1);
  }

  isSet(): boolean {
    return this.flags !== null;
  }

  /** Whether all flags of `reason` are set. */
  has(reason: DaemonStoppingReason): boolean {
    return this.flags !== null && (this.flags & reason) === reason;
  }

  get reason(): DaemonStoppingReason | null {
    return this.flags;
  }

  /** When the stop was first requested (clock milliseconds), or `null` while not stopped. */
  get when(): number | null {
    return this.stoppedAt;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.parent !== undefined) {
        const link = aborts.follow([this.parent]);
        this.parentLink = link;
        if (link.signal.aborted) this.abort();
        else link.signal.addEventListener('abort', () => this.abort(), { once: true });
      }
    }
    return this.controller.signal;
  }

  /** Whether the signal has been aborted (without creating it). */
  get cancelled(): boolean {
    return this.controller?.signal.aborted ?? false;
  }

  /** The abort reason of the signal, if aborted. */
  get cancellationReason(): unknown {
    return this.controller?.signal.reason;
  }

  /** Sets the flag, adding `reason` to the reasons already set; wakes all waiters. */
  set(reason: DaemonStoppingReason): void {
    if (this.flags === null) this.stoppedAt = this.clock.now();
    this.flags = (this.flags ?? 0) | reason;
    const waiters = this.waiters;
    this.waiters = undefined;
    if (waiters) for (const waiter of waiters) waiter();
  }

  /** Aborts the daemon's signal (the forced stage); also sets the flag if it was not set. */
  abort(reason: DaemonStoppingReason = DaemonStoppingReason.DAEMON_CANCELLED): void {
    this.set(reason);
    const controller = this.controller ?? (this.controller = new AbortController());
    if (!controller.signal.aborted) controller.abort(new DOMException('The daemon is cancelled.', 'AbortError'));
  }

  /** Detaches from the parent signal once the daemon has exited (nothing listens any more). */
  release(): void {
    this.parentLink?.release();
    this.parentLink = undefined;
  }

  wait(timeout?: number | null): Promise<boolean> {
    if (this.isSet()) return Promise.resolve(true);
    if (timeout !== undefined && timeout !== null && !(timeout > 0)) return Promise.resolve(false);
    // Waiting for the flag only (a daemon's usual idle state): one bare promise, nothing else to keep.
    if (timeout === undefined || timeout === null) return new Promise<boolean>((resolve) => this.whenSet(() => resolve(true)));
    if (this.wakeups !== undefined) return this.waitScheduled(this.wakeups, timeout);
    return this.waitSleeping(timeout);
  }

  /** `wait(timeout)` as a sleep of its own on the clock (without a scheduler). */
  private async waitSleeping(timeout: number): Promise<boolean> {
    const woken = new AbortController();
    const waiter = (): void => woken.abort();
    this.whenSet(waiter);
    try {
      await aborts.sleepOrAbort(this.clock, timeout * 1000, woken.signal);
    } finally {
      this.unwait(waiter);
    }
    return this.isSet();
  }

  /** `wait(timeout)` as one entry on the scheduler and one waiter, whichever comes first. */
  private waitScheduled(wakeups: Wakeups, timeout: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let cancel: () => void = () => undefined;
      const waiter = (): void => {
        cancel();
        resolve(true);
      };
      this.whenSet(waiter);
      cancel = wakeups.schedule(this.clock.now() + timeout * 1000, () => {
        this.unwait(waiter);
        resolve(this.isSet());
      });
    });
  }
}
