/**
 * Probe evaluation on a virtual clock (R-ACTIVITY-4): the result format, the 10-second cache,
 * concurrent requests sharing one evaluation, failing probes, and probes that never finish — the
 * evaluation still ends at its deadline, and such a probe is not started again while it runs.
 */
import { describe, expect, it } from 'vitest';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import type * as loggers from '../../../../runtime/cogs/structs/loggers.js';
import { PermanentError } from '../../../../runtime/core/actions/errors.js';
import * as probing from '../../../../runtime/core/engines/probing.js';
import * as handlers from '../../../../runtime/core/intents/handlers.js';

function logger(): loggers.Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const log =
    (level: string) =>
    (message: string): void => {
      lines.push(`${level} ${message}`);
    };
  return { lines, debug: log('DEBUG'), info: log('INFO'), warning: log('WARNING'), error: log('ERROR'), critical: log('CRITICAL') };
}

function probe(id: string, fn: (kwargs: Record<string, unknown>) => unknown): handlers.ActivityHandler {
  return handlers.activityHandler(fn, { id }, 'probe');
}

function prober(list: readonly handlers.ActivityHandler[], options: { readonly timeout?: number } = {}) {
  const clock = new clocks.VirtualClock({ start: 1_000_000 });
  const settings = new settingsModule.OperatorSettings({ warn: () => undefined });
  if (options.timeout !== undefined) settings.health.probeTimeout = options.timeout;
  const log = logger();
  const stop = new AbortController();
  const instance = new probing.Prober({
    handlers: list,
    settings,
    memo: { name: 'memo' },
    clock,
    logger: log,
    signal: stop.signal,
    indices: { byName: 'the index' },
  });
  return { prober: instance, clock, log, stop, settings };
}

describe('probes (R-ACTIVITY-4)', () => {
  it('R-ACTIVITY-4 without probes the result is {}', async () => {
    const { prober: p } = prober([]);
    expect(p.empty).toBe(true);
    expect(probing.probeResults(await p.probe())).toEqual({});
  });

  it('R-ACTIVITY-4 the result is { probe id: result }, null results omitted; probes get the activity kwargs', async () => {
    const seen: Record<string, unknown>[] = [];
    const { prober: p, log } = prober([
      probe('pods_count', () => 3),
      probe('details', async (kwargs) => {
        seen.push(kwargs);
        return { a: 1 };
      }),
      probe('nothing', () => null),
      probe('undefined', () => undefined),
    ]);
    const report = await p.probe();
    expect(probing.probeResults(report)).toEqual({ pods_count: 3, details: { a: 1 } });
    expect(probing.probeProblems(report, 5)).toEqual([]);
    const kwargs = seen[0]!;
    expect([kwargs['activity'], kwargs['memo'], kwargs['retry'], kwargs['byName']]).toEqual(['probe', { name: 'memo' }, 0, 'the index']);
    expect(kwargs['signal']).toBeInstanceOf(AbortSignal);
    expect(log.lines).toContain("DEBUG Activity 'pods_count' succeeded.");
  });

  it('R-ACTIVITY-4 results are cached for 10 seconds: repeated requests do not re-run the probes', async () => {
    let calls = 0;
    const { prober: p, clock } = prober([
      probe('counter', () => {
        calls += 1;
        return calls;
      }),
    ]);
    expect(probing.probeResults(await p.probe())).toEqual({ counter: 1 });
    await clock.advance(9_999);
    expect(probing.probeResults(await p.probe())).toEqual({ counter: 1 });
    expect(calls).toBe(1);
    await clock.advance(1);
    expect(probing.probeResults(await p.probe())).toEqual({ counter: 2 });
    expect(calls).toBe(2);
  });

  it('R-ACTIVITY-4 concurrent requests share one evaluation', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { prober: p } = prober([
      probe('slow', async () => {
        calls += 1;
        await gate;
        return 'done';
      }),
    ]);
    const requests = [p.probe(), p.probe(), p.probe()];
    release();
    const reports = await Promise.all(requests);
    expect(calls).toBe(1);
    expect(reports[1]).toBe(reports[0]);
    expect(reports[2]).toBe(reports[0]);
    expect(probing.probeResults(reports[0]!)).toEqual({ slow: 'done' });
  });

  it('R-ACTIVITY-4 a probe that throws is reported as failed with its message (no stack), logged once, and not retried', async () => {
    let calls = 0;
    const {
      prober: p,
      log,
      clock,
    } = prober([
      probe('fine', () => 'ok'),
      probe('broken', () => {
        calls += 1;
        throw new PermanentError('The database is gone.\n  at somewhere (x.ts:1:1)');
      }),
    ]);
    const report = await p.probe();
    expect(probing.probeResults(report)).toEqual({ fine: 'ok' });
    expect(probing.probeProblems(report, 5)).toEqual([{ kind: 'probe', name: 'broken', reason: 'failed: The database is gone.' }]);
    expect(log.lines.filter((line) => line.startsWith('ERROR'))).toEqual(["ERROR Activity 'broken' has failed: The database is gone."]);
    // The failure is cached like a result; it is not retried in between.
    await clock.advance(9_000);
    await p.probe();
    expect(calls).toBe(1);
  });

  it('R-ACTIVITY-4 a probe that never resolves: the evaluation ends at the deadline, names it, and aborts its signal', async () => {
    let aborted = false;
    const {
      prober: p,
      clock,
      log,
    } = prober(
      [
        probe('fine', () => 'ok'),
        probe(
          'stuck',
          ({ signal }) =>
            new Promise(() => {
              (signal as AbortSignal).addEventListener('abort', () => {
                aborted = true;
              });
            }),
        ),
      ],
      { timeout: 3 },
    );
    const started = clock.now();
    const evaluation = p.probe();
    await clock.advance(3_000);
    const report = await evaluation;
    expect(report.time - started).toBe(3_000);
    expect(probing.probeResults(report)).toEqual({ fine: 'ok' });
    expect(probing.probeProblems(report, 3)).toEqual([{ kind: 'probe', name: 'stuck', reason: 'not finished within 3 s (running for 3 s)' }]);
    expect(aborted).toBe(true);
    expect(log.lines).toContain("ERROR Activity 'stuck' has not finished within 3 seconds.");
  });

  it('R-ACTIVITY-4 a probe that ignores its signal is not started again while it runs; it counts when it finally finishes', async () => {
    let calls = 0;
    let finish!: (value: string) => void;
    const { prober: p, clock } = prober(
      [
        probe('stubborn', () => {
          calls += 1;
          return new Promise((resolve) => {
            finish = resolve;
          });
        }),
      ],
      { timeout: 2 },
    );
    const first = p.probe();
    await clock.advance(2_000);
    expect(probing.probeProblems(await first, 2)).toEqual([{ kind: 'probe', name: 'stubborn', reason: 'not finished within 2 s (running for 2 s)' }]);
    // Cached for 10 s, then a new evaluation waits for the same invocation.
    await clock.advance(10_000);
    const second = p.probe();
    await clock.advance(2_000);
    expect(probing.probeProblems(await second, 2)).toEqual([{ kind: 'probe', name: 'stubborn', reason: 'not finished within 2 s (running for 14 s)' }]);
    expect(calls).toBe(1);
    await clock.advance(10_000);
    const third = p.probe();
    finish('at last');
    const report = await third;
    expect(probing.probeResults(report)).toEqual({ stubborn: 'at last' });
    expect(calls).toBe(1);
    // Once finished, the next evaluation invokes it again.
    await clock.advance(10_000);
    const fourth = p.probe();
    finish('again');
    expect(probing.probeResults(await fourth)).toEqual({ stubborn: 'again' });
    expect(calls).toBe(2);
  });
});
