/**
 * What a handler's writes through a generated patch view send, and what the API server makes of
 * them: the merge-patch must be exactly what the view's types promise (`null` sent to remove, a
 * partial object merged by the server into what is there, a list replaced whole, a map entry
 * merged), and a list assigned in the handler reads back as that list.
 *
 * The handler is registered for the descriptor generated from fixtures/crds/generator/bundles.yaml
 * (the copy in fixtures/generated/, kept current by test/generator/emitting/views.test.ts), so
 * every write below is type-checked against the emitted view; the operator runs through the real
 * HTTP client against a devcluster.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Bundles } from '../../../../fixtures/generated/bundles.example.com.v1.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const BUNDLES_CRD = fs.readFileSync(path.join(ROOT, 'fixtures/crds/generator/bundles.yaml'), 'utf8');
const BUNDLES = { group: 'example.com', version: 'v1', resource: 'bundles' } as const;

const SPEC = {
  owner: 'me',
  placement: { zone: 'a' },
  selector: { app: 'web' },
  note: 'to be removed',
  affinity: { weight: 2, topologyKey: 'zone' },
  labels: { tier: 'front' },
  servers: { main: { url: 'http://old', weight: 5 }, spare: { url: 'http://spare' } },
  values: { anything: [1, 2] },
  template: { apiVersion: 'v1', kind: 'Pod', spec: { containers: [] } },
  tags: ['x', 'y'],
  listeners: [
    { name: 'a', port: 1, protocol: 'UDP' },
    { name: 'b', port: 2 },
  ],
};

describe('writes through a generated patch view', () => {
  const suite = fx.clusterPerTest();

  it('R-PATCH-1 R-PATCH-2 send null, partial objects and whole lists, which the server merges as the types say', async () => {
    await suite.cluster.load(BUNDLES_CRD);
    const registry = new OperatorRegistry();
    const readBack: unknown[] = [];
    on.create(Bundles, { registry }, function write({ patch }) {
      patch.spec.note = null;
      patch.spec.affinity = { enablePodAntiAffinity: true };
      patch.spec.a.b.c = 1;
      patch.spec.labels = null;
      patch.spec.servers['main'].url = 'http://new';
      patch.spec.values = null;
      patch.spec.template = null;
      patch.spec.tags = ['z'];
      patch.spec.listeners = [{ name: 'c', port: 3, protocol: 'TCP' }];
      patch.status.phase = 'Ready';
      readBack.push(patch.spec.tags, patch.spec.listeners);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, waitForWatch: 'bundles' });
    await suite.cluster.store.create({ apiVersion: 'example.com/v1', kind: 'Bundle', metadata: { name: 'b1', namespace: 'default' }, spec: SPEC });
    await fx.atRest(suite.logs, 'b1');
    await op.stop();
    expect(op.error).toBeUndefined();

    expect(readBack).toEqual([['z'], [{ name: 'c', port: 3, protocol: 'TCP' }]]);
    const sent = suite.cluster.requests
      .filter((r) => r.method === 'PATCH' && r.resource === 'bundles' && r.headers.contentType === 'application/merge-patch+json')
      .map((r) => JSON.parse(r.body!) as Record<string, unknown>);
    expect(sent.find((body) => 'spec' in body)?.['spec']).toEqual({
      note: null,
      affinity: { enablePodAntiAffinity: true },
      a: { b: { c: 1 } },
      labels: null,
      servers: { main: { url: 'http://new' } },
      values: null,
      template: null,
      tags: ['z'],
      listeners: [{ name: 'c', port: 3, protocol: 'TCP' }],
    });
    expect(sent.find((body) => 'status' in body)?.['status']).toMatchObject({ phase: 'Ready' });

    const stored = suite.cluster.store.get(BUNDLES, 'b1', 'default') as { spec: Record<string, unknown>; status: Record<string, unknown> };
    expect(stored.spec).toEqual({
      owner: 'me',
      replicas: 1,
      placement: { zone: 'a' },
      selector: { app: 'web' },
      affinity: { weight: 2, topologyKey: 'zone', enablePodAntiAffinity: true },
      a: { b: { c: 1 } },
      servers: { main: { url: 'http://new', weight: 5 }, spare: { url: 'http://spare', weight: 100 } },
      tags: ['z'],
      listeners: [{ name: 'c', port: 3, protocol: 'TCP' }],
    });
    expect(stored.status['phase']).toBe('Ready');
  });
});
