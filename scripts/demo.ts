/**
 * `npm run demo`: the main job on a fresh machine. Starts the embedded devcluster with the Kopf
 * example CRD, applies the reference object with kubectl, and shows what a client sees.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DevCluster } from '../devcluster/testing.js';

const root = path.resolve(import.meta.dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-demo-'));
const say = (text: string): void => { process.stdout.write(`\n== ${text}\n`); };

const cluster = await DevCluster.start();
try {
  await cluster.load(path.join(root, 'fixtures/crds/kopfexamples.yaml'));
  const kubeconfig = cluster.writeKubeconfig(path.join(work, 'kubeconfig'));
  say(`devcluster at ${cluster.url}; kubeconfig ${kubeconfig}`);
  // Asynchronous on purpose: the devcluster serves from this very process.
  const run = promisify(execFile);
  const kubectl = async (...args: string[]): Promise<string> =>
    (await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', path.join(work, 'cache'), ...args], { encoding: 'utf8' })).stdout;
  say('kubectl apply -f fixtures/objects/kopf-example-1.yaml');
  process.stdout.write(await kubectl('apply', '-f', path.join(root, 'fixtures/objects/kopf-example-1.yaml')));
  say('kubectl get kopfexamples');
  process.stdout.write(await kubectl('get', 'kopfexamples'));
  say('kubectl get kex kopf-example-1 -o yaml');
  process.stdout.write(await kubectl('get', 'kex', 'kopf-example-1', '-o', 'yaml'));
  say('API requests served, by verb and resource');
  process.stdout.write(`${JSON.stringify(cluster.requests.counts((r) => r.resource !== undefined), null, 2)}\n`);
} finally {
  await cluster.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
