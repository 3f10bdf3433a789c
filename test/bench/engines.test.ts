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
  it('default to 1,000 and 10,000 objects, the none, daemon, timer and timer60 variants, a 20 s window, the compiled operator', () => {
    const options = engines.parseOptions(['engines']);
    expect(options.sizes).toEqual([1000, 10_000]);
    expect(options.variants).toEqual(['none', 'daemon', 'timer', 'timer60']);
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
    expect(() => engines.parseOptions(['--variants', 'none,cron'])).toThrow('--variants cron: the variants are none, daemon, timer, timer60, both, both60');
    expect(() => engines.parseOptions(['--server-heap-mb', '100'])).toThrow('--server-heap-mb must be a number of at least 256');
    expect(() => engines.parseOptions(['--skip', 'memory'])).toThrow('--skip memory: the parts are sessions, index');
    expect(() => engines.parseOptions(['--sizes', '10.5'])).toThrow('--sizes: 10.5 is not a positive whole number');
    expect(() => engines.parseOptions(['--window', '0'])).toThrow('--window must be a number of at least 1');
  });
});

describe('large runs', () => {
  it('give the devcluster and the default operator more heap and every wait more time as N grows', () => {
    const options = engines.parseOptions([]);
    expect(engines.waitMs(options, 10_000)).toBe(660_000);
    expect(engines.waitMs(options, 100_000)).toBe(1_200_000);
    expect(engines.serverHeapMb(options, 10_000)).toBe(4096);
    expect(engines.serverHeapMb(options, 100_000)).toBe(6400);
    expect(engines.operatorCommand(options, 10_000)).toBe(options.command);
    expect(engines.operatorCommand(options, 100_000)).toMatch(/^exec node --max-old-space-size=8192 --expose-gc bin\/kopf-gen\.js run /);
  });

  it('take the given heaps and timeout, and never change a command of their own', () => {
    const options = engines.parseOptions(['--timeout', '30', '--server-heap-mb', '2048', '--operator-heap-mb', '1024']);
    expect(engines.waitMs(options, 100_000)).toBe(30_000);
    expect(engines.serverHeapMb(options, 100_000)).toBe(2048);
    expect(engines.operatorCommand(options, 1000)).toContain('exec node --max-old-space-size=1024 --expose-gc');
    const custom = engines.parseOptions(['--command', 'exec node my.js', '--operator-heap-mb', '1024']);
    expect(engines.operatorCommand(custom, 100_000)).toBe('exec node my.js');
  });
});

describe("the engines benchmark's targets", () => {
  it("are the issue's at N = 10,000: 10 % of a core for 1 s timers, 1 % for 60 s timers, p99 ≤ 50 ms, 4 KiB per daemon, 2 KiB per timer", () => {
    const targets = engines.targetsFor({ sizes: [10_000], variants: ['none', 'daemon', 'timer', 'timer60', 'both'] });
    expect(targets).toMatchObject({
      n10000_timer_idle_cpu_pct: { max: 10 },
      n10000_both_idle_cpu_pct: { max: 10 },
      n10000_timer60_idle_cpu_pct: { max: 1 },
      n10000_timer_lateness_p99_ms: { max: 50 },
      n10000_timer60_lateness_p99_ms: { max: 50 },
      n10000_rss_per_daemon_beyond_object_kib: { max: 4 },
      n10000_heap_per_daemon_beyond_object_kib: { max: 4 },
      n10000_rss_per_timer_beyond_object_kib: { max: 2 },
      n10000_heap_per_timer60_beyond_object_kib: { max: 2 },
      n10000_rss_per_daemon_and_timer_beyond_object_kib: { max: 6 },
    });
    expect(targets['n10000_daemon_idle_cpu_pct']).toBeUndefined();
  });

  it('scale idle CPU with N, and leave out what the chosen variants cannot measure', () => {
    const targets = engines.targetsFor({ sizes: [1000, 100_000], variants: ['daemon', 'both'] });
    expect(targets['n1000_both_idle_cpu_pct']).toEqual({ max: 1 });
    expect(targets['n100000_both_idle_cpu_pct']).toEqual({ max: 100 });
    // A daemon and a 60 s timer per object: the 60 s bound, scaled.
    expect(engines.targetsFor({ sizes: [100_000], variants: ['none', 'both60'] })).toMatchObject({
      n100000_both60_idle_cpu_pct: { max: 10 },
      n100000_rss_per_daemon_and_timer60_beyond_object_kib: { max: 6 },
    });
    // Without the none variant there is no figure beyond the object.
    expect(Object.keys(targets).filter((k) => k.includes('beyond_object'))).toEqual([]);
  });

  it('are met by figures derived from the variants: memory beyond the none variant, idle CPU per 1,000 timers', () => {
    const figures: Record<string, number> = {
      n1000_none_rss_per_object_kib: 3,
      n1000_daemon_rss_per_object_kib: 5.5,
      n1000_timer60_rss_per_object_kib: 4,
      n1000_timer_idle_cpu_pct: 2,
      n1000_both_idle_cpu_pct: 3,
      n1000_timer60_idle_cpu_pct: 0.5,
    };
    engines.derive(figures, 1000);
    expect(figures['n1000_rss_per_daemon_beyond_object_kib']).toBe(2.5);
    expect(figures['n1000_rss_per_timer60_beyond_object_kib']).toBe(1);
    expect(figures['n1000_idle_cpu_pct_per_1000_timers']).toBe(2);
    expect(figures['n1000_idle_cpu_pct_per_1000_timers_60s']).toBe(0.5);
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
