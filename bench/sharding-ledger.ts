/**
 * The ledgers of a sharded operator's replicas, read (pure functions, no I/O): what the sharding
 * benchmark and the sharded chaos variant prove their figures from. Each replica of
 * `fixtures/operators/bench-sharding.ts` appends a line per handler run and per daemon start and
 * exit, stamped with the machine's monotonic clock (`mono`, ms), which this process shares, so
 * lines of different replicas and the benchmark's own kill times are on one time line.
 *
 * Three questions are answered here:
 *   - who ran a daemon of which object when: intervals from start/exit line pairs; a daemon with
 *     no exit line ends when its replica ended (a killed replica's daemons end at its kill: the
 *     moment the benchmark saw the process gone, never earlier), or is still running;
 *   - did two daemons of one object run at the same time (`overlaps`): the no-double-handling
 *     guarantee, checked on those intervals;
 *   - were handler runs repeated, and was each repeat explained by the kill of the replica that
 *     ran the previous run (`tallyRuns`).
 */

/** One line of a replica's ledger. */
export interface ShardLine {
  kind: 'handler' | 'daemon-start' | 'daemon-exit';
  handler: string;
  uid: string;
  name: string;
  replica: string;
  pid: number;
  /** Monotonic ms (shared by the processes of one machine). */
  mono: number;
  /** Wall clock, epoch ms. */
  at: number;
  /** A daemon's instance (`<pid>:<n>`), on daemon lines. */
  daemon?: string;
}

const KINDS: ReadonlySet<string> = new Set(['handler', 'daemon-start', 'daemon-exit']);

/** Parses ledger text; lines that are not a ledger line (torn, foreign) are counted, not returned. */
export function parseShardLedger(text: string): { lines: ShardLine[]; unreadable: number } {
  const lines: ShardLine[] = [];
  let unreadable = 0;
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    try {
      const l = JSON.parse(raw) as Partial<ShardLine>;
      const ok =
        typeof l.kind === 'string' &&
        KINDS.has(l.kind) &&
        typeof l.handler === 'string' &&
        typeof l.uid === 'string' &&
        typeof l.replica === 'string' &&
        typeof l.mono === 'number' &&
        (l.kind === 'handler' || typeof l.daemon === 'string');
      if (ok) lines.push(l as ShardLine);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { lines, unreadable };
}

/** How a replica process ended, as the benchmark saw it (monotonic ms); absent while it runs. */
export interface ReplicaEnd {
  mono: number;
  killed: boolean;
}

/** One daemon's life on one replica. `end` is Infinity for a daemon still running. */
export interface DaemonInterval {
  uid: string;
  name: string;
  replica: string;
  daemon: string;
  start: number;
  end: number;
  /** Whether `end` comes from an exit line (else from the replica's end, or none). */
  exited: boolean;
}

/** The daemons' intervals: start/exit pairs by daemon instance; unpaired starts end with their replica. */
export function daemonIntervals(lines: readonly ShardLine[], ends: ReadonlyMap<string, ReplicaEnd>): DaemonInterval[] {
  const open = new Map<string, DaemonInterval>();
  const out: DaemonInterval[] = [];
  const sorted = lines.filter((l) => l.kind !== 'handler').sort((a, b) => a.mono - b.mono);
  for (const l of sorted) {
    const key = `${l.replica}\u0000${l.daemon}`;
    if (l.kind === 'daemon-start') {
      const interval: DaemonInterval = { uid: l.uid, name: l.name, replica: l.replica, daemon: l.daemon!, start: l.mono, end: Infinity, exited: false };
      open.set(key, interval);
      out.push(interval);
    } else {
      const interval = open.get(key);
      if (interval) {
        interval.end = l.mono;
        interval.exited = true;
        open.delete(key);
      }
    }
  }
  for (const interval of open.values()) interval.end = ends.get(interval.replica)?.mono ?? Infinity;
  return out;
}

/** Two daemons of one object whose intervals intersect. */
export interface Overlap {
  uid: string;
  name: string;
  a: DaemonInterval;
  b: DaemonInterval;
  /** Milliseconds both ran. */
  ms: number;
}

/**
 * Every pair of daemons of the same object that ran at the same time (intervals intersecting by
 * more than `slackMs`; touching ends are not an overlap), on different replicas (`across`) or on
 * the same one (`within`: one replica ran two daemons of one object at once, also a flaw).
 */
export function overlaps(intervals: readonly DaemonInterval[], slackMs = 0): { across: Overlap[]; within: Overlap[] } {
  const byUid = new Map<string, DaemonInterval[]>();
  for (const i of intervals) {
    const list = byUid.get(i.uid);
    if (list) list.push(i);
    else byUid.set(i.uid, [i]);
  }
  const across: Overlap[] = [];
  const within: Overlap[] = [];
  for (const [uid, list] of byUid) {
    list.sort((x, y) => x.start - y.start);
    let active: DaemonInterval[] = [];
    for (const current of list) {
      active = active.filter((a) => a.end - current.start > slackMs);
      for (const a of active) {
        const ms = Math.min(a.end, current.end) - current.start;
        if (ms <= slackMs) continue;
        (a.replica === current.replica ? within : across).push({ uid, name: current.name, a, b: current, ms });
      }
      active.push(current);
    }
  }
  return { across, within };
}

/** The tally of handler runs per (object, handler) pair. */
export interface RunTally {
  /** Pairs expected (objects × handlers asked for). */
  expected: number;
  runs: number;
  exactlyOnce: number;
  missing: number;
  repeatsExplainedByKill: number;
  repeatsNotExplained: number;
  /** Examples (object name, handler, replicas) of missing and unexplained runs, a few each. */
  examples: { missing: string[]; unexplained: string[] };
}

/**
 * Counts the runs of `handlers` for each object of `uids` (uid → name): missing pairs, and every
 * repeat of a pair, explained only when the replica that made the previous run was killed after
 * that run and before the repeat (it could not have stored the outcome); a repeat after a graceful
 * stop, or on the same live replica, or by another replica while the first lived, is not explained.
 * `expectedFor(uid)` limits the handlers expected of an object (e.g. no delete for one not deleted).
 */
export function tallyRuns(
  lines: readonly ShardLine[],
  uids: ReadonlyMap<string, string>,
  handlers: readonly string[],
  ends: ReadonlyMap<string, ReplicaEnd>,
  expectedFor: (uid: string) => readonly string[] = () => handlers,
): RunTally {
  const pairs = new Map<string, ShardLine[]>();
  for (const l of lines) {
    if (l.kind !== 'handler' || !uids.has(l.uid) || !handlers.includes(l.handler)) continue;
    const key = `${l.uid}\u0000${l.handler}`;
    const list = pairs.get(key);
    if (list) list.push(l);
    else pairs.set(key, [l]);
  }
  const t: RunTally = {
    expected: 0,
    runs: 0,
    exactlyOnce: 0,
    missing: 0,
    repeatsExplainedByKill: 0,
    repeatsNotExplained: 0,
    examples: { missing: [], unexplained: [] },
  };
  const example = (list: string[], text: string): void => {
    if (list.length < 5) list.push(text);
  };
  for (const [uid, name] of uids) {
    for (const handler of expectedFor(uid)) {
      t.expected++;
      const runs = [...(pairs.get(`${uid}\u0000${handler}`) ?? [])].sort((a, b) => a.mono - b.mono);
      t.runs += runs.length;
      if (!runs.length) {
        t.missing++;
        example(t.examples.missing, `${name}/${handler}`);
        continue;
      }
      if (runs.length === 1) t.exactlyOnce++;
      for (let i = 1; i < runs.length; i++) {
        const previous = runs[i - 1]!;
        const end = ends.get(previous.replica);
        if (end?.killed && end.mono >= previous.mono && end.mono <= runs[i]!.mono) t.repeatsExplainedByKill++;
        else {
          t.repeatsNotExplained++;
          example(t.examples.unexplained, `${name}/${handler}: ${runs.map((r) => `${r.replica}@${r.mono.toFixed(0)}`).join(', ')}`);
        }
      }
    }
  }
  return t;
}

/**
 * After the kill of `victim` at `killMono`: for each object of `owned`, the delay from the kill to
 * its first line (a handler run or a daemon start) on another replica; `undefined` for an object
 * with none yet.
 */
export function takeoverDelays(lines: readonly ShardLine[], owned: ReadonlySet<string>, victim: string, killMono: number): Map<string, number | undefined> {
  const out = new Map<string, number | undefined>([...owned].map((uid) => [uid, undefined]));
  for (const l of lines) {
    if (l.replica === victim || l.mono < killMono || !owned.has(l.uid) || l.kind === 'daemon-exit') continue;
    const delay = l.mono - killMono;
    const known = out.get(l.uid);
    if (known === undefined || delay < known) out.set(l.uid, delay);
  }
  return out;
}

/** The uids whose daemon ran on `replica` at `mono` (started before, not exited by then). */
export function daemonsRunningAt(intervals: readonly DaemonInterval[], replica: string, mono: number): Set<string> {
  const out = new Set<string>();
  for (const i of intervals) if (i.replica === replica && i.start <= mono && i.end > mono) out.add(i.uid);
  return out;
}
