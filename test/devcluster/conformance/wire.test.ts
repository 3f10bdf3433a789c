/**
 * Conformance checklist, "Wire and discovery" (devcluster reference section 13, C-1..C-13): version and
 * discovery documents, the OpenAPI v2 document, unknown paths and methods, Accept negotiation, list
 * serialisation and the Status shape of errors — all over plain HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as protobuf from '../../../devcluster/openapi/protobuf.js';
import { CONFIGMAPS, WIDGETS, startHarness, type Harness, type HttpResult, type Json } from './harness.js';

const AGGREGATED_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,' +
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

const entryNamed = (list: Json, name: string): Json | undefined => (list['resources'] as Json[]).find((r) => r['name'] === name);

/** Asserts the generic Status shape of an error response (C-13). */
function expectStatus(r: HttpResult, code: number): void {
  expect(r.status).toBe(code);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code });
  expect(typeof r.json['message']).toBe('string');
  expect(r.json['message']).not.toBe('');
}

describe('conformance: wire and discovery', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-1 GET /version answers 200 with string version fields', async () => {
    const r = await h.get('/version');
    expect(r.status).toBe(200);
    for (const field of ['major', 'minor', 'gitVersion', 'platform', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler']) {
      expect(typeof r.json[field], field).toBe('string');
    }
    expect(r.json['gitVersion']).toBe('v1.32.0');
    expect(r.json['major']).toBe('1');
    expect(r.json['minor']).toBe('32');
  });

  it('C-2 GET /api answers APIVersions with v1', async () => {
    const r = await h.get('/api');
    expect(r.status).toBe(200);
    expect(r.json['kind']).toBe('APIVersions');
    expect(r.json['versions']).toEqual(['v1']);
    expect(r.json['serverAddressByClientCIDRs'][0]).toMatchObject({ clientCIDR: '0.0.0.0/0' });
  });

  it('C-3 GET /apis lists the built-in groups with a preferred version each', async () => {
    const r = await h.get('/apis');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ kind: 'APIGroupList', apiVersion: 'v1' });
    const groups = r.json['groups'] as Json[];
    for (const name of ['apps', 'coordination.k8s.io', 'events.k8s.io', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'example.com']) {
      const g = groups.find((x) => x['name'] === name);
      expect(g, name).toBeDefined();
      expect(g!['preferredVersion']).toEqual(g!['versions'][0]);
      expect(g!['preferredVersion']['groupVersion']).toBe(`${name}/${g!['preferredVersion']['version']}`);
    }
    const apps = await h.get('/apis/apps');
    expect(apps.status).toBe(200);
    expect(apps.json).toMatchObject({ kind: 'APIGroup', name: 'apps', preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } });
  });

  it('C-4 GET /api/v1 describes configmaps, pods/status and namespaces/finalize', async () => {
    const r = await h.get('/api/v1');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ kind: 'APIResourceList', groupVersion: 'v1' });
    const cm = entryNamed(r.json, 'configmaps')!;
    expect(cm).toMatchObject({ namespaced: true, kind: 'ConfigMap', singularName: 'configmap', shortNames: ['cm'] });
    expect(cm['verbs']).toEqual(expect.arrayContaining(['watch', 'deletecollection', 'create', 'get', 'list', 'patch', 'update', 'delete']));
    expect(typeof cm['storageVersionHash']).toBe('string');
    expect(entryNamed(r.json, 'pods/status')).toMatchObject({ singularName: '', namespaced: true, kind: 'Pod' });
    expect(entryNamed(r.json, 'namespaces/finalize')).toMatchObject({ namespaced: false, kind: 'Namespace' });
    expect(entryNamed(r.json, 'namespaces')).toMatchObject({ namespaced: false });
  });

  it('C-6 aggregated discovery Accept gets the v2 document or the legacy list', async () => {
    const r = await h.request('GET', '/apis', undefined, { accept: AGGREGATED_ACCEPT });
    expect(r.status).toBe(200);
    const type = r.headers.get('content-type') ?? '';
    if (type.replace(/\s/g, '') === AGGREGATED_V2) {
      expect(r.json).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2' });
      const example = (r.json['items'] as Json[]).find((i) => i['metadata']['name'] === 'example.com')!;
      const widgets = example['versions'][0]['resources'].find((x: Json) => x['resource'] === 'widgets');
      expect(widgets).toMatchObject({ scope: 'Namespaced', singularResource: 'widget', shortNames: ['wd'], responseKind: { kind: 'Widget' } });
      expect(widgets['subresources'].map((s: Json) => s['subresource']).sort()).toEqual(['scale', 'status']);
      const core = await h.request('GET', '/api', undefined, { accept: AGGREGATED_ACCEPT });
      expect(core.json['items']).toHaveLength(1);
      expect(core.json['items'][0]['metadata']['name'] ?? '').toBe('');
    } else {
      expect(type).toMatch(/^application\/json/);
      expect(r.json['kind']).toBe('APIGroupList');
    }
    const legacy = await h.request('GET', '/apis', undefined, { accept: 'application/json' });
    expect(legacy.json['kind']).toBe('APIGroupList');
  });

  it('C-7 GET /openapi/v2 with the protobuf Accept answers a gnostic Document with built-in and custom kinds', async () => {
    const res = await fetch(`${h.cluster.url}/openapi/v2`, { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const type = protobuf.documentType();
    const doc = type.toObject(type.decode(Buffer.from(await res.arrayBuffer()))) as Json;
    const names = (doc['definitions']['additional_properties'] as Json[]).map((d) => d['name']);
    expect(names).toContain('io.k8s.api.apps.v1.Deployment');
    expect(names).toContain('com.example.v1.Widget');
  });

  it('C-8 GET /openapi/v2 with JSON Accept answers the swagger 2.0 document with the Widget paths', async () => {
    const r = await h.get('/openapi/v2', 'application/json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.json['swagger']).toBe('2.0');
    expect(r.json['info']['version']).toBe('v1.32.0');
    const patch = r.json['paths']['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}']['patch'];
    expect(patch['consumes']).not.toContain('application/strategic-merge-patch+json');
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'example.com', kind: 'Widget', version: 'v1' });
  });

  it('C-9 an unserved group answers the exact 404 Status with empty details', async () => {
    const r = await h.get('/apis/nope.example.com/v1/things');
    expectStatus(r, 404);
    expect(r.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server could not find the requested resource',
      reason: 'NotFound',
      details: {},
      code: 404,
    });
  });

  it('C-10 POST to an object URL is 405 MethodNotAllowed', async () => {
    const r = await h.post(`${CONFIGMAPS}/x`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    expectStatus(r, 405);
    expect(r.json['reason']).toBe('MethodNotAllowed');
    expect(r.json['message']).toBe('the server does not allow this method on the requested resource');
    expect((await h.get(`${CONFIGMAPS}/x`)).status).toBe(404);
  });

  it('C-11 protobuf-only Accept is 406; protobuf with */* or with application/json falls back to JSON', async () => {
    const refused = await h.get(CONFIGMAPS, 'application/vnd.kubernetes.protobuf');
    expectStatus(refused, 406);
    expect(refused.json['reason']).toBe('NotAcceptable');
    const ok = await h.get(CONFIGMAPS, 'application/vnd.kubernetes.protobuf, */*');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^application\/json/);
    expect(ok.json['kind']).toBe('ConfigMapList');
    const kubectl132 = await h.get(CONFIGMAPS, 'application/vnd.kubernetes.protobuf,application/json');
    expect(kubectl132.status).toBe(200);
    expect(kubectl132.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('C-12 built-in list items omit apiVersion/kind, CR list items carry them, empty lists have items []', async () => {
    const ns = '/api/v1/namespaces/c12';
    expect((await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'c12' } })).status).toBe(201);
    for (const name of ['c12-a', 'c12-b']) {
      expect((await h.post(`${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } })).status).toBe(201);
      expect(
        (await h.post('/apis/example.com/v1/namespaces/c12/widgets', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec: { size: 1 } }))
          .status,
      ).toBe(201);
    }
    const cms = await h.get(`${ns}/configmaps`);
    expect(cms.json).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
    expect(cms.json['items'].map((i: Json) => i['metadata']['name'])).toEqual(['c12-a', 'c12-b']);
    for (const item of cms.json['items'] as Json[]) {
      expect(item).not.toHaveProperty('apiVersion');
      expect(item).not.toHaveProperty('kind');
    }
    const ws = await h.get('/apis/example.com/v1/namespaces/c12/widgets');
    expect(ws.json).toMatchObject({ kind: 'WidgetList', apiVersion: 'example.com/v1' });
    expect(ws.json['items']).toHaveLength(2);
    for (const item of ws.json['items'] as Json[]) expect(item).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget' });
    const empty = await h.get('/api/v1/namespaces/c12/secrets');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('"items":[]');
    expect(empty.json['items']).toEqual([]);
  });

  it('C-13 /healthz answers ok and every error response is a Status whose code equals the HTTP status', async () => {
    const health = await h.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.text).toBe('ok');
    await h.widget('c13');
    const cases: [Promise<HttpResult>, number][] = [
      [h.get(`${WIDGETS}/missing-c13`), 404],
      [h.get('/apis/nope.example.com/v1/things'), 404],
      [h.put(CONFIGMAPS, { metadata: { name: 'x' } }), 405],
      [h.get(CONFIGMAPS, 'application/vnd.kubernetes.protobuf'), 406],
      [h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c13' }, spec: { size: 1 } }), 409],
      [h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c13-bad' }, spec: { size: 99 } }), 422],
      [h.request('POST', WIDGETS, '{not json', {}), 400],
      [h.request('PATCH', `${WIDGETS}/c13`, '{}', { contentType: 'text/plain' }), 415],
      [h.get(`${CONFIGMAPS}?limit=abc`), 400],
    ];
    for (const [pending, code] of cases) expectStatus(await pending, code);
  });
});

describe('conformance: response headers', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('D-WIRE-20 responses carry Cache-Control and a fresh Audit-Id, warnings are escaped 299 headers', async () => {
    const ok = await h.get('/api/v1');
    const err = await h.get(`${WIDGETS}/missing`);
    const ids = new Set<string>();
    for (const r of [ok, err]) {
      expect(r.headers.get('cache-control')).toBe('no-cache, private');
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      const id = r.headers.get('audit-id') ?? '';
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(2);
    const warned = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'h1' }, spec: { size: 1, bogus: 1, other: 2 } });
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"spec.bogus\\"", 299 - "unknown field \\"spec.other\\""');
    expect(warned.json['spec']).toEqual({ size: 1, color: 'blue' });
    const quiet = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'h2' }, spec: { size: 1 } });
    expect(quiet.headers.get('warning')).toBeNull();
  });
});

describe('conformance: discovery follows the CRD lifecycle', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-5 CR discovery lists widgets with status and scale, and disappears when the CRD is deleted', async () => {
    const r = await h.get('/apis/example.com/v1');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'example.com/v1' });
    expect(entryNamed(r.json, 'widgets')).toMatchObject({ singularName: 'widget', namespaced: true, kind: 'Widget', shortNames: ['wd'] });
    expect(entryNamed(r.json, 'widgets')!['verbs']).toEqual(
      expect.arrayContaining(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']),
    );
    expect(entryNamed(r.json, 'widgets/status')).toMatchObject({ singularName: '', namespaced: true, kind: 'Widget' });
    expect(entryNamed(r.json, 'widgets/scale')).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });

    const del = await h.del('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com');
    expect(del.status).toBe(200);
    await h.cluster.settle();
    const gone = await h.get('/apis/example.com/v1');
    expectStatus(gone, 404);
    expect((await h.get('/apis/example.com')).status).toBe(404);
    expect((await h.get(WIDGETS)).status).toBe(404);
    const groups = (await h.get('/apis')).json['groups'] as Json[];
    expect(groups.map((g) => g['name'])).not.toContain('example.com');
  });
});
