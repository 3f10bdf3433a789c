/**
 * The sharding benchmark's reading of the replicas' ledgers, on hand-made ledgers: the overlap
 * checker must find two daemons of one object running at once (and only then), a killed replica's
 * daemons must end at its kill, repeats of a handler must be explained only by the kill of the
 * replica that ran it before, and the takeover delays must count only other replicas' lines after
 * the kill. A benchmark that miscounts would prove nothing, so these run without any process.
 */
import { describe, expect, it } from 'vitest';
import * as ledger from '../../bench/sharding-ledger.js';

let seq = 0;
const line = (kind: ledger.ShardLine['kind'], replica: string, uid: string, mono: number, extra: Partial<ledger.ShardLine> = {}): ledger.ShardLine => ({
  kind,
  handler: kind === 'handler' ? 'create_fn' : 'watcher',
  uid,
  name: `n-${uid}`,
  replica,
  pid: 1,
  mono,
  at: 1_700_000_000_000 + mono,
  ...(kind === 'handler' ? {} : { daemon: `${replica}:${++seq}` }),
  ...extra,
});
/** A daemon of `uid` on `replica` from `start` to `end` (no exit line when `end` is undefined). */
const daemon = (replica: string, uid: string, start: number, end?: number): ledger.ShardLine[] => {
  const s = line('daemon-start', replica, uid, start);
  return end === undefined ? [s] : [s, { ...s, kind: 'daemon-exit', mono: end }];
};
const noEnds = new Map<string, ledger.ReplicaEnd>();

describe('the sharding ledger', () => {
  it('parses its lines and counts the rest as unreadable', () => {
    const good = line('daemon-start', 'r0', 'u1', 5);
    const text = `${JSON.stringify(good)}\n{"kind":"daemon-start","uid":"u1"}\nnot json\n${JSON.stringify(line('handler', 'r1', 'u2', 6))}\n`;
    const parsed = ledger.parseShardLedger(text);
    expect(parsed.lines.map((l) => [l.kind, l.replica])).toEqual([
      ['daemon-start', 'r0'],
      ['handler', 'r1'],
    ]);
    expect(parsed.unreadable).toBe(2);
  });

  it('finds two replicas running a daemon of the same object at the same time', () => {
    const lines = [...daemon('r0', 'u1', 0, 100), ...daemon('r1', 'u1', 90, 200), ...daemon('r0', 'u2', 0, 50)];
    const found = ledger.overlaps(ledger.daemonIntervals(lines, noEnds));
    expect(found.across).toHaveLength(1);
    expect(found.across[0]).toMatchObject({ uid: 'u1', ms: 10 });
    expect(found.within).toHaveLength(0);
  });

  it('finds no overlap in a clean handoff, where the new daemon starts after the old one exited', () => {
    const lines = [...daemon('r0', 'u1', 0, 100), ...daemon('r1', 'u1', 100, 200), ...daemon('r0', 'u1', 250, 300)];
    expect(ledger.overlaps(ledger.daemonIntervals(lines, noEnds))).toEqual({ across: [], within: [] });
  });

  it('ends a killed replica’s daemons at its kill, and a later start elsewhere does not overlap', () => {
    const lines = [...daemon('r0', 'u1', 0), ...daemon('r1', 'u1', 150, 400)];
    const ends = new Map([['r0', { mono: 120, killed: true }]]);
    const intervals = ledger.daemonIntervals(lines, ends);
    expect(intervals.find((i) => i.replica === 'r0')).toMatchObject({ end: 120, exited: false });
    expect(ledger.overlaps(intervals).across).toHaveLength(0);
    // Had the other replica started before the kill, that is an overlap.
    const early = [...daemon('r0', 'u1', 0), ...daemon('r1', 'u1', 110, 400)];
    expect(ledger.overlaps(ledger.daemonIntervals(early, ends)).across).toHaveLength(1);
  });

  it('treats a daemon with no exit on a replica still running as running to the end', () => {
    const lines = [...daemon('r0', 'u1', 0), ...daemon('r1', 'u1', 10_000, 10_001)];
    expect(ledger.overlaps(ledger.daemonIntervals(lines, noEnds)).across).toHaveLength(1);
  });

  it('tells two daemons of one object on one replica apart from overlaps across replicas', () => {
    const lines = [...daemon('r0', 'u1', 0, 100), ...daemon('r0', 'u1', 50, 60)];
    const found = ledger.overlaps(ledger.daemonIntervals(lines, noEnds));
    expect(found.within).toHaveLength(1);
    expect(found.across).toHaveLength(0);
  });

  it('explains a repeated handler run only by the kill of the replica that ran it before', () => {
    const uids = new Map([
      ['u1', 'one'],
      ['u2', 'two'],
      ['u3', 'three'],
    ]);
    const lines = [
      line('handler', 'r0', 'u1', 10),
      line('handler', 'r1', 'u1', 50), // r0 was killed at 20: explained
      line('handler', 'r2', 'u2', 10),
      line('handler', 'r1', 'u2', 50), // r2 stopped gracefully at 20: not explained
      line('handler', 'r1', 'u2', 60), // same live replica again: not explained
    ];
    const ends = new Map([
      ['r0', { mono: 20, killed: true }],
      ['r2', { mono: 20, killed: false }],
    ]);
    const t = ledger.tallyRuns(lines, uids, ['create_fn'], ends);
    expect(t).toMatchObject({ expected: 3, runs: 5, exactlyOnce: 0, missing: 1, repeatsExplainedByKill: 1, repeatsNotExplained: 2 });
    expect(t.examples.missing).toEqual(['three/create_fn']);
  });

  it('does not explain a repeat by a kill that came before the first run', () => {
    const lines = [line('handler', 'r0', 'u1', 30), line('handler', 'r1', 'u1', 50)];
    const t = ledger.tallyRuns(lines, new Map([['u1', 'one']]), ['create_fn'], new Map([['r0', { mono: 20, killed: true }]]));
    expect(t.repeatsNotExplained).toBe(1);
  });

  it('measures each object’s takeover from the kill to its first line on another replica', () => {
    const lines = [
      line('daemon-start', 'r0', 'u1', 200), // the victim itself: ignored
      line('daemon-start', 'r1', 'u1', 90), // before the kill: ignored
      line('daemon-start', 'r1', 'u1', 1_600),
      line('handler', 'r2', 'u2', 1_300, { handler: 'resume_fn' }),
      line('daemon-start', 'r2', 'u2', 1_350),
    ];
    const delays = ledger.takeoverDelays(lines, new Set(['u1', 'u2', 'u3']), 'r0', 100);
    expect(Object.fromEntries(delays)).toEqual({ u1: 1_500, u2: 1_200, u3: undefined });
  });

  it('lists the daemons running on a replica at a moment', () => {
    const intervals = ledger.daemonIntervals([...daemon('r0', 'u1', 0, 50), ...daemon('r0', 'u2', 0), ...daemon('r1', 'u3', 0)], noEnds);
    expect([...ledger.daemonsRunningAt(intervals, 'r0', 60)]).toEqual(['u2']);
  });
});
