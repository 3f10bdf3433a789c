/**
 * The devcluster's clock (D-FAULT-13): timestamps and timers (bookmarks, watch timeouts,
 * controller delays, token validity) all go through it, so tests can drive time by hand.
 */

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` after `ms` milliseconds of this clock's time. */
  setTimer(fn: () => void, ms: number): Timer;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    handle.unref?.();
    return { cancel: () => clearTimeout(handle) };
  },
};

/** A clock that moves only when told to; due timers fire in order during `advance()`. */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];

  constructor(start: number | Date = Date.UTC(2024, 4, 1, 10, 0, 0)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Moves time forward by `ms`, firing due timers in time order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      due.cancelled = true;
      due.fn();
    }
    this.current = target;
  }
}
