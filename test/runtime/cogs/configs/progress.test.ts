import { describe, expect, it } from 'vitest';

import * as diffbase from '../../../../runtime/cogs/configs/diffbase.js';
import * as progress from '../../../../runtime/cogs/configs/progress.js';
import * as jsonpatches from '../../../../runtime/cogs/structs/jsonpatches.js';
import * as patches from '../../../../runtime/cogs/structs/patches.js';
import { runProgressContract } from './progress.contract.js';

runProgressContract('AnnotationsProgressStorage', () => new progress.AnnotationsProgressStorage());
runProgressContract(
  'AnnotationsProgressStorage with a custom prefix',
  () => new progress.AnnotationsProgressStorage({ prefix: 'my-op.example.com', v1: false }),
);
runProgressContract('StatusProgressStorage', () => new progress.StatusProgressStorage());
runProgressContract('SmartProgressStorage', () => new progress.SmartProgressStorage());
runProgressContract(
  'MultiProgressStorage',
  () => new progress.MultiProgressStorage([new progress.AnnotationsProgressStorage(), new progress.StatusProgressStorage({ name: 'other' })]),
);

const T0 = '2024-05-01T10:00:00.123456+00:00';
const T1 = '2024-05-01T10:00:00.234567+00:00';

const reference = {
  apiVersion: 'kopf.dev/v1',
  kind: 'KopfExample',
  metadata: {
    name: 'kopf-example-1',
    namespace: 'default',
    resourceVersion: '1',
    labels: { somelabel: 'somevalue' },
    annotations: { someannotation: 'somevalue' },
  },
  spec: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
};

describe('record encoding', () => {
  it("R-STORAGE-4 records are compact JSON in the spec's key order with nulls omitted", () => {
    const done = progress.encodeRecord({
      success: true,
      failure: false,
      retries: 1,
      purpose: 'create',
      stopped: T1,
      started: T0,
      message: null,
      delayed: null,
    });
    expect(done).toBe(`{"started":"${T0}","stopped":"${T1}","purpose":"create","retries":1,"success":true,"failure":false}`);
    const pending = progress.encodeRecord({
      subrefs: ['create_fn/item1', 'create_fn/item2'],
      message: 'Not ready yet.',
      failure: false,
      success: false,
      retries: 2,
      purpose: 'update',
      delayed: '2024-05-01T10:01:00.123456+00:00',
      started: T0,
    });
    expect(pending).toBe(
      `{"started":"${T0}","delayed":"2024-05-01T10:01:00.123456+00:00","purpose":"update","retries":2,"success":false,"failure":false,"message":"Not ready yet.","subrefs":["create_fn/item1","create_fn/item2"]}`,
    );
  });

  it('R-STORAGE-15 non-ASCII messages are escaped; both escaped and raw values are read', () => {
    expect(progress.encodeRecord({ message: 'Größe ✗' })).toBe('{"message":"Gr\\u00f6\\u00dfe \\u2717"}');
    expect(progress.decodeRecord('{"message":"Gr\\u00f6\\u00dfe"}')).toEqual({ message: 'Größe' });
    expect(progress.decodeRecord('{"message": "Größe"}')).toEqual({ message: 'Größe' });
    expect(progress.decodeRecord('not json')).toBeNull();
    expect(progress.decodeRecord(undefined)).toBeNull();
  });
});

describe('annotations progress storage', () => {
  it('R-STORAGE-7 long ids are written under both V2 and V1 keys, read from either, purged from both', () => {
    const storage = new progress.AnnotationsProgressStorage();
    const key = 'a'.repeat(50);
    const v2 = `kopf.zalando.org/${'a'.repeat(50)}`;
    const v1 = `kopf.zalando.org/${'a'.repeat(39)}-koaVtw`;
    const patch = new patches.Patch();
    storage.store({ key, record: { retries: 0 }, body: {}, patch });
    expect(patch.toMergePatch()).toEqual({ metadata: { annotations: { [v2]: '{"retries":0}', [v1]: '{"retries":0}' } } });
    expect(storage.fetch({ key, body: { metadata: { annotations: { [v1]: '{"retries":3}' } } } })).toEqual({ retries: 3 });
    expect(storage.fetch({ key, body: { metadata: { annotations: { [v1]: '{"retries":3}', [v2]: '{"retries":4}' } } } })).toEqual({ retries: 4 });
    const purge = new patches.Patch();
    storage.purge({ key, body: { metadata: { annotations: { [v1]: 'x', [v2]: 'y' } } }, patch: purge });
    expect(purge.toMergePatch()).toEqual({ metadata: { annotations: { [v2]: null, [v1]: null } } });
  });

  it('R-STORAGE-11 custom prefixes add the kopf-managed marker when writing', () => {
    const storage = new progress.AnnotationsProgressStorage({ prefix: 'my-op.example.com' });
    const patch = new patches.Patch();
    storage.store({ key: 'fn', record: { retries: 0 }, body: {}, patch });
    expect(patch.toMergePatch()).toEqual({
      metadata: {
        annotations: {
          'my-op.example.com/fn': '{"retries":0}',
          'my-op.example.com/kopf-managed': 'yes',
        },
      },
    });
  });

  it('R-STORAGE-12 ReplicaSets of Deployments use -ofDRS keys', () => {
    const storage = new progress.AnnotationsProgressStorage();
    const body = { kind: 'ReplicaSet', metadata: { ownerReferences: [{ kind: 'Deployment' }] } };
    const patch = new patches.Patch();
    storage.store({ key: 'fn', record: { retries: 0 }, body, patch });
    expect(Object.keys(patch.getAt('metadata.annotations') as object)).toEqual(['kopf.zalando.org/fn-ofDRS']);
  });

  it('R-STORAGE-10 the touch-dummy goes to kopf.zalando.org/touch-dummy and is nulled if present', () => {
    const storage = new progress.AnnotationsProgressStorage();
    const patch = new patches.Patch();
    storage.touch({ body: {}, patch, value: T0 });
    expect(patch.toMergePatch()).toEqual({ metadata: { annotations: { 'kopf.zalando.org/touch-dummy': T0 } } });
    const clear = new patches.Patch();
    storage.touch({ body: { metadata: { annotations: { 'kopf.zalando.org/touch-dummy': T0 } } }, patch: clear, value: null });
    expect(clear.toMergePatch()).toEqual({ metadata: { annotations: { 'kopf.zalando.org/touch-dummy': null } } });
  });

  it('R-STORAGE-7 an empty prefix is rejected', () => {
    expect(() => new progress.AnnotationsProgressStorage({ prefix: '' })).toThrow(/prefixed/);
  });

  it('R-ESSENCE-1 clearing removes every annotation under the prefix, and only those', () => {
    const storage = new progress.AnnotationsProgressStorage();
    const essence = { spec: {}, metadata: { annotations: { 'kopf.zalando.org/x': '1', 'kopf.zalando.org.evil/y': '2', other: '3' } } };
    expect(storage.clear(essence)).toEqual({ spec: {}, metadata: { annotations: { 'kopf.zalando.org.evil/y': '2', other: '3' } } });
    expect(essence.metadata.annotations['kopf.zalando.org/x']).toBe('1');
  });
});

describe('status and smart progress storages', () => {
  it('R-STORAGE-4 status records are nested objects with every field, nulls included', () => {
    const storage = new progress.StatusProgressStorage();
    const patch = new patches.Patch();
    storage.store({ key: 'create_fn/sub', record: { started: T0, retries: 0, success: false, failure: false }, body: {}, patch });
    expect(patch.toMergePatch()).toEqual({
      status: {
        kopf: {
          progress: {
            'create_fn/sub': {
              started: T0,
              stopped: null,
              delayed: null,
              purpose: null,
              retries: 0,
              success: false,
              failure: false,
              message: null,
              subrefs: null,
            },
          },
        },
      },
    });
  });

  it('R-STORAGE-1 the smart storage reads legacy status records but never writes status', async () => {
    const storage = new progress.SmartProgressStorage();
    const legacy = { status: { kopf: { progress: { create_fn: { started: T0, retries: 2 } } } } };
    expect(await storage.fetch({ key: 'create_fn', body: legacy })).toEqual({ started: T0, retries: 2 });
    const patch = new patches.Patch();
    await storage.store({ key: 'create_fn', record: { started: T0, retries: 3 }, body: legacy, patch });
    storage.touch({ body: legacy, patch, value: T1 });
    expect(patch.toMergePatch()).toEqual({
      metadata: {
        annotations: {
          'kopf.zalando.org/create_fn': `{"started":"${T0}","retries":3}`,
          'kopf.zalando.org/touch-dummy': T1,
        },
      },
    });
  });

  it('R-STORAGE-8 the smart storage purges legacy status records as well as annotations', async () => {
    const storage = new progress.SmartProgressStorage();
    const body = {
      metadata: { annotations: { 'kopf.zalando.org/create_fn': '{"retries":1}' } },
      status: { kopf: { progress: { create_fn: { retries: 1 } } } },
    };
    const patch = new patches.Patch();
    await storage.purge({ key: 'create_fn', body, patch });
    expect(patch.toMergePatch()).toEqual({
      metadata: { annotations: { 'kopf.zalando.org/create_fn': null } },
      status: { kopf: { progress: { create_fn: null } } },
    });
  });

  it('R-STORAGE-13 the multi storage fetches from the first storage that has a record', async () => {
    const storage = new progress.MultiProgressStorage([new progress.AnnotationsProgressStorage(), new progress.StatusProgressStorage()]);
    const body = {
      metadata: { annotations: { 'kopf.zalando.org/fn': '{"retries":1}' } },
      status: { kopf: { progress: { fn: { retries: 9 }, only: { retries: 7 } } } },
    };
    expect(await storage.fetch({ key: 'fn', body })).toEqual({ retries: 1 });
    expect(await storage.fetch({ key: 'only', body })).toEqual({ retries: 7 });
  });
});

describe('reference traces', () => {
  const LHC = 'kopf.zalando.org/last-handled-configuration';

  it('4.1 a record created and purged in the same cycle is never sent', async () => {
    const storage = new progress.SmartProgressStorage();
    const diffbaseStorage = new diffbase.AnnotationsDiffBaseStorage();
    const patch = new patches.Patch();
    await storage.store({ key: 'create_fn', record: { started: T0, purpose: 'create', retries: 0, success: false, failure: false }, body: reference, patch });
    await storage.store({
      key: 'create_fn',
      record: { started: T0, stopped: T1, purpose: 'create', retries: 1, success: true, failure: false },
      body: reference,
      patch,
    });
    await storage.purge({ key: 'create_fn', body: reference, patch });
    diffbaseStorage.store({ body: reference, patch, essence: diffbaseStorage.build({ body: reference }) });
    expect(JSON.stringify(patch.toMergePatch())).toBe(
      JSON.stringify({
        metadata: {
          annotations: {
            [LHC]:
              '{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}\n',
          },
        },
      }),
    );
  });

  it('4.3 two handlers: cycle 1 stores both records, cycle 2 purges both and stores the diff-base', async () => {
    const storage = new progress.SmartProgressStorage();
    const diffbaseStorage = new diffbase.AnnotationsDiffBaseStorage();
    const cycle1 = new patches.Patch();
    await storage.store({
      key: 'A',
      record: { started: T0, stopped: T1, delayed: null, purpose: 'create', retries: 1, success: true, failure: false, message: null },
      body: reference,
      patch: cycle1,
    });
    await storage.store({ key: 'B', record: { started: T0, purpose: 'create', retries: 0, success: false, failure: false }, body: reference, patch: cycle1 });
    expect(JSON.stringify(cycle1.split({ statusSubresource: true }).main)).toBe(
      '{"metadata":{"annotations":{"kopf.zalando.org/A":"{\\"started\\":\\"' +
        T0 +
        '\\",\\"stopped\\":\\"' +
        T1 +
        '\\",\\"purpose\\":\\"create\\",\\"retries\\":1,\\"success\\":true,\\"failure\\":false}",' +
        '"kopf.zalando.org/B":"{\\"started\\":\\"' +
        T0 +
        '\\",\\"purpose\\":\\"create\\",\\"retries\\":0,\\"success\\":false,\\"failure\\":false}"}}}',
    );

    const body2 = jsonpatches.applyMergePatch(reference, cycle1.toMergePatch());
    const essence = storage.clear(diffbaseStorage.build({ body: body2 }));
    const cycle2 = new patches.Patch();
    await storage.purge({ key: 'A', body: body2, patch: cycle2 });
    await storage.purge({ key: 'B', body: body2, patch: cycle2 });
    diffbaseStorage.store({ body: body2, patch: cycle2, essence });
    const annotations = cycle2.getAt('metadata.annotations') as Record<string, unknown>;
    expect(Object.keys(annotations)).toEqual(['kopf.zalando.org/A', 'kopf.zalando.org/B', LHC]);
    expect(annotations['kopf.zalando.org/A']).toBeNull();
    expect(annotations['kopf.zalando.org/B']).toBeNull();
    expect(annotations[LHC]).toBe(`${JSON.stringify(diffbaseStorage.build({ body: reference }))}\n`);
  });
});
