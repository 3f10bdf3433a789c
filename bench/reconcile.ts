/**
 * Reconcile benchmark: `npm run bench -- reconcile [options]`. What a reconcile handler that owns
 * children costs and how well its calls coalesce, on the figures of issue 29: N parents (default
 * 1,000) owning 3 children each, every child changed once.
 *
 * A fresh devcluster runs in its own process (`serve.ts`); the operator runs as another process,
 * compiled, never through a TypeScript loader: `fixtures/operators/bench-reconcile.ts` (one
 * `on.reconcile` on `kopfexamples` with `owns: [builtins.ConfigMaps]`, which only reads) is
 * transpiled into `bench/.build/` and run with `node bin/kopf-gen.js run … --quiet` on `dist/`.
 * It writes its call count and each object's call start times (epoch ms) to a side-channel file.
 *   1. ready: the operator's first WATCH of kopfexamples, then 3 s of rest; the RSS of the
 *      operator's process tree then is the baseline;
 *   2. create the N parents and their 3N children (ConfigMaps whose controller owner reference
 *      names the parent), 8 requests at a time; wait until every parent has been reconciled and
 *      the calls stop (no new call for `--settle` seconds); `rss_per_parent_kib` = (RSS − the
 *      baseline) / N, the memory of a parent, its 3 children and their cache entries;
 *   3. change every child once (a label), children of all parents in turn (the first child of
 *      every parent, then the second, …) so that a parent's changes are apart; wait until the
 *      calls stop again. `calls_per_child_change` = calls in this phase / 3N; latency = for each
 *      change, the first call of its parent that started after the change was sent (so the
 *      figure includes the PATCH request's own time: the watch event may reach the operator
 *      before the response reaches the benchmark);
 *      `api_requests_per_reconcile` = what the operator sent in the phase (everything but
 *      watches) / its calls: the handler only reads, so each request is one the cache missed.
 *
 * Targets: calls per child change 1.0 (never more than 2), API requests per read-only reconcile 0,
 * change → reconcile start p99 ≤ 100 ms. RSS per parent with 3 children has no target yet: it is
 * reported for the trend.
 *
 * Options: `--objects 1000` (parents), `--settle 2` (seconds without calls that end a phase),
 * `--concurrency 8`, `--timeout 600` (each wait, seconds), `--keep` (keep the temporary folder).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as clients from './clients.js';
import * as compiling from './compiling.js';
import * as optionValues from './options.js';
import * as processes from './processes.js';
import * as report from './report.js';
import type * as serve from './serve.js';
import * as servers from './servers.js';

const FIXTURE = 'fixtures/operators/bench-reconcile.ts';
const COMPILED = 'bench/.build/bench-reconcile.js';
const COMMAND = `exec node bin/kopf-gen.js run ${COMPILED} --all-namespaces --standalone --quiet`;
const NAMESPACE = 'default';
const CHILDREN = 3;
const KIB = 1024;

export interface Options {
  objects: number;
  settleS: number;
  concurrency: number;
  timeoutMs: number;
  keep: boolean;
}

/** Reads this benchmark's options from all the arguments (other benchmarks' options are ignored). */
export function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: {
      objects: { type: 'string' },
      settle: { type: 'string' },
      concurrency: { type: 'string' },
      timeout: { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  return {
    objects: optionValues.wholeNumber(values['objects'], 1000, 'objects'),
    settleS: optionValues.wholeNumber(values['settle'], 2, 'settle'),
    concurrency: optionValues.wholeNumber(values['concurrency'], 8, 'concurrency'),
    timeoutMs: optionValues.wholeNumber(values['timeout'], 600, 'timeout') * 1000,
    keep: values['keep'] === true,
  };
}

/** What the operator writes to its side-channel file. */
export interface Stats {
  at: number;
  calls: number;
  starts: Record<string, number[]>;
  /** The operator's event-loop delay per window of about 0.5 s ending at `at` (epoch ms; delays in ms). */
  loop?: { at: number; p99Ms: number; maxMs: number }[];
  /** The operator's garbage collections: when each started (epoch ms) and its pause (ms). */
  gc?: { at: number; ms: number }[];
}

/** The operator's own delays between `since` and `until` (epoch ms): the worst event-loop delay and GC pauses. */
export function delaysIn(stats: Stats, since: number, until: number): { loopMaxMs: number; gcMaxMs: number; gcTotalMs: number } {
  const loops = (stats.loop ?? []).filter((w) => w.at > since && w.at <= until + 500);
  const gcs = (stats.gc ?? []).filter((g) => g.at >= since && g.at <= until);
  return {
    loopMaxMs: loops.length ? Math.max(...loops.map((w) => w.maxMs)) : Number.NaN,
    gcMaxMs: gcs.reduce((max, g) => Math.max(max, g.ms), 0),
    gcTotalMs: gcs.reduce((sum, g) => sum + g.ms, 0),
  };
}

/** One child change: its parent, when its request was sent and when its response came (epoch ms). */
export interface Change {
  parent: string;
  at: number;
  answered: number;
}

/** For each change, the time from it to the first call of its parent that started at or after it (ms); a change never followed by a call is left out. */
export function latencies(changes: readonly Pick<Change, 'parent' | 'at'>[], starts: Record<string, number[]>): number[] {
  const out: number[] = [];
  for (const change of changes) {
    const first = (starts[change.parent] ?? []).find((t) => t >= change.at);
    if (first !== undefined) out.push(first - change.at);
  }
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function readStats(file: string): Stats | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Stats;
  } catch {
    return undefined; // not written yet
  }
}

/** The devcluster, the operator and the load generator's client of one run. */
class Session {
  private constructor(
    readonly server: servers.Server,
    readonly operator: processes.OperatorProcess,
    readonly client: clients.Client,
    readonly statsFile: string,
  ) {}

  static async open(options: Options, dir: string): Promise<Session> {
    const server = await servers.startServer({ DEVCLUSTER_HISTORY: String(Math.max(100_000, options.objects * 20)) });
    const kubeconfig = path.join(dir, 'kubeconfig');
    await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');
    const statsFile = path.join(dir, 'stats.json');
    const since = Date.now();
    const operator = new processes.OperatorProcess(
      COMMAND,
      { KUBECONFIG: kubeconfig, BENCH_RECONCILE_STATS: statsFile, NODE_OPTIONS: '' },
      path.join(dir, 'operator.log'),
    );
    const session = new Session(server, operator, new clients.Client(server.url, options.concurrency), statsFile);
    const question: serve.AwaitWatch = { type: 'await-watch', resource: 'kopfexamples', since, timeoutMs: 120_000, reply: 'watch-reconcile' };
    const seen = await servers.ask<{ time: number | null }>(server.child, question, question.reply);
    if (seen.time === null) throw new Error(`the operator did not watch kopfexamples within 120 s; last output:\n${operator.logTail()}`);
    return session;
  }

  stats(): Stats {
    return readStats(this.statsFile) ?? { at: 0, calls: 0, starts: {} };
  }

  /** Waits until at least `calls` calls have started and then none for `settleS` seconds; the last stats. */
  async quiet(calls: number, options: Options, what: string): Promise<Stats> {
    const deadline = Date.now() + options.timeoutMs;
    let last = this.stats();
    let since = Date.now();
    for (;;) {
      this.operator.assertRunning();
      await sleep(250);
      const now = this.stats();
      if (now.calls !== last.calls) since = Date.now();
      last = now;
      if (now.calls >= calls && Date.now() - since >= options.settleS * 1000) return now;
      if (Date.now() > deadline) throw new Error(`${what}: ${now.calls} of ${calls} calls within ${options.timeoutMs / 1000} s`);
    }
  }

  /** Requests the operator sent in a window, watches left out. */
  async operatorRequests(since: number, until: number): Promise<number> {
    const answer = await servers.ask<{ counts: Record<string, number> }>(
      this.server.child,
      { type: 'counts', since, until, excludeUserAgent: clients.USER_AGENT },
      'counts',
    );
    return Object.entries(answer.counts)
      .filter(([key]) => !key.startsWith('watch '))
      .reduce((sum, [, n]) => sum + n, 0);
  }

  rss(): number {
    return processes.measureTree(this.operator.pid).rssBytes;
  }

  async close(): Promise<void> {
    await this.operator.stop();
    this.client.close();
    await servers.stopServer(this.server.child);
  }
}

const parentName = (i: number): string => `parent-${i}`;
const childName = (i: number, k: number): string => `parent-${i}-child-${k}`;

/** Creates the parents and their children; the parents' uids come from the create responses. */
async function populate(s: Session, options: Options): Promise<void> {
  await clients.pool(options.concurrency, options.objects, async (i) => {
    const created = await s.client.expect([201], 'POST', `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`, {
      apiVersion: 'kopf.dev/v1',
      kind: 'KopfExample',
      metadata: { name: parentName(i), namespace: NAMESPACE },
      spec: { field: 'value' },
    });
    const uid = (JSON.parse(created.text) as { metadata: { uid: string } }).metadata.uid;
    const owner = { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: parentName(i), uid, controller: true, blockOwnerDeletion: true };
    for (let k = 0; k < CHILDREN; k++) {
      await s.client.expect([201], 'POST', `/api/v1/namespaces/${NAMESPACE}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: childName(i, k), namespace: NAMESPACE, ownerReferences: [owner] },
        data: { key: 'value' },
      });
    }
  });
}

/** Changes every child once, the k-th child of every parent before the (k+1)-th of any; the changes with their times. */
async function changeChildren(s: Session, options: Options): Promise<Change[]> {
  const changes: Change[] = [];
  const n = options.objects;
  await clients.pool(options.concurrency, n * CHILDREN, async (j) => {
    const i = j % n;
    const k = Math.floor(j / n);
    const sent = Date.now();
    await s.client.expect(
      [200],
      'PATCH',
      `/api/v1/namespaces/${NAMESPACE}/configmaps/${childName(i, k)}`,
      { metadata: { labels: { changed: 'yes' } } },
      'application/merge-patch+json',
    );
    changes.push({ parent: parentName(i), at: sent, answered: Date.now() });
  });
  return changes;
}

async function measure(s: Session, options: Options, figures: Record<string, number>): Promise<void> {
  const n = options.objects;
  await sleep(3000);
  const readyRss = s.rss();
  figures['ready_rss_mb'] = readyRss / KIB / KIB;

  const p0 = Date.now();
  await populate(s, options);
  const populated = await s.quiet(n, options, 'every parent reconciled');
  figures['populate_s'] = (Date.now() - p0) / 1000;
  figures['populate_calls_per_parent'] = populated.calls / n;
  const settledRss = s.rss();
  figures['rss_mb'] = settledRss / KIB / KIB;
  figures['rss_per_parent_with_children_kib'] = (settledRss - readyRss) / n / KIB;

  const c0 = Date.now();
  const cpu0 = s.operator.usage().cpuSeconds;
  const before = populated.calls;
  const changes = await changeChildren(s, options);
  figures['change_phase_s'] = (Date.now() - c0) / 1000;
  const changed = await s.quiet(before + 1, options, 'the calls after the changes');
  const c1 = Date.now();
  const calls = changed.calls - before;
  figures['operator_cpu_ms_per_call'] = calls ? ((s.operator.usage().cpuSeconds - cpu0) * 1000) / calls : Number.NaN;
  // The PATCH's own round trip: the part of the latency that is the API server's and the machine's.
  const roundTrips = changes.map((change) => change.answered - change.at);
  figures['change_request_p50_ms'] = report.percentile(roundTrips, 50);
  figures['change_request_p99_ms'] = report.percentile(roundTrips, 99);
  figures['child_changes'] = changes.length;
  figures['reconcile_calls'] = calls;
  figures['calls_per_child_change'] = calls / changes.length;
  figures['api_requests_per_reconcile'] = calls ? (await s.operatorRequests(c0, c1)) / calls : Number.NaN;
  const waits = latencies(changes, changed.starts);
  figures['changes_without_a_later_call'] = changes.length - waits.length;
  figures['change_to_reconcile_p50_ms'] = report.percentile(waits, 50);
  figures['change_to_reconcile_p99_ms'] = report.percentile(waits, 99);
  // The operator's own stalls while the changes were sent and answered.
  const delays = delaysIn(changed, c0, c0 + figures['change_phase_s']! * 1000);
  figures['change_phase_loop_delay_max_ms'] = delays.loopMaxMs;
  figures['change_phase_gc_pause_max_ms'] = delays.gcMaxMs;
  figures['change_phase_gc_pause_total_ms'] = delays.gcTotalMs;
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const options = parseOptions(args);
  const figures: Record<string, number> = {};
  const notes: Record<string, string> = {};
  const targets: Record<string, report.Target> = {
    calls_per_child_change: { max: 2 },
    api_requests_per_reconcile: { max: 0 },
    change_to_reconcile_p99_ms: { max: 100 },
    changes_without_a_later_call: { max: 0 },
  };
  notes['machine'] = `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  notes['goals'] = 'calls_per_child_change: 1.0 after coalescing, never more than 2; api_requests_per_reconcile: 0 (the cache answers every read)';
  figures['objects'] = options.objects;
  figures['load_average_1m_start'] = os.loadavg()[0]!;
  compiling.requireFreshDistribution();
  compiling.transpile(FIXTURE, COMPILED);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-reconcile-'));
  let session: Session | undefined;
  let failed = false;
  try {
    session = await Session.open(options, dir);
    await measure(session, options, figures);
  } catch (error) {
    failed = true;
    notes['error'] = error instanceof Error ? error.message : String(error);
  } finally {
    if (session) {
      figures['peak_rss_mb'] = session.operator.usage().peakRssBytes / KIB / KIB;
      await session.close();
    }
  }
  if (options.keep || failed) notes['kept'] = dir;
  else fs.rmSync(dir, { recursive: true, force: true });
  figures['load_average_1m_end'] = os.loadavg()[0]!;
  return { name: 'reconcile', figures, targets, notes };
}
