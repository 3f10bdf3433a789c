/**
 * A writer in its own process for the watch-latency benchmark (`devcluster.ts`). Like a controller
 * that writes while other clients watch, it creates ConfigMaps one after another over a keep-alive
 * connection, each stamped with its send time in epoch milliseconds (comparable across processes on
 * one machine), so the watchers' process measures delivery without sharing its event loop with
 * the writer's requests.
 */
import * as http from 'node:http';

/**
 * What the parent asks for: `count` creates in `namespace`, `gapMs` apart, after `warmup` unstamped
 * ones (the watchers skip them) so that neither this process nor the server measures its first,
 * not yet optimised requests.
 */
export interface WriteJob {
  type: 'write';
  url: string;
  namespace: string;
  count: number;
  gapMs: number;
  warmup: number;
}

function post(agent: http.Agent, url: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function write(job: WriteJob): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = `${job.url}/api/v1/namespaces/${job.namespace}/configmaps`;
  for (let i = 0; i < job.warmup; i++) {
    const status = await post(agent, url, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `warmup-${i}` }, data: { warmup: 'yes' } });
    if (status !== 201) throw new Error(`create failed: ${status}`);
    await new Promise((r) => setTimeout(r, job.gapMs));
  }
  for (let i = 0; i < job.count; i++) {
    const sent = performance.timeOrigin + performance.now();
    const status = await post(agent, url, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}` }, data: { sent: String(sent) } });
    if (status !== 201) throw new Error(`create failed: ${status}`);
    await new Promise((r) => setTimeout(r, job.gapMs));
  }
  agent.destroy();
}

process.on('message', (m: WriteJob) => {
  if (m.type !== 'write') return;
  write(m).then(
    () => process.send?.({ type: 'written' }),
    (err: unknown) => {
      process.send?.({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
    },
  );
});
process.send?.({ type: 'ready' });
