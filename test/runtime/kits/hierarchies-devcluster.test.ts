/**
 * R-HIER-5 against the devcluster: a create handler adopts the children it creates (a ConfigMap
 * and a Secret, sent over HTTP as any client would), the devcluster accepts the owner references,
 * and when the parent is deleted its garbage collector deletes the children — while an object in
 * the same namespace that the parent does not own stays.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { adopt, on } from '../../../runtime/index.js';
import type { ConfigMap, Secret } from '../../../runtime/index.js';
import * as fx from '../../support/operators.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' } as const;
const SECRETS = { group: '', version: 'v1', resource: 'secrets' } as const;

describe('R-HIER-5 adopted children on the devcluster', () => {
  let cluster: DevCluster;
  let operator: fx.RunningOperator | undefined;
  beforeEach(async () => {
    cluster = await fx.startCluster();
  });
  afterEach(async () => {
    await operator?.stop();
    operator = undefined;
    await cluster.stop();
  });

  async function post(path: string, body: object): Promise<Record<string, unknown>> {
    const response = await fetch(`${cluster.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  }

  it('R-HIER-5 children adopted by a create handler are garbage-collected with their parent', async () => {
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry, id: 'create_fn' }, async () => {
      const configMap: ConfigMap = adopt({ apiVersion: 'v1', kind: 'ConfigMap', data: { greeting: 'hello' } });
      const secret: Secret = adopt({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fixed-secret' }, stringData: { key: 'value' } }, undefined, {
        forced: true,
        strict: true,
      });
      await post(`/api/v1/namespaces/${configMap.metadata!.namespace}/configmaps`, configMap);
      await post(`/api/v1/namespaces/${secret.metadata!.namespace}/secrets`, secret);
    });
    await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unrelated', namespace: 'default' }, data: {} });
    operator = await fx.startOperator({ cluster, registry });

    await cluster.store.create(fx.kopfExample());
    const parent = (): Record<string, unknown> | undefined => cluster.store.get(fx.KEX, 'kopf-example-1', 'default');
    const owned = (): Record<string, unknown>[] =>
      [...cluster.store.list(CONFIGMAPS, 'default'), ...cluster.store.list(SECRETS, 'default')].filter(
        (obj) => ((obj['metadata'] as { ownerReferences?: unknown[] }).ownerReferences ?? []).length > 0,
      );
    await fx.eventually(() => owned().length === 2, 'the two children');

    const uid = (parent()!['metadata'] as { uid: string }).uid;
    const metas = owned().map((obj) => obj['metadata'] as Record<string, unknown>);
    expect(metas.map((meta) => (meta['name'] as string).replace(/-[a-z0-9]{5}$/, '-*')).sort()).toEqual(['kopf-example-1', 'kopf-example-1-*']);
    for (const meta of metas) {
      expect(meta['ownerReferences']).toEqual([
        { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(meta['labels']).toEqual({ somelabel: 'somevalue' });
      expect(meta['namespace']).toBe('default');
    }

    await cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.eventually(() => parent() === undefined, 'the parent to go');
    await cluster.settle();
    await fx.eventually(() => owned().length === 0, 'the garbage collector to delete the children');
    expect(cluster.store.get(CONFIGMAPS, 'unrelated', 'default')).toBeDefined();
  });
});
