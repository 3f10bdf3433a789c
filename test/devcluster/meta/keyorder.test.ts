import { describe, expect, it } from 'vitest';
import * as keyorder from '../../../devcluster/meta/keyorder.js';
import * as fieldorder from '../../../devcluster/upstream/fieldorder.js';
import type { JsonObject } from '../../../devcluster/json.js';

const CONFIG_MAP: keyorder.Ordering = { builtin: true, definition: 'io.k8s.api.core.v1.ConfigMap' };
const CUSTOM: keyorder.Ordering = { builtin: false };

/** Member names at every level, depth first, as JSON.stringify writes them. */
const text = (v: unknown): string => JSON.stringify(v);

describe('key order (D-BI-24)', () => {
  it('D-BI-24 the data puts ObjectMeta, ListMeta, Status and list kinds in Go struct order', () => {
    expect(fieldorder.orderOf(keyorder.OBJECT_META)).toEqual([
      'name',
      'generateName',
      'namespace',
      'selfLink',
      'uid',
      'resourceVersion',
      'generation',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'labels',
      'annotations',
      'ownerReferences',
      'finalizers',
      'managedFields',
    ]);
    expect(fieldorder.orderOf('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta')).toEqual(['selfLink', 'resourceVersion', 'continue', 'remainingItemCount']);
    expect(fieldorder.orderOf('io.k8s.apimachinery.pkg.apis.meta.v1.Status')).toEqual([
      'kind',
      'apiVersion',
      'metadata',
      'status',
      'message',
      'reason',
      'details',
      'code',
    ]);
    expect(fieldorder.orderOf('io.k8s.api.core.v1.ConfigMapList')).toEqual(['kind', 'apiVersion', 'metadata', 'items']);
    expect(fieldorder.orderOf('io.k8s.api.core.v1.Pod')).toEqual(['kind', 'apiVersion', 'metadata', 'spec', 'status']);
    expect(fieldorder.orderOf('io.k8s.api.apps.v1.DeploymentSpec')).toEqual([
      'replicas',
      'selector',
      'template',
      'strategy',
      'minReadySeconds',
      'revisionHistoryLimit',
      'paused',
      'progressDeadlineSeconds',
    ]);
    // No fixture reaches the CRD types: the OpenAPI document's order, TypeMeta and ObjectMeta first.
    expect(fieldorder.orderOf('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition')).toEqual([
      'kind',
      'apiVersion',
      'metadata',
      'spec',
      'status',
    ]);
  });

  it('D-BI-24 a built-in object comes in struct order with map keys sorted', () => {
    const obj = { data: { z: '1', a: '2' }, metadata: { labels: { y: '1', b: '2' }, namespace: 'ns', name: 'n' }, apiVersion: 'v1', kind: 'ConfigMap' };
    expect(text(keyorder.arrange(CONFIG_MAP, obj))).toBe(
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"n","namespace":"ns","labels":{"b":"2","y":"1"}},"data":{"a":"2","z":"1"}}',
    );
  });

  it('D-BI-24 lists inside structs are ordered item by item, free-form members kept as written', () => {
    const revision = {
      revision: 1,
      data: { zeta: 1, alpha: { y: 1, x: 2 } },
      metadata: { ownerReferences: [{ uid: 'u', name: 'o', kind: 'K', apiVersion: 'v1' }], name: 'r' },
      kind: 'ControllerRevision',
      apiVersion: 'apps/v1',
    };
    expect(text(keyorder.arrange({ builtin: true, definition: 'io.k8s.api.apps.v1.ControllerRevision' }, revision))).toBe(
      '{"kind":"ControllerRevision","apiVersion":"apps/v1","metadata":{"name":"r","ownerReferences":[{"apiVersion":"v1","kind":"K","name":"o","uid":"u"}]},' +
        '"data":{"zeta":1,"alpha":{"y":1,"x":2}},"revision":1}',
    );
  });

  it('D-BI-24 members a definition does not know follow the known ones, sorted', () => {
    const obj = { zz: 1, data: {}, aa: 2, kind: 'ConfigMap' };
    expect(Object.keys(keyorder.arrange(CONFIG_MAP, obj))).toEqual(['kind', 'data', 'aa', 'zz']);
  });

  it('D-BI-24 custom resources are sorted at every level, lists item by item', () => {
    const obj = { spec: { z: [{ b: 1, a: { d: 1, c: 2 } }], a: null }, metadata: { uid: 'u', name: 'n' }, kind: 'W', apiVersion: 'x/v1' };
    expect(text(keyorder.arrange(CUSTOM, obj))).toBe(
      '{"apiVersion":"x/v1","kind":"W","metadata":{"name":"n","uid":"u"},"spec":{"a":null,"z":[{"a":{"c":2,"d":1},"b":1}]}}',
    );
  });

  it('D-BI-24 an object already in order is returned as it is, with no copy', () => {
    const ordered = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'n', labels: { a: '1', b: '2' } }, data: { a: 'x' } };
    expect(keyorder.arrange(CONFIG_MAP, ordered)).toBe(ordered);
    const custom = { apiVersion: 'x/v1', kind: 'W', spec: { a: [{ b: 1 }], c: { d: 1 } } };
    expect(keyorder.arrange(CUSTOM, custom)).toBe(custom);
    // Only the branch out of order is copied.
    const partly = { apiVersion: 'x/v1', kind: 'W', spec: { a: [{ b: 1 }], c: { e: 1, d: 1 } } };
    const arranged = keyorder.arrange(CUSTOM, partly) as { spec: { a: unknown; c: unknown } };
    expect(arranged.spec.a).toBe(partly.spec.a);
    expect(arranged.spec.c).not.toBe(partly.spec.c);
  });

  it('D-BI-24 a metadata member is added where the order puts it (the resourceVersion of a create)', () => {
    const obj = { kind: 'ConfigMap', metadata: { name: 'n', uid: 'u', creationTimestamp: 't', labels: { a: '1' } } };
    expect(text(keyorder.withMetadataMember(CONFIG_MAP, obj, 'resourceVersion', ''))).toBe(
      '{"kind":"ConfigMap","metadata":{"name":"n","uid":"u","resourceVersion":"","creationTimestamp":"t","labels":{"a":"1"}}}',
    );
    const custom = { apiVersion: 'x/v1', metadata: { creationTimestamp: 't', name: 'n', uid: 'u' } };
    expect(text(keyorder.withMetadataMember(CUSTOM, custom, 'resourceVersion', ''))).toBe(
      '{"apiVersion":"x/v1","metadata":{"creationTimestamp":"t","name":"n","resourceVersion":"","uid":"u"}}',
    );
    expect(text(keyorder.withMetadataMember(CUSTOM, { metadata: { name: 'n' } }, 'resourceVersion', '1'))).toBe(
      '{"metadata":{"name":"n","resourceVersion":"1"}}',
    );
  });

  it("D-BI-24 keys sort by their UTF-8 bytes, as Go's encoder sorts them", () => {
    const keys = ['b', 'B', '\uffff', '\u{1f600}', 'ä', 'a'];
    expect([...keys].sort(keyorder.compareKeys)).toEqual(['B', 'a', 'b', 'ä', '\uffff', '\u{1f600}']);
  });

  it('D-BI-24 integer-like keys, which JavaScript always puts first, do not make an object look out of order', () => {
    const map: JsonObject = JSON.parse('{"b":1,"10":2,"9":3,"a":4}') as JsonObject;
    expect(Object.keys(map)).toEqual(['9', '10', 'b', 'a']);
    const arranged = keyorder.sortedDeep(map) as JsonObject;
    expect(Object.keys(arranged)).toEqual(['9', '10', 'a', 'b']);
    expect(keyorder.sortedDeep(arranged)).toBe(arranged);
  });

  it('D-BI-24 a member named __proto__ stays an ordinary member', () => {
    const odd = JSON.parse('{"b":1,"__proto__":{"polluted":true},"a":2}') as JsonObject;
    const arranged = keyorder.sortedDeep(odd) as JsonObject;
    expect(Object.keys(arranged)).toEqual(['__proto__', 'a', 'b']);
    expect(Object.getPrototypeOf(arranged)).toBe(Object.prototype);
  });
});
