import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';
import { openWatch } from '../../support/watchstream.js';
import { WIDGETS_CRD } from '../conformance/harness.js';

type Json = Record<string, any>;

const metaOf = (o: unknown): Json | undefined => (o as Json | undefined)?.['metadata'];

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const NS = { apiVersion: 'v1', kind: 'Namespace' } as const;

function refTo(owner: Json, block = true): Json {
  return { apiVersion: owner['apiVersion'], kind: owner['kind'], name: owner['metadata'].name, uid: owner['metadata'].uid, blockOwnerDeletion: block };
}

/** Revisions of the DELETED events of `names` since `fromRv`, read back from a watch on the collection (until all of them came). */
async function deletions(cluster: DevCluster, path: string, fromRv: number, names: readonly string[]): Promise<Map<string, number>> {
  const watch = await openWatch(`${cluster.url}${path}?watch=true&resourceVersion=${fromRv}`);
  const out = new Map<string, number>();
  try {
    await watch.until(
      (e) => {
        if (e.type === 'DELETED') out.set(e.object['metadata'].name, Number(e.object['metadata'].resourceVersion));
        return names.every((name) => out.has(name));
      },
      `the DELETED events of ${names.join(', ')}`,
    );
  } finally {
    watch.close();
  }
  return out;
}

describe('garbage collector', () => {
  let cluster: DevCluster;
  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false, crds: [WIDGETS_CRD] });
  });
  afterAll(async () => {
    await cluster.stop();
  });

  const widget = (name: string, owners: Json[] = [], extra: Json = {}): Promise<Json> =>
    cluster.store.create({ ...WIDGET, metadata: { name, ownerReferences: owners, ...extra }, spec: { size: 1 } });
  const configMap = (name: string, owners: Json[], extra: Json = {}): Promise<Json> =>
    cluster.store.create({ ...CM, metadata: { name, ownerReferences: owners, ...extra } });

  it('D-VERB-33 Foreground cascades down a chain of blocking references, deepest dependent first', async () => {
    // Only blockOwnerDeletion references make an owner wait for its dependents (D-VERB-33).
    const top = await widget('chain-top');
    const mid = await widget('chain-mid', [refTo(top, true)]);
    await configMap('chain-leaf', [refTo(mid, true)]);
    await cluster.settle();
    const from = cluster.revision;
    await cluster.store.delete(WIDGET, 'chain-top', { propagationPolicy: 'Foreground' });
    await cluster.settle();
    expect(cluster.store.get(WIDGET, 'chain-top')).toBeUndefined();
    expect(cluster.store.get(WIDGET, 'chain-mid')).toBeUndefined();
    expect(cluster.store.get(CM, 'chain-leaf')).toBeUndefined();
    const cms = await deletions(cluster, '/api/v1/namespaces/default/configmaps', from, ['chain-leaf']);
    const ws = await deletions(cluster, '/apis/example.com/v1/namespaces/default/widgets', from, ['chain-mid', 'chain-top']);
    expect(cms.get('chain-leaf')!).toBeLessThan(ws.get('chain-mid')!);
    expect(ws.get('chain-mid')!).toBeLessThan(ws.get('chain-top')!);
  });

  it('D-VERB-33 a blocking dependent with a finalizer holds its Foreground owner', async () => {
    const o = await widget('hold-owner');
    await configMap('hold-dep', [refTo(o, true)], { finalizers: ['example.com/f'] });
    await cluster.store.delete(WIDGET, 'hold-owner', { propagationPolicy: 'Foreground' });
    await cluster.settle();
    const owner = cluster.store.get(WIDGET, 'hold-owner');
    expect(metaOf(owner)?.finalizers).toEqual(['foregroundDeletion']);
    expect(metaOf(cluster.store.get(CM, 'hold-dep'))?.deletionTimestamp).toBeTruthy();
    await cluster.store.patch(CM, 'hold-dep', { metadata: { finalizers: null } });
    await cluster.settle();
    expect(cluster.store.get(CM, 'hold-dep')).toBeUndefined();
    expect(cluster.store.get(WIDGET, 'hold-owner')).toBeUndefined();
  });

  it('D-VERB-33 a non-blocking dependent does not hold its Foreground owner', async () => {
    const o = await widget('free-owner');
    await configMap('free-dep', [refTo(o, false)], { finalizers: ['example.com/f'] });
    await cluster.store.delete(WIDGET, 'free-owner', { propagationPolicy: 'Foreground' });
    await cluster.settle();
    expect(cluster.store.get(WIDGET, 'free-owner')).toBeUndefined();
    expect(metaOf(cluster.store.get(CM, 'free-dep'))?.deletionTimestamp).toBeTruthy();
    await cluster.store.patch(CM, 'free-dep', { metadata: { finalizers: null } });
  });

  it('D-VERB-33 a Foreground owner releases a dependent that has another owner', async () => {
    const a = await widget('shared-a');
    const b = await widget('shared-b');
    await configMap('shared-dep', [refTo(a), refTo(b)]);
    await cluster.store.delete(WIDGET, 'shared-a', { propagationPolicy: 'Foreground' });
    await cluster.settle();
    expect(cluster.store.get(WIDGET, 'shared-a')).toBeUndefined();
    expect(metaOf(cluster.store.get(CM, 'shared-dep'))?.ownerReferences).toEqual([refTo(b)]);
  });

  it('D-VERB-33 the orphan finalizer set by a client acts as the Orphan policy', async () => {
    const o = await widget('client-orphan', [], { finalizers: ['orphan'] });
    await configMap('client-orphan-dep', [refTo(o)]);
    await cluster.store.delete(WIDGET, 'client-orphan');
    await cluster.settle();
    expect(cluster.store.get(WIDGET, 'client-orphan')).toBeUndefined();
    const dep = cluster.store.get(CM, 'client-orphan-dep');
    expect(dep).toBeDefined();
    expect(metaOf(dep)?.ownerReferences).toBeUndefined();
  });

  it('D-VERB-33 a cluster-scoped owner holds a namespaced dependent until it is deleted', async () => {
    const owner = await cluster.store.create({ ...NS, metadata: { name: 'gc-owner-ns' } });
    await configMap('ns-owned', [refTo(owner)]);
    await cluster.settle();
    expect(cluster.store.get(CM, 'ns-owned')).toBeDefined();
    await cluster.store.delete(NS, 'gc-owner-ns');
    await cluster.settle();
    expect(cluster.store.get(NS, 'gc-owner-ns')).toBeUndefined();
    expect(cluster.store.get(CM, 'ns-owned')).toBeUndefined();
  });

  it('D-VERB-33 a namespaced owner cannot own a cluster-scoped dependent', async () => {
    const o = await widget('ns-scoped-owner');
    await cluster.store.create({ ...NS, metadata: { name: 'gc-dep-ns', ownerReferences: [refTo(o)] } });
    await cluster.settle();
    expect(cluster.store.get(NS, 'gc-dep-ns')).toBeUndefined();
  });

  it('D-VERB-33 a reference to a kind that is not served is dangling', async () => {
    await configMap('unserved', [{ apiVersion: 'nowhere.example.com/v1', kind: 'Ghost', name: 'g', uid: '00000000-0000-4000-8000-0000000000aa' }]);
    await cluster.settle();
    expect(cluster.store.get(CM, 'unserved')).toBeUndefined();
  });

  it('D-VERB-34 many dependents of many owners are collected after their owners go', async () => {
    const owners: Json[] = [];
    for (let i = 0; i < 300; i++) owners.push(await widget(`bulk-${i}`));
    for (let i = 0; i < 300; i++) await configMap(`bulk-dep-${i}`, [refTo(owners[i]!)]);
    await configMap('bulk-unrelated', []);
    await cluster.settle();
    for (let i = 0; i < 300; i++) await cluster.store.delete(WIDGET, `bulk-${i}`);
    await cluster.settle();
    const left = cluster.store
      .list(CM, 'default')
      .map((o) => metaOf(o)!['name'] as string)
      .filter((n) => n.startsWith('bulk-'));
    expect(left).toEqual(['bulk-unrelated']);
  });
});

describe('garbage collector options', () => {
  it('D-VERB-35 deleteOrphansOnCreate=false keeps dependents created with missing owners', async () => {
    const cluster = await DevCluster.start({ tls: false, gc: { deleteOrphansOnCreate: false } });
    try {
      await cluster.store.create({
        ...CM,
        metadata: { name: 'lonely', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: '00000000-0000-4000-8000-0000000000bb' }] },
      });
      await cluster.settle();
      expect(cluster.store.get(CM, 'lonely')).toBeDefined();
      // Owner deletion still collects.
      const owner = await cluster.store.create({ ...CM, metadata: { name: 'owner' } });
      await cluster.store.create({ ...CM, metadata: { name: 'owned', ownerReferences: [refTo(owner)] } });
      await cluster.store.delete(CM, 'owner');
      await cluster.settle();
      expect(cluster.store.get(CM, 'owned')).toBeUndefined();
    } finally {
      await cluster.stop();
    }
  });

  it('D-VERB-33 dependents of instances removed with their CRD are collected', async () => {
    const cluster = await DevCluster.start({ tls: false, crds: [WIDGETS_CRD] });
    try {
      const w = await cluster.store.create({ ...WIDGET, metadata: { name: 'w' }, spec: { size: 1 } });
      await cluster.store.create({ ...CM, metadata: { name: 'dep', ownerReferences: [refTo(w)] } });
      await cluster.store.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, 'widgets.example.com');
      await cluster.settle();
      expect(cluster.store.get(CM, 'dep')).toBeUndefined();
    } finally {
      await cluster.stop();
    }
  });
});
