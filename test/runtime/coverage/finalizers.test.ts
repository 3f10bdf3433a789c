/**
 * Finalizers through a running operator: the name from the settings (R-FINAL-1), removal when no
 * longer required (R-FINAL-4), and the documented workaround for deletions while the operator is
 * down (R-FINAL-6).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, unknown>;
const DEFAULT_FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const CUSTOM_FINALIZER = 'example.com/our-own-finalizer';

function finalizersOf(cluster: DevCluster, name = 'kopf-example-1'): string[] | undefined {
  const body = cluster.store.get(fx.KEX, name, 'default') as { metadata: { finalizers?: string[] } } | undefined;
  return body?.metadata.finalizers;
}

function jsonPatches(cluster: DevCluster): unknown[] {
  return cluster.requests
    .filter((r) => r.method === 'PATCH' && r.headers.contentType === 'application/json-patch+json')
    .map((r) => (JSON.parse(r.body!) as unknown[]).slice(1)); // without the resourceVersion test
}

describe('finalizers', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-FINAL-1 the finalizer is settings.persistence.finalizer: a custom one is added and released, the default never appears', async () => {
    const registry = new OperatorRegistry();
    const deleted: string[] = [];
    on.delete('kopfexamples', { registry }, function delete_fn({ name }: { name: string }) {
      deleted.push(name);
    });
    const settings = fx.fastSettings((s) => {
      s.persistence.finalizer = CUSTOM_FINALIZER;
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, settings });
    // A foreign finalizer is kept, and ours is appended after it.
    await suite.cluster.store.create(fx.kopfExample('kopf-example-1', { metadata: { finalizers: ['example.com/foreign'] } }));
    await fx.eventually(() => (finalizersOf(suite.cluster) ?? []).includes(CUSTOM_FINALIZER), 'the custom finalizer');
    expect(finalizersOf(suite.cluster)).toEqual(['example.com/foreign', CUSTOM_FINALIZER]);
    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.eventually(() => deleted.length === 1 && !(finalizersOf(suite.cluster) ?? []).includes(CUSTOM_FINALIZER), 'the release');
    await fx.atRest(logs, 'kopf-example-1'); // the object stays (held by the foreign finalizer), at rest
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(finalizersOf(suite.cluster)).toEqual(['example.com/foreign']); // still there, held by the foreign one
    expect(jsonPatches(suite.cluster)).toEqual([
      [{ op: 'add', path: '/metadata/finalizers/1', value: CUSTOM_FINALIZER }],
      [{ op: 'remove', path: '/metadata/finalizers/1' }],
    ]);
    expect(suite.cluster.requests.filter((r) => r.method === 'PATCH' && (r.body ?? '').includes(DEFAULT_FINALIZER))).toEqual([]);
  });

  it('R-FINAL-4 the finalizer is removed when no handler requires it any more, in a cycle without change handlers', async () => {
    const registry = new OperatorRegistry();
    const deleted: string[] = [];
    const updates: { finalizers: unknown; labels: unknown }[] = [];
    on.delete('kopfexamples', { registry, labels: { protected: 'yes' } }, function delete_fn({ name }: { name: string }) {
      deleted.push(name);
    });
    on.update('kopfexamples', { registry }, function update_fn({ meta }: { meta: Json }) {
      updates.push({ finalizers: meta['finalizers'], labels: meta['labels'] });
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample('kopf-example-1', { metadata: { labels: { somelabel: 'somevalue', protected: 'yes' } } }));
    await fx.eventually(() => finalizersOf(suite.cluster)?.includes(DEFAULT_FINALIZER) === true, 'the finalizer');
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')['kopf.zalando.org/last-handled-configuration'] !== undefined, 'the diff-base');
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { metadata: { labels: { protected: null } } }, { namespace: 'default', type: 'merge-patch' });
    await fx.eventually(() => updates.length === 1, 'the update');
    await fx.atRest(logs, 'kopf-example-1');
    // Without the finalizer, a deletion is immediate and the filtered-out delete handler never runs.
    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.eventually(() => logs.grep('Deleted, really deleted, and we are notified.').length > 0, 'the deletion');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(logs.records.filter((r) => r.message.startsWith('Removing the finalizer')).map((r) => [r.level, r.line])).toEqual([
      [fx.DEBUG, '[default/kopf-example-1] Removing the finalizer, as there are no handlers requiring it.'],
    ]);
    expect(jsonPatches(suite.cluster)).toEqual([
      [{ op: 'add', path: '/metadata/finalizers', value: [DEFAULT_FINALIZER] }],
      [{ op: 'remove', path: '/metadata/finalizers' }],
    ]);
    // The update handler ran only in the next cycle, on the body without the finalizer.
    expect(updates).toEqual([{ finalizers: undefined, labels: { somelabel: 'somevalue' } }]);
    expect(deleted).toEqual([]);
    expect(suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default')).toBeUndefined();
  });

  it('R-FINAL-6 the user guide documents patching metadata.finalizers to [] for deletions while the operator is down', () => {
    const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/kopf-migration.md'), 'utf8').replace(/\s+/g, ' ');
    expect(readme).toMatch(/cannot be deleted while no operator runs/);
    expect(readme).toContain(`{"metadata":{"finalizers":[]}}`);
    expect(readme).toContain(DEFAULT_FINALIZER);
  });
});
