/**
 * Security probe of the devcluster (issue 33, item 12 and the RBAC authorizer of item 1): what a
 * plain-HTTP devcluster answers to requests a web page could send (a rebound `Host`, a foreign
 * `Origin`), whether the devcluster starts inside a (simulated) pod, and whether a service
 * account is held to its Role when RBAC is enforced — plus what authorization costs with many
 * RBAC objects. Figures are counts of requests answered or refused, and a latency.
 *
 * Written against the public surface only (options, HTTP, TokenRequest, the CLI), so the same
 * probe runs against older code for a before figure: there, unknown options are ignored.
 *
 * Options: `--requests N` per case (default 20), `--bindings N` RBAC objects for the cost figure
 * (default 1000).
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { DevCluster } from '../../devcluster/testing.js';
import type * as report from '../report.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function option(args: readonly string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
}

/** Status of one GET with the given headers (Host included) over plain HTTP. */
function status(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

async function count(n: number, one: () => Promise<number>, ok: (code: number) => boolean): Promise<number> {
  let hits = 0;
  for (let i = 0; i < n; i++) if (ok(await one())) hits++;
  return hits;
}

/** Host/Origin: how many of `n` requests each kind of sender gets answered (2xx). */
async function hostFigures(n: number): Promise<Record<string, number>> {
  const cluster = await DevCluster.start({ tls: false });
  try {
    const url = `${cluster.url}/api/v1/namespaces`;
    const auth = { authorization: `Bearer ${cluster.token}` };
    const answered = (code: number): boolean => code >= 200 && code < 300;
    return {
      rebound_host_answered: await count(n, () => status(url, { ...auth, host: `rebound.example:${cluster.port}` }), answered),
      foreign_origin_answered: await count(n, () => status(url, { ...auth, origin: 'http://evil.example' }), answered),
      loopback_answered: await count(n, () => status(url, auth), answered),
    };
  } finally {
    await cluster.stop();
  }
}

/**
 * Starts the command line from the sources in a fake pod (`KUBERNETES_SERVICE_HOST` set); 1 when
 * it started a devcluster (it said so), 0 when it refused. Killed either way.
 */
function startsInPod(args: string[], started: RegExp): Promise<number> {
  const env = { ...process.env, KUBERNETES_SERVICE_HOST: '10.96.0.1' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probe-pod-'));
  const proc = child.spawn(
    process.execPath,
    ['--conditions=kopf-gen-source', '--import', import.meta.resolve('tsx'), path.join(ROOT, 'scripts/kopf-gen.ts'), ...args],
    {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let text = '';
  return new Promise((resolve) => {
    const settle = (value: number): void => {
      clearTimeout(timer);
      if (proc.exitCode === null) proc.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
      resolve(value);
    };
    const timer = setTimeout(() => settle(0), 30_000);
    const onData = (chunk: Buffer): void => {
      text += chunk.toString();
      if (started.test(text)) settle(1);
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', () => settle(started.test(text) ? 1 : 0));
  });
}

interface Json {
  [key: string]: unknown;
}

async function request(cluster: DevCluster, method: string, pathname: string, token: string, body?: Json): Promise<{ status: number; json: Json }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body) headers['content-type'] = 'application/json';
  const res = await fetch(cluster.url + pathname, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
}

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/** RBAC: a service account with a Role in `apps`, asked `n` times in and out of it; then the cost with many bindings. */
async function rbacFigures(n: number, bindings: number): Promise<Record<string, number>> {
  const options = { tls: false, auth: 'enforced', authorization: 'rbac' } as Parameters<typeof DevCluster.start>[0];
  const cluster = await DevCluster.start(options);
  try {
    const admin = cluster.token;
    for (const ns of ['apps', 'other'])
      await request(cluster, 'POST', '/api/v1/namespaces', admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await request(cluster, 'POST', '/api/v1/namespaces/apps/serviceaccounts', admin, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'op' } });
    const issued = await request(cluster, 'POST', '/api/v1/namespaces/apps/serviceaccounts/op/token', admin, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    const token = String((issued.json['status'] as Json | undefined)?.['token'] ?? '');
    await request(cluster, 'POST', `${RBAC}/namespaces/apps/roles`, admin, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'cm' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
    });
    await request(cluster, 'POST', `${RBAC}/namespaces/apps/rolebindings`, admin, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'op-cm' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm' },
      subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'apps' }],
    });
    const list = (ns: string) => async () => (await request(cluster, 'GET', `/api/v1/namespaces/${ns}/configmaps`, token)).status;
    const figures: Record<string, number> = {
      sa_allowed_by_role: await count(n, list('apps'), (c) => c === 200),
      sa_allowed_outside_role: await count(n, list('other'), (c) => c === 200),
      sa_refused_outside_role: await count(n, list('other'), (c) => c === 403),
      anonymous_answered: await count(
        n,
        async () => (await fetch(`${cluster.url}/api/v1/namespaces`)).status,
        (c) => c === 200,
      ),
    };
    const timed = Math.max(n * 10, 100);
    const mean = async (): Promise<number> => {
      const started = performance.now();
      await count(timed, list('apps'), (c) => c === 200);
      return (performance.now() - started) / timed;
    };
    figures['authorized_request_ms_few_bindings'] = await mean();
    // Many bindings naming other subjects: authorization must not slow down with them.
    for (let i = 0; i < bindings; i++) {
      await cluster.store.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: `noise-${i}`, namespace: i % 2 ? 'apps' : 'other' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm' },
        subjects: [{ kind: 'User', name: `user-${i}` }],
      });
    }
    figures['authorized_request_ms'] = await mean();
    return figures;
  } finally {
    await cluster.stop();
  }
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const n = option(args, '--requests', 20);
  const bindings = option(args, '--bindings', 1000);
  const figures: Record<string, number> = {
    ...(await hostFigures(n)),
    devcluster_command_starts_in_pod: await startsInPod(['devcluster', '--no-tls', '--kubeconfig', 'kubeconfig'], /devcluster is serving at/),
    run_dev_cluster_starts_in_pod: await startsInPod(['run', '--dev-cluster', '-A', 'missing-operator.ts'], /started the devcluster at/),
    ...(await rbacFigures(n, bindings)),
  };
  return {
    name: 'security: devcluster',
    figures,
    targets: {
      rebound_host_answered: { max: 0 },
      foreign_origin_answered: { max: 0 },
      loopback_answered: { min: n },
      devcluster_command_starts_in_pod: { max: 0 },
      run_dev_cluster_starts_in_pod: { max: 0 },
      sa_allowed_by_role: { min: n },
      sa_allowed_outside_role: { max: 0 },
      sa_refused_outside_role: { min: n },
      anonymous_answered: { max: 0 },
      authorized_request_ms: { max: 10 },
      authorized_request_ms_few_bindings: { max: 10 },
    },
    notes: {
      requests: `${n} requests per case over loopback; answered = 2xx`,
      rebound_host_answered: 'plain-HTTP devcluster, admin token, Host: rebound.example:<port> (a DNS-rebinding page)',
      foreign_origin_answered: 'plain-HTTP devcluster, admin token, Origin: http://evil.example',
      starts_in_pod: 'kopf-gen devcluster / kopf-gen run --dev-cluster from the sources with KUBERNETES_SERVICE_HOST set: 1 = it started a devcluster',
      sa: "a service account's TokenRequest token listing ConfigMaps in the namespace of its Role (apps) and in another (other), authorization: rbac",
      authorized_request_ms_few_bindings: 'the same before they were added (the HTTP round trip is most of it)',
      authorized_request_ms: `mean time of an authorized list by the service account over HTTP after ${bindings} RoleBindings of other subjects were added`,
    },
  };
}
