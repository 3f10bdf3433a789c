/**
 * R-CLIENT-504: `@kubernetes/client-node` is loaded only when asked for. A started operator — its
 * login, discovery, watches and a handler run — has not loaded it; the first `kubeConfig()` does.
 * Proved in a child process, from its module graph: a resolve hook reports every module of the
 * package resolved, and the process prints what it saw before and after `kubeConfig()`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../../devcluster/testing.js';
import { tempDir } from '../../../support/cluster.js';
import * as fx from '../../../support/operators.js';
import { childEnv, run } from '../../../support/processes.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');

/** Registers a resolve hook that posts every resolved URL of client-node to the main thread (`globalThis.clientNodeModules`). */
const HOOKS = `
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const seen = (globalThis.clientNodeModules = []);
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => seen.push(url));
port1.unref();
const hook = [
  'let port;',
  'export function initialize(data) { port = data.port; }',
  'export async function resolve(specifier, context, next) {',
  '  const resolved = await next(specifier, context);',
  "  if (resolved.url.includes('/@kubernetes/client-node/')) port.postMessage(resolved.url);",
  '  return resolved;',
  '}',
].join('\\n');
register('data:text/javascript,' + encodeURIComponent(hook), { data: { port: port2 }, transferList: [port2] });
`;

/** The operator: started, logged in, a handler run for an object; then `kubeConfig()`. */
const SCENARIO = `
import { kubeConfig } from ${JSON.stringify(path.join(ROOT, 'runtime/clientnode.ts'))};
import { connect, operator, on, OperatorRegistry } from ${JSON.stringify(path.join(ROOT, 'runtime/index.ts'))};

const seen = (globalThis as unknown as { clientNodeModules: string[] }).clientNodeModules;
const kubeconfig = process.env['TEST_KUBECONFIG']!;
const registry = new OperatorRegistry();
let handled!: () => void;
const ran = new Promise<void>((resolve) => { handled = resolve; });
on.create(['kopf.dev', 'v1', 'kopfexamples'], { registry }, function create_fn() { handled(); });
const stop = new AbortController();
const running = operator({ registry, kubeconfig, clusterwide: true, standalone: true, stopFlag: stop.signal, handleSignals: false });
const client = await connect({ kubeconfig });
await client.create({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true } as never, { metadata: { name: 'probe', namespace: 'default' }, spec: {} } as never);
await ran;
const before = [...seen];
await kubeConfig(client);
// The resolve hook reports from its own thread: wait for its report to arrive.
while (seen.length === before.length) await new Promise((resolve) => setImmediate(resolve));
console.log('RESULT ' + JSON.stringify({ before, after: seen.length }));
stop.abort();
await running;
await client.close();
`;

let cluster: DevCluster;
let kubeconfig: string;
let dir: string;

beforeAll(async () => {
  cluster = await fx.startCluster();
  dir = tempDir('kopf-clientnode-loading-');
  kubeconfig = cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
  fs.writeFileSync(path.join(dir, 'hooks.mjs'), HOOKS);
  fs.writeFileSync(path.join(dir, 'scenario.ts'), SCENARIO);
});
afterAll(async () => {
  await cluster?.stop();
});

describe('R-CLIENT-504 client-node is loaded only when asked for', () => {
  it('R-CLIENT-504 a started operator that ran a handler has not loaded @kubernetes/client-node; kubeConfig() loads it', async () => {
    const args = ['--import', path.join(dir, 'hooks.mjs'), '--import', 'tsx', path.join(dir, 'scenario.ts')];
    const finished = await run(process.execPath, args, { cwd: ROOT, env: childEnv({ TEST_KUBECONFIG: kubeconfig }), timeoutMs: 50_000 });
    const line = finished.output.split('\n').find((text) => text.startsWith('RESULT '));
    expect(line, finished.output).toBeDefined();
    const result = JSON.parse(line!.slice('RESULT '.length)) as { before: string[]; after: number };
    expect(result.before).toEqual([]);
    expect(result.after).toBeGreaterThan(0);
    expect(finished.code, finished.output).toBe(0);
  }, 60_000);
});
