/**
 * Admission and metrics benchmark: `npm run bench -- admission [options]`. What an operator's own
 * servers cost: a webhook round trip as the API server sees it, a scrape of the metrics endpoint
 * of a busy operator, and what collecting metrics adds to the work on each object.
 *
 * Three parts, each on a fresh devcluster in its own process (`serve.ts`, plain HTTP) and the
 * compiled operator `fixtures/operators/bench-admission.ts` (or the operator benchmark's fixture)
 * run with plain Node on `dist/`, as production runs it:
 *
 * 1. `webhooks`: the operator serves a validating handler (denies `spec.field: invalid`, warns on
 *    `warn`) and a mutating one (adds a label) through the built-in `WebhookServer` (HTTPS with
 *    a generated CA, on loopback) and manages its webhook configurations. Once both
 *    configurations exist and a first object was admitted, `--concurrency` callers (default 8)
 *    create objects with `dryRun=All` for `--window` seconds (default 10; every 10th object
 *    invalid, every 10th + 1 warned): two webhook calls per creation. Figures: creations/s and
 *    webhook calls/s, the devcluster's own timing of each webhook call (from sending the review
 *    to the parsed answer, `onWebhookCall`: p50/p99/max), the callers' create round trip
 *    (p50/p99), failed calls, and whether the denials and warnings came back as expected.
 * 2. `scrape`: `--objects` Kopf examples (default 10,000) are seeded into the store, then the
 *    operator starts with 50 on-event handlers and `--metrics`; once every handler ran on every
 *    object, the endpoint is scraped `--scrapes` times (default 20) one after another. Figures:
 *    scrape time p50/max (request sent → last byte), its size and number of series.
 * 3. `overhead`: the operator benchmark (`bench/operator.ts`: create, update and delete phases
 *    on `--overhead-size` objects, default 2,000) run `--rounds` times (default 5) without and
 *    with `--metrics`, alternating. Figures: the operator's CPU milliseconds per object over the
 *    three phases, the median and the minimum of each, and the overhead of metrics in % from the
 *    minima (the round least disturbed by the rest of the machine; target ≤ 5 %) and from the
 *    medians. The rounds are printed too: on a 2-core machine their spread (±10 %) exceeds the
 *    overhead itself, so the part also measures the instruments directly, in this process: the
 *    instrument calls of one object's three phases (9 events queued, 6 processing cycles, 3
 *    handler invocations, 5 API requests: the fixture's trace, rounded up) on an `OperatorMetrics`,
 *    200,000 times, in CPU µs per object, and that cost as a share of the operator's CPU per
 *    object without metrics (`overhead_instruments_pct`).
 *
 * Options: `--window 10`, `--concurrency 8`, `--objects 10000`, `--scrapes 20`,
 * `--overhead-size 2000`, `--rounds 3`, `--timeout <s>` (each wait; default 600),
 * `--skip webhooks|scrape|overhead`, `--keep` (keep the temporary folder with the logs).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as clients from './clients.js';
import * as compiling from './compiling.js';
import * as operatorBench from './operator.js';
import * as processes from './processes.js';
import * as report from './report.js';
import { makeResource } from '../runtime/cogs/structs/references.js';
import { OperatorMetrics } from '../runtime/core/reactor/reporting.js';
import type * as serve from './serve.js';
import * as servers from './servers.js';
import * as optionValues from './options.js';

const FIXTURE = 'fixtures/operators/bench-admission.ts';
const COMPILED = 'bench/.build/bench-admission.js';
const COMMAND = `exec node bin/kopf-gen.js run ${COMPILED} --all-namespaces --standalone --quiet`;
/** The operator benchmark's default command (its fixture is compiled by that benchmark). */
const OPERATOR_COMMAND = 'exec node bin/kopf-gen.js run bench/.build/operator/bench.js --all-namespaces --standalone';
const NAMESPACE = 'default';
const COLLECTION = `/apis/kopf.dev/v1/namespaces/${NAMESPACE}/kopfexamples`;
const CONFIGURATIONS = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'].map(
  (plural) => `/apis/admissionregistration.k8s.io/v1/${plural}/bench.kopf.dev`,
);
const HANDLERS = 50;
const PARTS = ['webhooks', 'scrape', 'overhead'] as const;
type Part = (typeof PARTS)[number];

interface Options {
  windowS: number;
  concurrency: number;
  objects: number;
  scrapes: number;
  overheadSize: number;
  rounds: number;
  timeoutMs: number;
  skip: ReadonlySet<Part>;
  keep: boolean;
}

function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: {
      window: { type: 'string' },
      concurrency: { type: 'string' },
      objects: { type: 'string' },
      scrapes: { type: 'string' },
      'overhead-size': { type: 'string' },
      rounds: { type: 'string' },
      timeout: { type: 'string' },
      skip: { type: 'string', multiple: true },
      keep: { type: 'boolean' },
    },
  });
  const number = (name: string, fallback: number, min: number): number => optionValues.atLeast(values[name], fallback, name, min);
  const skip = optionValues.skippedParts(values['skip'], PARTS);
  return {
    windowS: number('window', 10, 1),
    concurrency: number('concurrency', 8, 1),
    objects: number('objects', 10_000, 1),
    scrapes: number('scrapes', 20, 1),
    overheadSize: number('overhead-size', 2000, 10),
    rounds: number('rounds', 5, 1),
    timeoutMs: number('timeout', 600, 1) * 1000,
    skip,
    keep: values['keep'] === true,
  };
}

interface Stats {
  at: number;
  validated: number;
  mutated: number;
  events: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function readStats(file: string): Stats | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Stats;
  } catch {
    return undefined; // not written yet
  }
}

/** A free TCP port on loopback (for the metrics endpoint, which takes a fixed address). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** One devcluster and one operator process running the fixture in one variant. */
class Session {
  readonly client: clients.Client;

  private constructor(
    readonly server: servers.Server,
    readonly operator: processes.OperatorProcess,
    readonly statsFile: string,
    concurrency: number,
  ) {
    this.client = new clients.Client(server.url, concurrency);
  }

  static async open(
    dir: string,
    variant: 'webhooks' | 'handlers',
    extraArgs: string,
    concurrency: number,
    before?: (server: servers.Server) => Promise<void>,
  ): Promise<Session> {
    const server = await servers.startServer({ DEVCLUSTER_WEBHOOK_CALLS: '1', DEVCLUSTER_HISTORY: '100000' });
    try {
      await before?.(server);
      const kubeconfig = path.join(dir, `kubeconfig-${variant}`);
      await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');
      const statsFile = path.join(dir, `stats-${variant}.json`);
      const operator = new processes.OperatorProcess(
        `${COMMAND} ${extraArgs}`.trim(),
        { KUBECONFIG: kubeconfig, BENCH_ADMISSION: variant, BENCH_ADMISSION_STATS: statsFile, NODE_OPTIONS: '' },
        path.join(dir, `operator-${variant}.log`),
      );
      return new Session(server, operator, statsFile, concurrency);
    } catch (error) {
      await servers.stopServer(server.child);
      throw error;
    }
  }

  /** Polls `probe` every 200 ms until it gives a value; fails when the operator exits or after `timeoutMs`. */
  async until<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.operator.assertRunning();
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs / 1000} s; last output:\n${this.operator.logTail()}`);
      await sleep(200);
    }
  }

  async close(): Promise<void> {
    await this.operator.stop();
    this.client.close();
    await servers.stopServer(this.server.child);
  }
}

function body(name: string, field: string): Record<string, unknown> {
  return { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: NAMESPACE }, spec: { field, items: ['item1', 'item2'] } };
}

/** What the i-th created object's field is: every 10th invalid, every 10th + 1 warned about. */
const fieldOf = (i: number): string => (i % 10 === 0 ? 'invalid' : i % 10 === 1 ? 'warn' : 'value');

/** POST with dry run; the status, the time in ms, and whether a warning header came back. */
function create(base: string, agent: http.Agent, name: string, field: string): Promise<{ status: number; ms: number; warned: boolean; labelled: boolean }> {
  const payload = JSON.stringify(body(name, field));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${COLLECTION}?dryRun=All`,
      {
        method: 'POST',
        agent,
        headers: {
          'user-agent': clients.USER_AGENT,
          accept: 'application/json',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const labelled = res.statusCode === 201 && text.includes('bench.kopf.dev/admitted');
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, warned: res.headers['warning'] !== undefined, labelled });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function measureWebhooks(dir: string, options: Options, figures: Record<string, number>, notes: Record<string, string>): Promise<void> {
  const s = await Session.open(dir, 'webhooks', '', options.concurrency);
  try {
    await s.until(
      async () => {
        // Present and filled: the operator may create them empty before its server yields a configuration.
        const found = await Promise.all(CONFIGURATIONS.map((url) => s.client.request('GET', url)));
        const filled = found.every((r) => r.status === 200 && ((JSON.parse(r.text) as { webhooks?: unknown[] }).webhooks ?? []).length > 0);
        return filled ? true : undefined;
      },
      60_000,
      'the managed webhook configurations with their webhooks',
    );
    const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
    try {
      // Until the server answers (the configurations may be written just before it listens).
      await s.until(
        async () => ((await create(s.server.url, agent, 'warm-up', 'value')).labelled ? true : undefined),
        60_000,
        'a first object admitted with its label',
      );
      for (let i = 0; i < 50; i++) await create(s.server.url, agent, `warm-up-${i}`, fieldOf(i));
      const results: Array<{ index: number; status: number; ms: number; warned: boolean; labelled: boolean }> = [];
      let next = 0;
      const since = Date.now();
      const end = since + options.windowS * 1000;
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (Date.now() < end) {
            const index = next++;
            results.push({ index, ...(await create(s.server.url, agent, `kex-${index}`, fieldOf(index))) });
          }
        }),
      );
      const until = Date.now();
      const seconds = (until - since) / 1000;
      const { calls } = await servers.ask<{ calls: serve.WebhookCall[] }>(s.server.child, { type: 'webhook-calls', since, until: until + 1 }, 'webhook-calls');
      const ms = calls.map((c) => c.ms);
      figures['webhooks_concurrency'] = options.concurrency;
      figures['webhooks_creations'] = results.length;
      figures['webhooks_creations_per_s'] = results.length / seconds;
      figures['webhooks_calls_per_s'] = calls.length / seconds;
      figures['webhooks_call_p50_ms'] = report.percentile(ms, 50);
      figures['webhooks_call_p99_ms'] = report.percentile(ms, 99);
      figures['webhooks_call_max_ms'] = report.percentile(ms, 100);
      figures['webhooks_calls_failed'] = calls.filter((c) => !c.ok).length;
      const roundTrips = results.map((r) => r.ms);
      figures['webhooks_create_round_trip_p50_ms'] = report.percentile(roundTrips, 50);
      figures['webhooks_create_round_trip_p99_ms'] = report.percentile(roundTrips, 99);
      // The outcomes the handlers decide: denied exactly the invalid ones, warned and labelled the others.
      const wrong = results.filter((r) =>
        fieldOf(r.index) === 'invalid' ? r.status !== 422 : r.status !== 201 || !r.labelled || r.warned !== (fieldOf(r.index) === 'warn'),
      );
      figures['webhooks_unexpected_outcomes'] = wrong.length;
      if (wrong.length)
        notes['webhooks_unexpected'] = `objects ${wrong
          .slice(0, 12)
          .map((r) => r.index)
          .join(
            ', ',
          )}; e.g. object ${wrong[0]!.index} (field ${fieldOf(wrong[0]!.index)}): HTTP ${wrong[0]!.status}, warned ${wrong[0]!.warned}, labelled ${wrong[0]!.labelled}`;
    } finally {
      agent.destroy();
    }
  } finally {
    await s.close();
  }
}

/** GET the metrics endpoint: time to the last byte, the text. */
function scrape(url: string): Promise<{ ms: number; text: string; status: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ ms: performance.now() - started, text: Buffer.concat(chunks).toString('utf8'), status: res.statusCode ?? 0 }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function measureScrape(dir: string, options: Options, figures: Record<string, number>): Promise<void> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/metrics`;
  const seed = async (server: servers.Server): Promise<void> => {
    await servers.ask(server.child, { type: 'seed-kopfexamples', count: options.objects, prefix: 'kex', namespace: NAMESPACE }, 'seeded');
  };
  const s = await Session.open(dir, 'handlers', `--metrics=${url}`, options.concurrency, seed);
  try {
    const t0 = Date.now();
    const expected = options.objects * HANDLERS;
    await s.until(
      () => {
        const st = readStats(s.statsFile);
        return st && st.events >= expected ? st : undefined;
      },
      options.timeoutMs,
      `${expected} handler calls`,
    );
    figures['scrape_objects'] = options.objects;
    figures['scrape_handlers'] = HANDLERS;
    figures['scrape_handled_s'] = (Date.now() - t0) / 1000;
    await sleep(2000); // the last cycles finish
    const times: number[] = [];
    let last = { ms: 0, text: '', status: 0 };
    for (let i = 0; i < options.scrapes; i++) {
      last = await scrape(url);
      if (last.status !== 200) throw new Error(`GET ${url} answered ${last.status}: ${last.text.slice(0, 200)}`);
      times.push(last.ms);
    }
    figures['scrape_p50_ms'] = report.percentile(times, 50);
    figures['scrape_max_ms'] = report.percentile(times, 100);
    figures['scrape_kib'] = Buffer.byteLength(last.text) / 1024;
    figures['scrape_series'] = last.text.split('\n').filter((line) => line && !line.startsWith('#')).length;
  } finally {
    await s.close();
  }
}

/** The operator's CPU ms per object over the three phases of one operator-benchmark run. */
async function operatorCpuPerObject(n: number, command: string, notes: Record<string, string>, label: string): Promise<number> {
  const result = await operatorBench.run(['--sizes', String(n), '--idle', '0', '--settle', '0', '--command', command]);
  const error = Object.entries(result.notes ?? {}).find(([key]) => key.startsWith('error'));
  if (error) notes[`overhead_error_${label}`] = error[1];
  return ['create', 'update', 'delete'].reduce((sum, phase) => sum + (result.figures[`n${n}_${phase}_operator_cpu_ms_per_obj`] ?? Number.NaN), 0);
}

/**
 * CPU µs of the instrument calls of one object's create, update and delete phases, on an
 * `OperatorMetrics` in this process (see the module's comment), averaged over `objects`.
 */
function instrumentCostPerObject(objects: number): number {
  const metrics = new OperatorMetrics({ processMetrics: false });
  const resource = metrics.forResource(makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true }));
  const handlers = ['create_fn', 'update_fn', 'delete_fn'];
  const once = (): void => {
    for (let e = 0; e < 9; e++) resource.queued();
    for (let c = 0; c < 6; c++) resource.reconciled('success', { terminal: false, requeued: false }, resource.now());
    for (const id of handlers) resource.handled(id, 'success', false, resource.now());
    for (let r = 0; r < 5; r++) metrics.requested('https://127.0.0.1:6443', 'PATCH', 200, metrics.now());
  };
  for (let i = 0; i < 10_000; i++) once(); // warm-up: the optimising compiler, the labelled children
  const before = process.cpuUsage();
  for (let i = 0; i < objects; i++) once();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / objects;
}

async function measureOverhead(options: Options, figures: Record<string, number>, notes: Record<string, string>): Promise<void> {
  const n = options.overheadSize;
  compiling.transpile('fixtures/operators/bench.ts', 'bench/.build/operator/bench.js');
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    off.push(await operatorCpuPerObject(n, OPERATOR_COMMAND, notes, `off_${round}`));
    const port = await freePort();
    on.push(await operatorCpuPerObject(n, `${OPERATOR_COMMAND} --metrics=http://127.0.0.1:${port}/metrics`, notes, `on_${round}`));
  }
  const offSpread = report.spread(off);
  const onSpread = report.spread(on);
  figures['overhead_objects'] = n;
  figures['overhead_cpu_ms_per_obj_without_metrics'] = offSpread.median;
  figures['overhead_cpu_ms_per_obj_with_metrics'] = onSpread.median;
  figures['overhead_cpu_ms_per_obj_without_metrics_min'] = offSpread.min;
  figures['overhead_cpu_ms_per_obj_with_metrics_min'] = onSpread.min;
  figures['overhead_metrics_pct'] = (onSpread.min / offSpread.min - 1) * 100;
  figures['overhead_metrics_pct_of_medians'] = (onSpread.median / offSpread.median - 1) * 100;
  const instrumentsUs = instrumentCostPerObject(200_000);
  figures['overhead_instruments_us_per_obj'] = instrumentsUs;
  figures['overhead_instruments_pct'] = (instrumentsUs / 1000 / offSpread.median) * 100;
  notes['overhead_rounds'] =
    `in order; without metrics: ${off.map((v) => v.toFixed(3)).join(', ')} ms/object; with: ${on.map((v) => v.toFixed(3)).join(', ')} ms/object`;
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const options = parseOptions(args);
  const result: report.Collected = {
    figures: {},
    targets: { overhead_metrics_pct: { max: 5 }, webhooks_unexpected_outcomes: { max: 0 }, webhooks_calls_failed: { max: 0 } },
    notes: {},
  };
  const { figures, notes } = result;
  notes['machine'] = `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  figures['load_average_1m_start'] = os.loadavg()[0]!;
  compiling.requireFreshDistribution();
  compiling.transpile(FIXTURE, COMPILED);
  notes['runtime_resolved_to'] = compiling.requireRuntimeFromDist('bench/.build');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-admission-'));
  let failed = false;
  const part = async (name: Part, body: () => Promise<void>): Promise<void> => {
    if (options.skip.has(name)) return;
    try {
      await body();
    } catch (error) {
      failed = true;
      notes[`error_${name}`] = error instanceof Error ? error.message : String(error);
    }
  };
  await part('webhooks', () => measureWebhooks(dir, options, figures, notes));
  await part('scrape', () => measureScrape(dir, options, figures));
  await part('overhead', () => measureOverhead(options, figures, notes));
  if (failed || options.keep) notes['kept'] = dir;
  else fs.rmSync(dir, { recursive: true, force: true });
  notes['definitions'] =
    "webhooks_call_* = the devcluster's wall time per webhook call (review sent → answer parsed), two calls (mutating, validating) per dry-run creation; " +
    "create_round_trip = the callers' POST → response; scrape = GET /metrics → last byte, one at a time; " +
    'overhead = operator CPU ms per object over the create, update and delete phases of the operator benchmark, median of the rounds, with --metrics vs without';
  figures['load_average_1m_end'] = os.loadavg()[0]!;
  return { name: 'admission', ...result };
}
