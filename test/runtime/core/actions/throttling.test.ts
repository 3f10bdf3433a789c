import { describe, expect, it } from 'vitest';

import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as throttling from '../../../../runtime/core/actions/throttling.js';
import { RecordingLogger } from './helpers.js';

const DELAYS = [1, 1, 2, 3, 5];

function setup(delays: readonly number[] = DELAYS) {
  const clock = new clocks.VirtualClock({ start: 0 });
  const logger = new RecordingLogger();
  const throttler = new throttling.Throttler();
  const run = (body: () => unknown, wakeup?: AbortSignal) => throttling.throttled({ throttler, delays, clock, logger, wakeup }, body);
  return { clock, logger, throttler, run };
}

const fail = (): never => {
  throw new Error('API is down');
};

describe('error throttling', () => {
  it('R-QUEUE-8 an unexpected error throttles for the next delay, logged with a stack trace; then back to normal', async () => {
    const { clock, logger, run } = setup();
    const done = run(fail);
    await clock.advance(999);
    expect(logger.messages('info')).toEqual([]);
    await clock.advance(1);
    await expect(done).resolves.toMatchObject({ status: 'failed' });
    expect(logger.lines.map((line) => [line.level, line.message])).toEqual([
      ['error', "Throttling for 1 seconds due to an unexpected error: Error('API is down')"],
      ['info', 'Throttling is over. Switching back to normal operations.'],
    ]);
    expect(logger.lines[0]!.extra?.error).toBeInstanceOf(Error);
  });

  it('A-32 consecutive failures use 1, 1, 2 seconds; a success resets the sequence', async () => {
    const { clock, logger, run } = setup();
    for (let i = 0; i < 3; i += 1) {
      const started = clock.now();
      const done = run(fail);
      await clock.runUntilIdle();
      await done;
      expect(clock.now() - started).toBe([1000, 1000, 2000][i]);
    }
    expect(logger.messages('error').map((m) => m.replace(/ due to.*/, ''))).toEqual([
      'Throttling for 1 seconds',
      'Throttling for 1 seconds',
      'Throttling for 2 seconds',
    ]);
    expect(logger.count('Throttling is over. Switching back to normal operations.')).toBe(3);
    await expect(run(() => 'ok')).resolves.toEqual({ status: 'done', value: 'ok' });
    const again = run(fail);
    await clock.runUntilIdle();
    await again;
    expect(logger.messages('error').at(-1)).toMatch(/^Throttling for 1 seconds/);
  });

  it('R-QUEUE-8 the last delay repeats once the sequence is exhausted', async () => {
    const { clock, logger, run } = setup([1, 2]);
    for (let i = 0; i < 4; i += 1) {
      const done = run(fail);
      await clock.runUntilIdle();
      await done;
    }
    expect(logger.messages('error').map((m) => m.replace(/ due to.*/, ''))).toEqual([
      'Throttling for 1 seconds',
      'Throttling for 2 seconds',
      'Throttling for 2 seconds',
      'Throttling for 2 seconds',
    ]);
  });

  it('A-32 events during the suspension are skipped; the newest is processed only after the full delay', async () => {
    const { clock, logger, run, throttler } = setup([3]);
    const processed: string[] = [];
    const firstPressure = new AbortController();
    const first = run(fail, firstPressure.signal);
    await clock.advance(100);
    firstPressure.abort(); // a newer event arrives: the throttling sleep is interrupted
    await expect(first).resolves.toMatchObject({ status: 'failed' });
    expect(throttler.activeUntil).toBe(3000);
    const secondPressure = new AbortController();
    const second = run(() => processed.push('second'), secondPressure.signal);
    await clock.advance(100);
    secondPressure.abort(); // and yet another one
    await expect(second).resolves.toEqual({ status: 'skipped' });
    const third = run(() => processed.push('third'));
    await clock.advance(2799);
    expect(processed).toEqual([]);
    await clock.advance(1);
    await expect(third).resolves.toMatchObject({ status: 'done' });
    expect(processed).toEqual(['third']);
    expect(clock.now()).toBe(3000);
    expect(logger.count('Throttling is over.')).toBe(1);
  });

  it('R-QUEUE-8 an empty sequence disables throttling', async () => {
    const { logger, run, throttler } = setup([]);
    await expect(run(fail)).resolves.toMatchObject({ status: 'failed' });
    expect(throttler.activeUntil).toBeNull();
    expect(logger.lines).toEqual([]);
    await expect(run(() => 1)).resolves.toEqual({ status: 'done', value: 1 });
  });

  it('errors outside of the throttled kinds are re-thrown', async () => {
    const clock = new clocks.VirtualClock();
    const logger = new RecordingLogger();
    const throttler = new throttling.Throttler();
    const body = (): never => {
      throw new RangeError('fatal');
    };
    await expect(throttling.throttled({ throttler, delays: DELAYS, clock, logger, errors: (e) => !(e instanceof RangeError) }, body)).rejects.toThrow('fatal');
    expect(throttler.activeUntil).toBeNull();
  });
});
