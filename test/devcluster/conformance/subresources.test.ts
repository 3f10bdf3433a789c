/**
 * Conformance checklist C-71..C-75 (C-76, Deployment scale, lives with the built-ins suite): the
 * status and scale subresources of a custom resource, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, WIDGETS, type Harness } from './harness.js';

describe('conformance: status and scale subresources', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-71 create drops status and starts at generation 1', async () => {
    const r = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 's71' }, spec: { size: 2 }, status: { phase: 'x' } });
    expect(r.status).toBe(201);
    expect(r.json['status']).toBeUndefined();
    expect(r.json['metadata']['generation']).toBe(1);
    const stored = await h.get(`${WIDGETS}/s71`);
    expect(stored.json['status']).toBeUndefined();
    expect(stored.json['spec']['size']).toBe(2);
    expect(stored.json['metadata']['generation']).toBe(1);
  });

  it('C-72 PUT on /status changes only the status; generation stays', async () => {
    const created = await h.widget('s72', { size: 1 }, { metadata: { labels: { app: 'one' } } });
    const body = {
      ...created,
      metadata: { ...created['metadata'], labels: { app: 'two' } },
      spec: { ...created['spec'], size: 5 },
      status: { phase: 'Running' },
    };
    const r = await h.put(`${WIDGETS}/s72/status`, body);
    expect(r.status).toBe(200);
    expect(r.json['status']).toEqual({ phase: 'Running' });
    expect(r.json['spec']['size']).toBe(1);
    expect(r.json['metadata']['labels']).toEqual({ app: 'one' });
    expect(r.json['metadata']['generation']).toBe(1);
    expect(Number(r.json['metadata']['resourceVersion'])).toBeGreaterThan(Number(created['metadata']['resourceVersion']));

    const stored = (await h.get(`${WIDGETS}/s72`)).json;
    expect(stored['status']).toEqual({ phase: 'Running' });
    expect(stored['spec']['size']).toBe(1);
    expect(stored['metadata']['labels']).toEqual({ app: 'one' });
    expect(stored['metadata']['generation']).toBe(1);

    // The status write keeps the resourceVersion precondition of the main resource.
    const stale = await h.put(`${WIDGETS}/s72/status`, { ...body, status: { phase: 'Stale' } });
    expect(stale.status).toBe(409);
    expect(stale.json['reason']).toBe('Conflict');
    expect((await h.get(`${WIDGETS}/s72`)).json['status']).toEqual({ phase: 'Running' });
  });

  it('C-73 a merge patch of status on the main resource is accepted and ignored', async () => {
    await h.widget('s73');
    const set = await h.patch(`${WIDGETS}/s73/status`, { status: { phase: 'Ready' } });
    expect(set.status).toBe(200);
    const before = set.json;
    const r = await h.patch(`${WIDGETS}/s73`, { status: { phase: 'Changed' } });
    expect(r.status).toBe(200);
    expect(r.json['status']).toEqual({ phase: 'Ready' });
    // Nothing effective changed: no new revision, no generation bump.
    expect(r.json['metadata']['resourceVersion']).toBe(before['metadata']['resourceVersion']);
    expect(r.json['metadata']['generation']).toBe(1);
    expect((await h.get(`${WIDGETS}/s73`)).json['status']).toEqual({ phase: 'Ready' });
  });

  it('C-74 a JSON patch on /status with a failing test of the resourceVersion is 422 and changes nothing', async () => {
    const created = await h.widget('s74');
    await h.patch(`${WIDGETS}/s74`, { spec: { size: 3 } });
    const before = (await h.get(`${WIDGETS}/s74`)).json;
    const r = await h.patch(
      `${WIDGETS}/s74/status`,
      [
        { op: 'test', path: '/metadata/resourceVersion', value: created['metadata']['resourceVersion'] },
        { op: 'add', path: '/status', value: { phase: 'x' } },
      ],
      'json',
    );
    expect(r.status).toBe(422);
    expect(r.json['reason']).toBe('Invalid');
    expect(r.json['message']).toBe('the server rejected our request due to an error in our request');
    const after = (await h.get(`${WIDGETS}/s74`)).json;
    expect(after).toEqual(before);

    // With the current resourceVersion the same patch applies.
    const ok = await h.patch(
      `${WIDGETS}/s74/status`,
      [
        { op: 'test', path: '/metadata/resourceVersion', value: before['metadata']['resourceVersion'] },
        { op: 'add', path: '/status', value: { phase: 'x' } },
      ],
      'json',
    );
    expect(ok.status).toBe(200);
    expect(ok.json['status']).toEqual({ phase: 'x' });
  });

  it('C-75 the scale subresource reads and writes spec.replicas', async () => {
    await h.widget('s75', { size: 1, replicas: 3 });
    await h.patch(`${WIDGETS}/s75/status`, { status: { replicas: 2 } });
    const scale = await h.get(`${WIDGETS}/s75/scale`);
    expect(scale.status).toBe(200);
    expect(scale.json['kind']).toBe('Scale');
    expect(scale.json['apiVersion']).toBe('autoscaling/v1');
    expect(scale.json['metadata']['name']).toBe('s75');
    expect(scale.json['metadata']['namespace']).toBe('default');
    expect(scale.json['spec']).toEqual({ replicas: 3 });
    expect(scale.json['status']['replicas']).toBe(2);
    const before = (await h.get(`${WIDGETS}/s75`)).json;
    expect(scale.json['metadata']['resourceVersion']).toBe(before['metadata']['resourceVersion']);

    const r = await h.patch(`${WIDGETS}/s75/scale`, { spec: { replicas: 7 } });
    expect(r.status).toBe(200);
    expect(r.json['kind']).toBe('Scale');
    expect(r.json['spec']).toEqual({ replicas: 7 });
    const after = (await h.get(`${WIDGETS}/s75`)).json;
    expect(after['spec']['replicas']).toBe(7);
    expect(after['spec']['size']).toBe(1);
    expect(after['metadata']['generation']).toBe(before['metadata']['generation'] + 1);
    expect(r.json['metadata']['resourceVersion']).toBe(after['metadata']['resourceVersion']);

    // A stale resourceVersion in the Scale is a precondition failure.
    const stale = await h.put(`${WIDGETS}/s75/scale`, { ...scale.json, spec: { replicas: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.json['reason']).toBe('Conflict');
    expect((await h.get(`${WIDGETS}/s75`)).json['spec']['replicas']).toBe(7);

    // Without a value at specReplicasPath there is no Scale to show.
    await h.widget('s75-none');
    const missing = await h.get(`${WIDGETS}/s75-none/scale`);
    expect(missing.status).toBe(500);
    expect(missing.json['reason']).toBe('InternalError');
    expect(missing.json['message']).toContain('the spec replicas field ".spec.replicas" does not exist');
  });
});
