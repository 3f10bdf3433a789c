/**
 * The operator's scheduler: callbacks due at a time on the operator's clock, kept in one min-heap
 * and woken by ONE pending timer (the earliest due time), not by a sleeping promise per object.
 *
 * Reconcile handlers schedule a requeue or a retry per object (R-RECONCILE-204/205); thousands of
 * objects would otherwise mean thousands of timers, each re-armed on every change. Here a schedule
 * is a heap entry, a cancellation marks it dead (it is dropped when it surfaces), and only a change
 * of the earliest due time re-arms the one timer. The operator owns one (`op.scheduler`): timers'
 * ticks and daemons' and timers' sleeps are entries on it (R-PERF-302), so ten thousand timers cost
 * one pending Node timer, not ten thousand sleeping tasks.
 *
 * Due callbacks run in the context `within` gives them (the operator's, outside any handler), not
 * in the async context of whatever code happened to arm the one timer.
 */

import type * as clocks from '../../cogs/aio/clocks.js';

interface Entry {
  readonly at: number;
  readonly seq: number;
  callback: (() => void) | null;
}

function earlier(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * Callbacks at times (milliseconds since the epoch, as `clock.now()`), in due order; callbacks
 * due at the same time run in the order they were scheduled.
 *
 * @example
 * const scheduler = new Scheduler(clock);
 * const cancel = scheduler.schedule(clock.now() + 5000, () => queue.trigger(key));
 */
export class Scheduler {
  readonly #clock: clocks.Clock;
  readonly #heap: Entry[] = [];
  #seq = 0;
  #live = 0;
  #armedAt: number | null = null;
  #disarm: (() => void) | null = null;
  #closed = false;
  readonly #within: (fire: () => void) => void;

  /**
   * @param options.within runs each batch of due callbacks (e.g. inside the operator's async
   *   context); default: as they are.
   */
  constructor(clock: clocks.Clock, options?: { readonly within?: (fire: () => void) => void }) {
    this.#clock = clock;
    this.#within = options?.within ?? ((fire) => fire());
  }

  /** Scheduled callbacks not yet run nor cancelled. */
  get size(): number {
    return this.#live;
  }

  /** Calls `callback` once at `at` (at once if past), unless the returned function is called first. */
  schedule(at: number, callback: () => void): () => void {
    if (this.#closed) return () => undefined;
    const entry: Entry = { at, seq: this.#seq++, callback };
    this.#push(entry);
    this.#live++;
    this.#arm();
    return () => {
      if (entry.callback === null) return;
      entry.callback = null;
      this.#live--;
    };
  }

  /** Drops everything and never runs anything again. */
  close(): void {
    this.#closed = true;
    this.#disarm?.();
    this.#disarm = null;
    for (const entry of this.#heap) entry.callback = null;
    this.#heap.length = 0;
    this.#live = 0;
  }

  #arm(): void {
    while (this.#heap.length > 0 && this.#heap[0]!.callback === null) this.#pop();
    const first = this.#heap[0];
    if (first === undefined || this.#closed) return;
    if (this.#armedAt !== null && this.#armedAt <= first.at) return;
    this.#disarm?.();
    this.#armedAt = first.at;
    this.#disarm = this.#clock.schedule(Math.max(0, first.at - this.#clock.now()), () => this.#within(() => this.#fire()));
  }

  #fire(): void {
    this.#armedAt = null;
    this.#disarm = null;
    const now = this.#clock.now();
    const due: (() => void)[] = [];
    while (this.#heap.length > 0 && this.#heap[0]!.at <= now) {
      const entry = this.#pop()!;
      if (entry.callback === null) continue;
      due.push(entry.callback);
      entry.callback = null;
      this.#live--;
    }
    for (const callback of due) {
      try {
        callback();
      } catch (error) {
        // A bug in an engine: loud (an uncaught error), but the other due callbacks still run.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    this.#arm();
  }

  #push(entry: Entry): void {
    const heap = this.#heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #pop(): Entry | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && earlier(heap[left]!, heap[least]!)) least = left;
      if (right < heap.length && earlier(heap[right]!, heap[least]!)) least = right;
      if (least === i) return top;
      [heap[i], heap[least]] = [heap[least]!, heap[i]!];
      i = least;
    }
  }
}

/** Schedulers of contexts that have none of their own (hand-built in tests), one per clock. */
const perClock = new WeakMap<clocks.Clock, Scheduler>();

/** The scheduler shared by everything on `clock` that has no operator's scheduler to use. */
export function sharedScheduler(clock: clocks.Clock): Scheduler {
  let scheduler = perClock.get(clock);
  if (scheduler === undefined) perClock.set(clock, (scheduler = new Scheduler(clock)));
  return scheduler;
}
