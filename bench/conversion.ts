/**
 * Conversion webhook benchmark: `npm run bench -- conversion [options]`. What converting between a
 * CRD's versions costs: the operator answering ConversionReviews, and the devcluster's reads in a
 * version other than the storage version, which call it.
 *
 * A devcluster in its own process (`serve.ts`, plain HTTP) gets the Sprocket CRD
 * (fixtures/crds/conversion.yaml: v1 and v2, stored in v2, `conversion.strategy: Webhook`); the
 * compiled operator `fixtures/operators/bench-conversion.ts` runs with plain Node on `dist/`, as
 * production runs it, serves its converters (v1 ⇄ v2: a rename and a split) through the built-in
 * `WebhookServer` (HTTPS with a generated CA, on loopback) and writes the CRD's conversion
 * settings itself (managed mode). The benchmark reads the webhook's URL and CA from the CRD.
 *
 * 1. `reviews`: ConversionReviews (v1 objects, desired v2) POSTed straight to the operator's
 *    server — the URL of the CRD's `clientConfig`, trusting its `caBundle`, over keep-alive
 *    HTTPS — by `--concurrency` callers (default 8) for `--window` seconds (default 10), first with
 *    1 object per review, then with 100. Figures per size: reviews/s, objects/s, the callers'
 *    round trip p50/p99/max (request sent → answer parsed), the operator's CPU ms per review, and
 *    failed reviews (any answer but a `Success` with every object converted).
 * 2. `reads`: `--objects` Sprockets (default 100) are created in v2; then `--reads` rounds (default
 *    500), one request at a time: a GET of one object in v2 (stored as it is: no webhook call) and
 *    of the same object in v1 (one webhook call), in alternating order; then `--lists` rounds
 *    (default 50) of a LIST of all of them in each version (one call for the 100 objects). Figures:
 *    p50/p99 of each, and the difference: the devcluster's added latency per converted read, as a
 *    client sees it (the webhook's own time included), plus the devcluster's own timing of its
 *    conversion calls (`onWebhookCall`: p50/p99) and how many it made.
 *
 * Targets: the issue asks for these figures without numbers, and no document promises any: every
 * figure is printed with the target "report"; failed reviews and unexpected call counts with 0.
 *
 * Options: `--window 10`, `--concurrency 8`, `--objects 100`, `--reads 500`, `--lists 50`,
 * `--timeout <s>` (each wait; default 120), `--skip reviews|reads`, `--keep` (keep the temporary
 * folder with the operator's log).
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as yaml from 'yaml';
import * as clients from './clients.js';
import * as compiling from './compiling.js';
import * as optionValues from './options.js';
import * as processes from './processes.js';
import * as report from './report.js';
import type * as serve from './serve.js';
import * as servers from './servers.js';

const FIXTURE = 'fixtures/operators/bench-conversion.ts';
const COMPILED = 'bench/.build/bench-conversion.js';
const COMMAND = `exec node bin/kopf-gen.js run ${COMPILED} --all-namespaces --standalone --quiet`;
const CRD_FILE = 'fixtures/crds/conversion.yaml';
const CRD_URL = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CRD_NAME = 'sprockets.conversion.kopf-gen.dev';
const GROUP = 'conversion.kopf-gen.dev';
const NAMESPACE = 'default';
const collection = (version: string): string => `/apis/${GROUP}/${version}/namespaces/${NAMESPACE}/sprockets`;
const SIZES = [1, 100] as const;
const PARTS = ['reviews', 'reads'] as const;
type Part = (typeof PARTS)[number];

interface Options {
  windowS: number;
  concurrency: number;
  objects: number;
  reads: number;
  lists: number;
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
      reads: { type: 'string' },
      lists: { type: 'string' },
      timeout: { type: 'string' },
      skip: { type: 'string', multiple: true },
      keep: { type: 'boolean' },
    },
  });
  const number = (name: string, fallback: number, min: number): number => optionValues.atLeast(values[name], fallback, name, min);
  return {
    windowS: number('window', 10, 1),
    concurrency: number('concurrency', 8, 1),
    objects: number('objects', 100, 1),
    reads: number('reads', 500, 1),
    lists: number('lists', 50, 1),
    timeoutMs: number('timeout', 120, 1) * 1000,
    skip: optionValues.skippedParts(values['skip'], PARTS),
    keep: values['keep'] === true,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The webhook as the CRD names it after the operator configured it. */
interface Webhook {
  url: string;
  ca: string;
}

/** A v1 Sprocket as a client would write it (with what the API server adds to a stored object). */
function sprocketV1(i: number): Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'Sprocket',
    metadata: {
      name: `sprocket-${i}`,
      namespace: NAMESPACE,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1000 + i),
      generation: 1,
      creationTimestamp: '2030-01-01T00:00:00Z',
      labels: { app: 'bench' },
      annotations: { 'example.com/owner': 'team-a' },
    },
    spec: { size: i % 7, image: `registry.example.com:5000/team/sprocket:1.${i % 10}`, colour: 'blue' },
    status: { rollout: { replicas: i % 7 } },
  };
}

/** POSTs one ConversionReview over `agent`; the status, the time in ms, and whether every object came back converted. */
function postReview(webhook: Webhook, agent: https.Agent, objects: unknown[], uid: string): Promise<{ ok: boolean; ms: number; detail: string }> {
  const payload = JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid, desiredAPIVersion: `${GROUP}/v2`, objects },
  });
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = https.request(
      webhook.url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let ok = false;
          try {
            const response = (JSON.parse(text) as { response?: { uid?: string; result?: { status?: string }; convertedObjects?: unknown[] } }).response;
            ok = response?.uid === uid && response.result?.status === 'Success' && response.convertedObjects?.length === objects.length;
          } catch {
            ok = false;
          }
          resolve({ ok, ms: performance.now() - started, detail: `HTTP ${res.statusCode}: ${text.slice(0, 200)}` });
        });
        res.on('error', reject);
      },
    );
    req.on('error', (error) =>
      resolve({ ok: false, ms: performance.now() - started, detail: `${error.message} (${(error as { code?: string }).code ?? 'no code'})` }),
    );
    req.end(payload);
  });
}

/** The devcluster process, its client, and the operator process, with the CRD in place. */
class Session {
  private constructor(
    readonly server: servers.Server,
    readonly client: clients.Client,
    readonly operator: processes.OperatorProcess,
  ) {}

  static async open(dir: string, concurrency: number): Promise<Session> {
    const server = await servers.startServer({ DEVCLUSTER_WEBHOOK_CALLS: '1' });
    const client = new clients.Client(server.url, concurrency);
    try {
      const crd = yaml.parse(fs.readFileSync(path.join(compiling.ROOT, CRD_FILE), 'utf8')) as unknown;
      await client.expect([201], 'POST', CRD_URL, crd);
      const kubeconfig = path.join(dir, 'kubeconfig');
      await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');
      const operator = new processes.OperatorProcess(COMMAND, { KUBECONFIG: kubeconfig, NODE_OPTIONS: '' }, path.join(dir, 'operator.log'));
      return new Session(server, client, operator);
    } catch (error) {
      client.close();
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

  /** The operator's webhook, once it wrote the CRD's conversion settings and answers a review. */
  async webhook(timeoutMs: number): Promise<Webhook> {
    const webhook = await this.until(
      async () => {
        const r = await this.client.request('GET', `${CRD_URL}/${CRD_NAME}`);
        const config = (JSON.parse(r.text) as { spec?: { conversion?: { webhook?: { clientConfig?: { url?: string; caBundle?: string } } } } }).spec?.conversion
          ?.webhook?.clientConfig;
        if (config?.url === undefined || config.caBundle === undefined) return undefined;
        return { url: config.url, ca: Buffer.from(config.caBundle, 'base64').toString('utf8') };
      },
      timeoutMs,
      "the operator's conversion settings in the CRD",
    );
    const agent = new https.Agent({ keepAlive: true, ca: webhook.ca });
    try {
      await this.until(
        async () => ((await postReview(webhook, agent, [sprocketV1(0)], 'warm-up').catch(() => ({ ok: false }))).ok ? true : undefined),
        timeoutMs,
        'a first ConversionReview answered',
      );
    } finally {
      agent.destroy();
    }
    return webhook;
  }

  /** The devcluster's conversion calls ended in a window of epoch milliseconds. */
  async calls(since: number, until: number): Promise<serve.WebhookCall[]> {
    const { calls } = await servers.ask<{ calls: serve.WebhookCall[] }>(this.server.child, { type: 'webhook-calls', since, until: until + 1 }, 'webhook-calls');
    return calls;
  }

  async close(): Promise<void> {
    await this.operator.stop();
    this.client.close();
    await servers.stopServer(this.server.child);
  }
}

/** Part 1: reviews of `size` objects POSTed by `concurrency` callers for `windowS` seconds. */
async function measureReviews(
  s: Session,
  webhook: Webhook,
  size: number,
  options: Options,
  figures: Record<string, number>,
  notes: Record<string, string>,
): Promise<void> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: options.concurrency, ca: webhook.ca });
  const objects = Array.from({ length: size }, (_, i) => sprocketV1(i));
  const key = `reviews_${size}`;
  try {
    for (let i = 0; i < 50; i++) await postReview(webhook, agent, objects, `warm-up-${i}`); // the optimising compiler, the TLS sessions
    const results: { ok: boolean; ms: number; detail: string }[] = [];
    let next = 0;
    const cpuBefore = s.operator.usage().cpuSeconds;
    const since = performance.now();
    const end = since + options.windowS * 1000;
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (performance.now() < end) results.push(await postReview(webhook, agent, objects, `review-${next++}`));
      }),
    );
    const seconds = (performance.now() - since) / 1000;
    const cpu = s.operator.usage().cpuSeconds - cpuBefore;
    const ms = results.map((r) => r.ms);
    figures[`${key}_reviews_per_s`] = results.length / seconds;
    figures[`${key}_objects_per_s`] = (results.length * size) / seconds;
    figures[`${key}_p50_ms`] = report.percentile(ms, 50);
    figures[`${key}_p99_ms`] = report.percentile(ms, 99);
    figures[`${key}_max_ms`] = report.percentile(ms, 100);
    figures[`${key}_operator_cpu_ms_per_review`] = (cpu * 1000) / results.length;
    const failed = results.filter((r) => !r.ok);
    figures[`${key}_failed`] = failed.length;
    if (failed.length) notes[`${key}_failed`] = failed[0]!.detail;
  } finally {
    agent.destroy();
  }
}

/** One request's wall time in ms; throws unless it answers 200. */
async function timed(client: clients.Client, url: string): Promise<number> {
  const started = performance.now();
  await client.expect([200], 'GET', url);
  return performance.now() - started;
}

/** Part 2: reads of the same objects in the storage version (v2) and in the other (v1), alternating. */
async function measureReads(s: Session, options: Options, figures: Record<string, number>): Promise<void> {
  for (let i = 0; i < options.objects; i++) {
    const object = {
      apiVersion: `${GROUP}/v2`,
      kind: 'Sprocket',
      metadata: { name: `sprocket-${i}`, labels: { app: 'bench' }, annotations: { 'example.com/owner': 'team-a' } },
      spec: { replicas: i % 7, image: { repository: 'registry.example.com:5000/team/sprocket', tag: `1.${i % 10}` }, colour: 'blue', paused: i % 2 === 0 },
    };
    await s.client.expect([201], 'POST', collection('v2'), object);
  }
  const name = (i: number): string => `sprocket-${i % options.objects}`;
  for (let i = 0; i < 50; i++) {
    await timed(s.client, `${collection('v1')}/${name(i)}`);
    await timed(s.client, `${collection('v2')}/${name(i)}`);
  }
  const stored: number[] = [];
  const converted: number[] = [];
  const since = Date.now();
  for (let i = 0; i < options.reads; i++) {
    // Alternate which goes first, so neither always follows the other.
    if (i % 2 === 0) {
      stored.push(await timed(s.client, `${collection('v2')}/${name(i)}`));
      converted.push(await timed(s.client, `${collection('v1')}/${name(i)}`));
    } else {
      converted.push(await timed(s.client, `${collection('v1')}/${name(i)}`));
      stored.push(await timed(s.client, `${collection('v2')}/${name(i)}`));
    }
  }
  const readsUntil = Date.now();
  const storedLists: number[] = [];
  const convertedLists: number[] = [];
  for (let i = 0; i < options.lists; i++) {
    if (i % 2 === 0) {
      storedLists.push(await timed(s.client, collection('v2')));
      convertedLists.push(await timed(s.client, collection('v1')));
    } else {
      convertedLists.push(await timed(s.client, collection('v1')));
      storedLists.push(await timed(s.client, collection('v2')));
    }
  }
  const until = Date.now();
  const readCalls = await s.calls(since, readsUntil);
  const allCalls = await s.calls(since, until);
  figures['reads_objects'] = options.objects;
  figures['reads_rounds'] = options.reads;
  for (const p of [50, 99]) {
    figures[`reads_get_storage_p${p}_ms`] = report.percentile(stored, p);
    figures[`reads_get_converted_p${p}_ms`] = report.percentile(converted, p);
    figures[`reads_get_added_p${p}_ms`] = report.percentile(converted, p) - report.percentile(stored, p);
    figures[`reads_list_storage_p${p}_ms`] = report.percentile(storedLists, p);
    figures[`reads_list_converted_p${p}_ms`] = report.percentile(convertedLists, p);
    figures[`reads_list_added_p${p}_ms`] = report.percentile(convertedLists, p) - report.percentile(storedLists, p);
    figures[`reads_webhook_call_p${p}_ms`] = report.percentile(
      readCalls.map((c) => c.ms),
      p,
    );
  }
  figures['reads_lists'] = options.lists;
  // One call per converted GET and per converted LIST; none for the storage version.
  figures['reads_unexpected_calls'] = allCalls.length - (options.reads + options.lists);
  figures['reads_failed_calls'] = allCalls.filter((c) => !c.ok).length;
}

/** The side-by-side tables: every figure with the target "report" but the counts of failures. */
function tables(figures: Record<string, number>): report.Comparison[] {
  const row = (label: string, values: (number | undefined)[], target = 'report', digits?: number): report.ComparisonRow => ({
    label,
    values,
    digits,
    target,
    met: target === 'report' ? undefined : values.every((v) => v === undefined || v === 0),
  });
  const sizes = (suffix: string): (number | undefined)[] => SIZES.map((n) => figures[`reviews_${n}_${suffix}`]);
  const reads = (kind: 'get' | 'list', p: number): (number | undefined)[] =>
    ['storage', 'converted', 'added'].map((which) => figures[`reads_${kind}_${which}_p${p}_ms`]);
  return [
    {
      title: "conversion: the operator's ConversionReviews (v1 → v2, HTTPS, concurrent callers)",
      columns: SIZES.map((n) => `${n} object${n === 1 ? '' : 's'}/review`),
      rows: [
        row('reviews/s', sizes('reviews_per_s')),
        row('objects/s', sizes('objects_per_s')),
        row('round trip p50 ms', sizes('p50_ms'), 'report', 2),
        row('round trip p99 ms', sizes('p99_ms'), 'report', 2),
        row('round trip max ms', sizes('max_ms'), 'report', 2),
        row('operator CPU ms/review', sizes('operator_cpu_ms_per_review'), 'report', 3),
        row('failed reviews', sizes('failed'), '0'),
      ],
    },
    {
      title: "conversion: the devcluster's reads in the storage version (v2) and converted (v1), sequential",
      columns: ['storage v2', 'converted v1', 'added'],
      rows: [
        row('GET p50 ms', reads('get', 50), 'report', 2),
        row('GET p99 ms', reads('get', 99), 'report', 2),
        row(`LIST of ${figures['reads_objects'] ?? '?'} p50 ms`, reads('list', 50), 'report', 2),
        row(`LIST of ${figures['reads_objects'] ?? '?'} p99 ms`, reads('list', 99), 'report', 2),
        row('webhook call p50/p99 ms', [figures['reads_webhook_call_p50_ms'], figures['reads_webhook_call_p99_ms'], undefined], 'report', 2),
        row('unexpected/failed calls', [figures['reads_unexpected_calls'], figures['reads_failed_calls'], undefined], '0'),
      ],
    },
  ];
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const options = parseOptions(args);
  const result: report.Collected = {
    figures: {},
    targets: { reviews_1_failed: { max: 0 }, reviews_100_failed: { max: 0 }, reads_unexpected_calls: { max: 0 }, reads_failed_calls: { max: 0 } },
    notes: {},
  };
  const { figures, notes } = result;
  notes['machine'] = `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  figures['load_average_1m_start'] = os.loadavg()[0]!;
  figures['concurrency'] = options.concurrency;
  figures['window_s'] = options.windowS;
  compiling.requireFreshDistribution();
  compiling.transpile(FIXTURE, COMPILED);
  notes['runtime_resolved_to'] = compiling.requireRuntimeFromDist('bench/.build');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-conversion-'));
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
  let session: Session | undefined;
  try {
    session = await Session.open(dir, options.concurrency);
    const s = session;
    const webhook = await s.webhook(options.timeoutMs);
    await part('reviews', async () => {
      for (const size of SIZES) await measureReviews(s, webhook, size, options, figures, notes);
    });
    await part('reads', () => measureReads(s, options, figures));
  } catch (error) {
    failed = true;
    notes['error'] = error instanceof Error ? error.message : String(error);
  } finally {
    await session?.close();
  }
  if (failed || options.keep) notes['kept'] = dir;
  else fs.rmSync(dir, { recursive: true, force: true });
  notes['definitions'] =
    "round trip = the caller's POST of a ConversionReview to the operator → answer parsed (keep-alive HTTPS); " +
    'operator CPU = the operator process tree (user + system) over the window, per review; ' +
    'GET/LIST = one request at a time to the devcluster, v2 (storage: no webhook call) and v1 (one call each) alternating; added = converted − storage; ' +
    "webhook call = the devcluster's own timing of its conversion calls during the GETs (review sent → answer parsed)";
  figures['load_average_1m_end'] = os.loadavg()[0]!;
  return { name: 'conversion', ...result, tables: tables(figures) };
}
