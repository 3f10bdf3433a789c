/**
 * Devcluster benchmark (issue: foundation): throughput of creates and merge patches over
 * keep-alive HTTP with 1 and 8 clients, watch delivery latency with 10 watchers, the time to list
 * 10k objects, and RSS holding 100k small objects. The server runs in a child process.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import * as report from './report.js';

function startServer(env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(import.meta.dirname, 'serve.ts'), [], {
    execArgv: ['--import', 'tsx', '--expose-gc'], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', (m: { type: string; url: string }) => resolve({ child, url: m.url }));
  });
}

function ask<T>(child: ChildProcess, message: object, reply: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }): void => { if (m.type === reply) { child.off('message', on); resolve(m as T); } };
    child.on('message', on);
    child.send(message);
  });
}

function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) { resolve(); return; }
    child.once('exit', () => resolve());
    child.send({ type: 'stop' });
  });
}

function request(agent: http.Agent, url: string, method: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(url, { method, agent, headers: payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function throughput(url: string, clients: number, total: number, make: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    for (;;) {
      const i = next++;
      if (i >= total) return;
      await make(i);
    }
  }));
  void url;
  return total / ((performance.now() - started) / 1000);
}

const CM = '/api/v1/namespaces/default/configmaps';

export async function run(): Promise<report.Result> {
  const figures: Record<string, number> = {};
  const { child, url } = await startServer();
  try {
    for (const clients of [1, 8]) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
      const n = clients === 1 ? 2000 : 6000;
      const prefix = `c${clients}`;
      figures[`creates_per_s_${clients}_clients`] = await throughput(url, clients, n, async (i) => {
        const r = await request(agent, url + CM, 'POST', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-${i}` }, data: { a: 'b' } });
        if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
      });
      figures[`merge_patches_per_s_${clients}_clients`] = await throughput(url, clients, n, async (i) => {
        const r = await request(agent, `${url}${CM}/${prefix}-${i % n}`, 'PATCH', { data: { a: `v${i}` } }, 'application/merge-patch+json');
        if (r.status !== 200) throw new Error(`patch failed: ${r.status} ${r.text}`);
      });
      agent.destroy();
    }

    // Watch delivery latency: 10 watchers; each write carries its send time in a label-free data field.
    const latencies: number[] = [];
    const watchers = await Promise.all(Array.from({ length: 10 }, () => new Promise<http.ClientRequest>((resolve) => {
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
    })));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    await request(agent, `${url}/api/v1/namespaces`, 'POST', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-watch' } });
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 500; i++) {
      await request(agent, `${url}/api/v1/namespaces/bench-watch/configmaps`, 'POST', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}` }, data: { sent: String(performance.timeOrigin + performance.now()) } });
      await new Promise((r) => setTimeout(r, 2));
    }
    await new Promise((r) => setTimeout(r, 200));
    for (const w of watchers) w.destroy();
    figures['watch_delivery_p50_ms'] = report.percentile(latencies, 50);
    figures['watch_delivery_p99_ms'] = report.percentile(latencies, 99);
    figures['watch_events_measured'] = latencies.length;

    // Listing 10k objects.
    await ask(child, { type: 'seed', count: 10_000, prefix: 'list', namespace: 'kube-public' }, 'seeded');
    const t0 = performance.now();
    const listed = await request(agent, `${url}/api/v1/namespaces/kube-public/configmaps`, 'GET');
    figures['list_10k_ms'] = performance.now() - t0;
    figures['list_10k_items'] = (JSON.parse(listed.text) as { items: unknown[] }).items.length;
    agent.destroy();
  } finally {
    await stopServer(child);
  }

  // RSS with 100k small objects, in a fresh server (short history so memory reflects objects).
  const big = await startServer({ DEVCLUSTER_HISTORY: '1000' });
  try {
    const before = await ask<{ rss: number }>(big.child, { type: 'rss' }, 'rss');
    await ask(big.child, { type: 'seed', count: 100_000, prefix: 'mem', namespace: 'default' }, 'seeded');
    const after = await ask<{ rss: number }>(big.child, { type: 'rss' }, 'rss');
    figures['rss_idle_mb'] = before.rss / 1048576;
    figures['rss_100k_objects_mb'] = after.rss / 1048576;
  } finally {
    await stopServer(big.child);
  }
  return {
    name: 'devcluster',
    figures,
    targets: {
      merge_patches_per_s_8_clients: { min: 3000 },
      watch_delivery_p99_ms: { max: 5 },
      rss_100k_objects_mb: { max: 600 },
    },
  };
}
