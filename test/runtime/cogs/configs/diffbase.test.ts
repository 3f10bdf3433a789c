import { describe, expect, it } from 'vitest';

import * as diffbase from '../../../../runtime/cogs/configs/diffbase.js';
import * as progress from '../../../../runtime/cogs/configs/progress.js';
import * as jsonpatches from '../../../../runtime/cogs/structs/jsonpatches.js';
import * as patches from '../../../../runtime/cogs/structs/patches.js';

const LHC = 'kopf.zalando.org/last-handled-configuration';
const REFERENCE_LHC =
  '{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}\n';

function referenceObject(extra: { annotations?: Record<string, string>; status?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    apiVersion: 'kopf.dev/v1',
    kind: 'KopfExample',
    metadata: {
      name: 'kopf-example-1',
      namespace: 'default',
      uid: 'u-1',
      resourceVersion: '12',
      generation: 1,
      creationTimestamp: '2024-05-01T10:00:00Z',
      finalizers: ['kopf.zalando.org/KopfFinalizerMarker'],
      labels: { somelabel: 'somevalue' },
      annotations: { someannotation: 'somevalue', ...extra.annotations },
    },
    spec: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
    ...(extra.status ? { status: extra.status } : {}),
  };
}

describe('essence building', () => {
  it('R-STORAGE-2 the diff-base of the reference object is byte-exact', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const body = referenceObject({ status: { create_fn: { message: 'hello world' } } });
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: storage.build({ body }) });
    expect(patch.toMergePatch()).toEqual({ metadata: { annotations: { [LHC]: REFERENCE_LHC } } });
  });

  it("R-ESSENCE-1 last-applied-configuration, Kopf-owned prefixes and the storage's own key are excluded", () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const body = referenceObject({
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        [LHC]: 'old',
        'kopf.zalando.org/create_fn': '{}',
        'other.kopf.zalando.org/x': '1',
        'custom.example.com/kopf-managed': 'yes',
        'custom.example.com/fn': '{}',
        'unrelated.example.com/keep': 'me',
      },
    });
    expect(storage.build({ body })).toEqual({
      spec: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
      metadata: { labels: { somelabel: 'somevalue' }, annotations: { someannotation: 'somevalue', 'unrelated.example.com/keep': 'me' } },
    });
  });

  it('R-ESSENCE-1 keys follow the body order with metadata re-added last; empties are removed', () => {
    const body = { metadata: { name: 'x', labels: {}, annotations: {} }, kind: 'ConfigMap', data: { a: '1' }, status: {}, rules: [] };
    const essence = diffbase.buildEssence(body);
    expect(JSON.stringify(essence)).toBe('{"data":{"a":"1"},"rules":[]}');
    const labelled = diffbase.buildEssence({ metadata: { labels: { l: 'v' } }, spec: { s: 1 }, data: { d: 1 } });
    expect(Object.keys(labelled)).toEqual(['spec', 'data', 'metadata']);
  });

  it('R-ESSENCE-2 extra fields are copied back even from status and metadata', () => {
    const body = referenceObject({ status: { phase: 'Running', other: 'x' } });
    const essence = diffbase.buildEssence(body, ['status.phase', 'metadata.generation', 'spec.absent']);
    expect(essence['status']).toEqual({ phase: 'Running' });
    expect(essence['metadata']).toEqual({ labels: { somelabel: 'somevalue' }, annotations: { someannotation: 'somevalue' }, generation: 1 });
    expect(Object.keys(essence)).toEqual(['spec', 'metadata', 'status']);
  });

  it('R-STORAGE-3 ignored fields are removed from essences', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage({ ignoredFields: ['spec.duration', 'metadata.labels.somelabel'] });
    expect(storage.build({ body: referenceObject() })).toEqual({
      spec: { field: 'value', items: ['item1', 'item2'] },
      metadata: { annotations: { someannotation: 'somevalue' } },
    });
  });

  it('R-ESSENCE-1 building does not mutate the body', () => {
    const body = referenceObject({ annotations: { 'kopf.zalando.org/x': '1' } });
    const before = JSON.stringify(body);
    const essence = new diffbase.AnnotationsDiffBaseStorage().build({ body });
    (essence['spec'] as { items: string[] }).items.push('mutated');
    expect(JSON.stringify(body)).toBe(before);
  });

  it("R-ESSENCE-1 the progress storage's traces are cleared from both the essence and the stored diff-base", () => {
    const diffbaseStorage = new diffbase.AnnotationsDiffBaseStorage({ prefix: 'my-op.example.com' });
    const progressStorage = new progress.AnnotationsProgressStorage({ prefix: 'other.example.com' });
    const body = referenceObject({ annotations: { 'other.example.com/create_fn': '{"retries":1}' } });
    const stored = {
      ...diffbaseStorage.build({ body: referenceObject() }),
      metadata: {
        labels: { somelabel: 'somevalue' },
        annotations: { someannotation: 'somevalue', 'other.example.com/create_fn': '{}' },
      },
    };
    const built = progressStorage.clear(diffbaseStorage.build({ body }));
    expect(built).toEqual(progressStorage.clear(stored));
    expect(JSON.stringify(built)).not.toContain('other.example.com');
  });
});

describe('annotations diff-base storage', () => {
  it('R-STORAGE-2 reads accept spaces and a missing newline', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const expected = { spec: { field: 'value' } };
    for (const encoded of ['{"spec":{"field":"value"}}\n', '{"spec":{"field":"value"}}', '{"spec": {"field": "value"}}\n']) {
      expect(storage.fetch({ body: { metadata: { annotations: { [LHC]: encoded } } } })).toEqual(expected);
    }
    expect(storage.fetch({ body: {} })).toBeNull();
    expect(storage.fetch({ body: { metadata: { annotations: { [LHC]: 'garbage' } } } })).toBeNull();
  });

  it('R-STORAGE-15 non-ASCII essence values are escaped', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const patch = new patches.Patch();
    storage.store({ body: {}, patch, essence: { spec: { name: 'Zürich' } } });
    expect(patch.getAt(['metadata', 'annotations', LHC])).toBe('{"spec":{"name":"Z\\u00fcrich"}}\n');
  });

  it('R-STORAGE-11 a custom prefix writes the kopf-managed marker and excludes its own keys', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage({ prefix: 'my-op.example.com' });
    const patch = new patches.Patch();
    storage.store({ body: {}, patch, essence: { spec: {} } });
    expect(patch.toMergePatch()).toEqual({
      metadata: {
        annotations: {
          'my-op.example.com/last-handled-configuration': '{"spec":{}}\n',
          'my-op.example.com/kopf-managed': 'yes',
        },
      },
    });
    const body = { spec: { a: 1 }, metadata: { annotations: { 'my-op.example.com/last-handled-configuration': '{}' } } };
    expect(storage.build({ body })).toEqual({ spec: { a: 1 } });
  });

  it('R-STORAGE-12 ReplicaSets of Deployments keep their diff-base under an -ofDRS key', () => {
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const body = { kind: 'ReplicaSet', metadata: { ownerReferences: [{ kind: 'Deployment' }] }, spec: {} };
    const patch = new patches.Patch();
    storage.store({ body, patch, essence: {} });
    expect(Object.keys(patch.getAt('metadata.annotations') as object)).toEqual([`${LHC}-ofDRS`]);
  });
});

describe('status and multi diff-base storages', () => {
  it('R-STORAGE-3 the status storage keeps the compact JSON as a string without a newline', () => {
    const storage = new diffbase.StatusDiffBaseStorage();
    const patch = new patches.Patch();
    storage.store({ body: {}, patch, essence: { spec: { a: 1 } } });
    expect(patch.toMergePatch()).toEqual({ status: { kopf: { 'last-handled-configuration': '{"spec":{"a":1}}' } } });
    const body = jsonpatches.applyMergePatch({ spec: { a: 1 } }, patch.toMergePatch());
    expect(storage.fetch({ body })).toEqual({ spec: { a: 1 } });
    expect(storage.build({ body, extraFields: ['status.kopf'] })).toEqual({ spec: { a: 1 } });
  });

  it('R-STORAGE-3 the multi storage writes to all and reads from the first with a value', () => {
    const storage = new diffbase.MultiDiffBaseStorage([new diffbase.AnnotationsDiffBaseStorage(), new diffbase.StatusDiffBaseStorage()]);
    const patch = new patches.Patch();
    storage.store({ body: {}, patch, essence: { spec: { a: 1 } } });
    expect(patch.toMergePatch()).toEqual({
      metadata: { annotations: { [LHC]: '{"spec":{"a":1}}\n' } },
      status: { kopf: { 'last-handled-configuration': '{"spec":{"a":1}}' } },
    });
    expect(storage.fetch({ body: { status: { kopf: { 'last-handled-configuration': '{"spec":{"b":2}}' } } } })).toEqual({ spec: { b: 2 } });
    const body = jsonpatches.applyMergePatch({ spec: { a: 1 } }, patch.toMergePatch());
    expect(storage.build({ body, extraFields: ['status.kopf'] })).toEqual({ spec: { a: 1 } });
  });
});
