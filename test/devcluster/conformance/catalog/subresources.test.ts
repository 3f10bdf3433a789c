/**
 * Conformance checklist C-144 and C-145 (devcluster reference section 13, "Built-ins"), generated
 * from the catalog: the `status` subresource of every kind that has one (read, merge patch and
 * update change the status and nothing else, and the main endpoint leaves the status alone —
 * D-SUB-3), `scale` (D-SUB-5), a Namespace's `finalize` (D-SUB-6), and every other subresource
 * discovery lists: each of its verbs must be answered by something other than 404 or 405
 * (discovery promises them; C-145).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entries, type ResourceEntry, type SubresourceEntry } from '../../../../devcluster/upstream/catalog.js';
import { changedSpec, sampleName, sampleObject, statusSample } from '../../../support/builtins/samples.js';
import { collectionUrl, objectUrl, titleOf } from '../../../support/builtins/urls.js';
import { startHarness, type Harness, type HttpResult, type Json } from '../harness.js';

const CATALOG = entries();
const withSubresource = (name: string): ResourceEntry[] => CATALOG.filter((e) => e.subresources.some((s) => s.name === name));

/** The HTTP method of each discovery verb of a subresource. */
const METHODS: Readonly<Record<string, string>> = { get: 'GET', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' };

/** A matcher of `value` that lets controllers add to it (more conditions, more members). */
function containing(value: unknown): unknown {
  if (Array.isArray(value)) return expect.arrayContaining(value.map(containing));
  if (value !== null && typeof value === 'object')
    return expect.objectContaining(Object.fromEntries(Object.entries(value).map(([k, v]) => [k, containing(v)])));
  return value;
}

/** Whether a subresource answers with its parent object (status-like ones) rather than something else (a Scale, a stream, a review). */
const answersParent = (e: ResourceEntry, s: SubresourceEntry): boolean => !s.connect && s.name !== 'log' && s.kind === e.kind && s.group === undefined;

function expectOk(r: HttpResult, code: number, what: string): Json {
  expect(r.status, `${what}: ${r.text}`).toBe(code);
  return r.json;
}

describe('C-144 C-145 the subresources of every built-in kind', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** Creates the sample of `e` for `purpose` and returns it as stored. */
  const create = async (e: ResourceEntry, purpose: string): Promise<Json> =>
    expectOk(await h.post(collectionUrl(e), sampleObject(e, sampleName(e, purpose))), 201, `create ${titleOf(e)}`);

  describe.each(withSubresource('status').map((e) => [titleOf(e), e] as const))('%s/status', (_, e) => {
    const status = statusSample(e);

    it('D-SUB-3 GET answers the object; a merge patch of status changes the status only', async () => {
      const created = await create(e, 'status');
      const name = created['metadata']['name'] as string;
      const read = expectOk(await h.get(objectUrl(e, name, 'status')), 200, 'get status');
      expect(read).toMatchObject({ kind: e.kind, metadata: { name, uid: created['metadata']['uid'] } });
      const spec = changedSpec(created['spec']);
      const patch = { status, ...(spec !== undefined ? { spec } : {}) };
      const patched = expectOk(await h.patch(objectUrl(e, name, 'status'), patch), 200, 'merge patch status');
      expect(patched['status']).toEqual(containing(status));
      expect(patched['spec']).toEqual(created['spec']);
      expect(patched['metadata']['generation']).toEqual(created['metadata']['generation']);
      const stored = expectOk(await h.get(objectUrl(e, name)), 200, 'get');
      expect(stored['status']).toEqual(containing(status));
      expect(stored['spec']).toEqual(created['spec']);
    });

    it('D-SUB-3 PUT of status replaces the status only; the main endpoint leaves the status alone', async () => {
      const name = (await create(e, 'status-put'))['metadata']['name'] as string;
      const current = expectOk(await h.get(objectUrl(e, name)), 200, 'get');
      const updated = expectOk(await h.put(objectUrl(e, name, 'status'), { ...current, status }), 200, 'update status');
      expect(updated['status']).toEqual(containing(status));
      // Controllers may answer the status write (a CRD's conditions): compare with the status once they are done.
      await h.cluster.settle();
      const before = expectOk(await h.get(objectUrl(e, name)), 200, 'get');
      expect(before['status']).toEqual(containing(status));
      const main = expectOk(await h.patch(objectUrl(e, name), { status: null, metadata: { labels: { main: 'yes' } } }), 200, 'merge patch');
      expect(main['metadata']['labels']).toMatchObject({ main: 'yes' });
      expect(main['status']).toEqual(before['status']);
    });
  });

  describe.each(withSubresource('scale').map((e) => [titleOf(e), e] as const))('%s/scale', (_, e) => {
    it('D-SUB-5 GET answers an autoscaling/v1 Scale; PATCH and PUT change the replicas of the object', async () => {
      const created = await create(e, 'scale');
      const name = created['metadata']['name'] as string;
      const scale = expectOk(await h.get(objectUrl(e, name, 'scale')), 200, 'get scale');
      expect(scale).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas: created['spec']['replicas'] } });
      const patched = expectOk(await h.patch(objectUrl(e, name, 'scale'), { spec: { replicas: 2 } }), 200, 'patch scale');
      expect(patched['spec']).toEqual({ replicas: 2 });
      expect(expectOk(await h.get(objectUrl(e, name)), 200, 'get')['spec']['replicas']).toBe(2);
      const put = expectOk(await h.put(objectUrl(e, name, 'scale'), { ...patched, spec: { replicas: 3 } }), 200, 'update scale');
      expect(put['spec']).toEqual({ replicas: 3 });
      expect(expectOk(await h.get(objectUrl(e, name)), 200, 'get')['spec']['replicas']).toBe(3);
    });
  });

  it('D-SUB-6 PUT of a Namespace finalize changes spec.finalizers only', async () => {
    const e = CATALOG.find((x) => titleOf(x) === 'v1 namespaces')!;
    const created = await create(e, 'finalize');
    const name = created['metadata']['name'] as string;
    expect(created['spec']['finalizers']).toEqual(['kubernetes']);
    const r = expectOk(
      await h.put(objectUrl(e, name, 'finalize'), { ...created, metadata: { ...created['metadata'], labels: { other: 'x' } }, spec: { finalizers: [] } }),
      200,
      'finalize',
    );
    expect(r['spec']['finalizers'] ?? []).toEqual([]);
    expect(r['metadata']['labels']).toEqual(created['metadata']['labels']);
  });

  const pairs = CATALOG.flatMap((e) => e.subresources.flatMap((s) => s.verbs.map((verb) => [`${titleOf(e)}/${s.name}`, verb, e, s] as const)));

  it.each(pairs)('C-145 D-BI-1 %s answers %s with something other than 404 or 405', async (_, verb, e, s: SubresourceEntry) => {
    const created = await create(e, `${s.name.slice(0, 12)}-${verb}`);
    const name = created['metadata']['name'] as string;
    const method = METHODS[verb];
    expect(method, `a method for the verb ${verb}`).toBeDefined();
    const body = method === 'GET' || method === 'DELETE' ? undefined : method === 'PATCH' ? {} : created;
    const contentType = method === 'PATCH' ? 'application/merge-patch+json' : undefined;
    const url = objectUrl(e, name, s.name);
    const r = await h.request(method!, url, body, { contentType });
    if (e.resource === 'services' && s.name === 'proxy') {
      // No endpoints controller runs, so the Service has no Endpoints object: upstream's proxy then
      // answers 404 naming the Endpoints (D-BI-18) — not the 404 of a path that is not served.
      expect(r.status, r.text).toBe(404);
      expect(r.json?.['details']).toMatchObject({ kind: 'endpoints', name });
      return;
    }
    expect([404, 405], `${method} ${url} answered ${r.status}: ${r.text.slice(0, 300)}`).not.toContain(r.status);
    if (!answersParent(e, s)) expect(r.json?.['kind'], `${method} ${url} answered the ${e.kind} itself`).not.toBe(e.kind);
  });
});
