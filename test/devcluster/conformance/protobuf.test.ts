/**
 * Conformance checklist, protobuf request bodies (devcluster reference section 13, C-121, C-122):
 * creates, updates and deletes of built-in kinds sent as Kubernetes protobuf, the way kubectl 1.32
 * and client-go send them, answered in JSON and processed exactly like JSON bodies.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAGIC, PROTOBUF, protobufBody } from '../../support/protobuf.js';
import { CONFIGMAPS, startHarness, type Harness, type Json } from './harness.js';

/** kubectl 1.32's Accept with a protobuf body (section 12.1). */
const KUBECTL_ACCEPT = 'application/vnd.kubernetes.protobuf,application/json';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
const FIXTURE = path.resolve(import.meta.dirname, '../../../fixtures/protobuf/core.v1.ConfigMap.pb');

/** Whether the protobuf library has been loaded into this process (the devcluster runs in it). */
const libraryLoaded = (): boolean => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes(`${path.sep}protobufjs${path.sep}`));
const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' };

describe('conformance: protobuf request bodies', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h.stop();
  });

  const send = async (method: string, urlPath: string, body: Buffer): Promise<{ status: number; headers: Headers; contentType: string | null; json: Json }> => {
    const res = await fetch(h.cluster.url + urlPath, { method, headers: { 'content-type': PROTOBUF, accept: KUBECTL_ACCEPT }, body });
    return { status: res.status, headers: res.headers, contentType: res.headers.get('content-type'), json: (await res.json()) as Json };
  };

  // First in this file: nothing here has loaded the library yet.
  it('D-WIRE-25 the protobuf library and schemas are loaded by the first protobuf body, not at start', async () => {
    expect(libraryLoaded()).toBe(false);
    expect((await h.post(CONFIGMAPS, { ...CONFIGMAP, metadata: { name: 'json-first' } })).status).toBe(201);
    expect(libraryLoaded()).toBe(false);
    // The upstream fixture names the namespace `namespaceValue`: decoded, then refused as a mismatch.
    const r = await send('POST', CONFIGMAPS, fs.readFileSync(FIXTURE));
    expect([r.status, r.json['reason']]).toEqual([400, 'BadRequest']);
    expect(r.json['message']).toMatch(/namespace/);
    expect(libraryLoaded()).toBe(true);
  });

  it('C-121 a protobuf ConfigMap is created, updated and deleted, with JSON answers', async () => {
    const created = await send(
      'POST',
      `${CONFIGMAPS}?fieldManager=kubectl-create`,
      await protobufBody('v1', 'ConfigMap', { metadata: { name: 'c121', namespace: '' }, data: { a: '1' }, binaryData: { bin: Buffer.from([0, 255]) } }),
    );
    expect(created.status).toBe(201);
    expect(created.contentType).toMatch(/^application\/json/);
    expect(created.json).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' }, binaryData: { bin: 'AP8=' } });
    expect(created.json['metadata']['managedFields'][0]['manager']).toBe('kubectl-create');

    const rv = created.json['metadata']['resourceVersion'] as string;
    const updated = await send(
      'PUT',
      `${CONFIGMAPS}/c121`,
      await protobufBody('v1', 'ConfigMap', { metadata: { name: 'c121', resourceVersion: rv }, data: { a: '2' } }),
    );
    expect(updated.status).toBe(200);
    expect(h.cluster.store.get(CONFIGMAP, 'c121')).toMatchObject({ data: { a: '2' } });
    expect(h.cluster.store.get(CONFIGMAP, 'c121')).not.toHaveProperty('binaryData');

    const stale = await send(
      'PUT',
      `${CONFIGMAPS}/c121`,
      await protobufBody('v1', 'ConfigMap', { metadata: { name: 'c121', resourceVersion: rv }, data: { a: '3' } }),
    );
    expect([stale.status, stale.json['reason']]).toEqual([409, 'Conflict']);

    const dryRun = await send('DELETE', `${CONFIGMAPS}/c121`, await protobufBody('v1', 'DeleteOptions', { dryRun: ['All'] }));
    expect(dryRun.status).toBe(200);
    expect(h.cluster.store.get(CONFIGMAP, 'c121')).toBeDefined();
    const deleted = await send('DELETE', `${CONFIGMAPS}/c121`, await protobufBody('v1', 'DeleteOptions', { propagationPolicy: 'Background' }));
    expect(deleted.status).toBe(200);
    expect(h.cluster.store.get(CONFIGMAP, 'c121')).toBeUndefined();
  });

  it('C-121 a malformed protobuf body is 400 and writes nothing', async () => {
    const before = h.cluster.revision;
    const r = await send('POST', CONFIGMAPS, Buffer.concat([MAGIC, Buffer.from([0x0a, 0x7f])]));
    expect([r.status, r.json['reason']]).toEqual([400, 'BadRequest']);
    expect(h.cluster.revision).toBe(before);
  });

  it('C-122 a protobuf Deployment keeps an explicit zero of replicas and gets the defaults of fields Go wrote as zeros', async () => {
    const r = await send(
      'POST',
      `${DEPLOYMENTS}?fieldManager=kubectl-create&fieldValidation=Strict`,
      await protobufBody('apps/v1', 'Deployment', {
        metadata: { name: 'c122', namespace: '', labels: { app: 'c122' }, creationTimestamp: {} },
        spec: {
          replicas: 0,
          paused: false,
          selector: { matchLabels: { app: 'c122' } },
          template: {
            metadata: { labels: { app: 'c122' } },
            spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', imagePullPolicy: '', terminationMessagePath: '', resources: {} }], restartPolicy: '' },
          },
          strategy: { type: '' },
        },
        status: {},
      }),
    );
    expect(r.status).toBe(201);
    const stored = h.cluster.store.get(DEPLOYMENT, 'c122') as Json;
    expect(stored['spec']['replicas']).toBe(0);
    expect(stored['spec']['strategy']['type']).toBe('RollingUpdate');
    const container = stored['spec']['template']['spec']['containers'][0];
    expect(container).toMatchObject({ imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log' });
    expect(stored['spec']['template']['spec']['restartPolicy']).toBe('Always');
  });

  it('C-122 fields unknown to the schema are dropped even with fieldValidation=Strict, as upstream', async () => {
    // Field 99 (a varint) is not in the ConfigMap message: tag (99 << 3 | 0) = 0x98 0x06, value 1.
    const body = await protobufBody('v1', 'ConfigMap', { metadata: { name: 'c122-unknown' }, data: { a: '1' } }, { trailing: Buffer.from([0x98, 0x06, 0x01]) });
    const r = await send('POST', `${CONFIGMAPS}?fieldValidation=Strict`, body);
    expect(r.headers.get('warning')).toBeNull();
    expect(h.cluster.store.get(CONFIGMAP, 'c122-unknown')).toMatchObject({ data: { a: '1' } });
    expect(r.status).toBe(201);
  });
});
