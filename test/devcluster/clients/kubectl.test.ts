/**
 * Real kubectl binaries against a TLS devcluster (C-120, section 12 of the devcluster reference): the legacy 1.20 build
 * and the newest one available, each with a generated kubeconfig and a fresh discovery cache per
 * invocation. Every test checks both kubectl's exit code and output and the wire traffic the
 * devcluster recorded, against the observed-traffic table of section 12.1.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import { DevCluster } from '../../../devcluster/testing.js';
import type { RequestRecord } from '../../../devcluster/testing.js';
import * as kubectl from './kubectl.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const WIDGETS_CRD = path.join(ROOT, 'fixtures/crds/widgets.yaml');
const OBJECTS = path.join(ROOT, 'fixtures/objects');
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const OPENAPI_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** The legacy (1.20) and newest kubectl builds; a missing one fails its suite, never skips it. */
const BINARIES = kubectl.findKubectls();

type Json = Record<string, any>;

/** `METHOD path?query` for the requests on `resource` (discovery and OpenAPI left out). */
function calls(records: readonly RequestRecord[], resource: string): string[] {
  return records.filter((r) => r.resource === resource).map((r) => `${r.method} ${r.path}${r.query ? `?${r.query}` : ''}`);
}

function only(records: readonly RequestRecord[], predicate: (r: RequestRecord) => boolean): RequestRecord {
  const found = records.filter(predicate);
  expect(found, 'exactly one matching request').toHaveLength(1);
  return found[0]!;
}

it('a missing kubectl fails with a first line naming the install script, and the detail after it', () => {
  const missing: kubectl.KubectlBinary = { label: 'kubectl newest (missing)', path: undefined, version: undefined, problem: 'no kubectl on PATH' };
  const error = (() => {
    try {
      kubectl.requireBinary(missing);
    } catch (caught) {
      return caught as Error;
    }
    throw new Error('requireBinary accepted a missing binary');
  })();
  expect(error.message.split('\n')).toEqual([
    'kubectl is missing: run `bash scripts/install-kubectl.sh` from the repository root, then run the tests again',
    '(kubectl newest (missing): no kubectl on PATH)',
  ]);
});

describe.each(BINARIES.map((b) => [b.label, b] as const))('%s against a TLS devcluster', (_, binary) => {
  const minor = Number(binary.version?.split('.')[1] ?? 0);
  /** kubectl 1.27+ adds fieldValidation=Strict to writes (section 12.1, verified back to 1.27). */
  const strict = minor >= 27 ? '&fieldValidation=Strict' : '';
  const label = binary.label;
  let cluster: DevCluster;
  let target: kubectl.KubectlTarget;
  let bin: string;
  let mark = 0;

  const run = async (args: string[], timeoutMs = 20_000): Promise<kubectl.KubectlResult> => {
    mark = cluster.requests.all.length;
    return kubectl.expectSuccess(await kubectl.run(bin, target, args, { timeoutMs }), `kubectl ${args.join(' ')}`);
  };
  const startKubectl = (args: string[]): kubectl.Running => {
    mark = cluster.requests.all.length;
    return kubectl.start(bin, target, args);
  };
  const recorded = (): readonly RequestRecord[] => cluster.requests.all.slice(mark);
  const waitForWatch = (name?: string): Promise<RequestRecord> =>
    cluster.requests.waitFor(
      (r) =>
        r.verb === 'watch' &&
        r.resource === 'widgets' &&
        cluster.requests.all.indexOf(r) >= mark &&
        (name === undefined || new URLSearchParams(r.query).get('fieldSelector') === `metadata.name=${name}`),
      15_000,
    );
  const stored = (ref: typeof WIDGET | typeof CONFIGMAP, name: string): Json | undefined => cluster.store.get(ref, name);
  const widget = (name: string, spec: Json = { size: 2 }, metadata: Json = {}): Promise<Json> =>
    cluster.store.create({ ...WIDGET, metadata: { name, ...metadata }, spec });

  beforeAll(async () => {
    bin = kubectl.requireBinary(binary);
    cluster = await DevCluster.start();
    cluster.requests.keepResponses = true;
    await cluster.load(WIDGETS_CRD);
    const work = kubectl.makeWorkDir();
    target = { kubeconfig: cluster.writeKubeconfig(path.join(work, 'kubeconfig')), workDir: work };
  });
  afterAll(async () => {
    await cluster?.stop();
    if (target) fs.rmSync(target.workDir, { recursive: true, force: true });
  });

  it(`C-120 ${label}: the binary is installed and runs`, () => {
    expect(kubectl.requireBinary(binary)).toBe(binary.path);
    expect(binary.version).toMatch(/^1\.\d+\.\d+$/);
  });

  it(`C-120 ${label}: apply creates a ConfigMap with a client-side-apply POST`, async () => {
    const r = await run(['apply', '-f', path.join(OBJECTS, 'configmap.yaml')]);
    expect(r.stdout.trim()).toBe('configmap/demo created');
    expect(calls(recorded(), 'configmaps')).toEqual([`GET ${CONFIGMAPS}/demo`, `POST ${CONFIGMAPS}?fieldManager=kubectl-client-side-apply${strict}`]);
    const [get, post] = recorded().filter((x) => x.resource === 'configmaps');
    expect(get!.code).toBe(404);
    expect(post!.code).toBe(201);
    const sent = JSON.parse(post!.body!) as Json;
    expect(JSON.parse(sent['metadata']['annotations']['kubectl.kubernetes.io/last-applied-configuration'] as string)).toMatchObject({
      kind: 'ConfigMap',
      data: { color: 'blue', size: '1' },
    });
    if (minor >= 27) {
      // D-KCTL-1: kubectl 1.27+ reads the v3 index and the core/v1 document, finds `fieldValidation`
      // on ConfigMap's PATCH and leaves validation to the server, never asking for /openapi/v2.
      expect(only(recorded(), (x) => x.path === '/openapi/v3').code).toBe(200);
      expect(only(recorded(), (x) => x.path === '/openapi/v3/api/v1').query).toMatch(/^hash=[0-9A-F]{128}/);
      expect(recorded().filter((x) => x.path === '/openapi/v2')).toEqual([]);
    } else {
      // D-KCTL-1: kubectl 1.20 validates against the protobuf OpenAPI v2 document.
      const openapi = only(recorded(), (x) => x.path === '/openapi/v2');
      expect(openapi.headers.accept).toBe(OPENAPI_PROTOBUF_ACCEPT);
      expect(openapi.code).toBe(200);
    }
    expect(stored(CONFIGMAP, 'demo')?.['data']).toEqual({ color: 'blue', size: '1' });
  });

  it(`C-120 ${label}: apply of a changed ConfigMap sends a strategic merge patch`, async () => {
    expect(stored(CONFIGMAP, 'demo'), 'created by the previous test').toBeDefined();
    const r = await run(['apply', '-f', path.join(OBJECTS, 'configmap-changed.yaml')]);
    expect(r.stdout.trim()).toBe('configmap/demo configured');
    expect(calls(recorded(), 'configmaps')).toEqual([`GET ${CONFIGMAPS}/demo`, `PATCH ${CONFIGMAPS}/demo?fieldManager=kubectl-client-side-apply${strict}`]);
    const patch = only(recorded(), (x) => x.method === 'PATCH');
    expect(patch.headers.contentType).toBe('application/strategic-merge-patch+json');
    expect(patch.code).toBe(200);
    expect((JSON.parse(patch.body!) as Json)['data']).toEqual({ color: 'green', size: null });
    // The key dropped from the manifest is gone, the changed one updated.
    expect(stored(CONFIGMAP, 'demo')?.['data']).toEqual({ color: 'green' });
  });

  it(`C-120 ${label}: apply of an unchanged ConfigMap only reads it`, async () => {
    const r = await run(['apply', '-f', path.join(OBJECTS, 'configmap-changed.yaml')]);
    expect(r.stdout.trim()).toBe('configmap/demo unchanged');
    expect(calls(recorded(), 'configmaps')).toEqual([`GET ${CONFIGMAPS}/demo`]);
  });

  it(`C-120 ${label}: apply creates a Widget with a client-side-apply POST`, async () => {
    const r = await run(['apply', '-f', path.join(OBJECTS, 'widget.yaml')]);
    expect(r.stdout.trim()).toBe('widget.example.com/applied created');
    expect(calls(recorded(), 'widgets')).toEqual([`GET ${WIDGETS}/applied`, `POST ${WIDGETS}?fieldManager=kubectl-client-side-apply${strict}`]);
    expect(
      recorded()
        .filter((x) => x.resource === 'widgets')
        .map((x) => x.code),
    ).toEqual([404, 201]);
    expect(stored(WIDGET, 'applied')?.['spec']).toEqual({ size: 3, tags: ['one'], color: 'blue' });
  });

  it(`C-120 ${label}: apply of a changed Widget sends a JSON merge patch`, async () => {
    expect(stored(WIDGET, 'applied'), 'created by the previous test').toBeDefined();
    const r = await run(['apply', '-f', path.join(OBJECTS, 'widget-changed.yaml')]);
    expect(r.stdout.trim()).toBe('widget.example.com/applied configured');
    expect(calls(recorded(), 'widgets')).toEqual([`GET ${WIDGETS}/applied`, `PATCH ${WIDGETS}/applied?fieldManager=kubectl-client-side-apply${strict}`]);
    const patch = only(recorded(), (x) => x.method === 'PATCH');
    expect(patch.headers.contentType).toBe('application/merge-patch+json');
    expect((JSON.parse(patch.body!) as Json)['spec']).toEqual({ size: 5, tags: null });
    const after = stored(WIDGET, 'applied')!;
    expect(after['spec']).toEqual({ size: 5, color: 'blue' });
    expect(after['metadata']['generation']).toBe(2);
  });

  it(`C-120 ${label}: get renders the Table with the Widget printer column SIZE`, async () => {
    await widget('table-a', { size: 4 });
    const r = await run(['get', 'widgets']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+SIZE\s+AGE$/);
    expect(lines).toContainEqual(expect.stringMatching(/^table-a\s+4\s+\d+s$/));
    expect(lines).toContainEqual(expect.stringMatching(/^applied\s+5\s+\d+s$/));
    const list = only(recorded(), (x) => x.resource === 'widgets');
    expect(`${list.method} ${list.path}?${list.query}`).toBe(`GET ${WIDGETS}?limit=500`);
    expect(list.headers.accept).toBe(TABLE_ACCEPT);
    expect((JSON.parse(list.responseBody!) as Json)['kind']).toBe('Table');
    expect(r.stderr).not.toMatch(/Falling back/);
  });

  it(`C-120 ${label}: get -o yaml prints the stored Widget`, async () => {
    const r = await run(['get', 'widget', 'table-a', '-o', 'yaml']);
    const printed = YAML.parse(r.stdout) as Json;
    const current = stored(WIDGET, 'table-a')!;
    expect(printed).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget', spec: { size: 4, color: 'blue' } });
    expect(printed['metadata']).toMatchObject({
      name: 'table-a',
      namespace: 'default',
      uid: current['metadata']['uid'],
      resourceVersion: current['metadata']['resourceVersion'],
    });
    expect(calls(recorded(), 'widgets')).toEqual([`GET ${WIDGETS}/table-a`]);
  });

  it(`C-120 ${label}: get -w prints a Widget created while it watches`, async () => {
    const watching = startKubectl(['get', 'widgets', '-w']);
    try {
      const watch = await waitForWatch();
      await watching.waitForLine(/^NAME\s+SIZE\s+AGE$/);
      await widget('watched', { size: 6 });
      await watching.waitForLine(/^watched\s+6\s+\d+s$/);
      const list = only(recorded(), (x) => x.verb === 'list' && x.resource === 'widgets');
      const listRv = (JSON.parse(list.responseBody!) as Json)['metadata']['resourceVersion'] as string;
      expect(`${watch.path}?${watch.query}`).toBe(`${WIDGETS}?resourceVersion=${listRv}&watch=true`);
      expect(watch.headers.accept).toBe(TABLE_ACCEPT);
      expect(watch.code).toBe(200);
    } finally {
      await watching.kill();
    }
  });

  it(`C-120 ${label}: patch --type=merge reads, then sends a merge patch as kubectl-patch`, async () => {
    await widget('merged', { size: 1 });
    const r = await run(['patch', 'widget', 'merged', '--type=merge', '-p', '{"spec":{"size":6,"mode":"a"}}']);
    expect(r.stdout.trim()).toBe('widget.example.com/merged patched');
    expect(calls(recorded(), 'widgets')).toEqual([`GET ${WIDGETS}/merged`, `PATCH ${WIDGETS}/merged?fieldManager=kubectl-patch`]);
    expect(only(recorded(), (x) => x.method === 'PATCH').headers.contentType).toBe('application/merge-patch+json');
    expect(stored(WIDGET, 'merged')?.['spec']).toEqual({ size: 6, mode: 'a', color: 'blue' });
  });

  it(`C-120 ${label}: patch --type=json applies the JSON patch operations`, async () => {
    await widget('jsonpatched', { size: 1, tags: ['a'] });
    const ops = [
      { op: 'replace', path: '/spec/size', value: 7 },
      { op: 'add', path: '/spec/tags/-', value: 'b' },
    ];
    const r = await run(['patch', 'widget', 'jsonpatched', '--type=json', '-p', JSON.stringify(ops)]);
    expect(r.stdout.trim()).toBe('widget.example.com/jsonpatched patched');
    const patch = only(recorded(), (x) => x.method === 'PATCH');
    expect(`${patch.path}?${patch.query}`).toBe(`${WIDGETS}/jsonpatched?fieldManager=kubectl-patch`);
    expect(patch.headers.contentType).toBe('application/json-patch+json');
    expect(stored(WIDGET, 'jsonpatched')?.['spec']).toEqual({ size: 7, tags: ['a', 'b'], color: 'blue' });
  });

  it(`C-120 ${label}: patch of a ConfigMap defaults to a strategic merge patch`, async () => {
    await cluster.store.create({ ...CONFIGMAP, metadata: { name: 'patched-cm' }, data: { a: '1' } });
    await run(['patch', 'cm', 'patched-cm', '-p', '{"data":{"b":"2"}}']);
    expect(only(recorded(), (x) => x.method === 'PATCH').headers.contentType).toBe('application/strategic-merge-patch+json');
    expect(stored(CONFIGMAP, 'patched-cm')?.['data']).toEqual({ a: '1', b: '2' });
  });

  it(`C-120 ${label}: wait --for=condition=Ready returns once the status subresource sets the condition`, async () => {
    const created = await widget('ready');
    const waiting = startKubectl(['wait', '--for=condition=Ready', 'widget/ready', '--timeout=20s']);
    try {
      const watch = await waitForWatch('ready');
      expect(waiting.process.exitCode, 'kubectl must still be waiting').toBeNull();
      await cluster.store.patch(
        WIDGET,
        'ready',
        {
          status: { conditions: [{ type: 'Ready', status: 'True', observedGeneration: created['metadata']['generation'] }] },
        },
        { subresource: 'status' },
      );
      const r = kubectl.expectSuccess(await waiting.finished(20_000), 'kubectl wait');
      expect(r.stdout.trim()).toBe('widget.example.com/ready condition met');
      const list = only(recorded(), (x) => x.verb === 'list' && x.resource === 'widgets');
      const listRv = (JSON.parse(list.responseBody!) as Json)['metadata']['resourceVersion'] as string;
      const q = new URLSearchParams(watch.query);
      expect(q.get('resourceVersion')).toBe(listRv);
      expect(new URLSearchParams(list.query).get('fieldSelector')).toBe('metadata.name=ready');
      expect(calls(recorded(), 'widgets')[0]).toBe(`GET ${WIDGETS}/ready`);
    } finally {
      await waiting.kill();
    }
  });

  it(`C-120 ${label}: wait --for=delete returns once the Widget is deleted`, async () => {
    await widget('doomed');
    const waiting = startKubectl(['wait', '--for=delete', 'widget/doomed', '--timeout=20s']);
    try {
      await waitForWatch('doomed');
      expect(waiting.process.exitCode, 'kubectl must still be waiting').toBeNull();
      await cluster.store.delete(WIDGET, 'doomed');
      const r = kubectl.expectSuccess(await waiting.finished(20_000), 'kubectl wait --for=delete');
      expect(r.stdout.trim()).toBe('widget.example.com/doomed condition met');
    } finally {
      await waiting.kill();
    }
  });

  it(`C-120 ${label}: delete of a Widget with a finalizer finishes once the finalizer is removed`, async () => {
    await widget('held', { size: 2 }, { finalizers: ['example.com/hold'] });
    const deleting = startKubectl(['delete', 'widget', 'held', '--timeout=20s']);
    try {
      await waitForWatch('held');
      const del = only(recorded(), (x) => x.method === 'DELETE');
      expect(del.path).toBe(`${WIDGETS}/held`);
      expect(JSON.parse(del.body!)).toEqual({ propagationPolicy: 'Background' });
      expect(del.code).toBe(200);
      expect(stored(WIDGET, 'held')?.['metadata']['deletionTimestamp']).toBeDefined();
      expect(deleting.process.exitCode, 'kubectl must wait for the finalizer').toBeNull();
      await cluster.store.patch(WIDGET, 'held', { metadata: { finalizers: null } });
      const r = kubectl.expectSuccess(await deleting.finished(20_000), 'kubectl delete');
      expect(r.stdout.trim()).toBe('widget.example.com "held" deleted');
      expect(stored(WIDGET, 'held')).toBeUndefined();
    } finally {
      await deleting.kill();
    }
  });

  it(`C-120 ${label}: api-resources lists widgets and configmaps with their short names`, async () => {
    const r = await run(['api-resources']);
    expect(r.stdout).toMatch(/^widgets\s+wd\s+example\.com\/v1\s+true\s+Widget\s*$/m);
    expect(r.stdout).toMatch(/^configmaps\s+cm\s+v1\s+true\s+ConfigMap\s*$/m);
    expect(r.stdout).toMatch(/^customresourcedefinitions\s+crd,crds\s+apiextensions\.k8s\.io\/v1\s+false\s+CustomResourceDefinition\s*$/m);
  });

  it(`C-120 ${label}: short names wd and cm resolve through discovery`, async () => {
    const widgets = await run(['get', 'wd', '-o', 'name']);
    expect(widgets.stdout.split('\n')).toContain('widget.example.com/applied');
    expect(calls(recorded(), 'widgets')).toEqual([`GET ${WIDGETS}?limit=500`]);
    // D-WIRE-12: kubectl 1.27+ resolves everything from aggregated /api and /apis; 1.20 fetches each group version (D-WIRE-11).
    const groupVersions = recorded()
      .filter((x) => x.resource === undefined && /^\/apis\/[^/]+\/[^/]+$/.test(x.path))
      .map((x) => x.path);
    if (minor >= 27) expect(groupVersions).toEqual([]);
    else expect(groupVersions).toContain('/apis/example.com/v1');
    const configmaps = await run(['get', 'cm']);
    expect(configmaps.stdout).toMatch(/^NAME\s+/);
    expect(configmaps.stdout).toMatch(/^demo\s+/m);
    expect(calls(recorded(), 'configmaps')).toEqual([`GET ${CONFIGMAPS}?limit=500`]);
  });

  it(`D-WIRE-11 ${label}: with aggregated discovery off, legacy discovery alone resolves wd and lists widgets`, async () => {
    const legacy = await DevCluster.start({ aggregatedDiscovery: false });
    try {
      await legacy.load(WIDGETS_CRD);
      await legacy.store.create({ ...WIDGET, metadata: { name: 'legacy' }, spec: { size: 8 } });
      const work = kubectl.makeWorkDir();
      const legacyTarget = { kubeconfig: legacy.writeKubeconfig(path.join(work, 'kubeconfig')), workDir: work };
      const r = kubectl.expectSuccess(await kubectl.run(bin, legacyTarget, ['get', 'wd']), 'kubectl get wd');
      fs.rmSync(work, { recursive: true, force: true });
      expect(r.stdout).toMatch(/^legacy\s+8\s+\d+s$/m);
      const paths = legacy.requests.all.map((x) => x.path);
      expect(paths).toEqual(expect.arrayContaining(['/api', '/apis', '/api/v1', '/apis/example.com/v1', `${WIDGETS}`]));
    } finally {
      await legacy.stop();
    }
  });

  it(`D-KCTL-9 ${label}: describe lists the events of the object by involvedObject field selectors`, async () => {
    const cm: Json = await cluster.store.create({ ...CONFIGMAP, metadata: { name: 'described' }, data: { k: 'v' } });
    await cluster.store.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'described.1', namespace: 'default' },
      involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'described', namespace: 'default', uid: cm['metadata']['uid'] },
      reason: 'Checked',
      message: 'seen by the test',
      type: 'Normal',
      source: { component: 'test' },
    });
    await cluster.store.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'other.1', namespace: 'default' },
      involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'other', namespace: 'default' },
      reason: 'Unrelated',
      message: 'not about it',
      type: 'Normal',
    });
    const r = await run(['describe', 'cm', 'described']);
    expect(r.stdout).toMatch(/^Name:\s+described$/m);
    expect(r.stdout).toMatch(/Normal\s+Checked\s+.*seen by the test/);
    expect(r.stdout).not.toMatch(/Unrelated/);
    const events = only(recorded(), (x) => x.resource === 'events');
    expect(events.code).toBe(200);
    expect(new URLSearchParams(events.query).get('fieldSelector')).toContain('involvedObject.name=described');
  });
});

describe('legacy kubectl imperative create', () => {
  const legacy = BINARIES[0]!;
  let cluster: DevCluster;
  let target: kubectl.KubectlTarget;

  beforeAll(async () => {
    kubectl.requireBinary(legacy);
    cluster = await DevCluster.start();
    const work = kubectl.makeWorkDir();
    target = { kubeconfig: cluster.writeKubeconfig(path.join(work, 'kubeconfig')), workDir: work };
  });
  afterAll(async () => {
    await cluster?.stop();
    if (target) fs.rmSync(target.workDir, { recursive: true, force: true });
  });

  it(`D-WIRE-16 ${legacy.label}: create configmap and create namespace send JSON without Content-Type and succeed`, async () => {
    const bin = kubectl.requireBinary(legacy);
    const cm = kubectl.expectSuccess(await kubectl.run(bin, target, ['create', 'configmap', 'literal', '--from-literal=a=b']), 'kubectl create configmap');
    expect(cm.stdout.trim()).toBe('configmap/literal created');
    const ns = kubectl.expectSuccess(await kubectl.run(bin, target, ['create', 'namespace', 'made']), 'kubectl create namespace');
    expect(ns.stdout.trim()).toBe('namespace/made created');
    const posts = cluster.requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => [r.path, r.headers.contentType, r.code])).toEqual([
      [CONFIGMAPS, undefined, 201],
      ['/api/v1/namespaces', undefined, 201],
    ]);
    expect(cluster.store.get(CONFIGMAP, 'literal')?.['data']).toEqual({ a: 'b' });
    expect(cluster.store.get({ apiVersion: 'v1', kind: 'Namespace' }, 'made')).toBeDefined();
  });
});
