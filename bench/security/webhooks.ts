/**
 * Probe of the webhook server's exposure (issue 33, items 2, 3, 7, 8): what hostile or unlucky
 * clients on loopback can do to an operator's webhook server. The operator side runs in a child
 * process (`webhooks-server.ts`: the built-in `WebhookServer` over HTTPS with the real admission
 * engine, metrics, and `/healthz` + `/metrics` on a plain HTTP port); this process is the client.
 *
 * 1. `never-tls`: `--clients` (default 50) TCP connections that never start TLS are held
 *    `--hold` seconds (default 12: past the default handshake timeout of 10 s), then the clients
 *    leave. Figures: the server's sockets in CLOSE-WAIT, and its open sockets on the port, 2 s
 *    after they left (target 0).
 * 2. `slow-headers`: `--slow` (default 2,000) TLS connections send part of a request's headers and
 *    then nothing. Figures: the child's file descriptors before, at the peak, and `--settle`
 *    seconds (default 15: the 10 s header timeout and its 1 s checking interval) after the last
 *    one connected (target: back to the baseline, within 10).
 * 3. `random-paths`: `--paths` (default 5,000; the figure is for 20,000) admission reviews to random webhook paths, 16 at a
 *    time over keep-alive. Figures: the `/metrics` size before and after (target: unchanged), and
 *    the statuses (target: all 404); the operator's own metrics (without Node's process metrics)
 *    and its series labelled by webhook must be unchanged.
 * 4. `nested`: 4 bodies of 6 MB (`--nested-mb`) sent at once, `--rounds` times (default 3): an
 *    admission review whose object holds blocks of arrays nested 900 levels (under the depth
 *    limit, over the item limit), while `/healthz` is requested every 10 ms. Figures: `/healthz`
 *    latency p99 and max (target p99 ≤ 200 ms), and the webhook's answer time.
 * 5. `deep-logs`: 43 reviews whose object is nested 20,000 levels. Figure: the lines the operator
 *    logged for them at the default level (target 43: one each), and how many were stack frames.
 *
 * Run: `node --conditions=kopf-gen-source --import tsx -e "const m = await
 * import('./bench/security/webhooks.ts'); console.log(JSON.stringify(await m.run([]), null, 1))"`.
 * Options: `--clients 50 --hold 12 --slow 2000 --settle 15 --paths 20000 --nested-mb 6 --rounds 3
 * --skip never-tls,slow-headers,random-paths,nested,deep-logs`, `--handshake-timeout <s>` (the
 * server's, when the code has the option).
 */
import { fork, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { Worker } from 'node:worker_threads';
import * as report from '../report.js';

interface Ready {
  readonly webhookUrl: string;
  readonly caBundle?: string;
  readonly healthUrl: string;
}

interface Child {
  readonly process: ChildProcess;
  readonly ready: Ready;
  /** Lines the child wrote to stderr so far. */
  readonly lines: string[];
}

function option(args: readonly string[], name: string, fallback: number): number {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
}

function skipped(args: readonly string[]): Set<string> {
  const index = args.indexOf('--skip');
  return new Set(index >= 0 ? (args[index + 1] ?? '').split(',') : []);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function startChild(handshakeTimeout: number | undefined): Promise<Child> {
  const child = fork(path.join(import.meta.dirname, 'webhooks-server.ts'), [], {
    execArgv: ['--conditions=kopf-gen-source', '--import', 'tsx'],
    env: { ...process.env, ...(handshakeTimeout !== undefined ? { PROBE_HANDSHAKE_TIMEOUT: String(handshakeTimeout) } : {}) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  const lines: string[] = [];
  let partial = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the probe server exited early (code ${code}): ${lines.join('\n')}`)));
    child.on('message', (message: { type?: string } & Ready) => {
      if (message.type === 'ready') resolve(message);
    });
  });
  return { process: child, ready, lines };
}

/** Sends the child `{type}` and waits for its message of type `reply`. */
function ask<T>(child: Child, type: string, reply: string): Promise<T> {
  return new Promise<T>((resolve) => {
    const on = (message: { type?: string }): void => {
      if (message.type !== reply) return;
      child.process.off('message', on);
      resolve(message as T);
    };
    child.process.on('message', on);
    child.process.send({ type });
  });
}

async function stopChild(child: Child): Promise<number> {
  const started = performance.now();
  if (child.process.exitCode !== null) return 0;
  const exited = new Promise<void>((resolve) => child.process.once('exit', () => resolve()));
  child.process.send({ type: 'stop' });
  const deadline = sleep(10_000).then(() => 'late' as const);
  if ((await Promise.race([exited.then(() => 'exited' as const), deadline])) === 'late') child.process.kill('SIGKILL');
  return (performance.now() - started) / 1000;
}

function fds(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

/** The CPU time (user + system) a process has used, in milliseconds. */
function cpuMs(pid: number): number {
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** The server's TCP sockets on `port` that the process holds (established or in CLOSE-WAIT). */
function serverSockets(port: number): { closeWait: number; open: number } {
  const text = execFileSync('ss', ['-tanH', `( sport = :${port} )`], { encoding: 'utf8' });
  const states = text
    .split('\n')
    .filter(Boolean)
    .map((line) => line.trim().split(/\s+/)[0]!);
  return { closeWait: states.filter((s) => s === 'CLOSE-WAIT').length, open: states.filter((s) => s === 'ESTAB' || s === 'CLOSE-WAIT').length };
}

function connectPlain(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

function connectSlow(port: number): Promise<tls.TLSSocket | null> {
  return new Promise((resolve) => {
    const socket = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => {
      socket.write('POST /check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n');
      resolve(socket);
    });
    socket.on('error', () => resolve(null));
    socket.on('close', () => resolve(null));
  });
}

function review(object: string): string {
  return (
    '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE",' +
    '"resource":{"group":"kopf.dev","version":"v1","resource":"kopfexamples"},"userInfo":{"username":"probe"},' +
    `"object":${object}}}`
  );
}

/** A review whose object holds blocks of arrays nested `depth` levels, `bytes` long in all. */
function nestedBody(bytes: number, depth: number): Buffer {
  const block = '['.repeat(depth) + ']'.repeat(depth);
  const count = Math.max(1, Math.floor(bytes / (block.length + 1)));
  return Buffer.from(review(`{"metadata":{"name":"nested"},"spec":{"blocks":[${Array.from({ length: count }, () => block).join(',')}]}}`));
}

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

function post(agent: https.Agent, url: string, body: Buffer | string, ca: string | undefined): Promise<Reply> {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = https.request(url, { method: 'POST', agent, ca, headers: { 'content-type': 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
    });
    request.on('error', (error) => resolve({ status: 0, body: String(error), ms: performance.now() - started }));
    request.end(body);
  });
}

function get(url: string): Promise<Reply> {
  const started = performance.now();
  return new Promise((resolve) => {
    http
      .get(url, { agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
      })
      .on('error', (error) => resolve({ status: 0, body: String(error), ms: performance.now() - started }));
  });
}

const caOf = (ready: Ready): string | undefined => (ready.caBundle ? Buffer.from(ready.caBundle, 'base64').toString('utf8') : undefined);
const portOf = (url: string): number => Number(new URL(url).port);

async function neverTls(child: Child, args: readonly string[], out: report.Collected): Promise<void> {
  const clients = option(args, 'clients', 50);
  const hold = option(args, 'hold', 12);
  const port = portOf(child.ready.webhookUrl);
  const sockets = await Promise.all(Array.from({ length: clients }, () => connectPlain(port)));
  await sleep(hold * 1000);
  for (const socket of sockets) socket.destroy();
  await sleep(2000);
  const sockets2 = serverSockets(port);
  out.figures['never_tls_close_wait'] = sockets2.closeWait;
  out.figures['never_tls_open_sockets'] = sockets2.open;
  out.targets['never_tls_close_wait'] = { max: 0 };
  out.targets['never_tls_open_sockets'] = { max: 0 };
  out.notes['never_tls'] =
    `${clients} TCP connections that never start TLS, held ${hold} s, then closed by the clients; the server's sockets on its port 2 s later.`;
}

async function slowHeaders(child: Child, args: readonly string[], out: report.Collected): Promise<void> {
  const count = option(args, 'slow', 2000);
  const settle = option(args, 'settle', 15);
  const pid = child.process.pid!;
  const port = portOf(child.ready.webhookUrl);
  const baseline = fds(pid);
  const rssBefore = rssMb(pid);
  const sockets: (tls.TLSSocket | null)[] = [];
  let peak = baseline;
  for (let i = 0; i < count; i += 50) {
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => connectSlow(port)))));
    peak = Math.max(peak, fds(pid));
  }
  const connectedAt = performance.now();
  let releasedAfter = Number.NaN;
  while ((performance.now() - connectedAt) / 1000 < settle) {
    peak = Math.max(peak, fds(pid));
    if (Number.isNaN(releasedAfter) && fds(pid) <= baseline + 10) releasedAfter = (performance.now() - connectedAt) / 1000;
    await sleep(250);
  }
  const after = fds(pid);
  out.figures['slow_headers_fds_before'] = baseline;
  out.figures['slow_headers_fds_peak'] = peak;
  out.figures['slow_headers_fds_after'] = after;
  out.figures['slow_headers_released_after_s'] = releasedAfter;
  out.figures['slow_headers_rss_mb_before'] = rssBefore;
  out.figures['slow_headers_rss_mb_after'] = rssMb(pid);
  out.targets['slow_headers_fds_after'] = { max: baseline + 10 };
  out.notes['slow_headers'] =
    `${count} TLS connections sending part of their headers, then nothing; the operator's file descriptors ${settle} s after the last connected` +
    ` (released_after_s: when they were back within 10 of the baseline; NaN: not within ${settle} s). ${sockets.filter((s) => s === null).length} were refused or cut while connecting.`;
  for (const socket of sockets) socket?.destroy();
  await sleep(500);
}

async function randomPaths(child: Child, args: readonly string[], out: report.Collected): Promise<void> {
  const count = option(args, 'paths', 5000);
  const ca = caOf(child.ready);
  await post(new https.Agent(), `${child.ready.webhookUrl}/check`, review('{"metadata":{"name":"x"}}'), ca);
  const first = (await get(`${child.ready.healthUrl}/metrics`)).body;
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16 });
  const body = review('{"metadata":{"name":"x"}}');
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        const i = next++;
        const reply = await post(agent, `${child.ready.webhookUrl}/random-${i}-${Math.random().toString(36).slice(2)}`, body, ca);
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
      }
    }),
  );
  agent.destroy();
  const seconds = (performance.now() - started) / 1000;
  const scrape = await get(`${child.ready.healthUrl}/metrics`);
  const before = first.length;
  out.figures['random_paths_metrics_bytes_before'] = before;
  out.figures['random_paths_metrics_bytes_after'] = scrape.body.length;
  out.figures['random_paths_webhook_series_before'] = webhookSeries(first);
  out.figures['random_paths_webhook_series_after'] = webhookSeries(scrape.body);
  out.targets['random_paths_webhook_series_after'] = { max: webhookSeries(first) };
  out.figures['random_paths_scrape_ms'] = scrape.ms;
  out.figures['random_paths_404'] = statuses.get(404) ?? 0;
  out.figures['random_paths_rss_mb'] = rssMb(child.process.pid!);
  out.figures['random_paths_own_metrics_bytes_before'] = ownBytes(first);
  out.figures['random_paths_own_metrics_bytes_after'] = ownBytes(scrape.body);
  out.targets['random_paths_own_metrics_bytes_after'] = { max: ownBytes(first) };
  out.targets['random_paths_404'] = { min: count };
  out.notes['random_paths'] =
    `${count} admission reviews to random webhook paths in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))};` +
    " the /metrics size before and after, that of the operator's own metrics (without the Node process metrics, whose values and garbage-collection kinds vary by a few KB), and its series labelled by webhook.";
}

/** The bytes of the exposition without the Node process metrics (`nodejs_…`, `process_…`). */
function ownBytes(exposition: string): number {
  return exposition
    .split('\n')
    .filter((line) => !/^(?:# (?:HELP|TYPE) )?(?:nodejs|process)_/.test(line))
    .join('\n').length;
}

/** The series of the exposition labelled by webhook. */
function webhookSeries(exposition: string): number {
  return exposition.split('\n').filter((line) => !line.startsWith('#') && line.includes('webhook="')).length;
}

/**
 * Requests `url` every `everyMs` in a thread of its own (so that this process's own work, such as
 * encrypting the uploads, does not count), until stopped; returns the latencies in milliseconds.
 */
function pollInThread(url: string, everyMs: number): { stop(): Promise<number[]> } {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const http = require('node:http');
    const latencies = [];
    let running = true;
    parentPort.on('message', () => { running = false; });
    const once = () => new Promise((resolve) => {
      const started = performance.now();
      http.get(workerData.url, { agent: false }, (res) => { res.resume(); res.on('end', () => resolve(performance.now() - started)); })
        .on('error', () => resolve(performance.now() - started));
    });
    (async () => {
      while (running) {
        latencies.push(await once());
        await new Promise((resolve) => setTimeout(resolve, workerData.everyMs));
      }
      parentPort.postMessage(latencies);
    })();
  `;
  const worker = new Worker(code, { eval: true, workerData: { url, everyMs } });
  return {
    stop: () =>
      new Promise<number[]>((resolve) => {
        worker.once('message', (latencies: number[]) => {
          void worker.terminate();
          resolve(latencies);
        });
        worker.postMessage('stop');
      }),
  };
}

async function nested(child: Child, args: readonly string[], out: report.Collected): Promise<void> {
  const mb = option(args, 'nested-mb', 6);
  const rounds = option(args, 'rounds', 3);
  const body = nestedBody(mb * 1_000_000, 900);
  const ca = caOf(child.ready);
  const idle = pollInThread(`${child.ready.healthUrl}/healthz`, 10);
  await sleep(1000);
  const baseline = await idle.stop();
  const cpuBefore = cpuMs(child.process.pid!);
  await ask(child, 'loop-reset', 'loop-reset');
  const latencies: number[] = [];
  const answers: number[] = [];
  const statuses = new Map<number, number>();
  for (let round = 0; round < rounds; round++) {
    const poller = pollInThread(`${child.ready.healthUrl}/healthz`, 10);
    await sleep(200);
    const agent = new https.Agent({ keepAlive: false });
    const replies = await Promise.all(Array.from({ length: 4 }, () => post(agent, `${child.ready.webhookUrl}/check`, body, ca)));
    await sleep(200);
    latencies.push(...(await poller.stop()));
    for (const reply of replies) {
      answers.push(reply.ms);
      statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
    }
  }
  const loop = await ask<{ maxMs: number; p99Ms: number }>(child, 'loop-read', 'loop');
  out.figures['nested_loop_delay_max_ms'] = loop.maxMs;
  out.figures['nested_loop_delay_p99_ms'] = loop.p99Ms;
  out.targets['nested_loop_delay_max_ms'] = { max: 200 };
  out.figures['nested_operator_cpu_ms_per_body'] = (cpuMs(child.process.pid!) - cpuBefore) / (4 * rounds);
  out.figures['idle_healthz_p99_ms'] = report.percentile(baseline, 99);
  out.figures['nested_healthz_p99_ms'] = report.percentile(latencies, 99);
  out.figures['nested_healthz_max_ms'] = Math.max(...latencies);
  out.figures['nested_webhook_answer_p50_ms'] = report.percentile(answers, 50);
  out.figures['nested_webhook_answer_max_ms'] = Math.max(...answers);
  out.targets['nested_healthz_p99_ms'] = { max: 200 };
  out.notes['nested'] =
    `The operator's event loop delay (its own measure, 10 ms resolution) and CPU during ${rounds} rounds of 4 parallel ${(body.length / 1e6).toFixed(1)} MB reviews whose object holds blocks of arrays nested 900 levels;` +
    ` /healthz polled every 10 ms from a thread of its own, from 200 ms before to 200 ms after (${latencies.length} requests);` +
    ` webhook statuses ${JSON.stringify(Object.fromEntries(statuses))} (0: the server closed the connection after its 400 while the upload went on).`;
}

async function deepLogs(child: Child, out: report.Collected): Promise<void> {
  const depth = 20_000;
  const body = review(`{"metadata":{"name":"deep"},"spec":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
  const ca = caOf(child.ready);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 4 });
  await sleep(300);
  const before = child.lines.length;
  const statuses = new Map<number, number>();
  for (let i = 0; i < 43; i++) {
    const reply = await post(agent, `${child.ready.webhookUrl}/check`, body, ca);
    statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
  }
  agent.destroy();
  await sleep(500);
  const lines = child.lines.slice(before);
  out.figures['deep_logs_lines'] = lines.length;
  out.figures['deep_logs_stack_frames'] = lines.filter((line) => /^\s+at\s/.test(line)).length;
  out.targets['deep_logs_lines'] = { max: 43 };
  out.targets['deep_logs_stack_frames'] = { max: 0 };
  out.notes['deep_logs'] =
    `43 reviews nested ${depth} levels; the lines logged at the default level; statuses ${JSON.stringify(Object.fromEntries(statuses))}.`;
}

/** Runs the probe (see the module's comment). */
export async function run(args: readonly string[] = []): Promise<report.Result> {
  const skip = skipped(args);
  const handshakeIndex = args.indexOf('--handshake-timeout');
  const handshakeTimeout = handshakeIndex >= 0 ? Number(args[handshakeIndex + 1]) : undefined;
  const out: report.Collected = { figures: {}, targets: {}, notes: {} };
  const child = await startChild(handshakeTimeout);
  try {
    if (!skip.has('never-tls')) await neverTls(child, args, out);
    if (!skip.has('slow-headers')) await slowHeaders(child, args, out);
    if (!skip.has('random-paths')) await randomPaths(child, args, out);
    if (!skip.has('nested')) await nested(child, args, out);
    if (!skip.has('deep-logs')) await deepLogs(child, out);
  } finally {
    const port = portOf(child.ready.webhookUrl);
    // Leftovers at the stop: connections that never start TLS, and some with slow headers.
    const held = [
      ...(await Promise.all(Array.from({ length: 20 }, () => connectPlain(port)))),
      ...(await Promise.all(Array.from({ length: 20 }, () => connectSlow(port)))),
    ];
    await sleep(200);
    const leftover = serverSockets(port).open;
    out.figures['stop_seconds'] = await stopChild(child);
    out.targets['stop_seconds'] = { max: 5 };
    out.notes['stop'] =
      `seconds until the operator side stopped (its webhook server closed) with ${leftover} connections open on the webhook port (20 never starting TLS, 20 with slow headers).`;
    for (const socket of held) socket?.destroy();
  }
  return { name: 'security-webhooks', ...out };
}
