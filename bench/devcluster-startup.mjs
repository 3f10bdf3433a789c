// One start-up of the compiled devcluster, measured in a fresh process (`bench/devcluster.ts` runs
// it several times): the time `DevCluster.start()` takes, RSS and heap once it has started, and the
// time and RSS of the first write of a built-in workload kind (a Job), the first request that reads
// the kind's upstream schemas. Prints one JSON line.
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const { DevCluster } = await import(pathToFileURL(path.join(root, 'dist', 'testing', 'index.js')).href);
const mb = (bytes) => bytes / 1048576;
const t0 = performance.now();
const cluster = await DevCluster.start({ tls: false });
const startMs = performance.now() - t0;
globalThis.gc?.();
const started = process.memoryUsage();
const job = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'first' },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
};
const t1 = performance.now();
const r = await fetch(`${cluster.url}/apis/batch/v1/namespaces/default/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(job) });
const firstJobMs = performance.now() - t1;
globalThis.gc?.();
const after = process.memoryUsage();
await cluster.stop();
console.log(
  JSON.stringify({ startMs, rssMb: mb(started.rss), heapMb: mb(started.heapUsed), firstJobStatus: r.status, firstJobMs, rssAfterJobMb: mb(after.rss) }),
);
