/**
 * The generated RBAC, enforced (R-SEC-3, R-SEC-4, R-SEC-1, R-SEC-2): a project generated
 * from the kopfexamples CRD has its deploy/rbac.yaml applied to a devcluster in RBAC mode
 * (D-AUTH-16); the operator then runs in this process, over real HTTP on loopback, with a token of
 * the project's service account. With the rules as generated it handles creations, updates and
 * deletions — PATCH responses lost on the way, so that the re-reads run — and its Lease in its own
 * namespace (a `--namespace apps --lease` project), with no 403 at all. With `get` taken out of
 * the role, the 403 is reported once, naming the verb, the resource and the service account, and
 * is never retried; every handler still runs once.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import type { DevCluster } from '../../devcluster/testing.js';
import * as generator from '../../generator/index.js';
import type * as credentials from '../../runtime/cogs/client/credentials.js';
import { OperatorRegistry } from '../../runtime/core/intents/registry.js';
import * as running from '../../runtime/core/reactor/running.js';
import { on } from '../../runtime/on.js';
import * as fx from '../support/operators.js';
import { eventually } from '../support/waiting.js';

const CRD_FILE = path.resolve(__dirname, '../../fixtures/crds/kopfexamples.yaml');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-rbac-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

interface Document {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: { apiGroups?: string[]; resources?: string[]; nonResourceURLs?: string[]; verbs: string[] }[];
}

/** Generates a project and returns its name (namespace and service account) and RBAC documents. */
async function project(name: string, options: { namespaces?: string[]; lease?: string } = {}): Promise<{ kube: string; rbac: Document[] }> {
  const out = path.join(root, name);
  await generator.init({ crds: [CRD_FILE], out, ...options });
  const rbac = YAML.parseAllDocuments(fs.readFileSync(path.join(out, 'deploy/rbac.yaml'), 'utf8')).map((doc) => doc.toJS() as Document);
  return { kube: name, rbac };
}

/** The documents with `get` removed from the rules on kopfexamples. */
function withoutGet(rbac: readonly Document[]): Document[] {
  return rbac.map((doc) => ({
    ...doc,
    ...(doc.rules
      ? { rules: doc.rules.map((rule) => (rule.resources?.includes('kopfexamples') ? { ...rule, verbs: rule.verbs.filter((verb) => verb !== 'get') } : rule)) }
      : {}),
  }));
}

interface Handled {
  readonly created: string[];
  readonly updated: string[];
  readonly deleted: string[];
}

/** Create, update and delete handlers recording the objects they ran for. */
function handlers(): { registry: OperatorRegistry; handled: Handled } {
  const registry = new OperatorRegistry();
  const handled: Handled = { created: [], updated: [], deleted: [] };
  on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
    handled.created.push(name);
    return { created: true };
  });
  on.update('kopfexamples', { registry }, function update_fn({ name }: { name: string }) {
    handled.updated.push(name);
  });
  on.delete('kopfexamples', { registry }, function delete_fn({ name }: { name: string }) {
    handled.deleted.push(name);
  });
  return { registry, handled };
}

/** Runs an operator as the service account `sa/sa`, over HTTP, as `kopf-gen run` would in the project's pod. */
async function startAs(
  cluster: DevCluster,
  sa: string,
  registry: OperatorRegistry,
  scope: { namespaces?: string[]; lease?: string; consistencyTimeout?: number },
): Promise<{ stop: () => Promise<void>; error: () => unknown }> {
  const token = cluster.auth.serviceAccountToken({ namespace: sa, name: sa });
  on.login({ registry }, function login_fn(): credentials.ConnectionInfo {
    return { server: cluster.url, token };
  });
  const settings = fx.fastSettings((s) => {
    s.posting.enabled = true;
    if (scope.consistencyTimeout !== undefined) s.persistence.consistencyTimeout = scope.consistencyTimeout;
  });
  const stop = new AbortController();
  const spawned = await running.spawnTasks({
    registry,
    settings,
    stopFlag: stop.signal,
    ...(scope.namespaces ? { namespaces: scope.namespaces } : { clusterwide: true }),
    ...(scope.lease ? { leaseName: scope.lease, leaseNamespace: sa } : { standalone: true }),
  });
  let error: unknown;
  const done = running.runTasks(spawned).catch((e: unknown) => {
    error = e;
  });
  return {
    error: () => error,
    stop: async () => {
      stop.abort();
      await done;
    },
  };
}

/** Creates, updates and deletes `count` objects in `namespace`, waiting for each step to be handled. */
async function exercise(cluster: DevCluster, namespace: string, count: number, handled: Handled, logs: fx.LogCapture): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `kex-${i}`);
  for (const name of names) await cluster.store.create(fx.kopfExample(name, { metadata: { namespace } }));
  await eventually(() => names.every((name) => handled.created.includes(name)), 'the creations handled', 30_000);
  for (const name of names) await fx.atRest(logs, name, { namespace });
  for (const name of names) await cluster.store.patch(fx.KEX, name, { spec: { field: 'changed' } }, { namespace });
  await eventually(() => names.every((name) => handled.updated.includes(name)), 'the updates handled', 30_000);
  for (const name of names) await fx.atRest(logs, name, { namespace });
  for (const name of names) await cluster.store.delete(fx.KEX, name, { namespace });
  await eventually(() => names.every((name) => cluster.store.get(fx.KEX, name, namespace) === undefined), 'the objects gone', 30_000);
  for (const name of names) await fx.atRest(logs, name, { namespace, gone: true });
  return names;
}

const forbiddenLines = (logs: fx.LogCapture): string[] =>
  logs.records.filter((r) => /forbidden|HTTP 403/i.test(r.line) && r.level >= fx.INFO).map((r) => r.line);

describe('R-SEC-3 the generated RBAC on an enforcing devcluster', () => {
  let cluster: DevCluster;
  const logs = new fx.LogCapture();
  beforeAll(async () => {
    cluster = await fx.startCluster({ authorization: 'rbac' });
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  afterEach(() => {
    logs.uninstall();
    cluster.faults.clear();
  });

  it('R-SEC-3 R-PATCH-9 creations, updates and deletions with lost PATCH responses: every handler once, the re-reads allowed, no 403', async () => {
    const { kube, rbac } = await project('kex-operator');
    await cluster.load(rbac as never);
    logs.install();
    const { registry, handled } = handlers();
    const op = await startAs(cluster, kube, registry, {});
    const since = cluster.requests.all.length;
    // Every third PATCH of the objects is stored and its response lost: the operator re-reads (GET).
    cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', probability: 0.34, action: { reset: 'after' } });
    const names = await exercise(cluster, 'default', 6, handled, logs);
    await op.stop();

    expect(op.error()).toBeUndefined();
    for (const list of [handled.created, handled.updated, handled.deleted]) expect([...list].sort()).toEqual(names);
    const requests = cluster.requests.all.slice(since);
    expect(requests.filter((r) => r.code === 403).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    // The re-reads happened, as the service account, and were allowed.
    expect(requests.filter((r) => r.method === 'GET' && r.verb === 'get' && r.resource === 'kopfexamples' && r.code === 200).length).toBeGreaterThan(0);
    expect(new Set(requests.filter((r) => r.resource === 'kopfexamples').map((r) => r.user))).toEqual(new Set([`system:serviceaccount:${kube}:${kube}`]));
    expect(forbiddenLines(logs)).toEqual([]);
  }, 120_000);

  it('R-SEC-1 R-SEC-2 without get in the role: the 403 is reported once with verb, resource and user, never retried; the handlers still run once', async () => {
    const { kube, rbac } = await project('kex-noget');
    await cluster.load(withoutGet(rbac) as never);
    logs.install();
    const { registry, handled } = handlers();
    // Without `get`, nothing can tell a write whose response was lost from one never stored: the
    // write is resent. Were every attempt's response lost, the write would fail and its handler run
    // again (at least once, R-SEC-2), and an event still stale at the consistency deadline is
    // handled as it is. What this test proves is the resend, so the losses are deterministic — the
    // 1st, 4th and 7th PATCH of each object, never two in a row — and the deadline lies beyond any
    // late event on a busy machine.
    const op = await startAs(cluster, kube, registry, { consistencyTimeout: 60 });
    const since = cluster.requests.all.length;
    for (let i = 0; i < 6; i++) {
      for (const skip of [0, 2, 4])
        cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', name: `kex-${i}`, skip, times: 1, action: { reset: 'after' } });
    }
    const names = await exercise(cluster, 'default', 6, handled, logs);
    await op.stop();

    expect(op.error()).toBeUndefined();
    for (const list of [handled.created, handled.updated, handled.deleted]) expect([...list].sort()).toEqual(names);
    const requests = cluster.requests.all.slice(since);
    const denied = requests.filter((r) => r.code === 403);
    expect(denied.length).toBeGreaterThan(0);
    expect(denied.every((r) => r.method === 'GET' && r.verb === 'get' && r.resource === 'kopfexamples')).toBe(true);
    // Not retried: a forbidden GET of an object is never followed by another GET of it before some
    // other request of it (the client's retries would be GET after GET).
    for (const name of names) {
      const ofObject = requests.filter((r) => r.resource === 'kopfexamples' && r.name === name);
      const repeated = ofObject.filter((r, i) => r.code === 403 && ofObject[i + 1]?.method === 'GET' && ofObject[i + 1]?.verb === 'get');
      expect(repeated.map((r) => r.path)).toEqual([]);
    }
    expect(forbiddenLines(logs)).toEqual([
      `Forbidden (HTTP 403): user "system:serviceaccount:${kube}:${kube}" may not get "kopfexamples.kopf.dev" in namespace "default": GET ${cluster.url}${denied[0]!.path} — the operator's RBAC lacks this permission; not retried. Grant it (deploy/rbac.yaml of a generated project). Reported once per verb, resource and namespace.`,
    ]);
  }, 120_000);

  it('R-SEC-4 a --namespace apps --lease project elects its leader on its Lease in its own namespace and serves apps, with no 403', async () => {
    const { kube, rbac } = await project('kex-leased', { namespaces: ['apps'], lease: 'kex-leased' });
    await cluster.load([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }]);
    await cluster.load(rbac as never);
    logs.install();
    const { registry, handled } = handlers();
    const since = cluster.requests.all.length;
    const op = await startAs(cluster, kube, registry, { namespaces: ['apps'], lease: 'kex-leased' });
    await eventually(() => logs.grep('Became the leader').length > 0, 'the leadership', 30_000);
    const names = await exercise(cluster, 'apps', 2, handled, logs);
    await op.stop();

    expect(op.error()).toBeUndefined();
    expect([...handled.created].sort()).toEqual(names);
    const lease = cluster.store.get({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases' }, 'kex-leased', kube) as { spec?: unknown } | undefined;
    expect(lease).toBeDefined();
    const requests = cluster.requests.all.slice(since);
    expect(requests.filter((r) => r.code === 403).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(forbiddenLines(logs)).toEqual([]);
  }, 120_000);
});
