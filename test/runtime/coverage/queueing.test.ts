/**
 * Consistency and patching order through a running operator: a cycle with something to patch
 * applies it at once instead of waiting for consistency or running change handlers (R-QUEUE-5); an
 * object about to vanish is not waited for (R-QUEUE-6).
 */
import { describe, expect, it } from 'vitest';

import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, unknown>;
const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';

function rvOf(body: Json): string {
  return (body['metadata'] as { resourceVersion: string }).resourceVersion;
}

describe('consistency and patching order', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-QUEUE-5 an inconsistent cycle with a finalizer to add patches at once: no wait for consistency, no change handlers', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    let labelledRv = '';
    let labelledAt = 0;
    const c = suite.cluster;
    on.create('kopfexamples', { registry }, async function create_fn() {
      calls.push('create_fn');
      // While this cycle runs, the object changes: its event arrives before our own patch's event,
      // so the object is inconsistent when that event is processed.
      const labelled = await c.store.patch(fx.KEX, 'kopf-example-1', { metadata: { labels: { protected: 'yes' } } }, { namespace: 'default' });
      labelledRv = rvOf(labelled);
      labelledAt = Date.now();
    });
    on.update('kopfexamples', { registry }, function update_fn() {
      calls.push('update_fn');
    });
    // Requires the finalizer only for the labelled object.
    on.delete('kopfexamples', { registry, labels: { protected: 'yes' } }, function delete_fn() {
      calls.push('delete_fn');
    });
    const settings = fx.fastSettings((s) => {
      s.persistence.consistencyTimeout = 10;
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, settings });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(
      () =>
        (((suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default') as Json)['metadata'] as Json)['finalizers'] as string[] | undefined)?.includes(
          FINALIZER,
        ) === true,
      'the finalizer',
    );
    await fx.eventually(() => calls.includes('update_fn'), 'the update handler');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    const jsonPatches = suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.headers.contentType === 'application/json-patch+json');
    // The first finalizer patch was made for the event of the out-of-band change (its version in the
    // test op), i.e. in the inconsistent cycle, and well before the 10-second consistency deadline.
    const first = jsonPatches[0]!;
    expect(JSON.parse(first.body!)).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: labelledRv },
      { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
    ]);
    expect(first.time - labelledAt).toBeLessThan(2000);
    // No change handlers ran in that cycle (that would have been a second `create`), only later.
    expect(calls).toEqual(['create_fn', 'update_fn']);
    expect(logs.grep("Handler 'create_fn' succeeded.")).toHaveLength(1);
  });

  it('R-QUEUE-6 after the last finalizer is removed, the vanishing object is not waited for: DELETED is processed at once', async () => {
    const registry = new OperatorRegistry();
    const deleted: string[] = [];
    on.delete('kopfexamples', { registry }, function delete_fn({ name }: { name: string }) {
      deleted.push(name);
      return { done: true };
    });
    const settings = fx.fastSettings((s) => {
      s.persistence.consistencyTimeout = 10;
      s.queueing.idleTimeout = 30;
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, settings });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(
      () =>
        (((suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default') as Json)['metadata'] as Json)['finalizers'] as string[] | undefined)?.includes(
          FINALIZER,
        ) === true,
      'the finalizer',
    );
    await fx.atRest(logs, 'kopf-example-1');
    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.eventually(() => logs.grep('Removing the finalizer, thus allowing the actual deletion.').length > 0, 'the release');
    const releasedAt = Date.now();
    await fx.eventually(() => logs.grep('Deleted, really deleted, and we are notified.').length > 0, 'the DELETED event', 15_000);
    const goneAt = Date.now();
    // The object's worker is done with it: the operator stops without waiting for it to drain.
    const stopping = Date.now();
    await op.stop();
    const stoppedIn = Date.now() - stopping;

    expect(op.error).toBeUndefined();
    expect(deleted).toEqual(['kopf-example-1']);
    expect(suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default')).toBeUndefined();
    expect(goneAt - releasedAt).toBeLessThan(5000); // the consistency timeout is 10 s
    expect(stoppedIn).toBeLessThan(5000);
    expect(logs.grep('Unprocessed streams left')).toEqual([]);
  });
});
