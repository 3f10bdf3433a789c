/**
 * Conformance checklist, "Verbs" (devcluster reference section 13, C-28..C-54, C-59, C-60; C-49 and the
 * garbage-collection items C-55..C-58 live in their own suites): get/create/update errors with their
 * exact messages, optimistic concurrency, the patch types, server-side apply, deletion with and
 * without finalizers, deletecollection and dry run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGMAPS, WIDGETS, readWatch, startHarness, type Harness, type HttpResult, type Json } from './harness.js';

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const CONFLICT = (name: string): string =>
  `Operation cannot be fulfilled on widgets.example.com "${name}": the object has been modified; please apply your changes to the latest version and try again`;

const configMap = (name: string, extra: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  ...extra,
  metadata: { name, ...(extra['metadata'] ?? {}) },
});
const applyConfig = (name: string, spec: Json): Json => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec });

function deployment(name: string, containers: Json[]): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers } },
    },
  };
}

/** The (name, image) pairs of a Deployment's containers, in order (server defaults ignored). */
const imagesOf = (d: Json): [string, string][] => (d['spec']['template']['spec']['containers'] as Json[]).map((c) => [c['name'], c['image']]);

describe('conformance: verbs', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  const watchUrl = (name: string, rv: string): string => `${h.cluster.url}${WIDGETS}?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3D${name}`;

  /** A Widget with finalizer example.com/f that has been DELETEd (marked, still present). */
  async function markedWidget(name: string): Promise<Json> {
    await h.widget(name, { size: 1 }, { metadata: { finalizers: ['example.com/f'] } });
    const r = await h.del(`${WIDGETS}/${name}`);
    expect(r.status).toBe(200);
    expect(r.json['metadata']['deletionTimestamp']).toBeDefined();
    return r.json;
  }

  /** Expects a Status error with the given code and reason, and returns its body. */
  function expectError(r: HttpResult, code: number, reason: string): Json {
    expect(r.status, r.text).toBe(code);
    expect(r.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
    return r.json;
  }

  it('C-28 GET of a missing Widget is 404 with the exact message and details', async () => {
    const body = expectError(await h.get(`${WIDGETS}/missing`), 404, 'NotFound');
    expect(body['message']).toBe('widgets.example.com "missing" not found');
    expect(body['details']).toEqual({ name: 'missing', group: 'example.com', kind: 'widgets' });
  });

  it('C-29 creating the same Widget twice is 409 AlreadyExists with the exact message', async () => {
    await h.widget('w1', { size: 1 });
    const before = h.cluster.revision;
    const body = expectError(await h.post(WIDGETS, applyConfig('w1', { size: 2 })), 409, 'AlreadyExists');
    expect(body['message']).toBe('widgets.example.com "w1" already exists');
    expect(body['details']).toEqual({ name: 'w1', group: 'example.com', kind: 'widgets' });
    expect(h.cluster.revision).toBe(before);
    expect((await h.get(`${WIDGETS}/w1`)).json['spec']['size']).toBe(1);
  });

  it('C-30 creating in a missing namespace is 404 with the exact message', async () => {
    const body = expectError(await h.post('/api/v1/namespaces/nope/configmaps', configMap('c30')), 404, 'NotFound');
    expect(body['message']).toBe('namespaces "nope" not found');
    expect(body['details']).toEqual({ name: 'nope', kind: 'namespaces' });
  });

  it('C-31 PUT with an old resourceVersion is a 409 Conflict with the exact message', async () => {
    const v1 = await h.widget('c31');
    const v2 = await h.put(`${WIDGETS}/c31`, { ...v1, spec: { size: 2 } });
    expect(v2.status).toBe(200);
    const body = expectError(await h.put(`${WIDGETS}/c31`, { ...v1, spec: { size: 3 } }), 409, 'Conflict');
    expect(body['message']).toBe(CONFLICT('c31'));
    expect(body['details']).toEqual({ name: 'c31', group: 'example.com', kind: 'widgets' });
    const stored = await h.get(`${WIDGETS}/c31`);
    expect(stored.json['spec']['size']).toBe(2);
    expect(stored.json['metadata']['resourceVersion']).toBe(v2.json['metadata']['resourceVersion']);
  });

  it('C-32 PUT without resourceVersion is 422 for a Widget and allowed for a ConfigMap', async () => {
    const w = await h.widget('c32');
    const noRv = { ...w, metadata: { ...w['metadata'], resourceVersion: undefined }, spec: { size: 2 } };
    const body = expectError(await h.put(`${WIDGETS}/c32`, noRv), 422, 'Invalid');
    expect(body['message']).toContain('must be specified for an update');
    expect(body['details']['causes']).toContainEqual(expect.objectContaining({ field: 'metadata.resourceVersion' }));
    expect((await h.get(`${WIDGETS}/c32`)).json['spec']['size']).toBe(1);

    expect((await h.post(CONFIGMAPS, configMap('c32', { data: { a: '1' } }))).status).toBe(201);
    const cm = await h.put(`${CONFIGMAPS}/c32`, configMap('c32', { data: { a: '2' } }));
    expect(cm.status).toBe(200);
    expect(cm.json['data']).toEqual({ a: '2' });
  });

  it('C-33 PUT whose body name differs from the URL is 400 with the exact message', async () => {
    expect((await h.post(CONFIGMAPS, configMap('a'))).status).toBe(201);
    const body = expectError(await h.put(`${CONFIGMAPS}/a`, configMap('b')), 400, 'BadRequest');
    expect(body['message']).toBe('the name of the object (b) does not match the name on the URL (a)');
    expect((await h.get(`${CONFIGMAPS}/b`)).status).toBe(404);
  });

  it('C-34 PUT of a missing Widget is 404, of a missing Lease creates it', async () => {
    const missing = expectError(await h.put(`${WIDGETS}/c34`, applyConfig('c34', { size: 1 })), 404, 'NotFound');
    expect(missing['message']).toBe('widgets.example.com "c34" not found');
    const lease = await h.put(`${LEASES}/c34`, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'c34' },
      spec: { holderIdentity: 'me' },
    });
    expect(lease.status).toBe(201);
    expect(lease.json['metadata']['uid']).toBeDefined();
    expect((await h.get(`${LEASES}/c34`)).json['spec']['holderIdentity']).toBe('me');
  });

  it('C-35 merge patch deletes keys with null and replaces scalars', async () => {
    await h.widget('c35', { size: 1, mode: 'a' });
    const r = await h.patch(`${WIDGETS}/c35`, { spec: { mode: null, size: 4 } });
    expect(r.status).toBe(200);
    expect(r.json['spec']).not.toHaveProperty('mode');
    expect(r.json['spec']['size']).toBe(4);
    expect(r.json['spec']['color']).toBe('blue');
  });

  it('C-36 a merge patch carrying an older resourceVersion is 409 Conflict', async () => {
    const v1 = await h.widget('c36');
    expect((await h.patch(`${WIDGETS}/c36`, { spec: { size: 2 } })).status).toBe(200);
    const body = expectError(
      await h.patch(`${WIDGETS}/c36`, { metadata: { resourceVersion: v1['metadata']['resourceVersion'] }, spec: { size: 3 } }),
      409,
      'Conflict',
    );
    expect(body['message']).toBe(CONFLICT('c36'));
    expect((await h.get(`${WIDGETS}/c36`)).json['spec']['size']).toBe(2);
  });

  it('C-37 a JSON patch whose resourceVersion test fails is 422 with the exact generic message', async () => {
    const v1 = await h.widget('c37');
    const v2 = (await h.patch(`${WIDGETS}/c37`, { metadata: { labels: { step: '2' } } })).json;
    const ops = (rv: string): Json[] => [
      { op: 'test', path: '/metadata/resourceVersion', value: rv },
      { op: 'replace', path: '/spec/size', value: 5 },
    ];
    const before = h.cluster.revision;
    const body = expectError(await h.patch(`${WIDGETS}/c37`, ops(v1['metadata']['resourceVersion']), 'json'), 422, 'Invalid');
    expect(body['message']).toBe('the server rejected our request due to an error in our request');
    expect(body['details'] ?? {}).toEqual({});
    expect(h.cluster.revision).toBe(before);
    expect((await h.get(`${WIDGETS}/c37`)).json).toEqual(v2);
    const ok = await h.patch(`${WIDGETS}/c37`, ops(v2['metadata']['resourceVersion']), 'json');
    expect(ok.status).toBe(200);
    expect(ok.json['spec']['size']).toBe(5);
  });

  it('C-38 JSON patch removing a missing path is 422; a body that is not an array is 400', async () => {
    const w = await h.widget('c38');
    expectError(await h.patch(`${WIDGETS}/c38`, [{ op: 'remove', path: '/spec/doesNotExist' }], 'json'), 422, 'Invalid');
    expectError(await h.patch(`${WIDGETS}/c38`, {}, 'json'), 400, 'BadRequest');
    expect((await h.get(`${WIDGETS}/c38`)).json['metadata']['resourceVersion']).toBe(w['metadata']['resourceVersion']);
  });

  it('C-39 strategic merge patch on a Widget is 415 listing the CR patch types', async () => {
    await h.widget('c39');
    const body = expectError(await h.patch(`${WIDGETS}/c39`, { spec: { size: 2 } }, 'strategic'), 415, 'UnsupportedMediaType');
    expect(
      body['message'].startsWith(
        'the body of the request was in an unknown format - accepted media types include: ' +
          'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      ),
    ).toBe(true);
    expect((await h.get(`${WIDGETS}/c39`)).json['spec']['size']).toBe(1);
  });

  it('C-40 PATCH with text/plain is 415; a merge patch of a missing Widget is 404', async () => {
    await h.widget('c40');
    const body = expectError(await h.request('PATCH', `${WIDGETS}/c40`, { spec: { size: 2 } }, { contentType: 'text/plain' }), 415, 'UnsupportedMediaType');
    expect(body['message']).toMatch(/^the body of the request was in an unknown format - accepted media types include: /);
    const missing = expectError(await h.patch(`${WIDGETS}/c40-missing`, { spec: { size: 2 } }), 404, 'NotFound');
    expect(missing['message']).toBe('widgets.example.com "c40-missing" not found');
  });

  it('C-41 strategic merge patch merges Deployment containers by name', async () => {
    const created = await h.post(
      DEPLOYMENTS,
      deployment('c41', [
        { name: 'a', image: 'a:1' },
        { name: 'b', image: 'b:1' },
      ]),
    );
    expect(created.status).toBe(201);
    const r = await h.patch(`${DEPLOYMENTS}/c41`, { spec: { template: { spec: { containers: [{ name: 'b', image: 'x:2' }] } } } }, 'strategic');
    expect(r.status).toBe(200);
    expect(imagesOf(r.json)).toEqual([
      ['a', 'a:1'],
      ['b', 'x:2'],
    ]);
  });

  it('C-42 strategic merge patch understands $patch delete, finalizer unions and $setElementOrder', async () => {
    expect(
      (
        await h.post(
          DEPLOYMENTS,
          deployment('c42', [
            { name: 'a', image: 'a:1' },
            { name: 'b', image: 'b:1' },
            { name: 'c', image: 'c:1' },
          ]),
        )
      ).status,
    ).toBe(201);
    const deleted = await h.patch(`${DEPLOYMENTS}/c42`, { spec: { template: { spec: { containers: [{ name: 'a', $patch: 'delete' }] } } } }, 'strategic');
    expect(deleted.status).toBe(200);
    expect(imagesOf(deleted.json)).toEqual([
      ['b', 'b:1'],
      ['c', 'c:1'],
    ]);

    const reordered = await h.patch(
      `${DEPLOYMENTS}/c42`,
      {
        spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'b' }], containers: [{ name: 'b', image: 'b:2' }] } } },
      },
      'strategic',
    );
    expect(reordered.status).toBe(200);
    expect(imagesOf(reordered.json)).toEqual([
      ['c', 'c:1'],
      ['b', 'b:2'],
    ]);

    expect((await h.post(CONFIGMAPS, configMap('c42', { metadata: { finalizers: ['y'] } }))).status).toBe(201);
    const union = await h.patch(`${CONFIGMAPS}/c42`, { metadata: { finalizers: ['x'] } }, 'strategic');
    expect(union.status).toBe(200);
    expect(union.json['metadata']['finalizers']).toEqual(['y', 'x']);
  });

  it('C-43 apply without fieldManager is 422 with the exact message', async () => {
    const before = h.cluster.revision;
    const body = expectError(await h.patch(`${WIDGETS}/c43`, applyConfig('c43', { size: 1 }), 'apply'), 422, 'Invalid');
    expect(body['message']).toBe('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    expect(h.cluster.revision).toBe(before);
  });

  it('C-44 apply of a missing Widget creates it and records an Apply manager', async () => {
    const r = await h.patch(`${WIDGETS}/c44?fieldManager=a`, applyConfig('c44', { size: 3 }), 'apply');
    expect(r.status).toBe(201);
    expect(r.json['spec']).toEqual({ size: 3, color: 'blue' });
    const entries = r.json['metadata']['managedFields'] as Json[];
    expect(entries).toContainEqual(expect.objectContaining({ manager: 'a', operation: 'Apply', apiVersion: 'example.com/v1', fieldsType: 'FieldsV1' }));
    expect((await h.get(`${WIDGETS}/c44`)).status).toBe(200);
  });

  it('C-45 applying a field owned by another manager conflicts unless forced', async () => {
    expect((await h.patch(`${WIDGETS}/c45?fieldManager=a`, applyConfig('c45', { size: 3 }), 'apply')).status).toBe(201);
    const before = h.cluster.revision;
    const body = expectError(await h.patch(`${WIDGETS}/c45?fieldManager=b`, applyConfig('c45', { size: 4 }), 'apply'), 409, 'Conflict');
    expect(body['message'].startsWith('Apply failed with 1 conflict: conflict with "a"')).toBe(true);
    expect(body['details']['causes']).toContainEqual(expect.objectContaining({ reason: 'FieldManagerConflict', field: '.spec.size' }));
    expect(h.cluster.revision).toBe(before);
    const forced = await h.patch(`${WIDGETS}/c45?fieldManager=b&force=true`, applyConfig('c45', { size: 4 }), 'apply');
    expect(forced.status).toBe(200);
    expect(forced.json['spec']['size']).toBe(4);
  });

  it("C-46 a field dropped from a manager's next apply is removed", async () => {
    expect((await h.patch(`${WIDGETS}/c46?fieldManager=a`, applyConfig('c46', { size: 3, mode: 'a' }), 'apply')).status).toBe(201);
    const r = await h.patch(`${WIDGETS}/c46?fieldManager=a`, applyConfig('c46', { size: 3 }), 'apply');
    expect(r.status).toBe(200);
    expect(r.json['spec']).not.toHaveProperty('mode');
    expect(r.json['spec']['size']).toBe(3);
  });

  it('C-47 a merge patch makes its manager the owner so a later apply conflicts with it', async () => {
    await h.widget('c47', { size: 1 });
    expect((await h.patch(`${WIDGETS}/c47?fieldManager=m`, { spec: { size: 2 } })).status).toBe(200);
    const body = expectError(await h.patch(`${WIDGETS}/c47?fieldManager=a`, applyConfig('c47', { size: 5 }), 'apply'), 409, 'Conflict');
    expect(body['message']).toContain('conflict with "m"');
    expect(body['details']['causes']).toContainEqual(expect.objectContaining({ reason: 'FieldManagerConflict', field: '.spec.size' }));
    expect((await h.get(`${WIDGETS}/c47`)).json['spec']['size']).toBe(2);
  });

  it('C-48 DELETE of a Widget without finalizers answers a Success Status and one DELETED event', async () => {
    const w = await h.widget('c48');
    let del: HttpResult | undefined;
    const watched = await readWatch(watchUrl('c48', w['metadata']['resourceVersion']), {
      count: 2,
      timeoutMs: 1500,
      onOpen: async () => {
        del = await h.del(`${WIDGETS}/c48`);
      },
    });
    expect(del!.status).toBe(200);
    expect(del!.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'c48', group: 'example.com', kind: 'widgets', uid: w['metadata']['uid'] },
    });
    expect((await h.get(`${WIDGETS}/c48`)).status).toBe(404);
    expect(watched.events.map((e) => e['type'])).toEqual(['DELETED']);
    expect(watched.events[0]!['object']['metadata']['resourceVersion']).toBe(String(h.cluster.revision));
  });

  it('C-50 DELETE of a Widget with a finalizer marks it and bumps generation', async () => {
    const w = await h.widget('c50', { size: 1 }, { metadata: { finalizers: ['example.com/f'] } });
    let del: HttpResult | undefined;
    const watched = await readWatch(watchUrl('c50', w['metadata']['resourceVersion']), {
      count: 1,
      timeoutMs: 3000,
      onOpen: async () => {
        del = await h.del(`${WIDGETS}/c50`);
      },
    });
    expect(del!.status).toBe(200);
    const meta = del!.json['metadata'] as Json;
    expect(del!.json['kind']).toBe('Widget');
    expect(meta['deletionTimestamp']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(meta['deletionGracePeriodSeconds']).toBe(0);
    expect(meta['generation']).toBe(2);
    expect(meta['finalizers']).toEqual(['example.com/f']);
    const got = await h.get(`${WIDGETS}/c50`);
    expect(got.status).toBe(200);
    expect(got.json['metadata']['deletionTimestamp']).toBe(meta['deletionTimestamp']);
    expect(watched.events).toHaveLength(1);
    expect(watched.events[0]!['type']).toBe('MODIFIED');
    expect(watched.events[0]!['object']['metadata']['deletionTimestamp']).toBe(meta['deletionTimestamp']);
  });

  it('C-51 adding a finalizer to an object being deleted is 422 on metadata.finalizers', async () => {
    const marked = await markedWidget('c51');
    const before = h.cluster.revision;
    const body = expectError(await h.patch(`${WIDGETS}/c51`, { metadata: { finalizers: ['example.com/f', 'example.com/g'] } }), 422, 'Invalid');
    const cause = (body['details']['causes'] as Json[]).find((c) => c['field'] === 'metadata.finalizers');
    expect(cause).toBeDefined();
    expect(cause!['message']).toMatch(/^Forbidden: no new finalizers can be added if the object is being deleted/);
    expect(h.cluster.revision).toBe(before);
    expect((await h.get(`${WIDGETS}/c51`)).json).toEqual(marked);
  });

  it('C-52 removing the last finalizer deletes the object with exactly one DELETED event', async () => {
    const marked = await markedWidget('c52');
    let removed: HttpResult | undefined;
    const watched = await readWatch(watchUrl('c52', marked['metadata']['resourceVersion']), {
      count: 2,
      timeoutMs: 1500,
      onOpen: async () => {
        removed = await h.patch(`${WIDGETS}/c52`, { metadata: { finalizers: null } });
      },
    });
    expect(removed!.status).toBe(200);
    expect(removed!.json['metadata']).not.toHaveProperty('finalizers');
    expect(removed!.json['metadata']['deletionTimestamp']).toBe(marked['metadata']['deletionTimestamp']);
    expect(watched.events.map((e) => e['type'])).toEqual(['DELETED']);
    const last = watched.events[0]!['object'] as Json;
    expect(last['metadata']['finalizers']).toEqual(['example.com/f']);
    expect(last['metadata']['resourceVersion']).toBe(String(h.cluster.revision));
    expect(Number(last['metadata']['resourceVersion'])).toBeGreaterThan(Number(marked['metadata']['resourceVersion']));
    expect((await h.get(`${WIDGETS}/c52`)).status).toBe(404);
  });

  it('C-53 PUT cannot remove the deletionTimestamp of an object being deleted', async () => {
    const marked = await markedWidget('c53');
    const { deletionTimestamp: _dt, deletionGracePeriodSeconds: _dg, ...metaWithout } = marked['metadata'] as Json;
    const r = await h.put(`${WIDGETS}/c53`, { ...marked, metadata: { ...metaWithout, labels: { kept: 'yes' } } });
    expect(r.status).toBe(200);
    expect(r.json['metadata']['deletionTimestamp']).toBe(marked['metadata']['deletionTimestamp']);
    expect(r.json['metadata']['deletionGracePeriodSeconds']).toBe(0);
    expect(r.json['metadata']['labels']).toEqual({ kept: 'yes' });
    expect(r.json['metadata']['finalizers']).toEqual(['example.com/f']);
    const stored = await h.get(`${WIDGETS}/c53`);
    expect(stored.json['metadata']['deletionTimestamp']).toBe(marked['metadata']['deletionTimestamp']);
  });

  it('C-54 DELETE with a mismatching uid precondition is 409 Conflict', async () => {
    const w = await h.widget('c54');
    const before = h.cluster.revision;
    const body = expectError(await h.del(`${WIDGETS}/c54`, { preconditions: { uid: 'other' } }), 409, 'Conflict');
    expect(body['message']).toBe(
      `Operation cannot be fulfilled on widgets.example.com "c54": the UID in the precondition (other) does not match the UID in record (${w['metadata']['uid']}). The object might have been deleted and then recreated`,
    );
    expect(h.cluster.revision).toBe(before);
    expect((await h.get(`${WIDGETS}/c54`)).status).toBe(200);
  });

  it('C-59 deletecollection with a label selector answers the matched objects and deletes only those', async () => {
    for (const [name, app] of [
      ['c59-a', 'x'],
      ['c59-b', 'x'],
      ['c59-c', 'y'],
    ] as const) {
      expect((await h.post(CONFIGMAPS, configMap(name, { metadata: { labels: { app } } }))).status).toBe(201);
    }
    const r = await h.del(`${CONFIGMAPS}?labelSelector=app%3Dx`);
    expect(r.status).toBe(200);
    expect(r.json['kind']).toBe('ConfigMapList');
    expect(r.json['items'].map((i: Json) => i['metadata']['name'])).toEqual(['c59-a', 'c59-b']);
    expect((await h.get(`${CONFIGMAPS}/c59-a`)).status).toBe(404);
    expect((await h.get(`${CONFIGMAPS}/c59-b`)).status).toBe(404);
    expect((await h.get(`${CONFIGMAPS}/c59-c`)).status).toBe(200);
  });

  it('C-60 dryRun=All create answers the would-be object and stores nothing; dryRun=Foo is 422', async () => {
    const start = String(h.cluster.revision);
    let dry: HttpResult | undefined;
    let real: HttpResult | undefined;
    let revisionAfterDry = -1;
    const watched = await readWatch(`${h.cluster.url}${WIDGETS}?watch=true&resourceVersion=${start}`, {
      count: 1,
      timeoutMs: 3000,
      onOpen: async () => {
        dry = await h.post(`${WIDGETS}?dryRun=All`, applyConfig('c60', { size: 2 }));
        revisionAfterDry = h.cluster.revision;
        real = await h.post(WIDGETS, applyConfig('c60-real', { size: 1 }));
      },
    });
    expect(dry!.status).toBe(201);
    expect(dry!.json['spec']).toEqual({ size: 2, color: 'blue' });
    expect(dry!.json['metadata']['uid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(dry!.json['metadata']['creationTimestamp']).toBeDefined();
    expect(dry!.json['metadata']['resourceVersion'] ?? '').toBe('');
    expect(revisionAfterDry).toBe(Number(start));
    expect((await h.get(`${WIDGETS}/c60`)).status).toBe(404);
    expect(real!.status).toBe(201);
    expect(real!.json['metadata']['resourceVersion']).toBe(String(Number(start) + 1));
    expect(watched.events).toHaveLength(1);
    expect(watched.events[0]!['object']['metadata']['name']).toBe('c60-real');

    const bad = expectError(await h.post(`${WIDGETS}?dryRun=Foo`, applyConfig('c60-foo', { size: 1 })), 422, 'Invalid');
    expect(bad['message']).toBe('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"');
    expect((await h.get(`${WIDGETS}/c60-foo`)).status).toBe(404);
  });

  it('D-VERB-30 dryRun=All on update, patch, delete and deletecollection answers the would-be result and writes nothing', async () => {
    const w = await h.widget('dry', { size: 1 }, { metadata: { finalizers: ['example.com/f'] } });
    expect((await h.post(CONFIGMAPS, configMap('dry', { metadata: { labels: { dry: 'yes' } } }))).status).toBe(201);
    const revision = h.cluster.revision;
    let put: HttpResult | undefined;
    let patched: HttpResult | undefined;
    let marked: HttpResult | undefined;
    let removed: HttpResult | undefined;
    let collection: HttpResult | undefined;
    const watched = await readWatch(`${h.cluster.url}${WIDGETS}?watch=true&resourceVersion=${revision}`, {
      count: 1,
      timeoutMs: 3000,
      onOpen: async () => {
        put = await h.put(`${WIDGETS}/dry?dryRun=All`, { ...w, spec: { size: 3 } });
        patched = await h.patch(`${WIDGETS}/dry?dryRun=All`, { spec: { size: 4 } });
        marked = await h.del(`${WIDGETS}/dry?dryRun=All`);
        removed = await h.del(`${CONFIGMAPS}/dry`, { dryRun: ['All'] });
        collection = await h.del(`${CONFIGMAPS}?labelSelector=dry%3Dyes&dryRun=All`);
        // The first event the watch sees must be this real write.
        await h.patch(`${WIDGETS}/dry`, { metadata: { labels: { real: 'write' } } });
      },
    });
    expect(put!.status).toBe(200);
    expect(put!.json['spec']['size']).toBe(3);
    expect(put!.json['metadata']['generation']).toBe(2);
    expect(patched!.status).toBe(200);
    expect(patched!.json['spec']['size']).toBe(4);
    expect(marked!.status).toBe(200);
    expect(marked!.json['metadata']['deletionTimestamp']).toBeDefined();
    expect(removed!.status).toBe(200);
    expect(removed!.json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'dry', kind: 'configmaps' } });
    expect(collection!.status).toBe(200);
    expect(collection!.json['items'].map((i: Json) => i['metadata']['name'])).toEqual(['dry']);
    expect(watched.events).toHaveLength(1);
    expect(watched.events[0]!['object']['metadata']['labels']).toEqual({ real: 'write' });
    expect(watched.events[0]!['object']['metadata']['resourceVersion']).toBe(String(revision + 1));
    const stored = (await h.get(`${WIDGETS}/dry`)).json;
    expect(stored['spec']['size']).toBe(1);
    expect(stored['metadata']).not.toHaveProperty('deletionTimestamp');
    expect((await h.get(`${CONFIGMAPS}/dry`)).status).toBe(200);
  });
});
