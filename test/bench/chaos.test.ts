/**
 * The chaos benchmark in small, as a test of the runtime's delivery guarantee: 100 objects created,
 * changed and deleted by a real operator process on the benchmark's seeded fault schedule (watches
 * dropped, PATCHes answered 500 or reset before and after the write, 429 bursts, compactions) and
 * killed with SIGKILL twice, against a devcluster in its own process. It runs the fixture on the
 * runtime's TypeScript sources, so it tests this checkout without a build. Real time is used
 * because real processes are killed; every wait ends on a positive condition (all objects at rest,
 * all gone), the phases' bounds only cut a failing run short.
 *
 * The tally the benchmark prints is checked on its own first, on hand-made ledgers, so that a
 * failing run can be told apart from a miscounting benchmark.
 */
import { describe, expect, it } from 'vitest';
import * as chaos from '../../bench/chaos.js';
import type { TrackedObject } from '../../bench/tracking.js';

const names = ['o1', 'o2'];
const run = (name: string, handler: string, at: number, pid = 1): chaos.LedgerEntry => ({ name, handler, at, pid, uid: `uid-${name}` });
/** Every handler of every object once, at times 10, 20, 30, 40 (+1 for the second object). */
const once = (): chaos.LedgerEntry[] => names.flatMap((n, i) => chaos.HANDLERS.map((h, j) => run(n, h, 10 * (j + 1) + i)));
const allResults = new Map(names.map((n) => [n, new Set(['create_a', 'create_b', 'update_fn'])]));

describe("the chaos benchmark's tally of the ledger", () => {
  it('counts a clean run as exactly once for every handler of every object', () => {
    const t = chaos.tally({ names, entries: once(), killEnds: [], removedAt: new Map(names.map((n) => [n, 100])), resultsAtRest: allResults });
    expect(t).toMatchObject({
      expected_runs: 8,
      runs: 8,
      exactly_once: 8,
      missing: 0,
      duplicates_explained_by_kill: 0,
      duplicates_not_explained: 0,
      runs_after_removal: 0,
      results_lost: 0,
      foreign_runs: 0,
    });
  });

  it('explains a repeat by a kill only when a killed process ended between the previous run and the repeat', () => {
    const entries = [...once(), run('o1', 'create_b', 25, 2), run('o1', 'create_b', 27, 2), run('o2', 'update_fn', 35, 1)];
    const t = chaos.tally({ names, entries, killEnds: [22], removedAt: new Map(), resultsAtRest: allResults });
    // o1/create_b: 20 → kill at 22 → 25 is explained; 25 → 27 by the same process is not. o2/update_fn: 31 → 35, no kill.
    expect(t.duplicates_explained_by_kill).toBe(1);
    expect(t.duplicates_not_explained).toBe(2);
    expect(t.exactly_once).toBe(6);
    expect(t.examples.unexplained.map((e) => `${e.name}/${e.handler}`)).toEqual(['o1/create_b', 'o2/update_fn']);
  });

  it('counts missing pairs, runs after the DELETED was seen, results missing at rest, and runs of other objects', () => {
    const entries = [...once().filter((e) => !(e.name === 'o2' && e.handler === 'create_a')), run('o1', 'delete_fn', 60), run('stranger', 'create_a', 5)];
    const resultsAtRest = new Map([
      ['o1', new Set(['create_a', 'create_b', 'update_fn'])],
      ['o2', new Set(['create_a', 'create_b'])],
    ]);
    const t = chaos.tally({ names, entries, killEnds: [], removedAt: new Map([['o1', 50]]), resultsAtRest });
    expect(t.missing).toBe(1); // o2/create_a never ran (its absent result is missing, not lost)
    expect(t.runs_after_removal).toBe(1); // o1/delete_fn at 60, after the DELETED seen at 50
    expect(t.duplicates_not_explained).toBe(1);
    expect(t.results_lost).toBe(1); // o2/update_fn ran, its result is not in the status at rest
    expect(t.foreign_runs).toBe(1);
    expect(t.examples.resultsLost).toEqual([{ name: 'o2', handler: 'update_fn', runs: [{ at: 31, pid: 1 }] }]);
  });

  it('reads ledger lines and counts the unreadable ones', () => {
    const text = `${JSON.stringify(run('o1', 'create_a', 1))}\n{"handler":"create_b","na\n\n${JSON.stringify({ handler: 'x' })}\n`;
    expect(chaos.parseLedger(text)).toEqual({ entries: [run('o1', 'create_a', 1)], unreadable: 2 });
  });
});

describe('an object at rest', () => {
  const object = (annotations: Record<string, string>, status: Record<string, unknown> = {}): TrackedObject => ({ metadata: { annotations }, status });
  const base = JSON.stringify({ spec: { field: 'value' } });

  it('has a diff-base with the current field and no progress record in annotations or status', () => {
    expect(chaos.atRest(object({ 'kopf.zalando.org/last-handled-configuration': base }, { kopf: { progress: {} } }), 'value')).toBe(true);
    expect(chaos.atRest(object({ 'kopf.zalando.org/last-handled-configuration': base }), 'changed')).toBe(false);
    expect(chaos.atRest(object({ 'kopf.zalando.org/last-handled-configuration': base, 'kopf.zalando.org/update_fn': '{}' }), 'value')).toBe(false);
    expect(chaos.atRest(object({ 'kopf.zalando.org/last-handled-configuration': base }, { kopf: { progress: { update_fn: { retries: 1 } } } }), 'value')).toBe(
      false,
    );
    expect(chaos.atRest(object({}), 'value')).toBe(false);
    expect(chaos.atRest(undefined, 'value')).toBe(false);
  });
});

describe("the chaos benchmark's options", () => {
  it('default to 1,000 objects, 5 kills, a fixed seed and the compiled fixture', () => {
    const o = chaos.parseOptions(['chaos']);
    expect(o).toMatchObject({ objects: [1000], kills: 5, seed: 13, custom: false, versus: undefined, durationLimitS: 1800 });
    expect(o.command).toBe(chaos.DEFAULT_COMMAND);
  });

  it('read several sizes, a command and a versus command, and reject sizes that are not whole numbers', () => {
    const o = chaos.parseOptions(['--objects', '500,1000', '--kills', '2', '--seed', '7', '--command', 'python3 -m kopf run x.py', '--versus', 'y']);
    expect(o).toMatchObject({ objects: [500, 1000], kills: 2, seed: 7, command: 'python3 -m kopf run x.py', custom: true, versus: 'y' });
    expect(() => chaos.parseOptions(['--objects', '10.5'])).toThrow('--objects: 10.5 is not a whole number of at least 1');
  });
});

describe("the chaos benchmark's kill points", () => {
  it('spread over 5 %–90 % of the expected object-handler pairs, one per equal slice, ascending', () => {
    let state = 1;
    const random = (): number => {
      state = (state * 16807) % 2147483647;
      return state / 2147483647;
    };
    const points = chaos.killPoints(random, 5, 4000);
    expect(points).toHaveLength(5);
    expect([...points].sort((a, b) => a - b)).toEqual(points);
    // One kill per slice of 17 % of the workload: creations (the first half), updates and deletions all get one.
    points.forEach((p, i) => {
      expect(p).toBeGreaterThanOrEqual(4000 * (0.05 + 0.17 * i));
      expect(p).toBeLessThanOrEqual(4000 * (0.05 + 0.17 * (i + 1)));
    });
    expect(points.some((p) => p > 3000)).toBe(true); // a kill among the deletions
  });
});

describe('chaos: a real operator process under the fault schedule, killed twice', () => {
  it('chaos: no handler success missing, none stuck, every deletion completed, no duplicate without a kill, no run after removal, no result lost (100 objects, 2 kills, seeded)', async () => {
    const outcome = await chaos.session({
      command: chaos.SOURCE_COMMAND,
      objects: 100,
      kills: 2,
      seed: 13,
      concurrency: 8,
      phaseTimeoutMs: 40_000,
      resultsTimeoutMs: 10_000,
      graceMs: 10_000,
      lingerMs: 5000,
      deadline: Date.now() + 100_000,
      keep: false,
    });
    const f = outcome.figures;
    const why = JSON.stringify(outcome.notes, null, 1);
    // The schedule did its part: both kills survived, and each kind of fault was injected.
    expect({ kills: f.kills, restarts_survived: f.restarts_survived, unexpected_exits: f.unexpected_exits }, why).toEqual({
      kills: 2,
      restarts_survived: 2,
      unexpected_exits: 0,
    });
    expect(Math.min(f.watch_drops, f.answered_500, f.reset_before, f.reset_after), why).toBeGreaterThan(0);
    expect(
      {
        missing: f.missing,
        stuck: f.stuck,
        deletions_completed: f.deletions_completed,
        objects_wedged: f.objects_wedged,
        duplicates_not_explained: f.duplicates_not_explained,
        runs_after_removal: f.runs_after_removal,
        results_lost: f.results_lost,
      },
      why,
    ).toEqual({ missing: 0, stuck: 0, deletions_completed: 100, objects_wedged: 0, duplicates_not_explained: 0, runs_after_removal: 0, results_lost: 0 });
  }, 150_000);
});
