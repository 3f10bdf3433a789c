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
  return Object.entries(DaemonStoppingReason).filter(([, flag]) => (reason & flag) !== 0).map(([name]) => name);
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

/** The owning side of a stop flag; hand `stopper` itself to the daemon as `stopped`. */
export class DaemonStopper implements DaemonStopped {
  private flags: number | null = null;
  private readonly waiters = new Set<() => void>();
  private readonly controller = new AbortController();

  constructor(private readonly clock: clocks.Clock) {}

  isSet(): boolean {
    return this.flags !== null;
  }

  get reason(): DaemonStoppingReason | null {
    return this.flags;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Sets the flag, adding `reason` to the reasons already set; wakes all waiters. */
  set(reason: DaemonStoppingReason): void {
    this.flags = (this.flags ?? 0) | reason;
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Aborts the daemon's signal (the forced stage); also sets the flag if it was not set. */
  abort(reason: DaemonStoppingReason = DaemonStoppingReason.DAEMON_CANCELLED): void {
    if (!this.isSet()) this.set(reason);
    this.controller.abort(new DOMException('The daemon is cancelled.', 'AbortError'));
  }

  async wait(timeout?: number): Promise<boolean> {
    if (this.isSet()) return true;
    const woken = new AbortController();
    const waiter = (): void => woken.abort();
    this.waiters.add(waiter);
    try {
      if (timeout === undefined || timeout === null) {
        await new Promise<void>((resolve) => woken.signal.addEventListener('abort', () => resolve(), { once: true }));
      } else {
        await aborts.sleepOrAbort(this.clock, Math.max(0, timeout) * 1000, woken.signal);
      }
    } finally {
      this.waiters.delete(waiter);
    }
    return this.isSet();
  }
}
