/**
 * Conformance checklist, "Metadata" (devcluster reference section 13, C-14..C-27 except C-25, which the
 * Deployment suite owns): uid, resourceVersion, creationTimestamp, names and generateName, label
 * and annotation rules, namespace consistency, generation and no-op writes, ownerReferences.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGMAPS, WIDGETS, readWatch, startHarness, type Harness, type Json } from './harness.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

const configMap = (name: string, extra: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  ...extra,
  metadata: { name, ...(extra['metadata'] ?? {}) },
});
const widgetBody = (metadata: Json, spec: Json = { size: 1 }): Json => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata, spec });

/** A second CRD in the same group, without a status subresource (C-24). */
const GADGETS_CRD: Json = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer' } } },
              status: { type: 'object', properties: { phase: { type: 'string' } } },
            },
          },
        },
      },
    ],
  },
};
const GADGETS = '/apis/example.com/v1/namespaces/default/gadgets';

describe('conformance: metadata', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-14 a created ConfigMap has a v4 uid, a decimal RV, a second-precision creationTimestamp and no generation', async () => {
    const r = await h.post(CONFIGMAPS, configMap('c14', { data: { a: 'b' } }));
    expect(r.status).toBe(201);
    const meta = r.json['metadata'] as Json;
    expect(meta['uid']).toMatch(UUID_V4);
    expect(meta['resourceVersion']).toMatch(/^[1-9]\d*$/);
    expect(meta['resourceVersion']).toBe(String(h.cluster.revision));
    expect(meta['creationTimestamp']).toMatch(TIME);
    expect(meta).not.toHaveProperty('generation');
    expect(meta).not.toHaveProperty('selfLink');
    expect(r.json['data']).toEqual({ a: 'b' });
  });

  it('C-15 RVs strictly increase across resources and a list reports at least the last RV', async () => {
    const a = await h.post(CONFIGMAPS, configMap('c15'));
    const b = await h.post('/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c15' }, stringData: { k: 'v' } });
    const c = await h.post(WIDGETS, widgetBody({ name: 'c15' }));
    const rvs = [a, b, c].map((r) => {
      expect(r.status).toBe(201);
      return Number(r.json['metadata']['resourceVersion']);
    });
    expect(rvs[0]).toBeLessThan(rvs[1]!);
    expect(rvs[1]).toBeLessThan(rvs[2]!);
    const list = await h.get('/api/v1/namespaces/kube-system/configmaps');
    expect(Number(list.json['metadata']['resourceVersion'])).toBeGreaterThanOrEqual(rvs[2]!);
    expect(list.json['metadata']['resourceVersion']).toMatch(/^[1-9]\d*$/);
  });

  it('C-16 a create carrying metadata.resourceVersion is a 500 with empty reason and the exact message', async () => {
    const before = h.cluster.revision;
    const r = await h.post(WIDGETS, widgetBody({ name: 'c16', resourceVersion: '5' }));
    expect(r.status).toBe(500);
    expect(r.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500 });
    expect(r.json['reason'] ?? '').toBe('');
    expect(r.json['message']).toBe('resourceVersion should not be set on objects to be created');
    expect(h.cluster.revision).toBe(before);
    expect((await h.get(`${WIDGETS}/c16`)).status).toBe(404);
  });

  it('C-17 client uid and creationTimestamp are replaced on create', async () => {
    const started = Date.now();
    const r = await h.post(WIDGETS, widgetBody({ name: 'c17', uid: 'abc', creationTimestamp: '2001-01-01T00:00:00Z' }));
    expect(r.status).toBe(201);
    const meta = r.json['metadata'] as Json;
    expect(meta['uid']).toMatch(UUID_V4);
    expect(meta['creationTimestamp']).toMatch(TIME);
    const created = Date.parse(meta['creationTimestamp'] as string);
    expect(created).toBeGreaterThanOrEqual(Math.floor(started / 1000) * 1000);
    expect(created).toBeLessThanOrEqual(Date.now());
    const stored = await h.get(`${WIDGETS}/c17`);
    expect(stored.json['metadata']['uid']).toBe(meta['uid']);
  });

  it('C-18 generateName appends five characters from the upstream alphabet', async () => {
    const names = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const r = await h.post(WIDGETS, widgetBody({ generateName: 'w-' }));
      expect(r.status).toBe(201);
      expect(r.json['metadata']['name']).toMatch(/^w-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(r.json['metadata']['generateName']).toBe('w-');
      names.add(r.json['metadata']['name'] as string);
      expect((await h.get(`${WIDGETS}/${r.json['metadata']['name']}`)).status).toBe(200);
    }
    expect(names.size).toBe(3);
  });

  it('C-19 a create without name and generateName is 422 Required on metadata.name', async () => {
    const before = h.cluster.revision;
    const r = await h.post(WIDGETS, widgetBody({}));
    expect(r.status).toBe(422);
    expect(r.json['reason']).toBe('Invalid');
    expect(r.json['details']['causes']).toContainEqual({
      reason: 'FieldValueRequired',
      field: 'metadata.name',
      message: 'Required value: name or generateName is required',
    });
    expect(h.cluster.revision).toBe(before);
  });

  it('C-20 names follow the per-resource rule: subdomain for CRs, label for Namespaces, DNS-1035 for Services', async () => {
    const before = h.cluster.revision;
    const w = await h.post(WIDGETS, widgetBody({ name: 'Bad_Name' }));
    expect(w.status).toBe(422);
    expect(w.json['details']).toMatchObject({ name: 'Bad_Name', group: 'example.com', kind: 'Widget' });
    const wCause = (w.json['details']['causes'] as Json[]).find((c) => c['field'] === 'metadata.name');
    expect(wCause).toMatchObject({ reason: 'FieldValueInvalid' });
    expect(wCause!['message']).toMatch(/^Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);

    const ns = await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } });
    expect(ns.status).toBe(422);
    expect(ns.json['details']['causes']).toContainEqual(expect.objectContaining({ reason: 'FieldValueInvalid', field: 'metadata.name' }));
    expect((await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'c20-ab' } })).status).toBe(201);

    const svc = await h.post('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: '1svc' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(svc.status).toBe(422);
    expect(svc.json['details']['causes']).toContainEqual(expect.objectContaining({ reason: 'FieldValueInvalid', field: 'metadata.name' }));
    const okSvc = await h.post('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc1' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(okSvc.status).toBe(201);
    expect(h.cluster.revision).toBeGreaterThan(before);
    expect((await h.get(`${WIDGETS}/Bad_Name`)).status).toBe(404);
  });

  it('C-21 bad label keys, long label values and oversized annotations are 422 on the whole map path', async () => {
    const before = h.cluster.revision;
    const badKey = await h.post(CONFIGMAPS, configMap('c21-a', { metadata: { labels: { 'bad key': 'v' } } }));
    expect(badKey.status).toBe(422);
    expect(badKey.json['details']['causes']).toContainEqual(expect.objectContaining({ reason: 'FieldValueInvalid', field: 'metadata.labels' }));
    const longValue = await h.post(CONFIGMAPS, configMap('c21-b', { metadata: { labels: { ok: 'x'.repeat(64) } } }));
    expect(longValue.status).toBe(422);
    expect(longValue.json['details']['causes']).toContainEqual(expect.objectContaining({ reason: 'FieldValueInvalid', field: 'metadata.labels' }));
    const big = await h.post(CONFIGMAPS, configMap('c21-c', { metadata: { annotations: { a: 'x'.repeat(262144) } } }));
    expect(big.status).toBe(422);
    expect(big.json['details']['causes']).toContainEqual(expect.objectContaining({ reason: 'FieldValueTooLong', field: 'metadata.annotations' }));
    expect(h.cluster.revision).toBe(before);
    // One byte less is accepted: the limit is on the sum of keys and values.
    const fits = await h.post(CONFIGMAPS, configMap('c21-d', { metadata: { labels: { ok: 'x'.repeat(63) }, annotations: { a: 'x'.repeat(262143) } } }));
    expect(fits.status).toBe(201);
  });

  it('C-22 a body namespace different from the URL namespace is 400 with the exact message', async () => {
    expect((await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'b' } })).status).toBe(201);
    const before = h.cluster.revision;
    const r = await h.post('/api/v1/namespaces/b/configmaps', configMap('c22', { metadata: { namespace: 'a' } }));
    expect(r.status).toBe(400);
    expect(r.json['reason']).toBe('BadRequest');
    expect(r.json['message']).toBe('the namespace of the provided object does not match the namespace sent on the request');
    expect(h.cluster.revision).toBe(before);
    const filled = await h.post('/api/v1/namespaces/b/configmaps', configMap('c22'));
    expect(filled.json['metadata']['namespace']).toBe('b');
  });

  it('C-23 label changes keep generation, spec changes bump it', async () => {
    const created = await h.widget('c23');
    expect(created['metadata']['generation']).toBe(1);
    const labelled = await h.put(`${WIDGETS}/c23`, { ...created, metadata: { ...created['metadata'], labels: { x: 'y' } } });
    expect(labelled.status).toBe(200);
    expect(labelled.json['metadata']['resourceVersion']).not.toBe(created['metadata']['resourceVersion']);
    expect(labelled.json['metadata']['labels']).toEqual({ x: 'y' });
    expect(labelled.json['metadata']['generation']).toBe(1);
    const resized = await h.put(`${WIDGETS}/c23`, { ...labelled.json, spec: { ...labelled.json['spec'], size: 2 } });
    expect(resized.status).toBe(200);
    expect(resized.json['spec']['size']).toBe(2);
    expect(resized.json['metadata']['generation']).toBe(2);
    expect(Number(resized.json['metadata']['resourceVersion'])).toBeGreaterThan(Number(labelled.json['metadata']['resourceVersion']));
  });

  it('C-24 status changes bump generation without a status subresource and are ignored through the main endpoint with one', async () => {
    const crd = await h.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', GADGETS_CRD);
    expect(crd.status).toBe(201);
    await h.cluster.settle();
    const g = await h.post(GADGETS, { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'c24' }, spec: { size: 1 }, status: { phase: 'new' } });
    expect(g.status).toBe(201);
    expect(g.json['status']).toEqual({ phase: 'new' });
    expect(g.json['metadata']['generation']).toBe(1);
    const changed = await h.put(`${GADGETS}/c24`, { ...g.json, status: { phase: 'ready' } });
    expect(changed.status).toBe(200);
    expect(changed.json['status']).toEqual({ phase: 'ready' });
    expect(changed.json['metadata']['generation']).toBe(2);

    // Widgets have a status subresource: the main endpoint resets status, so the PUT is a no-op.
    const w = await h.widget('c24');
    const revision = h.cluster.revision;
    const ignored = await h.put(`${WIDGETS}/c24`, { ...w, status: { phase: 'ready' } });
    expect(ignored.status).toBe(200);
    expect(ignored.json['status']).toBeUndefined();
    expect(ignored.json['metadata']['resourceVersion']).toBe(w['metadata']['resourceVersion']);
    expect(ignored.json['metadata']['generation']).toBe(1);
    expect(h.cluster.revision).toBe(revision);
  });

  it('C-26 a PUT identical to the stored object is a 200 no-op without a watch event', async () => {
    const w = await h.widget('c26');
    const rv = w['metadata']['resourceVersion'] as string;
    const revision = h.cluster.revision;
    let noop: Json | undefined;
    const watched = await readWatch(`${h.cluster.url}${WIDGETS}?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dc26`, {
      count: 1,
      timeoutMs: 3000,
      onOpen: async () => {
        const r = await h.put(`${WIDGETS}/c26`, w);
        noop = { status: r.status, body: r.json, revision: h.cluster.revision };
        // A real change afterwards: it must be the first (and only) event the watch sees.
        await h.patch(`${WIDGETS}/c26`, { metadata: { labels: { after: 'noop' } } });
      },
    });
    expect(noop!['status']).toBe(200);
    expect(noop!['body']['metadata']['resourceVersion']).toBe(rv);
    expect(noop!['revision']).toBe(revision);
    expect(watched.status).toBe(200);
    expect(watched.events).toHaveLength(1);
    expect(watched.events[0]!['type']).toBe('MODIFIED');
    expect(watched.events[0]!['object']['metadata']['labels']).toEqual({ after: 'noop' });
    expect(Number(watched.events[0]!['object']['metadata']['resourceVersion'])).toBe(revision + 1);
  });

  it('C-27 two controller ownerReferences are 422 on metadata.ownerReferences', async () => {
    const before = h.cluster.revision;
    const ref = (name: string, uid: string): Json => ({ apiVersion: 'example.com/v1', kind: 'Widget', name, uid, controller: true });
    const r = await h.post(WIDGETS, widgetBody({ name: 'c27', ownerReferences: [ref('o1', 'u1'), ref('o2', 'u2')] }));
    expect(r.status).toBe(422);
    expect(r.json['reason']).toBe('Invalid');
    const cause = (r.json['details']['causes'] as Json[]).find((c) => c['field'] === 'metadata.ownerReferences');
    expect(cause).toBeDefined();
    expect(cause!['message']).toContain('Only one reference can have Controller set to true');
    expect(h.cluster.revision).toBe(before);
    expect((await h.get(`${WIDGETS}/c27`)).status).toBe(404);
  });
});
