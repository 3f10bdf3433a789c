/**
 * Conformance checklist items for garbage collection (C-55..C-58, D-VERB-33..36) and the namespace
 * lifecycle (C-99..C-101, D-BI-2), over plain HTTP against a devcluster with the Widget CRD.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGMAPS, WIDGETS, readWatch, startHarness, type Harness, type Json } from './harness.js';

const NAMESPACES = '/api/v1/namespaces';

function ownerRef(owner: Json, block = true): Json {
  return { apiVersion: 'example.com/v1', kind: 'Widget', name: owner.metadata.name, uid: owner.metadata.uid, blockOwnerDeletion: block };
}

async function configMap(h: Harness, name: string, owners: Json[]): Promise<Json> {
  const r = await h.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ownerReferences: owners }, data: { a: '1' } });
  expect(r.status).toBe(201);
  return r.json;
}

/** The DELETED event of one object between `fromRv` and now, read back from the watch history. */
async function deletedAt(h: Harness, collection: string, name: string, fromRv: string): Promise<number> {
  const { events } = await readWatch(`${h.cluster.url}${collection}?watch=true&resourceVersion=${fromRv}&fieldSelector=metadata.name%3D${name}`, {
    timeoutMs: 400,
  });
  const deleted = events.filter((e) => e.type === 'DELETED');
  expect(deleted).toHaveLength(1);
  return Number(deleted[0]!.object.metadata.resourceVersion);
}

describe('garbage collection (D-VERB-33..35)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-55 Foreground: the owner waits with foregroundDeletion, the blocking dependent disappears first', async () => {
    const o = await h.widget('o55');
    await configMap(h, 'c55', [ownerRef(o)]);
    const before = String(h.cluster.revision);
    const r = await h.del(`${WIDGETS}/o55`, { propagationPolicy: 'Foreground' });
    expect(r.status).toBe(200);
    expect(r.json.metadata.deletionTimestamp).toBeTruthy();
    expect(r.json.metadata.finalizers).toEqual(['foregroundDeletion']);
    await h.cluster.settle();
    expect((await h.get(`${CONFIGMAPS}/c55`)).status).toBe(404);
    expect((await h.get(`${WIDGETS}/o55`)).status).toBe(404);
    const cGone = await deletedAt(h, CONFIGMAPS, 'c55', before);
    const oGone = await deletedAt(h, WIDGETS, 'o55', before);
    expect(cGone).toBeLessThan(oGone);
  });

  it('C-56 Background: the owner is gone at once, the dependent after settle', async () => {
    const o = await h.widget('o56');
    await configMap(h, 'c56', [ownerRef(o)]);
    const r = await h.del(`${WIDGETS}/o56`, { propagationPolicy: 'Background' });
    expect(r.status).toBe(200);
    expect(r.json.kind).toBe('Status');
    expect((await h.get(`${WIDGETS}/o56`)).status).toBe(404);
    await h.cluster.settle();
    expect((await h.get(`${CONFIGMAPS}/c56`)).status).toBe(404);
  });

  it('C-57 Orphan: the owner goes, the dependent stays without ownerReferences', async () => {
    const o = await h.widget('o57');
    await configMap(h, 'c57', [ownerRef(o)]);
    const r = await h.del(`${WIDGETS}/o57`, { propagationPolicy: 'Orphan' });
    expect(r.status).toBe(200);
    expect(r.json.metadata.finalizers).toEqual(['orphan']);
    await h.cluster.settle();
    expect((await h.get(`${WIDGETS}/o57`)).status).toBe(404);
    const c = await h.get(`${CONFIGMAPS}/c57`);
    expect(c.status).toBe(200);
    expect(c.json.metadata.ownerReferences).toBeUndefined();
    expect(c.json.data).toEqual({ a: '1' });
  });

  it('C-58 a dependent with a remaining owner only loses the dangling reference', async () => {
    const a = await h.widget('o58a');
    const b = await h.widget('o58b');
    await configMap(h, 'c58', [ownerRef(a, false), ownerRef(b, false)]);
    expect((await h.del(`${WIDGETS}/o58a`, { propagationPolicy: 'Background' })).status).toBe(200);
    await h.cluster.settle();
    const c = await h.get(`${CONFIGMAPS}/c58`);
    expect(c.status).toBe(200);
    expect(c.json.metadata.ownerReferences).toEqual([ownerRef(b, false)]);
  });

  it('D-VERB-33 a reference to a re-created owner (other uid) is dangling', async () => {
    const old = await h.widget('o33');
    expect((await h.del(`${WIDGETS}/o33`)).status).toBe(200);
    await h.widget('o33');
    await configMap(h, 'c33', [ownerRef(old)]);
    await h.cluster.settle();
    expect((await h.get(`${CONFIGMAPS}/c33`)).status).toBe(404);
    expect((await h.get(`${WIDGETS}/o33`)).status).toBe(200);
  });

  it('D-VERB-33 an owner in another namespace does not hold a dependent', async () => {
    expect((await h.post(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc-other' } })).status).toBe(201);
    const o = (
      await h.post('/apis/example.com/v1/namespaces/gc-other/widgets', {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'o33ns' },
        spec: { size: 1 },
      })
    ).json;
    await configMap(h, 'c33ns', [ownerRef(o)]);
    await h.cluster.settle();
    expect((await h.get(`${CONFIGMAPS}/c33ns`)).status).toBe(404);
    expect((await h.get('/apis/example.com/v1/namespaces/gc-other/widgets/o33ns')).status).toBe(200);
  });

  it("D-VERB-34 GC deletes honour the dependent's finalizers", async () => {
    const o = await h.widget('o34');
    await configMap(h, 'c34', [ownerRef(o, false)]);
    expect((await h.patch(`${CONFIGMAPS}/c34`, { metadata: { finalizers: ['example.com/keep'] } })).status).toBe(200);
    expect((await h.del(`${WIDGETS}/o34`)).status).toBe(200);
    await h.cluster.settle();
    const c = await h.get(`${CONFIGMAPS}/c34`);
    expect(c.status).toBe(200);
    expect(c.json.metadata.deletionTimestamp).toBeTruthy();
    expect((await h.patch(`${CONFIGMAPS}/c34`, { metadata: { finalizers: null } })).status).toBe(200);
    expect((await h.get(`${CONFIGMAPS}/c34`)).status).toBe(404);
  });

  it('D-VERB-35 objects without owner references are never touched; orphans created later are collected', async () => {
    await configMap(h, 'c35-free', []);
    const o = await h.widget('o35');
    const free = (await h.get(`${CONFIGMAPS}/c35-free`)).json;
    await configMap(h, 'c35-missing', [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'nobody', uid: '00000000-0000-4000-8000-000000000035' }]);
    await configMap(h, 'c35-owned', [ownerRef(o)]);
    await h.cluster.settle();
    expect((await h.get(`${CONFIGMAPS}/c35-missing`)).status).toBe(404);
    expect((await h.get(`${CONFIGMAPS}/c35-owned`)).status).toBe(200);
    const after = await h.get(`${CONFIGMAPS}/c35-free`);
    expect(after.json.metadata.resourceVersion).toBe(free.metadata.resourceVersion);
  });
});

describe('disabled garbage collector (D-VERB-36)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ controllers: { garbageCollector: false } });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('D-VERB-36 Foreground and Orphan owners stay Terminating and dependents stay', async () => {
    const f = await h.widget('f36');
    const o = await h.widget('o36');
    const b = await h.widget('b36');
    await configMap(h, 'cf36', [ownerRef(f)]);
    await configMap(h, 'co36', [ownerRef(o)]);
    await configMap(h, 'cb36', [ownerRef(b)]);
    expect((await h.del(`${WIDGETS}/f36`, { propagationPolicy: 'Foreground' })).status).toBe(200);
    expect((await h.del(`${WIDGETS}/o36`, { propagationPolicy: 'Orphan' })).status).toBe(200);
    expect((await h.del(`${WIDGETS}/b36`, { propagationPolicy: 'Background' })).status).toBe(200);
    await h.cluster.settle();
    const fw = await h.get(`${WIDGETS}/f36`);
    expect(fw.json.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(fw.json.metadata.deletionTimestamp).toBeTruthy();
    expect((await h.get(`${WIDGETS}/o36`)).json.metadata.finalizers).toEqual(['orphan']);
    for (const name of ['cf36', 'co36', 'cb36']) {
      const c = await h.get(`${CONFIGMAPS}/${name}`);
      expect(c.status).toBe(200);
      expect(c.json.metadata.ownerReferences).toHaveLength(1);
    }
  });
});

describe('namespaces (D-BI-2)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-99 a new Namespace is Active with the kubernetes finalizer and the name label', async () => {
    const r = await h.post(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 't99' }, status: { phase: 'Terminating' } });
    expect(r.status).toBe(201);
    expect(r.json.status.phase).toBe('Active');
    expect(r.json.spec.finalizers).toEqual(['kubernetes']);
    expect(r.json.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 't99' });
  });

  it('C-100 a Widget with a finalizer keeps its namespace Terminating until the finalizer goes', async () => {
    expect((await h.post(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 't100' } })).status).toBe(201);
    const widgets = '/apis/example.com/v1/namespaces/t100/widgets';
    const w = await h.post(widgets, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', finalizers: ['example.com/cleanup'] },
      spec: { size: 1 },
    });
    expect(w.status).toBe(201);
    expect((await h.post('/api/v1/namespaces/t100/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' } })).status).toBe(201);

    const d = await h.del(`${NAMESPACES}/t100`);
    expect(d.status).toBe(200);
    expect(d.json.kind).toBe('Namespace');
    expect(d.json.status.phase).toBe('Terminating');
    const c = await h.post('/api/v1/namespaces/t100/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } });
    expect(c.status).toBe(403);
    expect(c.json.details.causes[0].reason).toBe('NamespaceTerminating');

    await h.cluster.settle();
    const ns = await h.get(`${NAMESPACES}/t100`);
    expect(ns.status).toBe(200);
    expect(ns.json.spec.finalizers).toEqual(['kubernetes']);
    const byType = Object.fromEntries((ns.json.status.conditions as Json[]).map((x) => [x.type, x]));
    expect(byType['NamespaceContentRemaining']).toMatchObject({
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: widgets.example.com has 1 resource instances',
    });
    expect(byType['NamespaceFinalizersRemaining']).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/cleanup in 1 resource instances',
    });
    for (const t of ['NamespaceDeletionDiscoveryFailure', 'NamespaceDeletionGroupVersionParsingFailure', 'NamespaceDeletionContentFailure']) {
      expect(byType[t]?.status).toBe('False');
    }
    expect((await h.get('/api/v1/namespaces/t100/configmaps/plain')).status).toBe(404);
    expect((await h.get('/api/v1/namespaces/t100/serviceaccounts/default')).status).toBe(404);
    const marked = await h.get(`${widgets}/w`);
    expect(marked.json.metadata.deletionTimestamp).toBeTruthy();

    expect((await h.patch(`${widgets}/w`, { metadata: { finalizers: null } })).status).toBe(200);
    await h.cluster.settle();
    expect((await h.get(`${NAMESPACES}/t100`)).status).toBe(404);
  });

  it('D-BI-2 an empty namespace is finalized and removed after settle', async () => {
    expect((await h.post(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tempty' } })).status).toBe(201);
    await h.cluster.settle();
    expect((await h.del(`${NAMESPACES}/tempty`)).status).toBe(200);
    await h.cluster.settle();
    expect((await h.get(`${NAMESPACES}/tempty`)).status).toBe(404);
  });

  it('D-BI-2 a namespace with a metadata finalizer stays after its content is gone, with kubernetes removed', async () => {
    const r = await h.post(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tkeep', finalizers: ['example.com/ns'] } });
    expect(r.status).toBe(201);
    expect((await h.del(`${NAMESPACES}/tkeep`)).status).toBe(200);
    await h.cluster.settle();
    const ns = await h.get(`${NAMESPACES}/tkeep`);
    expect(ns.status).toBe(200);
    expect(ns.json.spec.finalizers ?? []).toEqual([]);
    const byType = Object.fromEntries((ns.json.status.conditions as Json[]).map((x) => [x.type, x]));
    expect(byType['NamespaceContentRemaining']).toMatchObject({ status: 'False', reason: 'ContentRemoved' });
    expect((await h.patch(`${NAMESPACES}/tkeep`, { metadata: { finalizers: null } })).status).toBe(200);
    expect((await h.get(`${NAMESPACES}/tkeep`)).status).toBe(404);
  });

  it('C-101 the default namespace cannot be deleted', async () => {
    const r = await h.del(`${NAMESPACES}/default`);
    expect(r.status).toBe(403);
    expect(r.json.reason).toBe('Forbidden');
    expect(r.json.message).toBe('namespaces "default" is forbidden: this namespace may not be deleted');
    const ns = await h.get(`${NAMESPACES}/default`);
    expect(ns.json.metadata.deletionTimestamp).toBeUndefined();
    expect(ns.json.status.phase).toBe('Active');
  });
});
