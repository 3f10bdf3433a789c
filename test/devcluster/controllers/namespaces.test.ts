import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as nscontroller from '../../../devcluster/controllers/namespaces.js';
import { DevCluster } from '../../../devcluster/testing.js';

const empty = (): nscontroller.Remaining => ({ resources: new Map(), finalizers: new Map(), failures: [] });

describe('deletionConditions', () => {
  it('D-BI-2 reports everything False when nothing remains', () => {
    const conds = nscontroller.deletionConditions(empty());
    expect(conds.map((c) => c.type)).toEqual([
      'NamespaceDeletionDiscoveryFailure',
      'NamespaceDeletionGroupVersionParsingFailure',
      'NamespaceDeletionContentFailure',
      'NamespaceContentRemaining',
      'NamespaceFinalizersRemaining',
    ]);
    expect(conds.every((c) => c.status === 'False')).toBe(true);
    expect(conds[3]).toMatchObject({ reason: 'ContentRemoved', message: 'All content successfully removed' });
    expect(conds[4]).toMatchObject({ reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' });
  });

  it('D-BI-2 lists remaining resources and finalizers, sorted', () => {
    const r = empty();
    r.resources.set('widgets.example.com', 2).set('configmaps', 1);
    r.finalizers.set('example.com/z', 1).set('example.com/a', 2);
    const conds = nscontroller.deletionConditions(r);
    expect(conds[3]).toMatchObject({
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: configmaps has 1 resource instances, widgets.example.com has 2 resource instances',
    });
    expect(conds[4]).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/a in 2 resource instances, example.com/z in 1 resource instances',
    });
    expect(conds[2]!.status).toBe('False');
  });

  it('D-BI-2 reports failed deletes as NamespaceDeletionContentFailure', () => {
    const r = empty();
    r.failures.push('denied');
    expect(nscontroller.deletionConditions(r)[2]).toMatchObject({ status: 'True', reason: 'ContentDeletionFailed' });
  });
});

describe('mergeConditions', () => {
  const wanted = nscontroller.deletionConditions(empty());

  it('stamps new conditions with now', () => {
    const next = nscontroller.mergeConditions(undefined, wanted, 'T1')!;
    expect(next).toHaveLength(5);
    expect(next.every((c) => c['lastTransitionTime'] === 'T1')).toBe(true);
  });

  it('returns undefined when nothing changes, and keeps transition times of unchanged statuses', () => {
    const first = nscontroller.mergeConditions(undefined, wanted, 'T1')!;
    expect(nscontroller.mergeConditions(first, wanted, 'T2')).toBeUndefined();
    const r = empty();
    r.resources.set('configmaps', 1);
    const next = nscontroller.mergeConditions(first, nscontroller.deletionConditions(r), 'T2')!;
    expect(next.find((c) => c['type'] === 'NamespaceContentRemaining')).toMatchObject({ status: 'True', lastTransitionTime: 'T2' });
    expect(next.find((c) => c['type'] === 'NamespaceFinalizersRemaining')).toMatchObject({ status: 'False', lastTransitionTime: 'T1' });
  });

  it('keeps foreign conditions after its own', () => {
    const foreign = { type: 'Custom', status: 'True', reason: 'X', message: 'y' };
    const next = nscontroller.mergeConditions([foreign], wanted, 'T1')!;
    expect(next).toHaveLength(6);
    expect(next[5]).toEqual(foreign);
  });
});

describe('namespace controller', () => {
  let cluster: DevCluster;
  const NS = { apiVersion: 'v1', kind: 'Namespace' } as const;
  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false });
  });
  afterAll(async () => {
    await cluster.stop();
  });

  it('D-BI-2 deletes the content of every namespaced resource, then the namespace', async () => {
    await cluster.store.create({ ...NS, metadata: { name: 'nsc1' } });
    await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'nsc1' } });
    await cluster.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'nsc1' } });
    await cluster.store.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'nsc1' } });
    await cluster.settle();
    await cluster.store.delete(NS, 'nsc1');
    await cluster.settle();
    expect(cluster.store.get(NS, 'nsc1')).toBeUndefined();
    for (const kind of ['ConfigMap', 'Secret', 'ServiceAccount']) {
      expect(cluster.store.list({ apiVersion: 'v1', kind }, 'nsc1')).toEqual([]);
    }
    expect(cluster.store.list({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' }, 'nsc1')).toEqual([]);
  });

  it('D-BI-2 leaves other namespaces alone', async () => {
    await cluster.store.create({ ...NS, metadata: { name: 'nsc2' } });
    await cluster.store.create({ ...NS, metadata: { name: 'nsc3' } });
    await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep', namespace: 'nsc3' } });
    await cluster.store.delete(NS, 'nsc2');
    await cluster.settle();
    expect(cluster.store.get(NS, 'nsc2')).toBeUndefined();
    expect(cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'keep', 'nsc3')).toBeDefined();
  });

  it('D-BI-2 re-checks as finalizers go and finishes when the last object is gone', async () => {
    await cluster.store.create({ ...NS, metadata: { name: 'nsc4' } });
    for (const name of ['f1', 'f2']) {
      await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'nsc4', finalizers: ['example.com/hold'] } });
    }
    await cluster.store.delete(NS, 'nsc4');
    await cluster.settle();
    const conditionOf = (type: string): Record<string, unknown> | undefined =>
      ((cluster.store.get(NS, 'nsc4')?.['status'] as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []).find((c) => c['type'] === type);
    expect(conditionOf('NamespaceFinalizersRemaining')?.['message']).toBe(
      'Some content in the namespace has finalizers remaining: example.com/hold in 2 resource instances',
    );
    await cluster.store.patch({ apiVersion: 'v1', kind: 'ConfigMap' }, 'f1', { metadata: { finalizers: null } }, { namespace: 'nsc4' });
    await cluster.settle();
    expect(conditionOf('NamespaceContentRemaining')?.['message']).toBe('Some resources are remaining: configmaps has 1 resource instances');
    await cluster.store.patch({ apiVersion: 'v1', kind: 'ConfigMap' }, 'f2', { metadata: { finalizers: null } }, { namespace: 'nsc4' });
    await cluster.settle();
    expect(cluster.store.get(NS, 'nsc4')).toBeUndefined();
  });
});

describe('namespace controller switched off', () => {
  it('D-GEN-5 keeps a deleted namespace Terminating with its content', async () => {
    const cluster = await DevCluster.start({ tls: false, controllers: { namespaces: false } });
    try {
      await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'off' } });
      await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'off' } });
      await cluster.store.delete({ apiVersion: 'v1', kind: 'Namespace' }, 'off');
      await cluster.settle();
      const ns = cluster.store.get({ apiVersion: 'v1', kind: 'Namespace' }, 'off');
      expect((ns?.['status'] as { phase?: string }).phase).toBe('Terminating');
      expect(cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'c', 'off')).toBeDefined();
    } finally {
      await cluster.stop();
    }
  });
});
