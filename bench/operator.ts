/**
 * Operator benchmark: `npm run bench -- operator [options]`. What an operator costs per object
 * handled — time, CPU, API requests and memory — for the create/update/delete work every operator
 * does, measured the same way for kopf-gen, Python Kopf or any other operator command, so that
 * changes to the runtime and comparisons with other frameworks rest on numbers.
 *
 * A devcluster runs in its own process (`serve.ts`, plain HTTP, the Kopf example CRD, a long
 * history so slow watchers never see 410, no request bodies kept). The operator runs as another
 * process from a shell command, with `KUBECONFIG` pointing at the devcluster and `NODE_OPTIONS`
 * emptied. This process is the load generator: it creates, patches and deletes objects over
 * keep-alive HTTP (8 at a time) with its own user agent, and follows them with a list+watch like
 * any client.
 *
 * The operator measured by default is compiled code on the compiled runtime, as in production
 * (`node dist/main.js`), not the checkout under a TypeScript loader: `fixtures/operators/bench.ts`
 * is transpiled into `bench/.build/operator/bench.js`, where `kopf-gen/runtime` resolves to
 * `dist/runtime/index.js` (checked), and run as
 * `node bin/kopf-gen.js run bench/.build/operator/bench.js --all-namespaces --standalone`.
 * `dist/` must be built and newer than the sources of `runtime/` and `cli/` (else: run npm run
 * build).
 *
 * For each N (default 1,000 and 10,000; fresh devcluster and operator each time) it times three
 * phases, each until every object is fully handled:
 *   - create: every object has the create handler's result in `status.create_fn` and the
 *     diff-base annotation `kopf.zalando.org/last-handled-configuration`;
 *   - update: a merge-patch of `spec.field` on every object; until every diff-base has the value;
 *   - delete: until every object is gone (the operator must remove its finalizer).
 * Per phase: seconds, objects/s, the operator's CPU seconds, and the API requests per object by
 * verb and resource: every request in the phase's window (its start to the next phase's start)
 * that the load generator did not send, counted by the devcluster's request log (the total leaves
 * out watch and list requests, which serve all objects at once). After the
 * phases: the operator's CPU seconds and peak RSS (the process tree's VmHWM from /proc). The
 * devcluster's and the load generator's CPU seconds per phase are printed too: all three share
 * the machine, so they tell which process a slow phase was waiting for; so does the machine's
 * 1-minute load average at the end of each phase (above the CPU count, other work competed). The
 * operator's CPU milliseconds per object bound its throughput whatever the load: a Node operator
 * uses one core, so 1000 / (ms per object) is its best possible objects/s.
 * Memory: RSS when ready (after a first object is handled and deleted), peak RSS, RSS growth per
 * object = (peak − ready) / N, RSS right after the delete phase's wait + 1 s (`rss_after_delete`,
 * and its ratio to ready RSS), RSS after the operator then stayed idle for `--settle` seconds
 * (default 20; `rss_settled` and its ratio to ready, the figure with the "within 20 %" target:
 * what is not given back once all objects are gone and V8 had time to shrink), RSS at the end.
 *
 * Idle latency (first N only, after its phases): 200 objects created one at a time, each
 * after the previous one is fully handled. Measured from the moment the create response arrives:
 *   - handler start: the `started` epoch-ms timestamp the create handler puts in its result;
 *   - first request: the first request about the object by anyone but the load generator, as
 *     logged by the devcluster (for a finalizer-adding operator, the finalizer patch);
 *   - handled: when the load generator sees `status.create_fn` arrive on its watch.
 *
 * Any operator command can be measured on the same work (`--command`, run with `sh -c` from the
 * package folder, `{kubeconfig}` replaced by the kubeconfig's path, `KUBECONFIG` set). It must
 * handle `kopfexamples.kopf.dev/v1` in all namespaces with a create handler `create_fn` that
 * returns `{started: <epoch ms>, …}`, an update handler and a non-optional delete handler, and
 * keep Kopf's diff-base annotation — e.g. Python Kopf with the equivalent of
 * `fixtures/operators/bench.ts`: `--command "kopf run bench.py --all-namespaces --standalone"`.
 *
 * Side by side: `--versus <shell command>` (a reference, e.g. Python Kopf, given like `--command`)
 * and `--null` (the null operator, `null-operator.ts`: the reference traces' requests and nothing
 * else, compiled like the fixture and run with plain Node: the API-bound limit) add operators.
 * For each N, the kopf-gen operator (the default or `--command`) runs first, then the versus
 * command, then the null operator, each on a fresh devcluster; idle latency is measured for each
 * on the first N. Instead of the table of all figures, one table per N compares them: ready s
 * and RSS, per phase objects/s, operator CPU ms per object and requests per object, peak RSS,
 * RSS at the end, RSS growth per object, RSS after delete ÷ ready, idle create→handler-start p50;
 * columns kopf-gen | versus | kopf-gen ÷ versus | null | target | met. The targets for the
 * kopf-gen column (those of the daemons-timers-and-memory issue, relative to the other columns,
 * and the older absolute ones): ready RSS ≤ versus; peak RSS ≤ 0.5 × versus; RSS growth per
 * object ≤ 0.25 × versus; CPU per object ≤ 1.5 × null in each phase (the null operator on the
 * same HTTP client: the floor of the HTTP and JSON work); objects/s ≥ 0.8 × null in each phase;
 * requests per object = the reference traces'; RSS settled within 20 % of ready; idle handler
 * start p50 ≤ 5 ms. A relative target whose column is missing has no verdict (a note says which).
 * The JSON line keeps every figure, prefixed per operator
 * (`kopfgen_n10000_…`, `versus_n10000_…`, `null_n10000_…`, `kopfgen_idle_…`), and the targets
 * resolved against the other columns (`kopfgen_…` keys). Without `--versus` and `--null`, the
 * figures are unprefixed and printed one per row with the absolute targets only, as for any
 * benchmark (the relative ones have no verdict: a note says so).
 *
 * Profiles of the kopf-gen operator (a Node process; the versus and null operators are never
 * profiled), written under `--profile-dir` (default: a new temporary folder), one subfolder per N.
 * The options go on the command line after the command's first `node` word (Node refuses
 * `--cpu-prof` in `NODE_OPTIONS`); a `--command` without one is not profiled (a note says so):
 *   - `--profile cpu`: `node --cpu-prof --cpu-prof-dir=<dir> …`; V8 writes the `.cpuprofile`
 *     files when the operator exits after the session (SIGTERM, graceful stop);
 *   - `--profile heap`: `node --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<dir> …`; SIGUSR2
 *     goes to every node process of the operator's tree after the create phase (the peak) and
 *     after the delete phase (after its RSS reading), and the benchmark waits until each snapshot
 *     file stops growing; the files are named `n<N>-after-<phase>-Heap.….heapsnapshot`.
 * The paths are printed with the notes. Profiling slows the operator down (CPU profiles by a
 * little, each heap snapshot stops it for seconds and raises its peak RSS): figures measured with
 * `--profile` are not comparable with others.
 *
 * Options: `--command <shell>`, `--versus <shell>`, `--null`, `--profile cpu|heap`,
 * `--profile-dir <dir>`, `--sizes 1000,10000`, `--idle 200` (0 skips), `--concurrency 8`,
 * `--phase-timeout <s>` (default 300), `--settle <s>` (default 20), `--keep` (keep the temporary folders with the operators' logs).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as clients from './clients.js';
import * as compiling from './compiling.js';
import * as processes from './processes.js';
import * as report from './report.js';
import type * as serve from './serve.js';
import * as servers from './servers.js';
import * as tracking from './tracking.js';

const BUILD = 'bench/.build/operator';
const COMPILED_OPERATOR = `${BUILD}/bench.js`;
const COMPILED_NULL = `${BUILD}/null-operator.js`;
const DEFAULT_COMMAND = `exec node bin/kopf-gen.js run ${COMPILED_OPERATOR} --all-namespaces --standalone`;
const NULL_COMMAND = `exec node ${COMPILED_NULL}`;
const NAMESPACE = 'default';
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const MIB = 1048576;
const PHASES = ['create', 'update', 'delete'] as const;
type Phase = (typeof PHASES)[number];
const PROFILES = ['cpu', 'heap'] as const;
type Profile = (typeof PROFILES)[number];

/** API requests per object the reference traces need (4.2 create, 4.5 update, 4.6 delete). */
const TRACE_REQUESTS: Record<Phase, Record<string, number>> = {
  create: { patch_kopfexamples: 2, patch_kopfexamples_status: 1, total: 3 },
  update: { patch_kopfexamples: 1, total: 1 },
  delete: { patch_kopfexamples: 1, total: 1 },
};

interface Options {
  /** How long the operator stays idle after the delete phase before its settled RSS is read. */
  settleMs: number;
  command: string;
  /** Whether `command` was given (else the compiled fixture runs). */
  custom: boolean;
  versus: string | undefined;
  null: boolean;
  profile: Profile | undefined;
  profileDir: string | undefined;
  sizes: number[];
  idle: number;
  concurrency: number;
  phaseTimeoutMs: number;
  keep: boolean;
}

function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: {
      command: { type: 'string' },
      versus: { type: 'string' },
      null: { type: 'boolean' },
      profile: { type: 'string' },
      'profile-dir': { type: 'string' },
      sizes: { type: 'string' },
      idle: { type: 'string' },
      concurrency: { type: 'string' },
      'phase-timeout': { type: 'string' },
      keep: { type: 'boolean' },
      settle: { type: 'string' },
    },
  });
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);
  const profile = str(values['profile']);
  if (profile !== undefined && !(PROFILES as readonly string[]).includes(profile))
    throw new Error(`--profile ${profile}: the profiles are ${PROFILES.join(', ')}`);
  const command = str(values['command']);
  return {
    command: command ?? DEFAULT_COMMAND,
    custom: command !== undefined,
    versus: str(values['versus']),
    null: values['null'] === true,
    profile: profile as Profile | undefined,
    profileDir: str(values['profile-dir']),
    sizes: (str(values['sizes']) ?? '1000,10000').split(',').filter(Boolean).map(Number),
    idle: Number(str(values['idle']) ?? 200),
    concurrency: Number(str(values['concurrency']) ?? 8),
    phaseTimeoutMs: Number(str(values['phase-timeout']) ?? 300) * 1000,
    keep: values['keep'] === true,
    settleMs: Number(str(values['settle']) ?? 20) * 1000,
  };
}

/** An operator of the run: `kopfgen` (the default or `--command`), `versus`, or `null`. */
export type Key = 'kopfgen' | 'versus' | 'null';
interface Contender {
  key: Key;
  command: string;
  profile: Profile | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const key = (name: string): string => `${NAMESPACE}/${name}`;
const sanitize = (s: string): string => s.replace(/[^a-zA-Z0-9]+/g, '_').replace(/^_|_$/g, '');
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** One devcluster, one operator, one load generator. */
class Session {
  readonly client: clients.Client;
  readonly tracker: tracking.Tracker;

  private constructor(
    readonly server: servers.Server,
    readonly operator: processes.OperatorProcess,
    readonly dir: string,
    concurrency: number,
  ) {
    this.client = new clients.Client(server.url, concurrency);
    this.tracker = new tracking.Tracker(server.url, this.client);
  }

  static async open(command: string, env: Record<string, string>, historyLimit: number, concurrency: number): Promise<Session> {
    const server = await servers.startServer({ DEVCLUSTER_HISTORY: String(historyLimit) });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-bench-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');
    const operator = new processes.OperatorProcess(
      command.replaceAll('{kubeconfig}', kubeconfig),
      { ...env, KUBECONFIG: kubeconfig },
      path.join(dir, 'operator.log'),
    );
    const session = new Session(server, operator, dir, concurrency);
    await session.tracker.start();
    return session;
  }

  /** Waits like `Tracker.waitAll`, but fails as soon as the operator exits. */
  async wait(names: readonly string[], condition: (s: tracking.Seen | undefined) => boolean, timeoutMs: number): Promise<tracking.WaitResult> {
    let poll: NodeJS.Timeout | undefined;
    const exited = new Promise<never>((_, reject) => {
      poll = setInterval(() => {
        try {
          this.operator.assertRunning();
        } catch (err) {
          reject(err);
        }
      }, 250);
    });
    try {
      return await Promise.race([this.tracker.waitAll(names.map(key), condition, timeoutMs), exited]);
    } finally {
      clearInterval(poll);
    }
  }

  counts(query: serve.CountsQuery): Promise<Record<string, number>> {
    return servers
      .ask<{ counts: Record<string, number> }>(
        this.server.child,
        { type: 'counts', everything: true, excludeUserAgent: clients.USER_AGENT, ...query },
        'counts',
      )
      .then((m) => m.counts);
  }

  async close(keep: boolean): Promise<void> {
    await this.operator.stop();
    this.tracker.stop();
    this.client.close();
    await servers.stopServer(this.server.child);
    if (!keep) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

const handled = (s: tracking.Seen | undefined): boolean => !!s && !s.gone && s.createResult !== undefined && s.hasDiffBase;
const updated = (s: tracking.Seen | undefined): boolean => !!s && !s.gone && s.diffBaseField === 'changed';
const gone = (s: tracking.Seen | undefined): boolean => !s || s.gone;

function body(name: string): Record<string, unknown> {
  return { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: NAMESPACE }, spec: { field: 'value', items: ['item1', 'item2'] } };
}

/** The work of one phase: send the requests for every object, then wait until all are handled. */
const PHASE_WORK: Record<Phase, { send: (c: clients.Client, name: string) => Promise<unknown>; done: (s: tracking.Seen | undefined) => boolean }> = {
  create: { send: (c, name) => c.expect([201], 'POST', COLLECTION, body(name)), done: handled },
  update: {
    send: (c, name) => c.expect([200], 'PATCH', `${COLLECTION}/${name}`, { spec: { field: 'changed' } }, 'application/merge-patch+json'),
    done: updated,
  },
  delete: { send: (c, name) => c.expect([200, 202], 'DELETE', `${COLLECTION}/${name}`), done: gone },
};

/**
 * Runs the three phases on `n` objects; adds `n<N>_…` figures. `afterPhase` runs after each
 * finished phase's figures are taken, outside every phase's window (heap snapshots).
 */
async function measurePhases(
  s: Session,
  n: number,
  opts: Options,
  figures: Record<string, number>,
  readyRssMb: number,
  afterPhase?: (phase: Phase) => Promise<void>,
): Promise<void> {
  const p = `n${n}_`;
  const names = Array.from({ length: n }, (_, i) => `kex-${i}`);
  const cpuStart = s.operator.usage().cpuSeconds;
  const windows: { phase: Phase; since: number; until: number }[] = [];
  const devclusterCpu = (): number => processes.measureTree(s.server.child.pid ?? -1).cpuSeconds;
  const driverCpu = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  for (const phase of PHASES) {
    const work = PHASE_WORK[phase];
    const cpu0 = s.operator.usage().cpuSeconds;
    const devcluster0 = devclusterCpu();
    const driver0 = driverCpu();
    const t0 = Date.now();
    await clients.pool(opts.concurrency, n, async (i) => {
      await work.send(s.client, names[i]!);
    });
    figures[`${p}${phase}_send_s`] = (Date.now() - t0) / 1000;
    const result = await s.wait(names, work.done, opts.phaseTimeoutMs);
    const seconds = (result.endedAt - t0) / 1000;
    figures[`${p}${phase}_s`] = result.pending ? Number.NaN : seconds;
    figures[`${p}${phase}_objects_per_s`] = result.pending ? Number.NaN : n / seconds;
    if (result.pending) {
      figures[`${p}${phase}_finished_objects`] = result.met;
      figures[`${p}${phase}_unfinished_objects`] = result.pending;
    }
    await sleep(1000); // Late requests of this phase still belong to it.
    const usage = s.operator.usage();
    figures[`${p}${phase}_operator_cpu_s`] = usage.cpuSeconds - cpu0;
    figures[`${p}${phase}_operator_cpu_ms_per_obj`] = (figures[`${p}${phase}_operator_cpu_s`]! * 1000) / n;
    figures[`${p}${phase}_devcluster_cpu_s`] = devclusterCpu() - devcluster0;
    figures[`${p}${phase}_load_generator_cpu_s`] = driverCpu() - driver0;
    figures[`${p}${phase}_load_average_1m`] = os.loadavg()[0]!;
    if (phase === 'delete' && !result.pending) {
      figures[`${p}operator_rss_after_delete_mb`] = usage.rssBytes / MIB;
      figures[`${p}operator_rss_after_delete_vs_ready`] = usage.rssBytes / MIB / readyRssMb;
    }
    windows.push({ phase, since: t0, until: Date.now() });
    if (result.pending) break;
    await afterPhase?.(phase);
  }
  for (const w of windows) {
    const counts = await s.counts({ since: w.since, until: w.until });
    let total = 0;
    const perObject: Record<string, number> = Object.fromEntries(
      Object.keys(TRACE_REQUESTS[w.phase])
        .filter((k) => k !== 'total')
        .map((k) => [k, 0]),
    );
    for (const [k, v] of Object.entries(counts)) {
      perObject[sanitize(k)] = v / n;
      // Collection reads (a watch reconnecting, a re-list) serve all objects at once: listed, not totalled.
      if (!/^(watch|list) /.test(k)) total += v;
    }
    for (const [k, v] of Object.entries(perObject)) figures[`${p}${w.phase}_req_per_obj_${k}`] = v;
    figures[`${p}${w.phase}_req_per_obj_total`] = total / n;
  }
  // Memory given back once the burst is over: V8 shrinks its heap only after a quiet period.
  if (figures[`${p}operator_rss_after_delete_mb`] !== undefined && opts.settleMs > 0) {
    await sleep(opts.settleMs);
    const settled = s.operator.usage().rssBytes / MIB;
    figures[`${p}operator_rss_settled_mb`] = settled;
    figures[`${p}operator_rss_settled_vs_ready`] = settled / readyRssMb;
  }
  const usage = s.operator.usage();
  figures[`${p}operator_cpu_s`] = usage.cpuSeconds - cpuStart;
  figures[`${p}operator_rss_end_mb`] = usage.rssBytes / MIB;
  figures[`${p}operator_peak_rss_mb`] = usage.peakRssBytes / MIB;
  figures[`${p}operator_rss_growth_per_obj_kb`] = ((usage.peakRssBytes / MIB - readyRssMb) * 1024) / n;
}

/** Creates `count` objects one at a time on an idle operator; adds `idle_…` figures. */
async function measureIdle(s: Session, count: number, timeoutMs: number, figures: Record<string, number>): Promise<void> {
  const since = Date.now();
  const responded = new Map<string, number>();
  const handlerStart: number[] = [];
  const handledAt: number[] = [];
  for (let i = 0; i < count; i++) {
    const name = `idle-${i}`;
    await s.client.expect([201], 'POST', COLLECTION, body(name));
    const at = Date.now();
    responded.set(name, at);
    const result = await s.wait([name], handled, timeoutMs);
    if (result.pending) throw new Error(`idle object ${name} was not handled within ${timeoutMs} ms`);
    const seen = s.tracker.get(NAMESPACE, name)!;
    const started = seen.createResult?.['started'];
    if (typeof started === 'number') handlerStart.push(started - at);
    handledAt.push(seen.handledAt! - at);
    await sleep(20);
  }
  const first = await servers.ask<{ times: Record<string, number> }>(
    s.server.child,
    { type: 'first', names: [...responded.keys()], since, excludeUserAgent: clients.USER_AGENT },
    'first',
  );
  const firstRequest = [...responded].filter(([n]) => first.times[n] !== undefined).map(([n, at]) => first.times[n]! - at);
  figures['idle_objects'] = count;
  figures['idle_handler_start_p50_ms'] = report.percentile(handlerStart, 50);
  figures['idle_handler_start_p99_ms'] = report.percentile(handlerStart, 99);
  figures['idle_first_request_p50_ms'] = report.percentile(firstRequest, 50);
  figures['idle_first_request_p99_ms'] = report.percentile(firstRequest, 99);
  figures['idle_handled_p50_ms'] = report.percentile(handledAt, 50);
  figures['idle_handled_p99_ms'] = report.percentile(handledAt, 99);
}

/**
 * The command with the options that make Node write profiles of the kind into `dir`, put after
 * its first `node` word (Node refuses `--cpu-prof` in `NODE_OPTIONS`); undefined if it has none.
 */
export function withProfileOptions(command: string, profile: Profile, dir: string): string | undefined {
  const quoted = (option: string): string => `'${option.replaceAll("'", "'\\''")}'`;
  const flags = profile === 'cpu' ? `--cpu-prof ${quoted(`--cpu-prof-dir=${dir}`)}` : `--heapsnapshot-signal=SIGUSR2 ${quoted(`--diagnostic-dir=${dir}`)}`;
  const node = /(^|[\s;&|(])((?:[^\s;&|()]*\/)?node)(?=\s)/;
  return node.test(command) ? command.replace(node, `$1$2 ${flags}`) : undefined;
}

/**
 * Sends SIGUSR2 to every node process of the operator's tree and waits until each has written a
 * heap snapshot into `dir` that stopped growing (unchanged for 1 s); renames them `<label>-<name>`
 * and returns their paths (none if the tree has no node process).
 */
async function takeHeapSnapshots(s: Session, dir: string, label: string, timeoutMs = 300_000): Promise<string[]> {
  const pids = processes.nodeProcesses(s.operator.pid);
  if (!pids.length) return [];
  const before = new Set(fs.readdirSync(dir));
  for (const pid of pids) process.kill(pid, 'SIGUSR2');
  const sizes = new Map<string, { size: number; since: number }>();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await sleep(250);
    const now = Date.now();
    const fresh = fs.readdirSync(dir).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    for (const f of fresh) {
      const size = fs.statSync(path.join(dir, f)).size;
      if (sizes.get(f)?.size !== size) sizes.set(f, { size, since: now });
    }
    if (fresh.length >= pids.length && fresh.every((f) => sizes.get(f)!.size > 0 && now - sizes.get(f)!.since >= 1000)) {
      return fresh.map((f) => {
        const target = path.join(dir, `${label}-${f}`);
        fs.renameSync(path.join(dir, f), target);
        return target;
      });
    }
    s.operator.assertRunning();
    if (now > deadline) throw new Error(`heap snapshots ${label}: ${fresh.length} of ${pids.length} finished within ${timeoutMs / 1000} s`);
  }
}

/**
 * One session of one operator on `n` objects (no phases for 0): ready figures, the phases, idle
 * latency if `idle`, and the profile if asked. Figures and notes are unprefixed (`n<N>_…`, `idle_…`).
 */
async function runSession(
  c: Contender,
  n: number,
  idle: boolean,
  opts: Options,
  profileRoot: string | undefined,
  figures: Record<string, number>,
  notes: Record<string, string>,
): Promise<void> {
  const prefix = n ? `n${n}_` : '';
  const suffix = n ? `_n${n}` : '';
  let command = c.command;
  let profileDir = c.profile && profileRoot ? path.join(profileRoot, `n${n}`) : undefined;
  if (c.profile && profileDir) {
    const profiled = withProfileOptions(c.command, c.profile, profileDir);
    if (profiled) {
      fs.mkdirSync(profileDir, { recursive: true });
      command = profiled;
      notes[`profiled_command${suffix}`] = command;
    } else {
      notes[`profile${suffix}`] = `--profile ${c.profile} profiles a Node operator; "${c.command}" runs no node command, so nothing was profiled`;
      profileDir = undefined;
    }
  }
  const s = await Session.open(command, { NODE_OPTIONS: '' }, Math.max(100_000, n * 12), opts.concurrency);
  let failed = false;
  try {
    const t0 = Date.now();
    await s.client.expect([201], 'POST', COLLECTION, body('warm-up'));
    const warm = await s.wait(['warm-up'], handled, 60_000);
    if (warm.pending) throw new Error(`the operator did not handle a first object within 60 s; last output:\n${s.operator.logTail()}`);
    figures[`${prefix}operator_ready_s`] = (Date.now() - t0) / 1000;
    const readyRssMb = s.operator.usage().rssBytes / MIB;
    figures[`${prefix}operator_ready_rss_mb`] = readyRssMb;
    await s.client.expect([200, 202], 'DELETE', `${COLLECTION}/warm-up`);
    await s.wait(['warm-up'], gone, 60_000);
    await sleep(500);
    let afterPhase: ((phase: Phase) => Promise<void>) | undefined;
    if (profileDir && !processes.nodeProcesses(s.operator.pid).length) {
      notes[`profile${suffix}`] = `--profile ${c.profile} profiles a Node operator; no node process runs for "${c.command}", so nothing was profiled`;
    } else if (c.profile === 'heap' && profileDir) {
      afterPhase = async (phase) => {
        if (phase === 'update') return;
        const files = await takeHeapSnapshots(s, profileDir, `n${n}-after-${phase}`);
        notes[`heap_snapshots_after_${phase}${suffix}`] = files.join(', ');
      };
    }
    if (n) await measurePhases(s, n, opts, figures, readyRssMb, afterPhase);
    if (idle) await measureIdle(s, opts.idle, 30_000, figures);
  } catch (err) {
    failed = true;
    notes[`error${suffix}`] = message(err);
  } finally {
    const usage = s.operator.usage();
    figures[`${prefix}operator_peak_rss_mb`] ??= usage.peakRssBytes / MIB;
    if (failed || opts.keep) notes[`operator_log${suffix}`] = s.operator.logFile;
    await s.close(failed || opts.keep);
  }
  if (c.profile === 'cpu' && profileDir) {
    const files = fs
      .readdirSync(profileDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => path.join(profileDir, f));
    notes[`cpu_profiles${suffix}`] = files.length
      ? files.join(', ')
      : `none in ${profileDir} (V8 writes them when the process exits by itself; was it killed?)`;
  }
}

/** Targets of a single operator's run (no reference to compare with). */
function targetsFor(sizes: readonly number[]): Record<string, report.Target> {
  const targets: Record<string, report.Target> = { idle_handler_start_p50_ms: { max: 5 } };
  for (const n of sizes) {
    for (const phase of PHASES) {
      for (const [k, max] of Object.entries(TRACE_REQUESTS[phase])) targets[`n${n}_${phase}_req_per_obj_${k}`] = { max };
      if (n >= 10_000) targets[`n${n}_${phase}_objects_per_s`] = { min: 300 };
    }
    targets[`n${n}_operator_rss_settled_vs_ready`] = { min: 0.8, max: 1.2 };
    if (n >= 10_000) targets[`n${n}_operator_peak_rss_mb`] = { max: 250 };
  }
  return targets;
}

/** A row of the comparison: a figure (without the operator's prefix) and its target, given the other columns' values. */
interface RowSpec {
  label: string;
  figure: string;
  digits?: number;
  target?: (ref: (key: Key) => number | undefined) => { text: string; bounds?: report.Target };
}

/** A target relative to another operator's value: `factor` × that value as a minimum or a maximum. */
function relative(of: Key, factor: number, bound: 'min' | 'max'): NonNullable<RowSpec['target']> {
  return (ref) => {
    const v = ref(of);
    const text = `${bound === 'min' ? '>=' : '<='} ${factor === 1 ? '' : `${factor} x `}${of}`;
    if (v === undefined || !Number.isFinite(v)) return { text: `${text} (no ${of} figure)` };
    return { text: `${text} = ${report.short(factor * v)}`, bounds: { [bound]: factor * v } };
  };
}

function rowSpecs(n: number, withIdle: boolean): RowSpec[] {
  const p = n ? `n${n}_` : '';
  const rows: RowSpec[] = [
    { label: 'ready s', figure: `${p}operator_ready_s` },
    { label: 'ready RSS MB', figure: `${p}operator_ready_rss_mb`, target: relative('versus', 1, 'max') },
  ];
  if (n) {
    for (const phase of PHASES) {
      const total = TRACE_REQUESTS[phase]['total']!;
      rows.push(
        { label: `${phase} objects/s`, figure: `${p}${phase}_objects_per_s`, target: relative('null', 0.8, 'min') },
        { label: `${phase} operator CPU ms/object`, figure: `${p}${phase}_operator_cpu_ms_per_obj`, target: relative('null', 1.5, 'max') },
        {
          label: `${phase} requests/object`,
          figure: `${p}${phase}_req_per_obj_total`,
          digits: 3,
          target: () => ({ text: `= ${total} (reference traces)`, bounds: { min: total, max: total } }),
        },
      );
    }
    rows.push(
      { label: 'peak RSS MB', figure: `${p}operator_peak_rss_mb`, target: relative('versus', 0.5, 'max') },
      { label: 'RSS end MB', figure: `${p}operator_rss_end_mb` },
      { label: 'RSS growth KB/object', figure: `${p}operator_rss_growth_per_obj_kb`, target: relative('versus', 0.25, 'max') },
      { label: 'RSS after delete MB', figure: `${p}operator_rss_after_delete_mb` },
      { label: 'RSS after delete ÷ ready', figure: `${p}operator_rss_after_delete_vs_ready` },
      { label: 'RSS settled MB', figure: `${p}operator_rss_settled_mb` },
      {
        label: 'RSS settled ÷ ready',
        figure: `${p}operator_rss_settled_vs_ready`,
        target: () => ({ text: '0.8 .. 1.2 (within 20 %)', bounds: { min: 0.8, max: 1.2 } }),
      },
    );
  }
  if (withIdle)
    rows.push({ label: 'idle create→handler-start p50 ms', figure: 'idle_handler_start_p50_ms', target: () => ({ text: '<= 5', bounds: { max: 5 } }) });
  return rows;
}

const TITLES: Record<Key, string> = { kopfgen: 'kopf-gen', versus: 'versus', null: 'null' };

/** One comparison table per N; adds the kopf-gen column's resolved targets to `targets`. */
export function comparisons(
  sizes: readonly number[],
  keys: readonly Key[],
  idle: boolean,
  figures: Record<string, number>,
  targets: Record<string, report.Target>,
): report.Comparison[] {
  const columns = keys.flatMap((k) => (k === 'versus' ? [TITLES[k], 'kopf-gen÷versus'] : [TITLES[k]]));
  return sizes.map((n, index) => {
    const rows = rowSpecs(n, idle && index === 0).map((spec): report.ComparisonRow => {
      const ref = (k: Key): number | undefined => (keys.includes(k) ? figures[`${k}_${spec.figure}`] : undefined);
      const values = keys.flatMap((k) => {
        const v = ref(k);
        if (k !== 'versus') return [v];
        const own = ref('kopfgen');
        return [v, own !== undefined && v !== undefined && v !== 0 ? own / v : undefined];
      });
      const target = spec.target?.(ref);
      const own = ref('kopfgen');
      let met: boolean | undefined;
      if (target?.bounds) {
        targets[`kopfgen_${spec.figure}`] = target.bounds;
        met =
          own !== undefined && (target.bounds.min === undefined || own >= target.bounds.min) && (target.bounds.max === undefined || own <= target.bounds.max);
      }
      return { label: spec.label, values, digits: spec.digits, target: target?.text ?? '', met };
    });
    return { title: `operator, N = ${n}`, columns, rows };
  });
}

/**
 * The note on relative targets that cannot be judged in a run with these operators (none when
 * both `--versus` and `--null` ran).
 */
export function relativeTargetsMissing(keys: readonly Key[]): string | undefined {
  const lacking = [
    ...(keys.includes('versus') ? [] : ['--versus (ready RSS ≤ versus, peak RSS ≤ 0.5 × versus, RSS growth per object ≤ 0.25 × versus)']),
    ...(keys.includes('null') ? [] : ['--null (CPU per object ≤ 1.5 × null and objects/s ≥ 0.8 × null, each phase)']),
  ];
  if (!lacking.length) return undefined;
  return `no verdict on the targets relative to another operator without ${lacking.join(' and without ')}: run with --versus "<Python Kopf>" --null for all of them`;
}

/** Compiles what runs with plain Node; exits with one line if the compiled runtime is missing or stale. */
function prepare(opts: Options, notes: Record<string, string>): void {
  try {
    if (!opts.custom) {
      compiling.requireFreshDistribution();
      compiling.transpile('fixtures/operators/bench.ts', COMPILED_OPERATOR);
      notes['runtime_resolved_to'] = compiling.requireRuntimeFromDist(BUILD);
    }
    if (opts.null) compiling.transpile('bench/null-operator.ts', COMPILED_NULL);
  } catch (err) {
    process.stderr.write(`operator: ${message(err)}\n`);
    process.exit(1);
  }
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const opts = parseOptions(args);
  const contenders: Contender[] = [{ key: 'kopfgen', command: opts.command, profile: opts.profile }];
  if (opts.versus) contenders.push({ key: 'versus', command: opts.versus, profile: undefined });
  if (opts.null) contenders.push({ key: 'null', command: NULL_COMMAND, profile: undefined });
  const compare = contenders.length > 1;
  const figures: Record<string, number> = {};
  const notes: Record<string, string> = {};
  prepare(opts, notes);
  const profileRoot = opts.profile ? (opts.profileDir ?? fs.mkdtempSync(path.join(os.tmpdir(), `kopf-gen-bench-${opts.profile}-`))) : undefined;
  for (const c of contenders) {
    notes[compare ? `${c.key}_command` : 'command'] = `${c.command}  (sh -c, cwd = package folder, KUBECONFIG set, {kubeconfig} substituted)`;
  }
  Object.assign(notes, {
    machine: `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`,
    limits:
      "requests the devcluster's HTTP server rejects before routing (408 on its 70 s header timeout) are not in its request log and not counted; " +
      'a phase that does not finish within --phase-timeout ends the session (its figures are NaN, with finished/unfinished object counts)',
    definitions:
      'phase time = first request sent → last object handled/gone (driver watch); req_per_obj = requests not sent by the load generator in the phase window / N (total without watch/list); ' +
      'cpu = utime+stime of the operator process tree; peak RSS = sum of VmHWM over the tree; RSS growth per object = (peak RSS − ready RSS) / N; ' +
      'RSS after delete = VmRSS 1 s after the delete phase ended; idle latencies from the create response: ' +
      'handler_start = create_fn result "started", first_request = first non-driver request about the object (devcluster log), handled = status.create_fn seen on the watch',
  });
  if (opts.profile)
    notes['profile'] =
      `--profile ${opts.profile} on the kopf-gen operator only (if its command runs node), into ${profileRoot}; its figures include the profiling's cost`;
  const sizes = opts.sizes.length ? opts.sizes : [0];
  for (const [index, n] of sizes.entries()) {
    for (const c of contenders) {
      const own: Record<string, number> = {};
      const ownNotes: Record<string, string> = {};
      await runSession(c, n, index === 0 && opts.idle > 0, opts, profileRoot, own, ownNotes);
      const prefix = compare ? `${c.key}_` : '';
      for (const [k, v] of Object.entries(own)) figures[`${prefix}${k}`] = v;
      for (const [k, v] of Object.entries(ownNotes)) notes[`${prefix}${k}`] = v;
    }
  }
  const missing = relativeTargetsMissing(contenders.map((c) => c.key));
  if (missing) notes['relative_targets'] = missing;
  if (!compare) return { name: 'operator', figures, targets: targetsFor(opts.sizes), notes };
  const targets: Record<string, report.Target> = {};
  const tables = comparisons(
    sizes,
    contenders.map((c) => c.key),
    opts.idle > 0,
    figures,
    targets,
  );
  return { name: 'operator', figures, targets, notes, tables };
}
