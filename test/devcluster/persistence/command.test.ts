/**
 * `kopf-gen devcluster --state-dir DIR [--reset]` (D-PERSIST-301, D-PERSIST-307), run as a child
 * process from the sources and stopped with SIGTERM as a user stops it with Ctrl+C: a second run
 * serves what the first one was given; `--reset` starts empty.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import * as devclusterCommand from '../../../cli/devcluster.js';
import * as pods from '../../../cli/pods.js';
import { tempDir } from '../../support/cluster.js';
import { eventually } from '../../support/waiting.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const IN_A_POD = fs.existsSync(pods.SERVICE_ACCOUNT_TOKEN);

/** Runs `kopf-gen devcluster ARGS` until it serves; returns its server, token, output and a stop. */
async function serve(args: string[], kubeconfig: string): Promise<{ server: string; token: string; text: string; stop(): Promise<void> }> {
  const env = { ...process.env };
  delete env['KUBERNETES_SERVICE_HOST'];
  const proc = child.spawn(
    process.execPath,
    [
      '--conditions=kopf-gen-source',
      '--import',
      'tsx',
      path.join(ROOT, 'scripts/kopf-gen.ts'),
      'devcluster',
      '--no-tls',
      '--kubeconfig',
      kubeconfig,
      ...(IN_A_POD ? ['--dev-cluster-in-pod'] : []),
      ...args,
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  proc.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  proc.stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const killer = setTimeout(() => proc.kill('SIGKILL'), 40_000);
  await eventually(() => text.includes('press Ctrl+C to stop') || proc.exitCode !== null, `the devcluster to serve; it said: ${text}`, 30_000);
  if (!text.includes('press Ctrl+C to stop')) throw new Error(`the devcluster exited: ${text}`);
  const config = YAML.parse(fs.readFileSync(kubeconfig, 'utf8'));
  return {
    server: config.clusters[0].cluster.server,
    token: config.users[0].user.token,
    text,
    async stop() {
      proc.kill('SIGTERM');
      const code = await exited;
      clearTimeout(killer);
      expect(code).toBe(0);
    },
  };
}

describe('kopf-gen devcluster --state-dir', () => {
  it('D-PERSIST-307 --reset needs --state-dir', async () => {
    await expect(devclusterCommand.run({ port: '0', tls: false, kubeconfig: path.join(tempDir(), 'kubeconfig'), reset: true })).rejects.toThrow(
      '--reset needs --state-dir: it empties that folder',
    );
  });

  it('D-PERSIST-301 D-PERSIST-307 a second run serves the objects of the first; --reset starts empty', async () => {
    const dir = tempDir('kopf-state-cli-');
    const state = path.join(dir, 'state');
    const kubeconfig = path.join(dir, 'kubeconfig');
    const first = await serve(['--state-dir', state], kubeconfig);
    expect(first.text).toContain(`state: ${state} (new; --reset empties it)`);
    const created = await fetch(`${first.server}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { a: 'b' } }),
    });
    expect(created.status).toBe(201);
    await first.stop();

    const second = await serve(['--state-dir', state], kubeconfig);
    expect(second.text).toContain(`state: ${state} (objects kept from the last run; --reset empties it)`);
    const read = await fetch(`${second.server}/api/v1/namespaces/default/configmaps/kept`, { headers: { authorization: `Bearer ${second.token}` } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { data: unknown }).data).toEqual({ a: 'b' });
    await second.stop();

    const third = await serve(['--state-dir', state, '--reset'], kubeconfig);
    expect(third.text).toContain(`state: ${state} (new; --reset empties it)`);
    const gone = await fetch(`${third.server}/api/v1/namespaces/default/configmaps/kept`, { headers: { authorization: `Bearer ${third.token}` } });
    expect(gone.status).toBe(404);
    await third.stop();
  }, 120_000);
});
