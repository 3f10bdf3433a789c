/**
 * Devcluster benchmark: start-up time and memory of the compiled devcluster (and its first Job
 * create, which reads the upstream schemas), throughput of creates and merge patches over
 * keep-alive HTTP with 1 and 8 clients, watch delivery latency with 10 watchers, the time to list
 * 10k objects, and RSS holding 100k small objects. The server runs in a child process.
 *
 * Throughput depends on what else the machine runs, so each phase also reports the server's CPU
 * time per request (comparable across runs) and this process's CPU use in percent of one core
 * (near 100 means the load generator, not the server, limits the rate). Watch latency is measured
 * with the writer in a process of its own (`writer.ts`), as a controller writing while others watch.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import * as report from './report.js';
import * as servers from './servers.js';
import type * as writer from './writer.js';

function request(agent: http.Agent, url: string, method: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      { method, agent, headers: payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A throughput phase: requests per second, server CPU per request, and this process's CPU use. */
interface Phase {
  perSecond: number;
  serverCpuUs: number;
  clientCpuPct: number;
}

async function serverCpu(child: ChildProcess): Promise<number> {
  return (await servers.ask<{ micros: number }>(child, { type: 'cpu' }, 'cpu')).micros;
}

async function throughput(child: ChildProcess, clients: number, total: number, make: (i: number) => Promise<void>): Promise<Phase> {
  let next = 0;
  const serverBefore = await serverCpu(child);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        await make(i);
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  const client = process.cpuUsage(clientBefore);
  const serverUs = (await serverCpu(child)) - serverBefore;
  return { perSecond: total / (elapsedMs / 1000), serverCpuUs: serverUs / total, clientCpuPct: (client.user + client.system) / 10 / elapsedMs };
}

function record(figures: Record<string, number>, name: string, clients: number, phase: Phase): void {
  figures[`${name}_per_s_${clients}_clients`] = phase.perSecond;
  figures[`${name}_server_cpu_us_per_request_${clients}_clients`] = phase.serverCpuUs;
  figures[`${name}_client_cpu_pct_${clients}_clients`] = phase.clientCpuPct;
}

/** Starts the writer process of the watch benchmark. */
function startWriter(): Promise<ChildProcess> {
  const child = fork(path.join(import.meta.dirname, 'writer.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', () => resolve(child));
  });
}

function runWriter(child: ChildProcess, job: writer.WriteJob): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('message', (m: { type: string; message?: string }) => (m.type === 'written' ? resolve() : reject(new Error(m.message))));
    child.send(job);
  });
}

const CM = '/api/v1/namespaces/default/configmaps';

/** One run of `devcluster-startup.mjs` in a fresh process (the compiled devcluster: `npm run build` first). */
interface StartupRun {
  startMs: number;
  rssMb: number;
  heapMb: number;
  firstJobStatus: number;
  firstJobMs: number;
  rssAfterJobMb: number;
}

function startupOnce(): Promise<StartupRun> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(import.meta.dirname, 'devcluster-startup.mjs'), [], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`devcluster start-up run exited with ${code}`)),
    );
  });
}

/** Start-up of the compiled devcluster: the median of five fresh processes. */
async function startup(figures: Record<string, number>): Promise<void> {
  const runs: StartupRun[] = [];
  for (let i = 0; i < 5; i++) runs.push(await startupOnce());
  const median = (pick: (r: StartupRun) => number): number => report.percentile(runs.map(pick), 50);
  figures['start_ms'] = median((r) => r.startMs);
  figures['start_rss_mb'] = median((r) => r.rssMb);
  figures['start_heap_mb'] = median((r) => r.heapMb);
  figures['first_job_create_ms'] = median((r) => r.firstJobMs);
  figures['rss_after_first_job_mb'] = median((r) => r.rssAfterJobMb);
  if (runs.some((r) => r.firstJobStatus !== 201)) throw new Error('the first Job create of a start-up run was refused');
}

export async function run(): Promise<report.Result> {
  const figures: Record<string, number> = {};
  await startup(figures);
  const { child, url } = await servers.startServer();
  try {
    for (const clients of [1, 8]) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
      const n = clients === 1 ? 2000 : 6000;
      const prefix = `c${clients}`;
      record(
        figures,
        'creates',
        clients,
        await throughput(child, clients, n, async (i) => {
          const r = await request(agent, url + CM, 'POST', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-${i}` }, data: { a: 'b' } });
          if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
        }),
      );
      record(
        figures,
        'merge_patches',
        clients,
        await throughput(child, clients, n, async (i) => {
          const r = await request(agent, `${url}${CM}/${prefix}-${i % n}`, 'PATCH', { data: { a: `v${i}` } }, 'application/merge-patch+json');
          if (r.status !== 200) throw new Error(`patch failed: ${r.status} ${r.text}`);
        }),
      );
      agent.destroy();
    }

    // Watch delivery latency: 10 watchers here, one writer in its own process; each write carries
    // its send time in a data field.
    const latencies: number[] = [];
    const watchers = await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise<http.ClientRequest>((resolve) => {
            const req = http.get(`${url}/api/v1/namespaces/bench-watch/configmaps?watch=true&resourceVersion=0`, (res) => {
              let buffer = '';
              res.on('data', (chunk: Buffer) => {
                buffer += chunk.toString('utf8');
                let nl: number;
                while ((nl = buffer.indexOf('\n')) >= 0) {
                  const line = buffer.slice(0, nl);
                  buffer = buffer.slice(nl + 1);
                  const event = JSON.parse(line) as { object: { data?: { sent?: string } } };
                  const sent = Number(event.object.data?.sent);
                  if (sent) latencies.push(performance.timeOrigin + performance.now() - sent);
                }
              });
              resolve(req);
            });
          }),
      ),
    );
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    await request(agent, `${url}/api/v1/namespaces`, 'POST', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-watch' } });
    const writerProcess = await startWriter();
    try {
      await new Promise((r) => setTimeout(r, 200));
      await runWriter(writerProcess, { type: 'write', url, namespace: 'bench-watch', count: 500, gapMs: 2, warmup: 100 });
    } finally {
      writerProcess.kill();
    }
    await new Promise((r) => setTimeout(r, 200));
    for (const w of watchers) w.destroy();
    figures['watch_delivery_p50_ms'] = report.percentile(latencies, 50);
    figures['watch_delivery_p99_ms'] = report.percentile(latencies, 99);
    figures['watch_events_measured'] = latencies.length;

    // Listing 10k objects.
    await servers.ask(child, { type: 'seed', count: 10_000, prefix: 'list', namespace: 'kube-public' }, 'seeded');
    const t0 = performance.now();
    const listed = await request(agent, `${url}/api/v1/namespaces/kube-public/configmaps`, 'GET');
    figures['list_10k_ms'] = performance.now() - t0;
    figures['list_10k_items'] = (JSON.parse(listed.text) as { items: unknown[] }).items.length;
    agent.destroy();
  } finally {
    await servers.stopServer(child);
  }

  // RSS with 100k small objects, in a fresh server (short history so memory reflects objects).
  const big = await servers.startServer({ DEVCLUSTER_HISTORY: '1000' });
  try {
    const before = await servers.ask<{ rss: number }>(big.child, { type: 'rss' }, 'rss');
    await servers.ask(big.child, { type: 'seed', count: 100_000, prefix: 'mem', namespace: 'default' }, 'seeded');
    const after = await servers.ask<{ rss: number }>(big.child, { type: 'rss' }, 'rss');
    figures['rss_idle_mb'] = before.rss / 1048576;
    figures['rss_100k_objects_mb'] = after.rss / 1048576;
  } finally {
    await servers.stopServer(big.child);
  }
  return {
    name: 'devcluster',
    figures,
    targets: {
      start_ms: { max: 500 },
      merge_patches_per_s_8_clients: { min: 3000 },
      watch_delivery_p99_ms: { max: 5 },
      rss_100k_objects_mb: { max: 600 },
    },
  };
}
