import { AsyncLocalStorage } from 'node:async_hooks';

import { describe, expect, it } from 'vitest';

import * as clocks from '../../../../runtime/cogs/aio/clocks.js';

describe('VirtualClock', () => {
  it('time moves only when advanced', async () => {
    const clock = new clocks.VirtualClock({ start: 1000 });
    let woke = false;
    const sleeping = clock.sleep(500).then(() => {
      woke = true;
    });
    let short = false;
    void clock.sleep(1).then(() => {
      short = true;
    });
    // Real time passing is the subject here (kept on purpose): 20 real ms wake no virtual sleep, not even a 1-ms one.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(short).toBe(false);
    expect(woke).toBe(false);
    expect(clock.now()).toBe(1000);
    await clock.advance(499);
    expect(woke).toBe(false);
    await clock.advance(1);
    await sleeping;
    expect(woke).toBe(true);
    expect(clock.now()).toBe(1500);
  });

  it('sleepers wake in due order, ties in the order they started, at their exact times', async () => {
    const clock = new clocks.VirtualClock();
    const log: string[] = [];
    const sleeper = (name: string, ms: number): Promise<void> =>
      clock.sleep(ms).then(() => {
        log.push(`${name}@${clock.now()}`);
      });
    const all = Promise.all([sleeper('c', 300), sleeper('a', 100), sleeper('b1', 200), sleeper('b2', 200)]);
    await clock.advance(1000);
    await all;
    expect(log).toEqual(['a@100', 'b1@200', 'b2@200', 'c@300']);
    expect(clock.now()).toBe(1000);
  });

  it('chains of sleeps started by resumed code land on exact virtual times', async () => {
    const clock = new clocks.VirtualClock();
    const ticks: number[] = [];
    const timer = (async () => {
      for (let i = 0; i < 3; i += 1) {
        await clock.sleep(650);
        ticks.push(clock.now());
      }
    })();
    await clock.advance(1300);
    expect(ticks).toEqual([650, 1300]);
    await clock.advance(650);
    await timer;
    expect(ticks).toEqual([650, 1300, 1950]);
  });

  it('runUntilIdle wakes everything and reports the exact virtual duration', async () => {
    const clock = new clocks.VirtualClock();
    const done = (async () => {
      await clock.sleep(1000);
      await clock.sleep(300);
      return clock.now();
    })();
    expect(await clock.runUntilIdle()).toBe(1300);
    expect(await done).toBe(1300);
    expect(clock.pending).toBe(0);
  });

  it('runUntilIdle stops at the limit for endless loops', async () => {
    const clock = new clocks.VirtualClock();
    const stop = new AbortController();
    void (async () => {
      while (!stop.signal.aborted) await clock.sleep(1000, stop.signal).catch(() => undefined);
    })();
    expect(await clock.runUntilIdle({ limit: 5500 })).toBe(5000);
    stop.abort();
  });

  it('aborting a sleep rejects with the reason and drops the sleeper', async () => {
    const clock = new clocks.VirtualClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1000, controller.signal);
    expect(clock.pending).toBe(1);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
    await expect(clock.sleep(10, controller.signal)).rejects.toThrow('stop');
  });

  it('zero and negative sleeps resolve without time passing', async () => {
    const clock = new clocks.VirtualClock({ start: 5 });
    await clock.sleep(0);
    await clock.sleep(-1);
    expect(clock.now()).toBe(5);
    expect(clock.nextDue()).toBeUndefined();
  });

  it('cannot go backwards', async () => {
    await expect(new clocks.VirtualClock().advance(-1)).rejects.toThrow(RangeError);
  });
});

describe('scheduled calls', () => {
  it('a virtual schedule calls back at its exact time, in order with sleeps; a cancelled one never', async () => {
    const clock = new clocks.VirtualClock({ start: 0 });
    const calls: string[] = [];
    clock.schedule(300, () => calls.push(`a@${clock.now()}`));
    const cancel = clock.schedule(200, () => calls.push('cancelled'));
    void clock.sleep(300).then(() => calls.push(`sleep@${clock.now()}`));
    clock.schedule(100, () => calls.push(`b@${clock.now()}`));
    cancel();
    expect(clock.pending).toBe(3);
    await clock.advance(1000);
    expect(calls).toEqual(['b@100', 'a@300', 'sleep@300']);
    expect(clock.pending).toBe(0);
  });

  it('a virtual schedule calls back in the async context that scheduled it, as a Node timer does', async () => {
    const clock = new clocks.VirtualClock({ start: 0 });
    const storage = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    storage.run('operator', () => clock.schedule(100, () => seen.push(storage.getStore())));
    await storage.run('test', () => clock.advance(100));
    expect(seen).toEqual(['operator']);
  });

  it('a real schedule calls back, and not after being cancelled', async () => {
    const calls: string[] = [];
    // The cancelled call is due first: once the later one has come, it would have come too.
    const cancel = clocks.realClock.schedule(1, () => calls.push('cancelled'));
    cancel();
    await new Promise<void>((resolve) =>
      clocks.realClock.schedule(10, () => {
        calls.push('kept');
        resolve();
      }),
    );
    expect(calls).toEqual(['kept']);
  });
});

describe('realClock', () => {
  it('sleeps for real and reports wall time', async () => {
    const before = clocks.realClock.now();
    await clocks.realClock.sleep(20);
    expect(clocks.realClock.now() - before).toBeGreaterThanOrEqual(15);
    expect(Math.abs(clocks.realClock.now() - Date.now())).toBeLessThan(50);
  });

  it('an aborted real sleep rejects promptly', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const sleeping = clocks.realClock.sleep(10_000, controller.signal);
    setImmediate(() => controller.abort()); // once the sleep has begun
    await expect(sleeping).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
