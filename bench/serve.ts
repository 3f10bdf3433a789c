/**
 * A devcluster in its own process for benchmarks: started by the parent with IPC, it reports its
 * URL, answers `rss` queries, seeds objects through its store on request, and stops on `stop`.
 */
import * as path from 'node:path';
import { DevCluster } from '../devcluster/testing.js';

type Message = { type: 'rss' } | { type: 'stop' } | { type: 'seed'; count: number; prefix: string; namespace: string } | { type: 'counts' };

const cluster = await DevCluster.start({ tls: false, historyLimit: Number(process.env['DEVCLUSTER_HISTORY'] ?? 10_000) });
cluster.requests.keepBodies = false;
await cluster.load(path.resolve(import.meta.dirname, '../fixtures/crds/kopfexamples.yaml'));
await cluster.load(path.resolve(import.meta.dirname, '../fixtures/crds/widgets.yaml'));
const send = (m: unknown): void => { process.send?.(m); };
send({ type: 'ready', url: cluster.url });
process.on('message', (m: Message) => {
  void (async () => {
    if (m.type === 'rss') {
      globalThis.gc?.();
      send({ type: 'rss', rss: process.memoryUsage().rss });
    } else if (m.type === 'seed') {
      for (let i = 0; i < m.count; i++) {
        await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${m.prefix}-${i}`, namespace: m.namespace, labels: { bench: 'yes' } }, data: { key: `value-${i}` } }, { admission: false });
      }
      send({ type: 'seeded' });
    } else if (m.type === 'counts') {
      send({ type: 'counts', counts: cluster.requests.counts((r) => r.resource !== undefined), total: cluster.requests.all.length });
    } else if (m.type === 'stop') {
      await cluster.stop();
      process.exit(0);
    }
  })();
});
