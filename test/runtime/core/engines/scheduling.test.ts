/**
 * The operator's scheduler (R-RECONCILE-801) on a virtual clock: callbacks run in due order (ties
 * in the order scheduled), a cancelled one never runs, and however many are scheduled, the clock
 * holds at most one pending timer — the earliest due time's.
 */
import { describe, expect, it } from 'vitest';

import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import { Scheduler } from '../../../../runtime/core/engines/scheduling.js';

const T0 = Date.parse('2030-01-01T00:00:00Z');

describe('Scheduler', () => {
  it('R-RECONCILE-801: callbacks run in due order, ties in the order scheduled', async () => {
    const clock = new VirtualClock({ start: T0 });
    const scheduler = new Scheduler(clock);
    const ran: string[] = [];
    for (const [name, at] of [
      ['c', 30],
      ['a', 10],
      ['b1', 20],
      ['b2', 20],
      ['d', 40],
    ] as const) {
      scheduler.schedule(T0 + at * 1000, () => ran.push(`${name}@${(clock.now() - T0) / 1000}`));
    }
    expect(scheduler.size).toBe(5);
    await clock.advance(25_000);
    expect(ran).toEqual(['a@10', 'b1@20', 'b2@20']);
    await clock.advance(100_000);
    expect(ran).toEqual(['a@10', 'b1@20', 'b2@20', 'c@30', 'd@40']);
    expect(scheduler.size).toBe(0);
  });

  it('R-RECONCILE-801: a cancelled callback never runs; a time in the past runs at once', async () => {
    const clock = new VirtualClock({ start: T0 });
    const scheduler = new Scheduler(clock);
    const ran: string[] = [];
    const cancelFirst = scheduler.schedule(T0 + 5000, () => ran.push('first'));
    scheduler.schedule(T0 + 10_000, () => ran.push('second'));
    cancelFirst();
    cancelFirst(); // twice is harmless
    expect(scheduler.size).toBe(1);
    await clock.advance(60_000);
    expect(ran).toEqual(['second']);
    scheduler.schedule(T0, () => ran.push('past'));
    await clock.advance(0);
    expect(ran).toEqual(['second', 'past']);
  });

  it('R-RECONCILE-801: one pending timer on the clock, re-armed only for an earlier due time', async () => {
    const clock = new VirtualClock({ start: T0 });
    const scheduler = new Scheduler(clock);
    const ran: number[] = [];
    for (let i = 1000; i >= 1; i--) scheduler.schedule(T0 + i * 1000, () => ran.push(i));
    expect(clock.pending).toBe(1);
    expect(clock.nextDue()).toBe(T0 + 1000);
    // A later one changes nothing; an earlier one moves the one timer.
    scheduler.schedule(T0 + 2_000_000, () => ran.push(2000));
    expect(clock.pending).toBe(1);
    scheduler.schedule(T0 + 500, () => ran.push(0));
    expect(clock.pending).toBe(1);
    expect(clock.nextDue()).toBe(T0 + 500);
    await clock.advance(10_000);
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(clock.pending).toBe(1);
    await clock.advance(3_000_000);
    expect(ran).toHaveLength(1002);
    expect(clock.pending).toBe(0);
  });

  it('R-RECONCILE-801: close() drops everything and disarms the timer', async () => {
    const clock = new VirtualClock({ start: T0 });
    const scheduler = new Scheduler(clock);
    const ran: string[] = [];
    scheduler.schedule(T0 + 1000, () => ran.push('dropped'));
    scheduler.close();
    expect(clock.pending).toBe(0);
    scheduler.schedule(T0 + 1000, () => ran.push('after close'));
    await clock.advance(10_000);
    expect(ran).toEqual([]);
    expect(scheduler.size).toBe(0);
  });
});
