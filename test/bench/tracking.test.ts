import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as clients from '../../bench/clients.js';
import * as tracking from '../../bench/tracking.js';
import { DevCluster } from '../../devcluster/testing.js';

const COLLECTION = '/apis/kopf.dev/v1/namespaces/default/kopfexamples';
const MERGE = 'application/merge-patch+json';

describe('the benchmark tracker', () => {
  let cluster: DevCluster;
  let client: clients.Client;
  let tracker: tracking.Tracker;

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false });
    await cluster.load(path.resolve(import.meta.dirname, '../../fixtures/crds/kopfexamples.yaml'));
    client = new clients.Client(cluster.url, 4);
    tracker = new tracking.Tracker(cluster.url, client);
    await tracker.start();
  });

  afterAll(async () => {
    tracker.stop();
    client.close();
    await cluster.stop();
  });

  it('follows the create result, the diff-base field, the finalizers and the deletion of objects', async () => {
    const names = ['a', 'b'];
    for (const name of names) {
      await client.expect([201], 'POST', COLLECTION, {
        apiVersion: 'kopf.dev/v1',
        kind: 'KopfExample',
        metadata: { name, finalizers: ['x/y'] },
        spec: { field: 'value' },
      });
    }
    const handled = (s: tracking.Seen | undefined): boolean => !!s?.createResult && s.hasDiffBase;
    const waiting = tracker.waitAll(
      names.map((n) => `default/${n}`),
      handled,
      5000,
    );
    for (const name of names) {
      await client.expect([200], 'PATCH', `${COLLECTION}/${name}/status`, { status: { create_fn: { started: 42 } } }, MERGE);
      await client.expect(
        [200],
        'PATCH',
        `${COLLECTION}/${name}`,
        { metadata: { annotations: { [tracking.DIFF_BASE]: '{"spec":{"field":"value"}}\n' } } },
        MERGE,
      );
    }
    expect(await waiting).toMatchObject({ met: 2, pending: 0 });
    expect(tracker.get('default', 'a')).toMatchObject({ createResult: { started: 42 }, diffBaseField: 'value', finalizers: 1, gone: false });

    await client.expect([200], 'PATCH', `${COLLECTION}/a`, { metadata: { annotations: { [tracking.DIFF_BASE]: '{"spec":{"field":"changed"}}\n' } } }, MERGE);
    const changed = await tracker.waitAll(['default/a'], (s) => s?.diffBaseField === 'changed', 5000);
    expect(changed.pending).toBe(0);

    await client.expect([200], 'DELETE', `${COLLECTION}/a`);
    await client.expect([200], 'PATCH', `${COLLECTION}/a`, { metadata: { finalizers: null } }, MERGE);
    const gone = await tracker.waitAll(['default/a'], (s) => !s || s.gone, 5000);
    expect(gone.pending).toBe(0);
    expect(tracker.get('default', 'b')?.gone).toBe(false);
  });

  it('reports the objects that did not meet the condition when the wait times out', async () => {
    await client.expect([201], 'POST', COLLECTION, { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'slow' }, spec: {} });
    const result = await tracker.waitAll(['default/slow', 'default/b'], (s) => s?.createResult !== undefined, 200);
    expect(result).toMatchObject({ met: 1, pending: 1 });
  });
});
