/**
 * Operator benchmark (issue: runtime-core): `npm run bench -- operator [options]`.
 *
 * A devcluster runs in its own process (`serve.ts`, plain HTTP, the Kopf example CRD, a long
 * history so slow watchers never see 410, no request bodies kept). The operator runs as another
 * process from a shell command, with `KUBECONFIG` pointing at the devcluster. This process is the
 * load generator: it creates, patches and deletes objects over keep-alive HTTP (8 at a time) with
 * its own user agent, and follows them with a list+watch like any client.
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
 *
 * Idle latency (first session only, after its phases): 200 objects created one at a time, each
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
 * Options: `--command <shell>`, `--sizes 1000,10000`, `--idle 200` (0 skips), `--concurrency 8`,
 * `--phase-timeout <s>` (default 300), `--keep` (keep the temporary folder with the operator log).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as clients from './clients.js';
import * as processes from './processes.js';
import * as report from './report.js';
import type * as serve from './serve.js';
import * as servers from './servers.js';
import * as tracking from './tracking.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DEFAULT_COMMAND = 'node bin/kopf-gen.js run fixtures/operators/bench.ts --all-namespaces --standalone';
const NAMESPACE = 'default';
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const PHASES = ['create', 'update', 'delete'] as const;
type Phase = (typeof PHASES)[number];

/** API requests per object the reference traces need (4.2 create, 4.5 update, 4.6 delete). */
const TRACE_REQUESTS: Record<Phase, Record<string, number>> = {
  create: { patch_kopfexamples: 2, patch_kopfexamples_status: 1, total: 3 },
  update: { patch_kopfexamples: 1, total: 1 },
  delete: { patch_kopfexamples: 1, total: 1 },
};

interface Options { command: string; sizes: number[]; idle: number; concurrency: number; phaseTimeoutMs: number; keep: boolean }

function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args], strict: false, allowPositionals: true,
    options: {
      command: { type: 'string' }, sizes: { type: 'string' }, idle: { type: 'string' },
      concurrency: { type: 'string' }, 'phase-timeout': { type: 'string' }, keep: { type: 'boolean' },
    },
  });
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  return {
    command: str(values['command']) ?? DEFAULT_COMMAND,
    sizes: (str(values['sizes']) ?? '1000,10000').split(',').filter(Boolean).map(Number),
    idle: Number(str(values['idle']) ?? 200),
    concurrency: Number(str(values['concurrency']) ?? 8),
    phaseTimeoutMs: Number(str(values['phase-timeout']) ?? 300) * 1000,
    keep: values['keep'] === true,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const key = (name: string): string => `${NAMESPACE}/${name}`;
const sanitize = (s: string): string => s.replace(/[^a-zA-Z0-9]+/g, '_').replace(/^_|_$/g, '');

/** One devcluster, one operator, one load generator. */
class Session {
  readonly client: clients.Client;
  readonly tracker: tracking.Tracker;

  private constructor(readonly server: servers.Server, readonly operator: processes.OperatorProcess, readonly dir: string, concurrency: number) {
    this.client = new clients.Client(server.url, concurrency);
    this.tracker = new tracking.Tracker(server.url, this.client);
  }

  static async open(command: string, historyLimit: number, concurrency: number): Promise<Session> {
    const server = await servers.startServer({ DEVCLUSTER_HISTORY: String(historyLimit) });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-bench-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');
    const operator = new processes.OperatorProcess(command.replaceAll('{kubeconfig}', kubeconfig), { KUBECONFIG: kubeconfig }, path.join(dir, 'operator.log'));
    const session = new Session(server, operator, dir, concurrency);
    await session.tracker.start();
    return session;
  }

  /** Waits like `Tracker.waitAll`, but fails as soon as the operator exits. */
  async wait(names: readonly string[], condition: (s: tracking.Seen | undefined) => boolean, timeoutMs: number): Promise<tracking.WaitResult> {
    let poll: NodeJS.Timeout | undefined;
    const exited = new Promise<never>((_, reject) => {
      poll = setInterval(() => { try { this.operator.assertRunning(); } catch (err) { reject(err); } }, 250);
    });
    try {
      return await Promise.race([this.tracker.waitAll(names.map(key), condition, timeoutMs), exited]);
    } finally {
      clearInterval(poll);
    }
  }

  counts(query: serve.CountsQuery): Promise<Record<string, number>> {
    return servers.ask<{ counts: Record<string, number> }>(this.server.child, { type: 'counts', everything: true, excludeUserAgent: clients.USER_AGENT, ...query }, 'counts')
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
  update: { send: (c, name) => c.expect([200], 'PATCH', `${COLLECTION}/${name}`, { spec: { field: 'changed' } }, 'application/merge-patch+json'), done: updated },
  delete: { send: (c, name) => c.expect([200, 202], 'DELETE', `${COLLECTION}/${name}`), done: gone },
};

/** Runs the three phases on `n` objects; adds `n<N>_…` figures. */
async function measurePhases(s: Session, n: number, opts: Options, figures: Record<string, number>): Promise<void> {
  const p = `n${n}_`;
  const names = Array.from({ length: n }, (_, i) => `kex-${i}`);
  const cpuStart = s.operator.usage().cpuSeconds;
  const windows: { phase: Phase; since: number; until: number }[] = [];
  const devclusterCpu = (): number => processes.measureTree(s.server.child.pid ?? -1).cpuSeconds;
  const driverCpu = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
  for (const phase of PHASES) {
    const work = PHASE_WORK[phase];
    const cpu0 = s.operator.usage().cpuSeconds;
    const devcluster0 = devclusterCpu();
    const driver0 = driverCpu();
    const t0 = Date.now();
    await clients.pool(opts.concurrency, n, async (i) => { await work.send(s.client, names[i]!); });
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
    figures[`${p}${phase}_operator_cpu_s`] = s.operator.usage().cpuSeconds - cpu0;
    figures[`${p}${phase}_operator_cpu_ms_per_obj`] = (figures[`${p}${phase}_operator_cpu_s`]! * 1000) / n;
    figures[`${p}${phase}_devcluster_cpu_s`] = devclusterCpu() - devcluster0;
    figures[`${p}${phase}_load_generator_cpu_s`] = driverCpu() - driver0;
    figures[`${p}${phase}_load_average_1m`] = os.loadavg()[0]!;
    windows.push({ phase, since: t0, until: Date.now() });
    if (result.pending) break;
  }
  for (const w of windows) {
    const counts = await s.counts({ since: w.since, until: w.until });
    let total = 0;
    const perObject: Record<string, number> = Object.fromEntries(Object.keys(TRACE_REQUESTS[w.phase]).filter((k) => k !== 'total').map((k) => [k, 0]));
    for (const [k, v] of Object.entries(counts)) {
      perObject[sanitize(k)] = v / n;
      // Collection reads (a watch reconnecting, a re-list) serve all objects at once: listed, not totalled.
      if (!/^(watch|list) /.test(k)) total += v;
    }
    for (const [k, v] of Object.entries(perObject)) figures[`${p}${w.phase}_req_per_obj_${k}`] = v;
    figures[`${p}${w.phase}_req_per_obj_total`] = total / n;
  }
  const usage = s.operator.usage();
  figures[`${p}operator_cpu_s`] = usage.cpuSeconds - cpuStart;
  figures[`${p}operator_rss_end_mb`] = usage.rssBytes / 1048576;
  figures[`${p}operator_peak_rss_mb`] = usage.peakRssBytes / 1048576;
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
  const first = await servers.ask<{ times: Record<string, number> }>(s.server.child,
    { type: 'first', names: [...responded.keys()], since, excludeUserAgent: clients.USER_AGENT }, 'first');
  const firstRequest = [...responded].filter(([n]) => first.times[n] !== undefined).map(([n, at]) => first.times[n]! - at);
  figures['idle_objects'] = count;
  figures['idle_handler_start_p50_ms'] = report.percentile(handlerStart, 50);
  figures['idle_handler_start_p99_ms'] = report.percentile(handlerStart, 99);
  figures['idle_first_request_p50_ms'] = report.percentile(firstRequest, 50);
  figures['idle_first_request_p99_ms'] = report.percentile(firstRequest, 99);
  figures['idle_handled_p50_ms'] = report.percentile(handledAt, 50);
  figures['idle_handled_p99_ms'] = report.percentile(handledAt, 99);
}

function targetsFor(sizes: readonly number[]): Record<string, report.Target> {
  const targets: Record<string, report.Target> = { idle_handler_start_p50_ms: { max: 15 } };
  for (const n of sizes) {
    for (const phase of PHASES) {
      for (const [k, max] of Object.entries(TRACE_REQUESTS[phase])) targets[`n${n}_${phase}_req_per_obj_${k}`] = { max };
      if (n >= 10_000) targets[`n${n}_${phase}_objects_per_s`] = { min: 300 };
    }
    if (n >= 10_000) targets[`n${n}_operator_peak_rss_mb`] = { max: 250 };
  }
  return targets;
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const opts = parseOptions(args);
  const figures: Record<string, number> = {};
  const notes: Record<string, string> = {
    command: `${opts.command}  (sh -c, cwd = package folder, KUBECONFIG set, {kubeconfig} substituted)`,
    machine: `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`,
    limits: 'requests the devcluster\'s HTTP server rejects before routing (408 on its 70 s header timeout) are not in its request log and not counted; '
      + 'a phase that does not finish within --phase-timeout ends the session (its figures are NaN, with finished/unfinished object counts)',
    definitions: 'phase time = first request sent → last object handled/gone (driver watch); req_per_obj = requests not sent by the load generator in the phase window / N (total without watch/list); '
      + 'cpu = utime+stime of the operator process tree; peak RSS = sum of VmHWM over the tree; idle latencies from the create response: '
      + 'handler_start = create_fn result "started", first_request = first non-driver request about the object (devcluster log), handled = status.create_fn seen on the watch',
  };
  const sessions = opts.sizes.length ? opts.sizes : [0];
  for (const [index, n] of sessions.entries()) {
    const s = await Session.open(opts.command, Math.max(100_000, n * 12), opts.concurrency);
    let failed = false;
    const prefix = n ? `n${n}_` : '';
    try {
      const t0 = Date.now();
      await s.client.expect([201], 'POST', COLLECTION, body('warm-up'));
      const warm = await s.wait(['warm-up'], handled, 60_000);
      if (warm.pending) throw new Error(`the operator did not handle a first object within 60 s; last output:\n${s.operator.logTail()}`);
      figures[`${prefix}operator_ready_s`] = (Date.now() - t0) / 1000;
      figures[`${prefix}operator_ready_rss_mb`] = s.operator.usage().rssBytes / 1048576;
      await s.client.expect([200, 202], 'DELETE', `${COLLECTION}/warm-up`);
      await s.wait(['warm-up'], gone, 60_000);
      await sleep(500);
      if (n) await measurePhases(s, n, opts, figures);
      if (index === 0 && opts.idle > 0) await measureIdle(s, opts.idle, 30_000, figures);
    } catch (err) {
      failed = true;
      notes[`error${n ? `_n${n}` : ''}`] = err instanceof Error ? err.message : String(err);
    } finally {
      const usage = s.operator.usage();
      figures[`${prefix}operator_peak_rss_mb`] ??= usage.peakRssBytes / 1048576;
      if (failed || opts.keep) notes[`operator_log${n ? `_n${n}` : ''}`] = s.operator.logFile;
      await s.close(failed || opts.keep);
    }
  }
  return { name: 'operator', figures, targets: targetsFor(opts.sizes), notes };
}
