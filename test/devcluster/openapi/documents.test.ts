/**
 * The served OpenAPI documents over HTTP (D-WIRE-30..34): `/openapi/v2` as JSON and as gnostic
 * protobuf (decoded back and compared with the JSON), custom resources published as upstream's
 * apiextensions-apiserver publishes them, `/openapi/v3` with its index, hashes and caching headers,
 * laziness and per-source caching, and the `openapiV3` option.
 */
import * as crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import { DevCluster } from '../../../devcluster/testing.js';
import * as parts from '../../../devcluster/openapi/parts.js';
import * as protobuf from '../../../devcluster/openapi/protobuf.js';
import { WIDGETS_CRD } from '../conformance/harness.js';
import { GADGETS_CRD } from './gadgets.js';

type Json = Record<string, any>;
const PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const SMP = 'application/strategic-merge-patch+json';

interface Fetched {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json: Json;
}

async function fetchFrom(cluster: DevCluster, path: string, headers: Record<string, string> = {}): Promise<Fetched> {
  const res = await fetch(cluster.url + path, { headers, redirect: 'manual' });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: Json = {};
  if ((res.headers.get('content-type') ?? '').startsWith('application/json') && bytes.length) json = JSON.parse(bytes.toString('utf8')) as Json;
  return { status: res.status, headers: res.headers, bytes, json };
}

const sha512 = (b: Buffer): string => crypto.createHash('sha512').update(b).digest('hex').toUpperCase();

/** Every `$ref` in `value` (JSONSchemaProps also has a property named `$ref`, whose value is a schema). */
function refs(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, into);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') into.push(v);
      else refs(v, into);
    }
  }
  return into;
}

/** A gnostic `Schema` message (as protobufjs objects) back in JSON form. */
function schemaFromGnostic(m: Json): Json {
  const out: Json = {};
  const names: Record<string, string> = {
    _ref: '$ref',
    multiple_of: 'multipleOf',
    exclusive_maximum: 'exclusiveMaximum',
    exclusive_minimum: 'exclusiveMinimum',
    max_length: 'maxLength',
    min_length: 'minLength',
    max_items: 'maxItems',
    min_items: 'minItems',
    unique_items: 'uniqueItems',
    max_properties: 'maxProperties',
    min_properties: 'minProperties',
    read_only: 'readOnly',
  };
  for (const [k, v] of Object.entries(m)) {
    if (k === 'type') out['type'] = v.value.length === 1 ? v.value[0] : v.value;
    else if (k === 'items') out['items'] = v.schema.length === 1 ? schemaFromGnostic(v.schema[0]) : v.schema.map(schemaFromGnostic);
    else if (k === 'properties') out['properties'] = Object.fromEntries(v.additional_properties.map((p: Json) => [p.name, schemaFromGnostic(p.value)]));
    else if (k === 'additional_properties') out['additionalProperties'] = v.schema ? schemaFromGnostic(v.schema) : v.boolean;
    else if (k === 'all_of') out['allOf'] = v.map(schemaFromGnostic);
    else if (k === 'enum') out['enum'] = v.map((a: Json) => YAML.parse(a.yaml));
    else if (k === 'default' || k === 'example') out[k] = YAML.parse(v.yaml);
    else if (k === 'vendor_extension') for (const e of v) out[e.name] = YAML.parse(e.value.yaml);
    else out[names[k] ?? k] = v;
  }
  return out;
}

/** A gnostic `Parameter` message (or `PrimitivesItems`) back in JSON form. */
function parameterFromGnostic(m: Json): Json {
  if (m['body_parameter']) {
    const { schema, vendor_extension: _e, ...rest } = m['body_parameter'] as Json;
    return { ...rest, schema: schemaFromGnostic(schema) };
  }
  const sub = (m['non_body_parameter'] ? Object.values(m['non_body_parameter'] as Json)[0] : m) as Json;
  const { type, items, allow_empty_value, collection_format, ...rest } = sub;
  const out = schemaFromGnostic(rest);
  if (type !== undefined) out['type'] = type;
  if (items !== undefined) out['items'] = parameterFromGnostic(items);
  if (allow_empty_value !== undefined) out['allowEmptyValue'] = allow_empty_value;
  if (collection_format !== undefined) out['collectionFormat'] = collection_format;
  return out;
}

const parametersFromGnostic = (items: Json[]): Json[] =>
  items.map((i) => (i['json_reference'] ? { $ref: i['json_reference']['_ref'] } : parameterFromGnostic(i['parameter'])));

/** A gnostic `PathItem` message back in JSON form. */
function pathItemFromGnostic(m: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(m)) {
    if (k === 'parameters') out[k] = parametersFromGnostic(v);
    else if (k === 'vendor_extension') for (const e of v) out[e.name] = YAML.parse(e.value.yaml);
    else {
      const { operation_id, parameters, responses, vendor_extension, ...rest } = v as Json;
      const op: Json = { ...rest, operationId: operation_id };
      if (parameters) op['parameters'] = parametersFromGnostic(parameters);
      op['responses'] = Object.fromEntries(
        (responses['response_code'] as Json[]).map((r) => {
          const { schema, vendor_extension: _e, ...response } = r['value']['response'] as Json;
          return [r['name'], schema ? { ...response, schema: schemaFromGnostic(schema['schema']) } : response];
        }),
      );
      for (const e of vendor_extension ?? []) op[e.name] = YAML.parse(e.value.yaml);
      out[k] = op;
    }
  }
  return out;
}

describe('OpenAPI documents of a devcluster with CRDs', () => {
  let cluster: DevCluster;
  let v2: Json;
  const get = (path: string, headers?: Record<string, string>): Promise<Fetched> => fetchFrom(cluster, path, headers);

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false, version: 'v1.32.3' });
    await cluster.load(WIDGETS_CRD);
    await cluster.store.create(GADGETS_CRD);
    await cluster.settle();
    v2 = (await get('/openapi/v2', { accept: 'application/json' })).json;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('D-WIRE-30 /openapi/v2 is upstream document cut to the served APIs, with the reported version', async () => {
    expect(v2['swagger']).toBe('2.0');
    expect(v2['info']).toEqual({ title: 'Kubernetes', version: 'v1.32.3' });
    const paths = Object.keys(v2['paths']);
    expect(paths).toContain('/apis/apps/v1/namespaces/{namespace}/deployments/{name}');
    expect(paths).toContain('/api/v1/namespaces/{namespace}/configmaps');
    expect(paths).toContain('/apis/batch/');
    expect(paths).toContain('/version/');
    // Published with every alpha API on; a vanilla cluster serves none of these.
    expect(paths.filter((p) => p.startsWith('/apis/storagemigration.k8s.io/'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('/logs/') || p.startsWith('/openid/'))).toEqual([]);
    expect(Object.keys(v2['definitions']).filter((d) => d.startsWith('io.k8s.api.storagemigration.'))).toEqual([]);
    expect(v2['definitions']['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind']).toEqual([
      { group: 'apps', kind: 'Deployment', version: 'v1' },
    ]);
    // Self-contained: every reference resolves inside the document.
    for (const ref of new Set(refs(v2))) {
      const [, section, name] = /^#\/(definitions|parameters)\/(.+)$/.exec(ref) ?? [];
      expect(v2[section!]?.[name!], ref).toBeDefined();
    }
    const patch = v2['paths']['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']['patch'];
    expect(patch['consumes']).toContain(SMP);
    expect(JSON.stringify(v2)).not.toContain('cbor');
  });

  it('D-WIRE-30 JSON and protobuf forms carry the same document and an Etag of their bytes', async () => {
    const json = await get('/openapi/v2', { accept: 'application/json' });
    expect(json.headers.get('etag')).toBe(`"${sha512(json.bytes)}"`);
    const pb = await get('/openapi/v2', { accept: PROTOBUF_ACCEPT });
    expect(pb.status).toBe(200);
    expect(pb.headers.get('content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    expect(pb.headers.get('etag')).toBe(`"${sha512(pb.bytes)}"`);
    const type = protobuf.documentType();
    const doc = type.toObject(type.decode(pb.bytes), { longs: Number }) as Json;
    expect(doc['swagger']).toBe('2.0');
    expect(doc['info']).toMatchObject({ title: 'Kubernetes', version: 'v1.32.3' });
    const decodedPaths = doc['paths']['path'] as Json[];
    expect(decodedPaths.map((p) => p['name']).sort()).toEqual(Object.keys(v2['paths']).sort());
    // Every definition survives the trip through gnostic's messages unchanged.
    const definitions = Object.fromEntries((doc['definitions']['additional_properties'] as Json[]).map((d) => [d['name'], schemaFromGnostic(d['value'])]));
    expect(Object.keys(definitions).sort()).toEqual(Object.keys(v2['definitions']).sort());
    for (const [name, schema] of Object.entries(v2['definitions'])) expect(definitions[name], name).toEqual(schema);
    // Operations: PATCH media types and the kind extension kubectl 1.20 reads.
    for (const p of decodedPaths) expect(pathItemFromGnostic(p['value']), p['name']).toEqual(v2['paths'][p['name']]);
    const byName = new Map(decodedPaths.map((p) => [p['name'], p['value']]));
    const deployment = byName.get('/apis/apps/v1/namespaces/{namespace}/deployments/{name}');
    expect(deployment['patch']['consumes']).toContain(SMP);
    const gvk = (deployment['patch']['vendor_extension'] as Json[]).find((e) => e['name'] === 'x-kubernetes-group-version-kind');
    expect(YAML.parse(gvk!['value']['yaml'])).toEqual({ group: 'apps', kind: 'Deployment', version: 'v1' });
    const widget = byName.get('/apis/example.com/v1/namespaces/{namespace}/widgets/{name}');
    expect(widget['patch']['consumes']).toEqual(['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
    const params = doc['parameters']['additional_properties'] as Json[];
    // And every shared parameter too.
    const decodedParams = Object.fromEntries(params.map((p) => [p['name'], parameterFromGnostic(p['value'])]));
    expect(decodedParams).toEqual(v2['parameters']);
    expect(params.find((p) => p['name'] === 'pretty-tJGM1-ng')?.['value']['non_body_parameter']['query_parameter_sub_schema']).toMatchObject({
      in: 'query',
      name: 'pretty',
      type: 'string',
      unique_items: true,
    });
  });

  it('D-WIRE-31 a CRD version is published as upstream publishes it: kind, list, paths without strategic merge patch', () => {
    const widget = v2['definitions']['com.example.v1.Widget'];
    expect(widget['x-kubernetes-group-version-kind']).toEqual([{ group: 'example.com', kind: 'Widget', version: 'v1' }]);
    expect(widget['properties']['metadata']).toEqual({
      $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    });
    expect(widget['properties']['apiVersion']['type']).toBe('string');
    const spec = widget['properties']['spec'];
    expect(spec['required']).toEqual(['size']);
    expect(spec['properties']['size']).toEqual({ maximum: 10, minimum: 1, type: 'integer' });
    expect(spec['properties']['color']).toEqual({ type: 'string' }); // default pruned
    expect(spec['properties']['extra']).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(v2['definitions']['com.example.v1.WidgetList']).toMatchObject({
      description: 'WidgetList is a list of Widget',
      required: ['items'],
      properties: { items: { items: { $ref: '#/definitions/com.example.v1.Widget' }, type: 'array' } },
      'x-kubernetes-group-version-kind': [{ group: 'example.com', kind: 'WidgetList', version: 'v1' }],
    });
    const paths = Object.keys(v2['paths']).filter((p) => p.startsWith('/apis/example.com/'));
    expect(paths.sort()).toEqual([
      '/apis/example.com/v1/namespaces/{namespace}/widgets',
      '/apis/example.com/v1/namespaces/{namespace}/widgets/{name}',
      '/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale',
      '/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status',
      '/apis/example.com/v1/widgets',
    ]);
    const item = v2['paths']['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}'];
    expect(item['patch']).toMatchObject({
      consumes: ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'],
      produces: ['application/json', 'application/yaml'],
      description: 'partially update the specified Widget',
      operationId: 'patchExampleComV1NamespacedWidget',
      tags: ['exampleCom_v1'],
      'x-kubernetes-action': 'patch',
      'x-kubernetes-group-version-kind': { group: 'example.com', kind: 'Widget', version: 'v1' },
    });
    expect(item['parameters'][0]).toMatchObject({ in: 'path', name: 'name', description: 'name of the Widget' });
    expect(item['put']['parameters'][0]).toEqual({ in: 'body', name: 'body', required: true, schema: { $ref: '#/definitions/com.example.v1.Widget' } });
    expect(v2['paths']['/apis/example.com/v1/widgets']['get']['operationId']).toBe('listExampleComV1WidgetForAllNamespaces');
    expect(v2['paths']['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale']['get']['responses']['200']['schema']).toEqual({
      $ref: '#/definitions/io.k8s.api.autoscaling.v1.Scale',
    });
  });

  it('D-WIRE-31 v2 drops what kubectl cannot digest: nullable, junctors, defaults; unknown-field nodes lose their shape', () => {
    const gadget = v2['definitions']['org.example.tools.v1.Gadget'];
    expect(gadget['description']).toBe('A gadget.');
    const spec = gadget['properties']['spec'];
    expect(spec['required']).toEqual(['port']); // `label` is nullable
    expect(spec['properties']['label']).toEqual({ description: 'May be null.' });
    expect(spec['properties']['port']).toEqual({ description: 'A port.', 'x-kubernetes-int-or-string': true });
    expect(spec['properties']['tier']).toEqual({ type: 'string' });
    expect(spec['properties']['sizes']).toEqual({});
    expect(spec['properties']['extras']).toEqual({ items: { 'x-kubernetes-preserve-unknown-fields': true }, type: 'array' });
    expect(spec['properties']['loose']).toEqual({ 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true });
    const template = spec['properties']['template'];
    expect(Object.keys(template['properties']).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(template['required']).toEqual(['kind', 'apiVersion']);
    // A root that preserves unknown fields is a bare object, and cluster scope has no namespace paths.
    expect(v2['definitions']['org.example.tools.v2.Gadget']).toEqual({
      type: 'object',
      'x-kubernetes-group-version-kind': [{ group: 'tools.example.org', kind: 'Gadget', version: 'v2' }],
    });
    const paths = Object.keys(v2['paths']).filter((p) => p.startsWith('/apis/tools.example.org/v1/'));
    expect(paths.sort()).toEqual(['/apis/tools.example.org/v1/gadgets', '/apis/tools.example.org/v1/gadgets/{name}']);
    expect(v2['paths']['/apis/tools.example.org/v1/gadgets/{name}']['parameters'].map((p: Json) => p['name'] ?? p['$ref'])).toEqual([
      'name',
      '#/parameters/pretty-tJGM1-ng',
    ]);
  });

  it('C-131 D-WIRE-32 /openapi/v3 lists one document per group/version and discovery path, each with the hash of its bytes', async () => {
    const index = await get('/openapi/v3');
    expect(index.status).toBe(200);
    const keys = Object.keys(index.json['paths']);
    for (const key of ['api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'apis/batch/v1', 'version', 'apis/example.com/v1', 'apis/tools.example.org/v2']) {
      expect(keys, key).toContain(key);
    }
    expect(keys).not.toContain('apis/example.com');
    expect(keys).not.toContain('apis/storagemigration.k8s.io/v1alpha1');
    const url = index.json['paths']['apis/batch/v1']['serverRelativeURL'] as string;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/batch\/v1\?hash=[0-9A-F]{128}$/);
    const hash = url.split('hash=')[1]!;
    const byHash = await get(url);
    expect(byHash.status).toBe(200);
    expect(sha512(byHash.bytes)).toBe(hash);
    expect(byHash.headers.get('cache-control')).toBe('public, immutable');
    expect(byHash.headers.get('etag')).toBe(`"${hash}"`);
    expect(new Date(byHash.headers.get('expires')!).getTime()).toBeGreaterThan(Date.now() + 360 * 24 * 3600 * 1000);
    const plain = await get('/openapi/v3/apis/batch/v1');
    expect(plain.headers.get('cache-control')).toBe('no-cache, private');
    expect(plain.bytes.equals(byHash.bytes)).toBe(true);
    const stale = await get(`/openapi/v3/apis/batch/v1?hash=${'0'.repeat(128)}`);
    expect(stale.status).toBe(301);
    expect(stale.headers.get('location')).toBe(url);
    const unchanged = await get('/openapi/v3/apis/batch/v1', { 'if-none-match': `"${hash}"` });
    expect(unchanged.status).toBe(304);
    expect((await get('/openapi/v3/apis/nope.example.com/v1')).status).toBe(404);
  });

  it('D-WIRE-32 a built-in v3 document: components.schemas, references wrapped in allOf, request bodies per media type', async () => {
    const doc = (await get('/openapi/v3/apis/batch/v1')).json;
    expect(doc['openapi']).toBe('3.0.0');
    expect(doc['info']).toEqual({ title: 'Kubernetes', version: 'v1.32.3' });
    const schemas = doc['components']['schemas'];
    expect(schemas['io.k8s.api.batch.v1.Job']['properties']['spec']).toEqual({
      allOf: [{ $ref: '#/components/schemas/io.k8s.api.batch.v1.JobSpec' }],
      default: {},
      description: expect.stringContaining('Specification of the desired behavior of a job'),
    });
    expect(schemas['io.k8s.api.batch.v1.CronJobSpec']['properties']['schedule']['default']).toBe('');
    expect(schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString']['oneOf']).toEqual([{ type: 'integer' }, { type: 'string' }]);
    for (const ref of new Set(refs(doc))) expect(schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
    const item = doc['paths']['/apis/batch/v1/namespaces/{namespace}/jobs/{name}'];
    expect(Object.keys(item['patch']['requestBody']['content'])).toContain(SMP);
    expect(item['patch']['requestBody']['required']).toBe(true);
    expect(item['get']['responses']['200']['content']['application/json']['schema']).toEqual({ $ref: '#/components/schemas/io.k8s.api.batch.v1.Job' });
    expect(item['parameters']).toContainEqual(
      expect.objectContaining({ in: 'path', name: 'namespace', required: true, schema: { type: 'string', uniqueItems: true } }),
    );
  });

  it('C-132 D-WIRE-32 every PATCH of an object (all but the proxy connections) declares fieldValidation and its kind', async () => {
    const index = (await get('/openapi/v3')).json;
    let patches = 0;
    for (const { serverRelativeURL } of Object.values(index['paths']) as Json[]) {
      const doc = (await get(serverRelativeURL)).json;
      for (const [path, item] of Object.entries(doc['paths'] as Json)) {
        if (!item['patch'] || item['patch']['x-kubernetes-action'] === 'connect') continue;
        patches++;
        const params = [...(item['parameters'] ?? []), ...(item['patch']['parameters'] ?? [])] as Json[];
        expect(
          params.some((p) => p['name'] === 'fieldValidation' && p['in'] === 'query'),
          path,
        ).toBe(true);
        expect(item['patch']['x-kubernetes-group-version-kind'], path).toBeDefined();
      }
    }
    expect(patches).toBeGreaterThan(80);
  });

  it('D-WIRE-32 a CRD group/version document: the kinds as upstream serves them, merge patch only', async () => {
    const doc = (await get('/openapi/v3/apis/example.com/v1')).json;
    expect(doc['info']).toEqual({ title: 'Kubernetes CRD Swagger', version: 'v0.1.0' });
    const schemas = doc['components']['schemas'];
    const widget = schemas['com.example.v1.Widget'];
    expect(widget['properties']['spec']['properties']['color']).toEqual({ default: 'blue', type: 'string' });
    expect(widget['properties']['metadata']['allOf']).toEqual([{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    for (const ref of new Set(refs(doc))) expect(schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
    const patch = doc['paths']['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}']['patch'];
    expect(Object.keys(patch['requestBody']['content']).sort()).toEqual([
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
    ]);
    const gadget = (await get('/openapi/v3/apis/tools.example.org/v1')).json['components']['schemas']['org.example.tools.v1.Gadget'];
    expect(gadget['properties']['spec']['properties']['label']).toEqual({ description: 'May be null.', nullable: true, type: 'string' });
    expect(gadget['properties']['spec']['properties']['port']['anyOf']).toEqual([{ type: 'integer' }, { type: 'string' }]);
    expect(gadget['properties']['spec']['required']).toEqual(['label', 'port']);
  });
});

describe('D-WIRE-33 OpenAPI documents are computed on first request and recomputed only where a CRD changed', () => {
  let cluster: DevCluster;
  const get = (path: string, headers?: Record<string, string>): Promise<Fetched> => fetchFrom(cluster, path, headers);
  const hashes = async (): Promise<Record<string, string>> =>
    Object.fromEntries(
      Object.entries((await get('/openapi/v3')).json['paths'] as Json).map(([k, v]) => [k, (v as Json)['serverRelativeURL'].split('hash=')[1]]),
    );

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('D-WIRE-33 nothing is computed at start-up, and a repeated request reuses what was computed', async () => {
    const atStart = { ...parts.computed };
    await cluster.load(WIDGETS_CRD);
    await cluster.settle();
    expect(parts.computed).toEqual(atStart);
    const first = await get('/openapi/v2', { accept: PROTOBUF_ACCEPT });
    expect(parts.computed.v2Documents).toBe(atStart.v2Documents + 1);
    const second = await get('/openapi/v2', { accept: PROTOBUF_ACCEPT });
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(parts.computed.v2Documents).toBe(atStart.v2Documents + 1);
  });

  it('D-WIRE-33 a new, changed or deleted CRD recomputes its own parts only', async () => {
    const before = await hashes();
    const computed = { ...parts.computed };
    await cluster.store.create(GADGETS_CRD);
    await cluster.settle();
    const added = await hashes();
    expect(added['apis/tools.example.org/v1']).toBeDefined();
    expect(added['apis/batch/v1']).toBe(before['apis/batch/v1']);
    expect(added['apis/example.com/v1']).toBe(before['apis/example.com/v1']);
    expect(parts.computed.builtinParts).toBe(computed.builtinParts);
    const v2 = (await get('/openapi/v2', { accept: 'application/json' })).json;
    expect(v2['definitions']['org.example.tools.v1.Gadget']).toBeDefined();
    expect(parts.computed.crdParts).toBe(computed.crdParts + 2); // the gadgets' two versions; widgets reused

    const crd = cluster.store.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, 'widgets.example.com')!;
    const changed = structuredClone(crd) as Json;
    changed['spec']['versions'][0]['schema']['openAPIV3Schema']['properties']['spec']['properties']['weight'] = { type: 'number' };
    await cluster.store.update(changed);
    await cluster.settle();
    const afterChange = await hashes();
    expect(afterChange['apis/example.com/v1']).not.toBe(added['apis/example.com/v1']);
    expect(afterChange['apis/tools.example.org/v1']).toBe(added['apis/tools.example.org/v1']);
    expect(afterChange['apis/batch/v1']).toBe(before['apis/batch/v1']);
    const widget = (await get('/openapi/v2', { accept: 'application/json' })).json['definitions']['com.example.v1.Widget'];
    expect(widget['properties']['spec']['properties']['weight']).toEqual({ type: 'number' });

    await cluster.store.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, 'gadgets.tools.example.org');
    await cluster.settle();
    expect((await hashes())['apis/tools.example.org/v1']).toBeUndefined();
    expect((await get('/openapi/v3/apis/tools.example.org/v1')).status).toBe(404);
    expect(Object.keys((await get('/openapi/v2', { accept: 'application/json' })).json['definitions'])).not.toContain('org.example.tools.v1.Gadget');
  });
});

describe('D-WIRE-34 the openapiV3 option', () => {
  it('D-WIRE-34 "404" answers /openapi/v3 and its documents 404 and keeps /openapi/v2', async () => {
    const cluster = await DevCluster.start({ tls: false, openapiV3: '404' });
    try {
      expect((await fetchFrom(cluster, '/openapi/v3')).status).toBe(404);
      expect((await fetchFrom(cluster, '/openapi/v3/api/v1')).status).toBe(404);
      expect((await fetchFrom(cluster, '/openapi/v2', { accept: 'application/json' })).status).toBe(200);
    } finally {
      await cluster.stop();
    }
  });

  it('D-WIRE-34 any other value fails the start', async () => {
    await expect(DevCluster.start({ tls: false, openapiV3: 'off' as unknown as 'full' })).rejects.toThrow(
      'option openapiV3 must be "full" or "404", not "off"',
    );
  });
});
