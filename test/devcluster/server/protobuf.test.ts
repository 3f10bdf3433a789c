/**
 * Protobuf request bodies, decoded without a server (D-WIRE-25, D-WIRE-26, D-WIRE-27): every
 * upstream round-trip fixture kept in fixtures/protobuf decodes to its JSON, and bodies built here
 * the way Go's encoder writes them (every plain field written, zeros included) decode to the JSON
 * form of the Go types: pointer zeros kept, plain zeros dropped, embedded structs inlined.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as protobuf from '../../../devcluster/server/protobuf.js';
import { ApiError } from '../../../devcluster/server/statuses.js';
import * as schemas from '../../../devcluster/upstream/protobufschemas.js';
import { MAGIC, protobufBody } from '../../support/protobuf.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../../fixtures/protobuf');

type Json = Record<string, any>;

/** The resource a body is sent to, as decoding sees it. */
function target(apiVersion: string, kind: string, builtin = true): protobuf.Target {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return { builtin, group: group!, version: version!, kind };
}

let s: schemas.Schemas;

const encode = protobufBody;

async function rejected(body: Buffer, to = target('v1', 'ConfigMap')): Promise<ApiError> {
  try {
    await protobuf.decodeObject(body, to);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('the body was accepted');
}

beforeAll(async () => {
  s = await schemas.load();
});

describe('D-WIRE-26 upstream round-trip fixtures decode to their JSON', () => {
  const names = fs
    .readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.pb'))
    .map((f) => f.slice(0, -'.pb'.length));

  it('keeps a fixture for every kind it is meant to cover', () => {
    expect(names.length).toBeGreaterThanOrEqual(50);
    for (const kind of ['apps.v1.Deployment', 'core.v1.ConfigMap', 'core.v1.Secret', 'core.v1.Pod', 'batch.v1.Job', 'authentication.k8s.io.v1.TokenRequest'])
      expect(names).toContain(kind);
  });

  it.each(names)('%s', async (name) => {
    const expected = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')) as Json;
    const decoded = await protobuf.decodeObject(fs.readFileSync(path.join(FIXTURES, `${name}.pb`)), target(expected['apiVersion'], expected['kind']));
    expect(decoded).toEqual(expected);
  });
});

describe('D-WIRE-26 the JSON form of the Go types', () => {
  it('keeps an explicit zero of a pointer field and drops zeros of plain omitempty fields', async () => {
    const body = await encode('apps/v1', 'Deployment', {
      metadata: { name: 'd', namespace: '', generateName: '', creationTimestamp: {} },
      spec: {
        replicas: 0,
        paused: false,
        minReadySeconds: 0,
        selector: { matchLabels: { app: 'd' } },
        template: {
          metadata: { labels: { app: 'd' } },
          spec: { containers: [{ name: 'c', image: 'nginx', imagePullPolicy: '', stdin: false, tty: false, resources: {} }] },
        },
        strategy: {},
      },
      status: {},
    });
    expect(await protobuf.decodeObject(body, target('apps/v1', 'Deployment'))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', creationTimestamp: null },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx', resources: {} }] } },
        strategy: {},
      },
      status: {},
    });
  });

  it('omits unset pointer fields and writes zeros of fields whose tag has no omitempty', async () => {
    const body = await encode('v1', 'Service', {
      metadata: { name: 's' },
      spec: {
        ports: [
          { name: '', port: 0, targetPort: { type: 0, intVal: 8080 } },
          { port: 443, targetPort: { type: 1, strVal: 'https' } },
        ],
      },
    });
    const decoded = await protobuf.decodeObject(body, target('v1', 'Service'));
    expect(decoded['spec']).toEqual({
      ports: [
        { port: 0, targetPort: 8080 },
        { port: 443, targetPort: 'https' },
      ],
    });
    expect(decoded['spec']).not.toHaveProperty('allocateLoadBalancerNodePorts');
  });

  it('writes bytes as base64, keeps a false pointer bool, and drops empty maps and lists', async () => {
    const body = await encode('v1', 'Secret', {
      metadata: { name: 'sec', labels: {}, finalizers: [] },
      immutable: false,
      data: { key: Buffer.from([0, 1, 2, 255]), empty: Buffer.alloc(0) },
      stringData: {},
      type: 'Opaque',
    });
    expect(await protobuf.decodeObject(body, target('v1', 'Secret'))).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sec' },
      immutable: false,
      data: { key: 'AAEC/w==', empty: '' },
      type: 'Opaque',
    });
  });

  it('inlines embedded structs (volume sources, probe handlers, local object references)', async () => {
    const body = await encode('v1', 'Pod', {
      metadata: { name: 'p' },
      spec: {
        volumes: [{ name: 'cfg', volumeSource: { configMap: { localObjectReference: { name: 'settings' }, defaultMode: 420 } } }],
        containers: [
          {
            name: 'c',
            image: 'i',
            livenessProbe: { handler: { httpGet: { path: '/healthz', port: { type: 0, intVal: 8080 } } }, periodSeconds: 5 },
            env: [{ name: 'E', valueFrom: { secretKeyRef: { localObjectReference: { name: 'sec' }, key: 'k' } } }],
          },
        ],
      },
    });
    const spec = (await protobuf.decodeObject(body, target('v1', 'Pod')))['spec'] as Json;
    expect(spec['volumes']).toEqual([{ name: 'cfg', configMap: { name: 'settings', defaultMode: 420 } }]);
    expect(spec['containers'][0]['livenessProbe']).toEqual({ httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 5 });
    expect(spec['containers'][0]['env']).toEqual([{ name: 'E', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }]);
  });

  it('writes Time at seconds, MicroTime at microseconds, Quantity as its string, and a zero Time as null', async () => {
    const lease = await encode('coordination.k8s.io/v1', 'Lease', {
      metadata: { name: 'l', creationTimestamp: {} },
      spec: { holderIdentity: 'me', acquireTime: { seconds: 1714557600, nanos: 123456789 }, renewTime: { seconds: 1714557601, nanos: 0 } },
    });
    expect(await protobuf.decodeObject(lease, target('coordination.k8s.io/v1', 'Lease'))).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l', creationTimestamp: null },
      spec: { holderIdentity: 'me', acquireTime: '2024-05-01T10:00:00.123456Z', renewTime: '2024-05-01T10:00:01.000000Z' },
    });
    const namespace = await encode('v1', 'Namespace', { metadata: { name: 'n', deletionTimestamp: { seconds: 1714557600, nanos: 999 } } });
    expect((await protobuf.decodeObject(namespace, target('v1', 'Namespace')))['metadata']).toEqual({ name: 'n', deletionTimestamp: '2024-05-01T10:00:00Z' });
    const pod = await encode('v1', 'Pod', {
      metadata: { name: 'q' },
      spec: { containers: [{ name: 'c', resources: { limits: { cpu: { string: '500m' } } } }] },
    });
    expect(((await protobuf.decodeObject(pod, target('v1', 'Pod'))) as Json)['spec']['containers'][0]['resources']).toEqual({ limits: { cpu: '500m' } });
  });

  it('names fields by their Go JSON tags where they differ from the proto names', async () => {
    const body = await encode('authentication.k8s.io/v1', 'TokenRequest', {
      metadata: { name: 'sa' },
      spec: { audiences: ['api'], expirationSeconds: 600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uID: 'u-1' } },
    });
    expect((await protobuf.decodeObject(body, target('v1', 'ServiceAccount')))['spec']).toEqual({
      audiences: ['api'],
      expirationSeconds: 600,
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uid: 'u-1' },
    });
  });

  it('takes apiVersion and kind from the envelope, and those of the resource when the envelope leaves them empty', async () => {
    const named = await protobuf.decodeObject(await encode('authentication.k8s.io/v1', 'TokenRequest', { spec: {} }), target('v1', 'ServiceAccount'));
    expect(named).toMatchObject({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest' });
    const anonymous = await protobuf.decodeObject(
      await encode('v1', 'ConfigMap', { metadata: { name: 'c' }, data: { a: 'b' } }, { typeMeta: {} }),
      target('v1', 'ConfigMap'),
    );
    expect(anonymous).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
  });

  it('decodes a DeleteOptions body', async () => {
    const body = await encode('v1', 'DeleteOptions', { propagationPolicy: 'Orphan', dryRun: ['All'], gracePeriodSeconds: 0 });
    expect(await protobuf.decodeDeleteOptions(body)).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      propagationPolicy: 'Orphan',
      dryRun: ['All'],
      gracePeriodSeconds: 0,
    });
    // client-go's typed clients name the group version of the resource they delete.
    const apps = await encode('v1', 'DeleteOptions', { propagationPolicy: 'Foreground' }, { typeMeta: { apiVersion: 'apps/v1', kind: 'DeleteOptions' } });
    expect(await protobuf.decodeDeleteOptions(apps)).toEqual({ apiVersion: 'apps/v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground' });
  });
});

describe('D-WIRE-27 malformed protobuf bodies are 400 BadRequest', () => {
  it('a body without the magic prefix', async () => {
    const err = await rejected(Buffer.from('{"kind":"ConfigMap"}'));
    expect([err.code, err.reason]).toEqual([400, 'BadRequest']);
    expect(err.message).toBe(
      'the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (7b226b696e64223a22436f6e6669674d6170227d)',
    );
  });

  it('the magic prefix alone', async () => {
    const err = await rejected(MAGIC);
    expect([err.code, err.message]).toEqual([400, 'the object provided is unrecognized (must be of type ConfigMap): empty body (6b387300)']);
  });

  it('an envelope that is not a message', async () => {
    const err = await rejected(Buffer.concat([MAGIC, Buffer.from([0x0a, 0x50, 0x01])]));
    expect(err.code).toBe(400);
    expect(err.message).toMatch(/^the object provided is unrecognized \(must be of type ConfigMap\): .+ \(6b3873000a5001\)$/);
  });

  it('a kind without a schema', async () => {
    const err = await rejected(await encode('v1', 'ConfigMap', {}, { typeMeta: { apiVersion: 'v1', kind: 'Gadget' } }));
    expect([err.code, err.message]).toEqual([400, 'Gadget in version "v1" cannot be handled as a ConfigMap: no kind "Gadget" is registered for version "v1"']);
  });

  it('a message whose bytes do not decode', async () => {
    const raw = Buffer.from([0x0a, 0x7f, 0x0a]);
    const body = Buffer.concat([MAGIC, s.envelope.encode(s.envelope.fromObject({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, raw })).finish()]);
    const err = await rejected(body);
    expect(err.code).toBe(400);
    expect(err.message).toMatch(/^ConfigMap in version "v1" cannot be handled as a ConfigMap: /);
  });
});

describe('D-WIRE-25 which kinds have a protobuf form', () => {
  it('built-in kinds of the stable API versions do; custom resources and CRDs answer 415', async () => {
    expect(protobuf.readable(target('apps/v1', 'Deployment'))).toBe(true);
    expect(protobuf.readable(target('rbac.authorization.k8s.io/v1', 'Role'))).toBe(true);
    expect(protobuf.readable(target('example.com/v1', 'Widget', false))).toBe(false);
    expect(protobuf.readable(target('apiextensions.k8s.io/v1', 'CustomResourceDefinition'))).toBe(false);
    const err = await rejected(await encode('v1', 'ConfigMap', {}), target('example.com/v1', 'Widget', false));
    expect([err.code, err.reason, err.message]).toEqual([
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    ]);
    expect(protobuf.acceptedTypes(target('v1', 'ConfigMap'))).toEqual(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
  });
});
