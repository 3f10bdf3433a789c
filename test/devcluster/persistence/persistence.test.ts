/**
 * The devcluster's state folder (D-PERSIST-301..308): a cluster stopped and started again on the
 * same folder serves the same objects, with their uids, resourceVersions and finalizers, to
 * @kubernetes/client-node and kubectl; revisions continue and older ones are answered 410; a torn
 * last journal line is ignored, a damaged or foreign folder refused with a message naming the way
 * out; the folder is locked while in use; and it can be reset.
 */
import * as k8s from '@kubernetes/client-node';
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import { DevCluster, type DevClusterOptions } from '../../../devcluster/testing.js';
import * as format from '../../../devcluster/persistence/format.js';
import { tempDir } from '../../support/cluster.js';
import { openWatch } from '../../support/watchstream.js';
import * as kubectl from '../clients/kubectl.js';

const WIDGETS_CRD = path.resolve(import.meta.dirname, '../../../fixtures/crds/widgets.yaml');
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };

type Json = Record<string, any>;

const running: DevCluster[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
});

async function start(stateDir: string, options: DevClusterOptions = {}): Promise<DevCluster> {
  const cluster = await DevCluster.start({ stateDir, onWarning: () => {}, ...options });
  running.push(cluster);
  return cluster;
}

async function stop(cluster: DevCluster): Promise<void> {
  running.splice(running.indexOf(cluster), 1);
  await cluster.stop();
}

/** A cluster with a few objects of every sort, stopped; returns what it served. */
async function populated(dir: string): Promise<{ widget: Json; secret: Json; lease: Json; role: Json; revision: number }> {
  const cluster = await start(dir, { crds: [WIDGETS_CRD] });
  await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
  await cluster.store.create({ ...WIDGET, metadata: { name: 'kept', namespace: 'apps', finalizers: ['example.com/hold'] }, spec: { size: 3 } });
  await cluster.store.delete(WIDGET, 'kept', { namespace: 'apps' });
  const secret = await cluster.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'apps' }, data: { k: 'dg==' } });
  const lease = await cluster.store.create({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'leader', namespace: 'apps' },
    spec: { holderIdentity: 'me' },
  });
  const role = await cluster.store.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'reader', namespace: 'apps' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  });
  await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gone', namespace: 'apps' }, data: {} });
  await cluster.store.delete({ apiVersion: 'v1', kind: 'ConfigMap' }, 'gone', { namespace: 'apps' });
  await cluster.settle();
  const widget = cluster.store.get(WIDGET, 'kept', 'apps')!;
  const revision = cluster.revision;
  await stop(cluster);
  return { widget, secret, lease, role, revision };
}

function clientOf(cluster: DevCluster): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cluster.kubeconfig());
  return kc;
}

describe('a cluster restarted on its state folder', () => {
  it('D-PERSIST-301 serves every kept object again, with uid, resourceVersion, timestamps, finalizers and deletionTimestamp, to client-node', async () => {
    const dir = tempDir('kopf-state-');
    const before = await populated(dir);
    expect(before.widget['metadata']['deletionTimestamp']).toBeDefined();
    const cluster = await start(dir);
    const kc = clientOf(cluster);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const widget = (await custom.getNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: 'apps',
      plural: 'widgets',
      name: 'kept',
    })) as Json;
    for (const field of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'finalizers', 'generation']) {
      expect(widget['metadata'][field], field).toEqual(before.widget['metadata'][field]);
    }
    expect(widget['spec']).toEqual(before.widget['spec']);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const secret = await core.readNamespacedSecret({ name: 's', namespace: 'apps' });
    expect(secret.metadata?.uid).toBe(before.secret['metadata']['uid']);
    expect(secret.data).toEqual({ k: 'dg==' });
    const lease = await kc.makeApiClient(k8s.CoordinationV1Api).readNamespacedLease({ name: 'leader', namespace: 'apps' });
    expect(lease.metadata?.resourceVersion).toBe(before.lease['metadata']['resourceVersion']);
    const role = await kc.makeApiClient(k8s.RbacAuthorizationV1Api).readNamespacedRole({ name: 'reader', namespace: 'apps' });
    expect(role.rules).toEqual(before.role['rules']);
    await expect(core.readNamespacedConfigMap({ name: 'gone', namespace: 'apps' })).rejects.toMatchObject({ code: 404 });
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name).sort()).toEqual(['apps', 'default', 'kube-node-lease', 'kube-public', 'kube-system']);
  });

  it("D-PERSIST-301 serves the kept CRDs' types (discovery included) to kubectl before answering its first request", async () => {
    const dir = tempDir('kopf-state-');
    await populated(dir);
    const cluster = await start(dir);
    const binary = kubectl.requireBinary(kubectl.findKubectls()[1]!);
    const work = kubectl.makeWorkDir();
    const target = { kubeconfig: cluster.writeKubeconfig(path.join(work, 'kubeconfig')), workDir: work };
    const got = kubectl.expectSuccess(await kubectl.run(binary, target, ['get', 'widgets', '-n', 'apps', '-o', 'json']), 'kubectl get widgets');
    const items = (JSON.parse(got.stdout) as Json)['items'] as Json[];
    expect(items.map((i) => i['metadata']['name'])).toEqual(['kept']);
    const created = await kubectl.run(binary, target, ['create', '-f', '-', '-o', 'name'], {
      input: YAML.stringify({ ...WIDGET, metadata: { name: 'new', namespace: 'apps' }, spec: { size: 1 } }),
    });
    kubectl.expectSuccess(created, 'kubectl create a widget');
    expect(created.stdout.trim()).toBe('widget.example.com/new');
  });

  it('D-PERSIST-302 revisions continue above the last one kept, a deletion included, and stop() writes what is pending', async () => {
    const dir = tempDir('kopf-state-');
    const before = await populated(dir); // its last write was a deletion
    const cluster = await start(dir);
    expect(cluster.revision).toBe(before.revision);
    const created: Json = await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'next', namespace: 'apps' } });
    expect(Number(created['metadata']['resourceVersion'])).toBe(before.revision + 1);
    await stop(cluster);
    const again = await start(dir);
    expect((again.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'next', 'apps') as Json | undefined)?.['metadata']['resourceVersion']).toBe(
      String(before.revision + 1),
    );
  });

  it('D-PERSIST-302 a journal compacted into snapshots while the cluster serves restores the same objects', async () => {
    const dir = tempDir('kopf-state-');
    const cluster = await start(dir, { stateSnapshotEvery: 25 });
    for (let i = 0; i < 120; i++) {
      await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default' }, data: { i: String(i) } });
      if (i % 3 === 0) await cluster.store.delete({ apiVersion: 'v1', kind: 'ConfigMap' }, `cm-${i}`, { namespace: 'default' });
    }
    const expected = cluster.store.list({ apiVersion: 'v1', kind: 'ConfigMap' }, 'default');
    const revision = cluster.revision;
    await stop(cluster);
    const journals = fs.readdirSync(dir).filter((f) => format.journalSeq(f) !== undefined);
    expect(journals.length).toBe(1);
    const again = await start(dir);
    expect(again.store.list({ apiVersion: 'v1', kind: 'ConfigMap' }, 'default')).toEqual(expected);
    expect(again.revision).toBe(revision);
  });

  it('D-PERSIST-302 D-PERSIST-305 a process that exits without stop() still keeps its last writes and frees the folder', async () => {
    const dir = tempDir('kopf-state-');
    const script = path.join(dir, 'exits.mts');
    const testing = path.resolve(import.meta.dirname, '../../../devcluster/testing.ts');
    fs.writeFileSync(
      script,
      [
        `import { DevCluster } from ${JSON.stringify(testing)};`,
        `const cluster = await DevCluster.start({ stateDir: ${JSON.stringify(path.join(dir, 'state'))}, tls: false });`,
        "await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'last', namespace: 'default' } });",
        'process.exit(0);',
      ].join('\n'),
    );
    const run = child.spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(dir, 'state', format.LOCK))).toBe(false);
    const cluster = await start(path.join(dir, 'state'));
    expect(cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'last', 'default')).toBeDefined();
  });

  it('D-PERSIST-302 a watch from a revision older than the restored one is answered 410 Gone; from the restored one it sees new writes', async () => {
    const dir = tempDir('kopf-state-');
    const before = await populated(dir);
    const cluster = await start(dir);
    const headers = { authorization: `Bearer ${cluster.token}` };
    const old = await openWatch(`${cluster.url}/api/v1/namespaces/apps/secrets?watch=true&resourceVersion=${before.revision - 1}`, {
      headers,
      ca: cluster.caPem,
    });
    const gone = await old.next('the 410 of a watch from before the restart');
    old.close();
    expect(gone.type).toBe('ERROR');
    expect(gone.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    const current = await openWatch(`${cluster.url}/api/v1/namespaces/apps/secrets?watch=true&resourceVersion=${before.revision}`, {
      headers,
      ca: cluster.caPem,
    });
    await cluster.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'after', namespace: 'apps' } });
    const added = await current.next('the secret created after the restart');
    current.close();
    expect(added).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'after' } } });
  });

  it('D-PERSIST-303 a kubeconfig written before the restart keeps working when the port is the same', async () => {
    const dir = tempDir('kopf-state-');
    const first = await start(dir, { auth: 'enforced' });
    const port = first.port;
    const kubeconfigText = first.kubeconfig();
    await stop(first);
    await start(dir, { port, auth: 'enforced' });
    const kc = new k8s.KubeConfig();
    kc.loadFromString(kubeconfigText);
    const list = await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
    expect(list.items.length).toBe(4);
  });

  it('D-PERSIST-308 CRDs given at start over a kept state update the kept CRD of that name; its objects stay', async () => {
    const dir = tempDir('kopf-state-');
    const before = await populated(dir);
    const crd = YAML.parse(fs.readFileSync(WIDGETS_CRD, 'utf8')) as Json;
    crd['metadata']['labels'] = { edited: 'yes' };
    crd['spec']['names']['shortNames'] = ['wdg'];
    const cluster = await start(dir, { crds: [crd] });
    const kept = cluster.store.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, 'widgets.example.com') as Json;
    expect(kept['metadata']['labels']).toEqual({ edited: 'yes' });
    expect(kept['spec']['names']['shortNames']).toEqual(['wdg']);
    expect(kept['metadata']['finalizers']).toContain('customresourcecleanup.apiextensions.k8s.io');
    expect((cluster.store.get(WIDGET, 'kept', 'apps') as Json | undefined)?.['metadata']['uid']).toBe(before.widget['metadata']['uid']);
  });
});

describe('what a state folder refuses', () => {
  it('D-PERSIST-306 a torn last journal line (a write cut short) is ignored, not fatal', async () => {
    const dir = tempDir('kopf-state-');
    const cluster = await start(dir);
    await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'whole', namespace: 'default' } });
    const revision = cluster.revision;
    await stop(cluster);
    const journal = path.join(dir, fs.readdirSync(dir).find((f) => format.journalSeq(f) !== undefined)!);
    fs.appendFileSync(journal, '{"r":999,"s":"configmaps","k":"default\\u0000torn","o":{"metadata":{"na');
    const warnings: string[] = [];
    const again = await start(dir, { onWarning: (m) => warnings.push(m) });
    expect(again.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'whole', 'default')).toBeDefined();
    expect(again.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'torn', 'default')).toBeUndefined();
    expect(again.revision).toBe(revision);
    expect(warnings.join('\n')).toMatch(/ignored the last line of journal-\d+\.jsonl, cut short/);
  });

  it('D-PERSIST-306 a damaged line inside the state is refused with an error naming the folder, the file and the reset', async () => {
    const dir = tempDir('kopf-state-');
    await populated(dir);
    const snapshot = path.join(dir, format.SNAPSHOT);
    const lines = fs.readFileSync(snapshot, 'utf8').split('\n');
    lines[2] = '{"s": not json';
    fs.writeFileSync(snapshot, lines.join('\n'));
    const failure = DevCluster.start({ stateDir: dir });
    await expect(failure).rejects.toMatchObject({ code: 'StateCorrupt' });
    await expect(failure).rejects.toThrow(`devcluster state in ${dir} is corrupt: snapshot.jsonl line 3`);
    await expect(failure).rejects.toThrow(`kopf-gen devcluster --state-dir ${dir} --reset`);
    expect(fs.readFileSync(snapshot, 'utf8')).toBe(lines.join('\n')); // nothing was dropped
    expect(fs.existsSync(path.join(dir, format.LOCK))).toBe(false); // and the folder is free again
  });

  it('D-PERSIST-304 a state written by another format version is refused, never read or dropped', async () => {
    const dir = tempDir('kopf-state-');
    await populated(dir);
    const snapshot = path.join(dir, format.SNAPSHOT);
    const text = fs.readFileSync(snapshot, 'utf8').replace('"version":1', '"version":2');
    fs.writeFileSync(snapshot, text);
    const failure = DevCluster.start({ stateDir: dir });
    await expect(failure).rejects.toMatchObject({ code: 'StateVersionMismatch' });
    await expect(failure).rejects.toThrow(`devcluster state in ${dir} (snapshot.jsonl) has format version 2; this devcluster reads version 1 only`);
    await expect(failure).rejects.toThrow('--reset');
    expect(fs.readFileSync(snapshot, 'utf8')).toBe(text);
  });

  it("D-PERSIST-305 a second devcluster on a folder in use is refused with the holder's pid; a stale lock of a dead process is taken over", async () => {
    const dir = tempDir('kopf-state-');
    const first = await start(dir);
    const second = DevCluster.start({ stateDir: dir });
    await expect(second).rejects.toMatchObject({ code: 'StateLocked', pid: process.pid });
    await expect(second).rejects.toThrow(`devcluster state in ${dir} is in use by another running devcluster (process ${process.pid}`);
    await stop(first);
    const dead = child.spawnSync(process.execPath, ['-e', '']).pid;
    fs.writeFileSync(path.join(dir, format.LOCK), `${dead}\n`);
    const taken = await start(dir);
    expect(fs.readFileSync(path.join(dir, format.LOCK), 'utf8').trim()).toBe(String(process.pid));
    await stop(taken);
    expect(fs.existsSync(path.join(dir, format.LOCK))).toBe(false);
  });

  it('D-PERSIST-307 resetState empties the folder (other files kept), and is refused while a devcluster uses it', async () => {
    const dir = tempDir('kopf-state-');
    await populated(dir);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    const cluster = await start(dir);
    expect(() => DevCluster.resetState(dir)).toThrow(/in use by another running devcluster/);
    await stop(cluster);
    DevCluster.resetState(dir);
    expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
    const fresh = await start(dir);
    expect(fresh.store.list({ apiVersion: 'v1', kind: 'Namespace' }).length).toBe(4);
    expect(fresh.revision).toBeLessThan(10);
  });
});
