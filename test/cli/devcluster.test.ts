/**
 * The `kopf-gen devcluster` command: its refusal to start inside a pod (D-SEC-2) and, run as a
 * child process from the sources, the `--rbac` and `--no-tls --allow-host` options (D-AUTH-16,
 * D-SEC-1), stopped with SIGTERM.
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import * as devclusterCommand from '../../cli/devcluster.js';
import * as cli from '../../cli/main.js';
import * as pods from '../../cli/pods.js';
import { eventually } from '../support/waiting.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const IN_A_POD = fs.existsSync(pods.SERVICE_ACCOUNT_TOKEN);

function output() {
  let text = '';
  const add = (t: string): void => {
    text += t;
  };
  return { out: add, err: add, stdin: async () => '', text: () => text };
}

describe('pod detection', () => {
  it('D-SEC-2 KUBERNETES_SERVICE_HOST or a mounted service-account token mark a pod', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-pod-'));
    const token = path.join(dir, 'token');
    expect(pods.podEvidence({ env: {}, tokenPath: token })).toBeUndefined();
    expect(pods.podEvidence({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, tokenPath: token })).toBe('KUBERNETES_SERVICE_HOST is set');
    fs.writeFileSync(token, 'x');
    expect(pods.podEvidence({ env: {}, tokenPath: token })).toBe(`a service-account token is mounted at ${token}`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('D-SEC-2 `kopf-gen devcluster` refuses to start in a pod with one line naming the evidence and the flag', async () => {
    const kubeconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-pod-')), 'kubeconfig');
    await expect(
      devclusterCommand.run({ port: '0', tls: true, kubeconfig }, { env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, tokenPath: '/nonexistent/token' }),
    ).rejects.toThrow(
      'refusing to start the devcluster inside a Kubernetes pod (KUBERNETES_SERVICE_HOST is set): it is a development server that ' +
        'trusts loopback and serves an API beside the real one; pass --dev-cluster-in-pod to start it anyway',
    );
    expect(fs.existsSync(kubeconfig)).toBe(false);
  });

  it('D-SEC-2 `kopf-gen devcluster --help` lists --rbac, --allow-host and --dev-cluster-in-pod with why', async () => {
    const out = output();
    expect(await cli.main(['devcluster', '--help'], out)).toBe(0);
    expect(out.text()).toContain('--rbac');
    expect(out.text()).toContain('--allow-host <host...>');
    expect(out.text().replace(/\s+/g, ' ')).toContain(
      '--dev-cluster-in-pod start even inside a Kubernetes pod (refused by default: a development server that trusts loopback must not run beside a real cluster)',
    );
  });
});

/** Runs `kopf-gen devcluster` from the sources; resolves with its output so far once it serves (or exits). */
function spawnDevcluster(args: string[], env: NodeJS.ProcessEnv) {
  const proc = child.spawn(
    process.execPath,
    ['--conditions=kopf-gen-source', '--import', 'tsx', path.join(ROOT, 'scripts/kopf-gen.ts'), 'devcluster', ...args],
    {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let text = '';
  proc.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  proc.stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, exited, text: () => text };
}

describe('kopf-gen devcluster as a process', () => {
  const cleanEnv = (): NodeJS.ProcessEnv => {
    const env = { ...process.env };
    delete env['KUBERNETES_SERVICE_HOST'];
    return env;
  };

  it('D-SEC-2 exits 1 with one line when started in a pod', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-devcluster-'));
    const run = spawnDevcluster(['--kubeconfig', path.join(dir, 'kubeconfig')], { ...cleanEnv(), KUBERNETES_SERVICE_HOST: '10.96.0.1' });
    const timer = setTimeout(() => run.proc.kill('SIGKILL'), 25_000);
    const code = await run.exited;
    clearTimeout(timer);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(run.text()).toBe(
      'kopf-gen: refusing to start the devcluster inside a Kubernetes pod (KUBERNETES_SERVICE_HOST is set): it is a development server that ' +
        'trusts loopback and serves an API beside the real one; pass --dev-cluster-in-pod to start it anyway\n',
    );
  }, 30_000);

  it('D-AUTH-16 D-SEC-1 --rbac --no-tls --allow-host: tokens required, RBAC decides, foreign hosts refused but the allowed one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-devcluster-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    const args = ['--rbac', '--no-tls', '--allow-host', 'dev.example', '--kubeconfig', kubeconfig, ...(IN_A_POD ? ['--dev-cluster-in-pod'] : [])];
    const run = spawnDevcluster(args, cleanEnv());
    try {
      await eventually(() => run.text().includes('press Ctrl+C to stop'), `the devcluster to serve; it said: ${run.text()}`, 30_000);
      expect(run.text()).toMatch(/^devcluster is serving at http:\/\/127\.0\.0\.1:\d+ \(RBAC enforced: the kubeconfig is the admin, in system:masters\)\n/);
      const config = YAML.parse(fs.readFileSync(kubeconfig, 'utf8'));
      const server: string = config.clusters[0].cluster.server;
      const token: string = config.users[0].user.token;
      expect((await fetch(`${server}/api/v1/namespaces`)).status).toBe(401);
      const asAdmin = { authorization: `Bearer ${token}` };
      expect((await fetch(`${server}/api/v1/namespaces`, { headers: asAdmin })).status).toBe(200);
      const roles = (await (await fetch(`${server}/apis/rbac.authorization.k8s.io/v1/clusterroles`, { headers: asAdmin })).json()) as { items: unknown[] };
      expect(roles.items).toHaveLength(4);
      // A Host a web page would send after DNS rebinding, and one the user allowed.
      const port = new URL(server).port;
      const http = await import('node:http');
      const status = (host: string): Promise<number> =>
        new Promise((resolve, reject) => {
          http
            .get(`${server}/version`, { headers: { ...asAdmin, host: `${host}:${port}` } }, (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            })
            .on('error', reject);
        });
      expect(await status('rebound.example')).toBe(403);
      expect(await status('dev.example')).toBe(200);
      run.proc.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(run.text()).toContain('received SIGTERM, stopping the devcluster');
    } finally {
      if (run.proc.exitCode === null) run.proc.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
