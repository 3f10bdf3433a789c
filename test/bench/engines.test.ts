/**
 * The engines benchmark's pure helpers: its options, and the timer lateness read from two
 * snapshots of the operator's side-channel file. The benchmark itself asserts nothing.
 */
import { describe, expect, it } from 'vitest';
import * as engines from '../../bench/engines.js';

const stats = (late: Record<string, number>): engines.Stats => ({
  at: 0,
  objectsSeen: 0,
  daemonsStarted: 0,
  daemonsExited: 0,
  lastDaemonExitAt: 0,
  timerCalls: 0,
  timerObjects: 0,
  lateTenthsMs: late,
});

describe("the engines benchmark's options", () => {
  it('default to 1,000 and 10,000 objects, the none, daemon and both variants, a 20 s window, the compiled operator', () => {
    const options = engines.parseOptions(['engines']);
    expect(options.sizes).toEqual([1000, 10_000]);
    expect(options.variants).toEqual(['none', 'daemon', 'both']);
    expect(options.windowS).toBe(20);
    expect(options.indexObjects).toBe(100_000);
    expect(options.command).toContain('bin/kopf-gen.js run bench/.build/bench-engines.js');
    expect(options.command).toContain('--quiet');
    expect(options.skip.size).toBe(0);
  });

  it("read sizes, variants, a command and skipped parts, and ignore other benchmarks' options", () => {
    const options = engines.parseOptions([
      '--sizes',
      '500',
      '--variants',
      'timer,both',
      '--command',
      'python3 -m kopf run x.py',
      '--skip',
      'index',
      '--runs',
      '3',
    ]);
    expect(options.sizes).toEqual([500]);
    expect(options.variants).toEqual(['timer', 'both']);
    expect(options.command).toBe('python3 -m kopf run x.py');
    expect([...options.skip]).toEqual(['index']);
  });

  it('reject unknown variants and parts, and sizes that are not positive whole numbers', () => {
    expect(() => engines.parseOptions(['--variants', 'none,cron'])).toThrow('--variants cron: the variants are none, daemon, timer, both');
    expect(() => engines.parseOptions(['--skip', 'memory'])).toThrow('--skip memory: the parts are sessions, index');
    expect(() => engines.parseOptions(['--sizes', '10.5'])).toThrow('--sizes: 10.5 is not a positive whole number');
    expect(() => engines.parseOptions(['--window', '0'])).toThrow('--window must be a number of at least 1');
  });
});

describe('timer lateness between two snapshots', () => {
  it('is the difference of the cumulative histograms, in milliseconds, sorted', () => {
    const before = stats({ '5': 10, '12': 3 });
    const after = stats({ '5': 14, '12': 3, '-3': 1, '250': 2 });
    expect(engines.latenessBetween(before, after)).toEqual([
      [-0.3, 1],
      [0.5, 4],
      [25, 2],
    ]);
    expect(engines.latenessBetween(undefined, before)).toEqual([
      [0.5, 10],
      [1.2, 3],
    ]);
  });

  it('gives percentiles by nearest rank over the counts', () => {
    const histogram: [number, number][] = [
      [1, 98],
      [20, 1],
      [300, 1],
    ];
    expect(engines.histogramPercentile(histogram, 50)).toBe(1);
    expect(engines.histogramPercentile(histogram, 98)).toBe(1);
    expect(engines.histogramPercentile(histogram, 99)).toBe(20);
    expect(engines.histogramPercentile(histogram, 100)).toBe(300);
    expect(engines.histogramPercentile([], 99)).toBeNaN();
  });
});
