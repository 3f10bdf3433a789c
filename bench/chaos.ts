/**
 * Chaos benchmark: `npm run bench -- chaos [options]`. Does every handler of an operator run
 * exactly once per object when the API server misbehaves and the operator is killed now and then?
 * It counts, for any operator command (kopf-gen, Python Kopf, …), handler runs missing, repeated
 * with and without a kill to explain them, run after their object was gone, results lost, and
 * objects stuck or wedged, on one seeded fault schedule, so that the runtime's delivery guarantee
 * rests on figures and can be compared side by side with Kopf's.
 *
 * Processes (loopback only): a devcluster in its own process (`serve.ts`, plain HTTP, the Kopf
 * example CRD, its random source seeded from `--seed`), the operator under test as another
 * process (started with `sh -c` from the package folder, `KUBECONFIG` and `CHAOS_LEDGER` set,
 * `{kubeconfig}` and `{ledger}` substituted in the command, `NODE_OPTIONS` emptied), and this
 * process as the load generator, with its own user agent (`clients.USER_AGENT`) and its own
 * list+watch of the objects (`tracking.ts`). By default the operator is
 * `fixtures/operators/chaos.ts`, transpiled like the operator benchmark's fixture and run on the
 * compiled runtime (`dist/` must be built and fresh); `bench/kopf/chaos.py` is the same operator
 * for Python Kopf. The operator must have the create handlers `create_a` and `create_b`, the
 * update handler `update_fn` and the delete handler `delete_fn` on `kopfexamples.kopf.dev/v1` in
 * all namespaces; each appends one JSON line to the ledger as it starts
 * (`{"handler","uid","name","pid","at"}`, `at` in epoch ms), and the create and update handlers
 * return `{field: <spec.field seen>}`, stored by the framework in `status.<handler id>`.
 *
 * The workload, per N (`--objects`, default 1,000; a comma list runs each): N objects are
 * created; once each is at rest, each gets one spec change (`spec.field`: `value` → `changed`);
 * once at rest again, each is deleted. Expected handler runs: N × (2 create + 1 update + 1 delete).
 * An object is at rest when its diff-base annotation (`kopf.zalando.org/last-handled-configuration`)
 * holds the current `spec.field`, no progress record is left (no other `kopf.zalando.org/…`
 * annotation, no non-null entry in `status.kopf.progress`) — i.e. the framework considers it
 * fully handled. The load generator sends 8 requests at a time; a phase waits until every object
 * is at rest (create, update) or gone (delete), at most `--phase-timeout` seconds (default 300),
 * then at most `--results-timeout` seconds (default 15) more for the handlers' results of objects
 * at rest to appear in their status.
 *
 * The fault schedule, from the first create until the delete phase's wait ends (every random
 * choice from a PRNG seeded with `--seed`, the devcluster's own draws from its seeded source);
 * faults apply only to requests whose user agent is not the load generator's:
 *   - every 5 s (±1 s) all the operator's open watches are dropped, alternating `expire` (an ERROR
 *     410 event, then the end) and a plain `end`;
 *   - 10 % of the operator's PATCH requests (object and status) are answered 500, 5 % are reset
 *     before the write, 5 % are reset after it (the write happens, the response is lost);
 *   - every 15 s (±7 s) a burst of 429: for 1–3 s every request of the operator (any verb, watches
 *     included) is answered 429 with `Retry-After: 1`;
 *   - every 10 s (±3 s) the devcluster compacts its history to the current revision, so a watch
 *     resumed from an older resource version gets 410;
 *   - the operator is SIGKILLed (its whole process group) and restarted at once `--kills` times
 *     (default 5): kill i happens when the ledger holds a seeded fraction of the expected
 *     (object, handler) pairs — repeats not counted — (one fraction per kill, spread over
 *     5 %–90 %, sorted) and the operator running then has appended at least one line, so that
 *     kills spread over the phases (creations, then updates, then deletions) whatever the
 *     operator's speed and however many runs it repeats.
 * After the schedule (faults cleared, no more kills) the load generator waits at most `--grace`
 * seconds (default 30) for objects not yet gone, then until the operator has sent no request
 * other than watches for `--linger` seconds (default 5; at most 60 s of waiting), so that its
 * pending retries play out and late re-runs reach the ledger, then stops it and reads the ledger.
 *
 * Figures (per operator and N), with (object, handler) pairs over the N objects and 4 handlers:
 *   - expected runs: 4 N;
 *   - exactly once: pairs with exactly one run in the ledger (target: 4 N);
 *   - missing: pairs with no run (target 0);
 *   - duplicates explained by a kill: runs of a pair after its first whose previous run of the same
 *     pair was before the end of a killed operator process and which came after that end (the
 *     process that ran it could not have stored its outcome);
 *   - duplicates not explained: the other repeated runs — the framework re-ran a handler without a
 *     crash in between (target 0);
 *   - runs after removal: runs whose `at` is later than the moment the load generator's watch saw
 *     the object's DELETED event (target 0; a duplicate of a delete handler is often one too);
 *   - results lost: pairs of `create_a`, `create_b`, `update_fn` with a run in the ledger whose
 *     result is missing from the object's status when the update phase's wait ended, for objects
 *     at rest then (target 0);
 *   - stuck: objects that were not at rest (create, update) or not gone (delete) when a phase's
 *     bounded wait ended, counted once (target 0);
 *   - deletions completed: objects whose DELETED the load generator saw by the end (target N);
 *   - objects wedged: objects still present at the end, after the grace wait (target 0);
 *   - restarts survived: restarts after which the operator appended at least one ledger line
 *     before the next kill or the end (target: `--kills`);
 *   - unexpected exits: operator exits not caused by a kill (restarted after 1 s; target 0);
 *   - faults injected: watch drops, compactions, 429 bursts, and the requests answered by a fault
 *     (500, reset before, reset after, 429) as counted by the devcluster;
 *   - seconds per phase (its first request to the end of its waits, the results wait included) and in all.
 * Examples of each kind of flaw (object, handler, times, pids) are printed with the notes.
 *
 * `--versus <shell>` runs a second operator on the same seeded schedule, after the first, each on
 * a fresh devcluster; one table per N then compares them side by side (targets and `met` are for
 * the first column, titled `kopf-gen` for the default operator and `command` for `--command`). `--duration-limit <s>` (default 1800) bounds the whole invocation: each
 * session gets an equal share of the time left, and every wait ends at its session's share
 * (objects then unfinished count as stuck). Other options: `--seed` (default 13), `--concurrency`
 * (default 8), `--keep` (keep the folders with ledgers and operator logs; always kept on error).
 * A run is reproducible in its decisions, not in its interleavings: the fault draws depend on the
 * order in which the operator's requests arrive.
 *
 * `--sharded` runs the sharded variant instead (`sharding-chaos.ts`): 4 replicas of a sharded
 * operator, scaled up and down and SIGKILLed during the same workload, with its own figures
 * (missing, handler runs not explained by a kill, two replicas running a daemon of one object at
 * once, stuck) proved from the replicas' ledgers.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as ids from '../devcluster/ids.js';
import * as clients from './clients.js';
import * as compiling from './compiling.js';
import * as processes from './processes.js';
import type * as report from './report.js';
import type * as serve from './serve.js';
import * as servers from './servers.js';
import * as tracking from './tracking.js';

const BUILD = 'bench/.build/chaos';
const COMPILED_OPERATOR = `${BUILD}/chaos.js`;
/** The default operator: the fixture compiled, on the compiled runtime. */
export const DEFAULT_COMMAND = `exec node bin/kopf-gen.js run ${COMPILED_OPERATOR} --all-namespaces --standalone`;
/** The same fixture on the runtime's TypeScript sources, without a build (what the tests run). */
export const SOURCE_COMMAND =
  'exec node --conditions=kopf-gen-source --import tsx scripts/kopf-gen.ts run fixtures/operators/chaos.ts --all-namespaces --standalone';
const NAMESPACE = 'default';
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const PREFIX = 'kopf.zalando.org/';
/** The longest wait for the operator to fall quiet after the schedule. */
const LINGER_MAX_MS = 60_000;

/** The handlers of the operator under test, in the order they run for an object. */
export const HANDLERS = ['create_a', 'create_b', 'update_fn', 'delete_fn'] as const;
export type Handler = (typeof HANDLERS)[number];
/** The handlers whose result the framework stores in `status.<id>`. */
const WITH_RESULTS: readonly Handler[] = ['create_a', 'create_b', 'update_fn'];

/** The fault schedule's rates and periods (milliseconds). */
export interface Schedule {
  dropEveryMs: number;
  patch500: number;
  patchReset: number;
  burstEveryMs: number;
  burstMinMs: number;
  burstMaxMs: number;
  retryAfterSeconds: number;
  compactEveryMs: number;
}

export const SCHEDULE: Schedule = {
  dropEveryMs: 5000,
  patch500: 0.1,
  patchReset: 0.1,
  burstEveryMs: 15_000,
  burstMinMs: 1000,
  burstMaxMs: 3000,
  retryAfterSeconds: 1,
  compactEveryMs: 10_000,
};

export interface Options {
  objects: number[];
  kills: number;
  seed: number;
  durationLimitS: number;
  command: string;
  /** Whether `command` was given (else the compiled fixture runs). */
  custom: boolean;
  versus: string | undefined;
  concurrency: number;
  phaseTimeoutS: number;
  resultsTimeoutS: number;
  graceS: number;
  lingerS: number;
  keep: boolean;
}

function wholeNumber(option: string, text: string, min: number): number {
  const v = Number(text);
  if (!Number.isInteger(v) || v < min) throw new Error(`--${option}: ${text} is not a whole number of at least ${min}`);
  return v;
}

export function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: {
      objects: { type: 'string' },
      kills: { type: 'string' },
      seed: { type: 'string' },
      'duration-limit': { type: 'string' },
      command: { type: 'string' },
      versus: { type: 'string' },
      concurrency: { type: 'string' },
      'phase-timeout': { type: 'string' },
      'results-timeout': { type: 'string' },
      grace: { type: 'string' },
      linger: { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);
  const command = str(values['command']);
  return {
    objects: (str(values['objects']) ?? '1000')
      .split(',')
      .filter(Boolean)
      .map((n) => wholeNumber('objects', n, 1)),
    kills: wholeNumber('kills', str(values['kills']) ?? '5', 0),
    seed: wholeNumber('seed', str(values['seed']) ?? '13', 0),
    durationLimitS: wholeNumber('duration-limit', str(values['duration-limit']) ?? '1800', 1),
    command: command ?? DEFAULT_COMMAND,
    custom: command !== undefined,
    versus: str(values['versus']),
    concurrency: wholeNumber('concurrency', str(values['concurrency']) ?? '8', 1),
    phaseTimeoutS: wholeNumber('phase-timeout', str(values['phase-timeout']) ?? '300', 1),
    resultsTimeoutS: wholeNumber('results-timeout', str(values['results-timeout']) ?? '15', 0),
    graceS: wholeNumber('grace', str(values['grace']) ?? '30', 0),
    lingerS: wholeNumber('linger', str(values['linger']) ?? '5', 0),
    keep: values['keep'] === true,
  };
}

// ---------------------------------------------------------------------------------------------
// The ledger and its tally (pure).

/** One line of the ledger: a handler's run. */
export interface LedgerEntry {
  handler: string;
  uid?: string;
  name: string;
  pid: number;
  at: number;
}

/** Parses ledger text; lines that are not a run (torn, foreign) are counted, not returned. */
export function parseLedger(text: string): { entries: LedgerEntry[]; unreadable: number } {
  const entries: LedgerEntry[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const e = JSON.parse(line) as Partial<LedgerEntry>;
      if (typeof e.handler === 'string' && typeof e.name === 'string' && typeof e.at === 'number') entries.push(e as LedgerEntry);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { entries, unreadable };
}

/** What the tally needs besides the ledger. */
export interface TallyInput {
  /** The objects of the run. */
  names: readonly string[];
  entries: readonly LedgerEntry[];
  /** When each killed operator process had ended (epoch ms, as the load generator saw its exit). */
  killEnds: readonly number[];
  /** When the load generator's watch saw each object's DELETED. */
  removedAt: ReadonlyMap<string, number>;
  /** Per object at rest when the update phase's wait ended: the handlers whose result its status held. */
  resultsAtRest: ReadonlyMap<string, ReadonlySet<string>>;
}

/** One flaw, for the notes. */
export interface Example {
  name: string;
  handler: string;
  /** The runs of the pair: `at` and pid. */
  runs: { at: number; pid: number }[];
  removedAt?: number;
}

export interface Tally {
  expected_runs: number;
  runs: number;
  exactly_once: number;
  missing: number;
  duplicates_explained_by_kill: number;
  duplicates_not_explained: number;
  runs_after_removal: number;
  results_lost: number;
  /** Ledger runs of objects that are not the run's (none expected). */
  foreign_runs: number;
  examples: { missing: Example[]; unexplained: Example[]; afterRemoval: Example[]; resultsLost: Example[] };
}

const EXAMPLES = 5;

/** Classifies every run of the ledger (see the head comment for the definitions). */
export function tally(input: TallyInput): Tally {
  const names = new Set(input.names);
  const pairs = new Map<string, LedgerEntry[]>();
  let foreign = 0;
  for (const e of input.entries) {
    if (!names.has(e.name) || !(HANDLERS as readonly string[]).includes(e.handler)) {
      foreign++;
      continue;
    }
    const k = `${e.name}\u0000${e.handler}`;
    const list = pairs.get(k);
    if (list) list.push(e);
    else pairs.set(k, [e]);
  }
  const kills = [...input.killEnds].sort((a, b) => a - b);
  const t: Tally = {
    expected_runs: input.names.length * HANDLERS.length,
    runs: input.entries.length - foreign,
    exactly_once: 0,
    missing: 0,
    duplicates_explained_by_kill: 0,
    duplicates_not_explained: 0,
    runs_after_removal: 0,
    results_lost: 0,
    foreign_runs: foreign,
    examples: { missing: [], unexplained: [], afterRemoval: [], resultsLost: [] },
  };
  const note = (list: Example[], name: string, handler: string, runs: readonly LedgerEntry[], removedAt?: number): void => {
    if (list.length < EXAMPLES) list.push({ name, handler, runs: runs.map((r) => ({ at: r.at, pid: r.pid })), ...(removedAt ? { removedAt } : {}) });
  };
  for (const name of input.names) {
    const removedAt = input.removedAt.get(name);
    const results = input.resultsAtRest.get(name);
    for (const handler of HANDLERS) {
      const runs = [...(pairs.get(`${name}\u0000${handler}`) ?? [])].sort((a, b) => a.at - b.at);
      if (!runs.length) {
        t.missing++;
        note(t.examples.missing, name, handler, runs, removedAt);
        continue;
      }
      if (runs.length === 1) t.exactly_once++;
      let unexplained = false;
      for (let i = 1; i < runs.length; i++) {
        const previous = runs[i - 1]!.at;
        const at = runs[i]!.at;
        if (kills.some((k) => k >= previous && k <= at)) t.duplicates_explained_by_kill++;
        else {
          t.duplicates_not_explained++;
          unexplained = true;
        }
      }
      if (unexplained) note(t.examples.unexplained, name, handler, runs, removedAt);
      const late = removedAt === undefined ? 0 : runs.filter((r) => r.at > removedAt).length;
      if (late) {
        t.runs_after_removal += late;
        note(t.examples.afterRemoval, name, handler, runs, removedAt);
      }
      if (results && (WITH_RESULTS as readonly string[]).includes(handler) && !results.has(handler)) {
        t.results_lost++;
        note(t.examples.resultsLost, name, handler, runs, removedAt);
      }
    }
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// What the load generator sees of the objects.

/** Whether the object is fully handled for `field`: diff-base up to date, no progress left. */
export function atRest(object: tracking.TrackedObject | undefined, field: string): boolean {
  if (!object) return false;
  const annotations = object.metadata?.annotations ?? {};
  const base = annotations[tracking.DIFF_BASE];
  if (base === undefined) return false;
  try {
    const essence = JSON.parse(base) as { spec?: { field?: unknown } };
    if (essence.spec?.field !== field) return false;
  } catch {
    return false;
  }
  for (const k of Object.keys(annotations)) if (k.startsWith(PREFIX) && k !== tracking.DIFF_BASE) return false;
  const kopf = object.status?.['kopf'];
  const progress = typeof kopf === 'object' && kopf !== null ? (kopf as Record<string, unknown>)['progress'] : undefined;
  if (typeof progress === 'object' && progress !== null && Object.values(progress).some((v) => v !== null)) return false;
  return true;
}

/** The handlers whose result the object's status holds (`status.<id>` a non-null value). */
export function resultsOf(object: tracking.TrackedObject | undefined): Set<string> {
  const out = new Set<string>();
  for (const h of WITH_RESULTS) if (object?.status?.[h] !== undefined && object.status[h] !== null) out.add(h);
  return out;
}

interface ObjectState {
  object: tracking.TrackedObject | undefined;
  removedAt: number | undefined;
}

// ---------------------------------------------------------------------------------------------
// The operator under test, killed and restarted.

/** Reads the ledger as it grows: whole lines only. */
class LedgerReader {
  private offset = 0;
  private rest = '';
  readonly entries: LedgerEntry[] = [];
  unreadable = 0;
  /** The (object, handler) pairs seen so far: the progress of the workload, repeats not counted. */
  private readonly pairs = new Set<string>();

  constructor(readonly file: string) {}

  /** How many distinct (object, handler) pairs have run so far. */
  get progress(): number {
    return this.pairs.size;
  }

  /** Reads what was appended since the last call. */
  poll(): void {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch {
      return;
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size <= this.offset) return;
      const buffer = Buffer.alloc(size - this.offset);
      fs.readSync(fd, buffer, 0, buffer.length, this.offset);
      this.offset = size;
      const text = this.rest + buffer.toString('utf8');
      const cut = text.lastIndexOf('\n') + 1;
      this.rest = text.slice(cut);
      this.add(parseLedger(text.slice(0, cut)));
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Reads the rest, including a last line without its newline. */
  finish(): void {
    this.poll();
    if (this.rest.trim()) this.add(parseLedger(this.rest));
    this.rest = '';
  }

  private add(parsed: ReturnType<typeof parseLedger>): void {
    this.entries.push(...parsed.entries);
    this.unreadable += parsed.unreadable;
    for (const entry of parsed.entries) this.pairs.add(`${entry.name}\u0000${entry.handler}`);
  }
}

/** Runs the operator command, kills it at the ledger's kill points, restarts it, and restarts it after unexpected exits. */
class Supervisor {
  operator: processes.OperatorProcess;
  startedAt: number;
  /** When each killed process had ended. */
  readonly killEnds: number[] = [];
  /** When each restarted process started (after a kill or an unexpected exit). */
  readonly restarts: { at: number; afterKill: boolean }[] = [];
  readonly unexpectedExits: { at: number; log: string }[] = [];
  private busy = false;
  private timer: NodeJS.Timeout | undefined;
  private nextKill = 0;

  constructor(
    private readonly command: string,
    private readonly env: Record<string, string>,
    readonly logFile: string,
    private readonly ledger: LedgerReader,
    /** Progress (distinct object-handler pairs run) at which to kill, ascending. */
    private readonly killAt: readonly number[],
  ) {
    this.operator = new processes.OperatorProcess(command, env, logFile);
    this.startedAt = Date.now();
  }

  /** Starts checking every 100 ms. */
  watch(): void {
    this.timer = setInterval(() => {
      void this.check();
    }, 100);
  }

  /** No more kills or restarts. */
  async stopWatching(): Promise<void> {
    clearInterval(this.timer);
    while (this.busy) await sleep(20);
  }

  get killsDone(): number {
    return this.killEnds.length;
  }

  private async check(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      this.ledger.poll();
      if (this.operator.exited) {
        if (this.unexpectedExits.length >= 10) return; // a crash loop: give up restarting
        this.unexpectedExits.push({ at: Date.now(), log: this.operator.logTail(15) });
        await sleep(1000);
        this.start(false);
        return;
      }
      const due = this.killAt[this.nextKill];
      if (due === undefined || this.ledger.progress < due) return;
      // Only a process that did some work is killed: every restart gets its chance to show it recovers.
      if (!this.ledger.entries.some((e) => e.at >= this.startedAt)) return;
      this.nextKill++;
      await this.operator.kill();
      this.killEnds.push(Date.now());
      this.start(true);
    } finally {
      this.busy = false;
    }
  }

  private start(afterKill: boolean): void {
    this.operator = new processes.OperatorProcess(this.command, this.env, this.logFile);
    this.startedAt = Date.now();
    this.restarts.push({ at: this.startedAt, afterKill });
  }

  /** Restarts after a kill that were followed by at least one ledger line before the next kill or the end. */
  survived(entries: readonly LedgerEntry[]): number {
    let n = 0;
    for (const [i, r] of this.restarts.entries()) {
      if (!r.afterKill) continue;
      const until = this.restarts[i + 1]?.at ?? Infinity;
      if (entries.some((e) => e.at >= r.at && e.at < until)) n++;
    }
    return n;
  }
}

/** The seeded fault schedule: PATCH fault rules for the whole schedule, and timers for drops, bursts and compactions. */
class FaultSchedule {
  drops = 0;
  streamsDropped = 0;
  compactions = 0;
  bursts = 0;
  /** Rule ids by what they inject, for counting at the end. */
  private readonly rules = { answered500: [] as number[], resetBefore: [] as number[], resetAfter: [] as number[], answered429: [] as number[] };
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private pending = new Set<Promise<unknown>>();
  private readonly operatorAgent: string;

  constructor(
    private readonly server: servers.Server,
    private readonly random: () => number,
    private readonly schedule: Schedule,
  ) {
    // Every request whose user agent is not the load generator's is the operator's.
    this.operatorAgent = `^(?!${clients.USER_AGENT.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')})`;
  }

  private async add(rules: serve.WireFaultRule[]): Promise<number[]> {
    return (await servers.call<serve.ChaosReply>(this.server.child, { type: 'add-faults', rules })).ids ?? [];
  }

  async start(): Promise<void> {
    const s = this.schedule;
    // Rules apply in order, each drawing on its own: 500 with p, then each reset kind with the share left.
    const beforeShare = s.patchReset / 2 / (1 - s.patch500);
    const afterShare = s.patchReset / 2 / (1 - s.patch500 - s.patchReset / 2);
    const [a, b, c] = await this.add([
      { method: 'PATCH', userAgent: this.operatorAgent, probability: s.patch500, respond: { code: 500, message: 'injected by the chaos schedule' } },
      { method: 'PATCH', userAgent: this.operatorAgent, probability: beforeShare, reset: 'before' },
      { method: 'PATCH', userAgent: this.operatorAgent, probability: afterShare, reset: 'after' },
    ]);
    this.rules.answered500.push(a!);
    this.rules.resetBefore.push(b!);
    this.rules.resetAfter.push(c!);
    this.every(s.dropEveryMs, 0.2, async () => {
      const mode = this.drops % 2 === 0 ? 'expire' : 'end';
      const r = await servers.call<serve.ChaosReply>(this.server.child, { type: 'drop-watches', match: { userAgent: this.operatorAgent }, mode });
      this.drops++;
      this.streamsDropped += r.count ?? 0;
    });
    this.every(s.burstEveryMs, 0.5, async () => {
      // A burst is a window of time, not a number of requests: an operator backing off cannot starve on it.
      const ms = s.burstMinMs + this.random() * (s.burstMaxMs - s.burstMinMs);
      const [id] = await this.add([
        {
          userAgent: this.operatorAgent,
          respond: { code: 429, reason: 'TooManyRequests', message: 'injected by the chaos schedule', retryAfterSeconds: s.retryAfterSeconds },
        },
      ]);
      this.rules.answered429.push(id!);
      this.bursts++;
      await sleep(ms);
      await servers.call(this.server.child, { type: 'remove-faults', ids: [id!] });
    });
    this.every(s.compactEveryMs, 0.3, async () => {
      await servers.call(this.server.child, { type: 'compact' });
      this.compactions++;
    });
  }

  /** How many requests each kind of rule acted on. */
  async applied(): Promise<{ answered500: number; resetBefore: number; resetAfter: number; answered429: number }> {
    const all = Object.values(this.rules).flat();
    const counts = (await servers.call<serve.ChaosReply>(this.server.child, { type: 'rule-counts', ids: all })).counts ?? {};
    const sum = (list: number[]): number => list.reduce((total, id) => total + (counts[id] ?? 0), 0);
    return {
      answered500: sum(this.rules.answered500),
      resetBefore: sum(this.rules.resetBefore),
      resetAfter: sum(this.rules.resetAfter),
      answered429: sum(this.rules.answered429),
    };
  }

  /** Runs `act` every `periodMs` ± `jitter` × `periodMs` until stopped. */
  private every(periodMs: number, jitter: number, act: () => Promise<void>): void {
    const next = (): void => {
      if (this.stopped) return;
      const delay = periodMs * (1 - jitter + 2 * jitter * this.random());
      const timer = setTimeout(() => {
        this.timers = this.timers.filter((t) => t !== timer);
        if (this.stopped) return;
        const p = act()
          .catch(() => undefined)
          .finally(() => {
            this.pending.delete(p);
            next();
          });
        this.pending.add(p);
      }, delay);
      this.timers.push(timer);
    };
    next();
  }

  /** Stops the timers, waits for actions under way, and removes every fault rule. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    await Promise.allSettled([...this.pending]);
    await servers.call(this.server.child, { type: 'clear-faults' });
  }
}

// ---------------------------------------------------------------------------------------------
// One session: one devcluster, one operator, one workload.

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * The seeded kill points: `kills` amounts of progress (distinct object-handler pairs run) spread
 * over 5 %–90 % of `expected`, ascending. Counting pairs rather than ledger lines keeps the points
 * in step with the workload's phases (creations are the first half, updates the third quarter,
 * deletions the last), however many runs an operator repeats.
 */
export function killPoints(random: () => number, kills: number, expected: number): number[] {
  const points: number[] = [];
  for (let i = 0; i < kills; i++) points.push(Math.max(1, Math.round(expected * (0.05 + (0.85 * (i + random())) / kills))));
  return points.sort((a, b) => a - b);
}

export interface SessionOptions {
  command: string;
  objects: number;
  kills: number;
  seed: number;
  concurrency: number;
  phaseTimeoutMs: number;
  resultsTimeoutMs: number;
  graceMs: number;
  lingerMs: number;
  /** Epoch ms when every wait of the session ends, finished or not. */
  deadline: number;
  /** Keep the session's folder (ledger, operator log, kubeconfig) even when all went well. */
  keep: boolean;
  schedule?: Partial<Schedule>;
}

/** The figures of one session: the tally, the object outcomes, the faults injected, the times. */
export interface SessionFigures extends Omit<Tally, 'examples'> {
  objects: number;
  stuck: number;
  deletions_completed: number;
  objects_wedged: number;
  kills: number;
  restarts_survived: number;
  unexpected_exits: number;
  unreadable_ledger_lines: number;
  watch_drops: number;
  watch_streams_dropped: number;
  compactions: number;
  bursts_429: number;
  answered_500: number;
  reset_before: number;
  reset_after: number;
  answered_429: number;
  create_s: number;
  update_s: number;
  delete_s: number;
  total_s: number;
}

export interface SessionOutcome {
  figures: SessionFigures;
  notes: Record<string, string>;
  /** The session's folder, if kept. */
  dir: string | undefined;
}

/** Runs the workload on one operator under the fault schedule and tallies the ledger. */
export async function session(o: SessionOptions): Promise<SessionOutcome> {
  const schedule: Schedule = { ...SCHEDULE, ...o.schedule };
  const random = ids.createIds(o.seed + 1).random;
  const names = Array.from({ length: o.objects }, (_, i) => `chaos-${i}`);
  const notes: Record<string, string> = {};
  const server = await servers.startServer({ DEVCLUSTER_SEED: String(o.seed), DEVCLUSTER_HISTORY: String(Math.max(10_000, o.objects * 20)) });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-chaos-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const ledgerFile = path.join(dir, 'ledger.jsonl');
  fs.writeFileSync(ledgerFile, '');
  await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');

  const states = new Map<string, ObjectState>(names.map((n) => [n, { object: undefined, removedAt: undefined }]));
  const client = new clients.Client(server.url, o.concurrency);
  const tracker = new tracking.Tracker(server.url, client, (key, object) => {
    const state = states.get(key.slice(NAMESPACE.length + 1));
    if (!state) return;
    state.object = object;
    if (!object) state.removedAt ??= Date.now();
  });
  const ledger = new LedgerReader(ledgerFile);
  const command = o.command.replaceAll('{kubeconfig}', kubeconfig).replaceAll('{ledger}', ledgerFile);
  const faults = new FaultSchedule(server, random, schedule);
  const killAt = killPoints(random, o.kills, o.objects * HANDLERS.length);
  const t0 = Date.now();
  const supervisor = new Supervisor(
    command,
    { KUBECONFIG: kubeconfig, CHAOS_LEDGER: ledgerFile, NODE_OPTIONS: '' },
    path.join(dir, 'operator.log'),
    ledger,
    killAt,
  );
  const stuck = new Set<string>();
  const resultsAtRest = new Map<string, ReadonlySet<string>>();
  const times = { create_s: Number.NaN, update_s: Number.NaN, delete_s: Number.NaN };
  let failed = false;
  let scheduleRunning = false;

  const left = (ms: number): number => Math.max(0, Math.min(ms, o.deadline - Date.now()));
  const nameOf = (s: tracking.Seen): string => s.key.slice(NAMESPACE.length + 1);
  /** Waits until every object in `subset` meets `ok`, within `ms`; returns those that do not. */
  const waitUntil = async (subset: readonly string[], ok: (name: string) => boolean, ms: number): Promise<string[]> => {
    await tracker.waitAll(
      subset.map((n) => `${NAMESPACE}/${n}`),
      (s) => s !== undefined && ok(nameOf(s)),
      left(ms),
    );
    return subset.filter((n) => !ok(n));
  };
  /** Waits until the operator sent no request but watches for `quietMs` (at most `maxMs`): its pending retries have played out. */
  const quiet = async (quietMs: number, maxMs: number): Promise<boolean> => {
    const end = Date.now() + left(maxMs);
    for (;;) {
      const since = Date.now() - quietMs;
      const r = await servers.ask<{ counts: Record<string, number> }>(server.child, { type: 'counts', since, excludeUserAgent: clients.USER_AGENT }, 'counts');
      if (!Object.keys(r.counts).some((k) => !k.startsWith('watch '))) return true;
      if (Date.now() >= end) return false;
      await sleep(250);
    }
  };
  const restingAt = (field: string) => (n: string) => atRest(states.get(n)!.object, field);
  const gone = (n: string): boolean => states.get(n)!.removedAt !== undefined;
  const withResults = (field: string, handlers: readonly string[]) => (n: string) => {
    const object = states.get(n)!.object;
    const results = resultsOf(object);
    return atRest(object, field) && handlers.every((h) => results.has(h));
  };

  try {
    const ready = await servers.call<{ time: number | null }>(server.child, {
      type: 'await-watch',
      resource: 'kopfexamples',
      since: t0,
      timeoutMs: left(120_000),
    });
    if (ready.time === null) throw new Error(`the operator did not watch kopfexamples within 120 s; last output:\n${supervisor.operator.logTail()}`);
    await tracker.start();
    await faults.start();
    scheduleRunning = true;
    supervisor.watch();

    // Create: every object at rest with both create results (or its wait's bound).
    let t = Date.now();
    await clients.pool(o.concurrency, names.length, async (i) => {
      await client.expect([201], 'POST', COLLECTION, body(names[i]!));
    });
    for (const n of await waitUntil(names, restingAt('value'), o.phaseTimeoutMs)) stuck.add(n);
    await waitUntil(
      names.filter((n) => !stuck.has(n)),
      withResults('value', ['create_a', 'create_b']),
      o.resultsTimeoutMs,
    );
    times.create_s = (Date.now() - t) / 1000;

    // Update: one spec change each; at rest again with all three results.
    t = Date.now();
    await clients.pool(o.concurrency, names.length, async (i) => {
      await client.expect([200], 'PATCH', `${COLLECTION}/${names[i]}`, { spec: { field: 'changed' } }, 'application/merge-patch+json');
    });
    for (const n of await waitUntil(names, restingAt('changed'), o.phaseTimeoutMs)) stuck.add(n);
    await waitUntil(
      names.filter((n) => restingAt('changed')(n)),
      withResults('changed', WITH_RESULTS),
      o.resultsTimeoutMs,
    );
    for (const n of names) {
      const object = states.get(n)!.object;
      if (atRest(object, 'changed')) resultsAtRest.set(n, resultsOf(object));
    }
    times.update_s = (Date.now() - t) / 1000;

    // Delete: every object gone.
    t = Date.now();
    await clients.pool(o.concurrency, names.length, async (i) => {
      await client.expect([200, 202], 'DELETE', `${COLLECTION}/${names[i]}`);
    });
    for (const n of await waitUntil(names, gone, o.phaseTimeoutMs)) stuck.add(n);
    times.delete_s = (Date.now() - t) / 1000;
  } catch (err) {
    failed = true;
    notes['error'] = message(err);
  }

  // The schedule ends: no more faults or kills; a last bounded wait, and late runs get their chance.
  await supervisor.stopWatching();
  if (scheduleRunning) await faults.stop();
  const remaining = names.filter((n) => !gone(n));
  if (remaining.length) await waitUntil(remaining, gone, o.graceMs);
  if (o.lingerMs) notes['quiet'] = (await quiet(o.lingerMs, LINGER_MAX_MS)) ? 'yes' : `no request-free ${o.lingerMs / 1000} s within ${LINGER_MAX_MS / 1000} s`;
  const total = (Date.now() - t0) / 1000;
  const applied = scheduleRunning ? await faults.applied() : { answered500: 0, resetBefore: 0, resetAfter: 0, answered429: 0 };
  await supervisor.operator.stop(5000);
  tracker.stop();
  client.close();
  await servers.stopServer(server.child);
  ledger.finish();

  const removedAt = new Map<string, number>();
  for (const [n, s] of states) if (s.removedAt !== undefined) removedAt.set(n, s.removedAt);
  const counted = tally({ names, entries: ledger.entries, killEnds: supervisor.killEnds, removedAt, resultsAtRest });
  const { examples, ...tallied } = counted;
  const figures: SessionFigures = {
    objects: o.objects,
    ...tallied,
    stuck: stuck.size,
    deletions_completed: removedAt.size,
    objects_wedged: names.length - removedAt.size,
    kills: supervisor.killsDone,
    restarts_survived: supervisor.survived(ledger.entries),
    unexpected_exits: supervisor.unexpectedExits.length,
    unreadable_ledger_lines: ledger.unreadable,
    watch_drops: faults.drops,
    watch_streams_dropped: faults.streamsDropped,
    compactions: faults.compactions,
    bursts_429: faults.bursts,
    answered_500: applied.answered500,
    reset_before: applied.resetBefore,
    reset_after: applied.resetAfter,
    answered_429: applied.answered429,
    ...times,
    total_s: total,
  };
  if (Date.now() >= o.deadline) notes['duration_limit'] = 'the session reached its share of --duration-limit; unfinished objects count as stuck';
  if (o.kills > supervisor.killsDone) notes['kills'] = `${supervisor.killsDone} of ${o.kills} kill points reached (the ledger stayed below the others)`;
  const describe = (list: Example[]): string =>
    list
      .map(
        (e) =>
          `${e.name}/${e.handler}: runs ${e.runs.map((r) => `${new Date(r.at).toISOString().slice(11, 23)} (pid ${r.pid})`).join(', ') || 'none'}` +
          (e.removedAt ? `; DELETED seen ${new Date(e.removedAt).toISOString().slice(11, 23)}` : ''),
      )
      .join('; ');
  if (examples.missing.length) notes['examples_missing'] = describe(examples.missing);
  if (examples.unexplained.length) notes['examples_duplicates_not_explained'] = describe(examples.unexplained);
  if (examples.afterRemoval.length) notes['examples_runs_after_removal'] = describe(examples.afterRemoval);
  if (examples.resultsLost.length) notes['examples_results_lost'] = describe(examples.resultsLost);
  if (supervisor.killEnds.length)
    notes['kills_at'] = supervisor.killEnds.map((k, i) => `${new Date(k).toISOString().slice(11, 23)} (at ${killAt[i]} object-handler pairs)`).join(', ');
  if (stuck.size) notes['stuck_objects'] = [...stuck].slice(0, 10).join(', ');
  if (supervisor.unexpectedExits.length) notes['unexpected_exit'] = supervisor.unexpectedExits[0]!.log;
  const flawed =
    failed ||
    figures.missing + figures.duplicates_not_explained + figures.runs_after_removal + figures.results_lost + figures.stuck + figures.objects_wedged > 0;
  const keep = o.keep || flawed;
  if (keep) notes['folder'] = `${dir} (ledger.jsonl, operator.log)`;
  else fs.rmSync(dir, { recursive: true, force: true });
  return { figures, notes, dir: keep ? dir : undefined };
}

function body(name: string): Record<string, unknown> {
  return { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: NAMESPACE }, spec: { field: 'value', items: ['item1', 'item2'] } };
}

// ---------------------------------------------------------------------------------------------
// The benchmark: sessions per N and operator, and the table.

type Key = 'kopfgen' | 'versus';

interface RowSpec {
  label: string;
  figure: keyof SessionFigures;
  digits?: number;
  target?: (n: number, kills: number) => { text: string; bounds: report.Target };
}

const exactly = (v: number): { text: string; bounds: report.Target } => ({ text: `= ${v}`, bounds: { min: v, max: v } });
const zero = (): { text: string; bounds: report.Target } => exactly(0);

const ROWS: RowSpec[] = [
  { label: 'expected handler runs (N x 4)', figure: 'expected_runs' },
  { label: 'handler runs in the ledger', figure: 'runs' },
  // No target: with kills, some runs are repeated by design (at-least-once across crashes).
  { label: 'exactly once', figure: 'exactly_once' },
  { label: 'missing', figure: 'missing', target: zero },
  { label: 'duplicates explained by a kill', figure: 'duplicates_explained_by_kill' },
  { label: 'duplicates not explained', figure: 'duplicates_not_explained', target: zero },
  { label: 'runs after removal', figure: 'runs_after_removal', target: zero },
  { label: 'results lost', figure: 'results_lost', target: zero },
  { label: 'stuck', figure: 'stuck', target: zero },
  { label: 'deletions completed', figure: 'deletions_completed', target: (n) => exactly(n) },
  { label: 'objects wedged', figure: 'objects_wedged', target: zero },
  { label: 'restarts survived', figure: 'restarts_survived', target: (_, k) => exactly(k) },
  { label: 'unexpected exits', figure: 'unexpected_exits', target: zero },
  { label: 'watch drops (410 / end alternating)', figure: 'watch_drops' },
  { label: 'compactions', figure: 'compactions' },
  { label: '429 bursts', figure: 'bursts_429' },
  { label: 'requests answered 500', figure: 'answered_500' },
  { label: 'requests reset before the write', figure: 'reset_before' },
  { label: 'requests reset after the write', figure: 'reset_after' },
  { label: 'requests answered 429', figure: 'answered_429' },
  { label: 'create phase s', figure: 'create_s', digits: 1 },
  { label: 'update phase s', figure: 'update_s', digits: 1 },
  { label: 'delete phase s', figure: 'delete_s', digits: 1 },
  { label: 'total s', figure: 'total_s', digits: 1 },
];

/** One table per N: a column per operator; targets and `met` for the first. */
export function comparisons(
  sizes: readonly number[],
  keys: readonly Key[],
  titles: Record<Key, string>,
  kills: number,
  seed: number,
  results: ReadonlyMap<string, SessionFigures>,
  targets: Record<string, report.Target>,
): report.Comparison[] {
  return sizes.map((n) => {
    const rows = ROWS.map((spec): report.ComparisonRow => {
      const values = keys.map((k) => results.get(`${k}/${n}`)?.[spec.figure]);
      const target = spec.target?.(n, kills);
      let met: boolean | undefined;
      const own = values[0];
      if (target) {
        targets[`${keys.length > 1 ? 'kopfgen_' : ''}n${n}_${spec.figure}`] = target.bounds;
        met =
          own !== undefined && (target.bounds.min === undefined || own >= target.bounds.min) && (target.bounds.max === undefined || own <= target.bounds.max);
      }
      return { label: spec.label, values, digits: spec.digits, target: target?.text ?? '', met };
    });
    return { title: `chaos, N = ${n} (seed ${seed}, ${kills} kills)`, columns: keys.map((k) => titles[k]), rows };
  });
}

/** Compiles the default operator; exits with one line if the compiled runtime is missing or stale. */
function prepare(opts: Options, notes: Record<string, string>): void {
  if (opts.custom) return;
  try {
    compiling.requireFreshDistribution();
    compiling.transpile('fixtures/operators/chaos.ts', COMPILED_OPERATOR);
    notes['runtime_resolved_to'] = compiling.requireRuntimeFromDist(BUILD);
  } catch (err) {
    process.stderr.write(`chaos: ${message(err)}\n`);
    process.exit(1);
  }
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  if (args.includes('--sharded')) return (await import('./sharding-chaos.js')).run(args);
  const opts = parseOptions(args);
  const notes: Record<string, string> = {};
  prepare(opts, notes);
  const contenders: { key: Key; command: string }[] = [{ key: 'kopfgen', command: opts.command }];
  if (opts.versus) contenders.push({ key: 'versus', command: opts.versus });
  const compare = contenders.length > 1;
  for (const c of contenders)
    notes[compare ? `${c.key}_command` : 'command'] =
      `${c.command}  (sh -c, cwd = package folder, KUBECONFIG and CHAOS_LEDGER set, {kubeconfig} and {ledger} substituted)`;
  notes['machine'] = `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  notes['schedule'] =
    `seed ${opts.seed}; watches of the operator dropped every ${SCHEDULE.dropEveryMs / 1000} s ±20 % (410 / end alternating); PATCH: ${SCHEDULE.patch500 * 100} % 500, ` +
    `${SCHEDULE.patchReset * 50} % reset before, ${SCHEDULE.patchReset * 50} % reset after the write; 429 bursts (${SCHEDULE.burstMinMs / 1000}-${SCHEDULE.burstMaxMs / 1000} s of every request, Retry-After ${SCHEDULE.retryAfterSeconds} s) every ${SCHEDULE.burstEveryMs / 1000} s ±50 %; ` +
    `compaction every ${SCHEDULE.compactEveryMs / 1000} s ±30 %; ${opts.kills} SIGKILLs at seeded fractions of the expected object-handler pairs`;
  const figures: Record<string, number> = {};
  const results = new Map<string, SessionFigures>();
  const deadline = Date.now() + opts.durationLimitS * 1000;
  let sessionsLeft = opts.objects.length * contenders.length;
  for (const n of opts.objects) {
    for (const c of contenders) {
      const share = (deadline - Date.now()) / sessionsLeft--;
      const prefix = `${compare ? `${c.key}_` : ''}n${n}_`;
      if (share <= 0) {
        notes[`${prefix}skipped`] = 'no time left within --duration-limit';
        continue;
      }
      try {
        const outcome = await session({
          command: c.command,
          objects: n,
          kills: opts.kills,
          seed: opts.seed,
          concurrency: opts.concurrency,
          phaseTimeoutMs: opts.phaseTimeoutS * 1000,
          resultsTimeoutMs: opts.resultsTimeoutS * 1000,
          graceMs: opts.graceS * 1000,
          lingerMs: opts.lingerS * 1000,
          deadline: Date.now() + share,
          keep: opts.keep,
        });
        results.set(`${c.key}/${n}`, outcome.figures);
        for (const [k, v] of Object.entries(outcome.figures)) figures[`${prefix}${k}`] = v;
        for (const [k, v] of Object.entries(outcome.notes)) notes[`${prefix}${k}`] = v;
      } catch (err) {
        notes[`${prefix}error`] = message(err);
      }
    }
  }
  notes['definitions'] =
    'see bench/chaos.ts: a duplicate is explained when a killed operator process ended between the previous run of the same handler for the same object and the repeat; ' +
    "runs after removal = runs started after the load generator's watch saw DELETED; results lost = results of handlers that ran, missing from the status of objects at rest before deletion";
  const targets: Record<string, report.Target> = {};
  const tables = comparisons(
    opts.objects,
    contenders.map((c) => c.key),
    { kopfgen: opts.custom ? 'command' : 'kopf-gen', versus: 'versus' },
    opts.kills,
    opts.seed,
    results,
    targets,
  );
  return { name: 'chaos', figures, targets, notes, tables };
}
