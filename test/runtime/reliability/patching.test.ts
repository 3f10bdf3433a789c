/**
 * The API failing the operator's PATCH requests (R-PATCH-2..4, R-AUTH-5, R-QUEUE-8, A-32, A-39):
 * JSON-patch conflicts carried over to the next cycle, conflicts of merge-patches throttled and
 * redone on the next event, 429 with Retry-After and 5xx retried with the back-offs, and patches
 * applied by the server whose response was lost — every handler still succeeds exactly once.
 */
import { describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from './operating.js';

const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const LHC = 'kopf.zalando.org/last-handled-configuration';

/** Create and delete handlers (the latter requires the finalizer), recording invocations. */
function registryWithFinalizer(): { registry: OperatorRegistry; created: string[]; deleted: string[] } {
  const registry = new OperatorRegistry();
  const created: string[] = [];
  const deleted: string[] = [];
  on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
    created.push(name);
    return { done: true };
  });
  on.delete('kopfexamples', { registry }, function delete_fn({ name }: { name: string }) {
    deleted.push(name);
  });
  return { registry, created, deleted };
}

function finalizersOf(cluster: DevCluster, name: string): unknown {
  return (cluster.store.get(fx.KEX, name, 'default') as { metadata: { finalizers?: string[] } }).metadata.finalizers;
}

describe('PATCH requests failing', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-PATCH-3 A-39 a 422 on the finalizer JSON-patch is carried over and re-sent with the newer version on the next event', async () => {
    const { registry, created } = registryWithFinalizer();
    // On virtual time, "only on the next event" is checked by moving the operator's clock well past
    // every delay after which it could retry on its own (back-offs and throttling of 0.2 s or less).
    const clock = new clocks.VirtualClock({ start: Date.now() });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, clock });
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', times: 1, action: { respond: { code: 422 } } });
    const body = await suite.cluster.store.create(fx.kopfExample());
    const rv1 = (body['metadata'] as { resourceVersion: string }).resourceVersion;
    await fx.eventually(() => logs.grep('Could not apply the patch in full due to conflicts with newer changes.').length === 1, 'the conflict');
    await clock.advance(5_000);
    expect(created).toEqual([]);
    expect(finalizersOf(suite.cluster, 'kopf-example-1')).toBeUndefined();

    // The next event of the object (a newer version) carries the functions over.
    const changed = await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { metadata: { labels: { other: 'label' } } }, { namespace: 'default' });
    const rv2 = (changed['metadata'] as { resourceVersion: string }).resourceVersion;
    await fx.eventually(() => created.length === 1, 'the create handler');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    const conflict = logs.grep('Could not apply the patch in full', fx.DEBUG);
    expect(conflict).toEqual([
      `[default/kopf-example-1] Could not apply the patch in full due to conflicts with newer changes. Will try on the next cycle soon. Remaining: [{"op":"add","path":"/metadata/finalizers","value":["${FINALIZER}"]}]`,
    ]);
    const jsonPatches = suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.headers.contentType === 'application/json-patch+json');
    expect(jsonPatches.map((r) => [r.code, JSON.parse(r.body!)])).toEqual([
      [
        422,
        [
          { op: 'test', path: '/metadata/resourceVersion', value: rv1 },
          { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
        ],
      ],
      [
        200,
        [
          { op: 'test', path: '/metadata/resourceVersion', value: rv2 },
          { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
        ],
      ],
    ]);
    expect(finalizersOf(suite.cluster, 'kopf-example-1')).toEqual([FINALIZER]);
    expect(created).toEqual(['kopf-example-1']);
    expect(logs.grep("Handler 'create_fn' succeeded.")).toHaveLength(1);
  });

  it('R-QUEUE-8 A-32 a 409 on the merge-patch is throttled, and the unsaved success is redone on the next event only', async () => {
    const registry = new OperatorRegistry();
    const created: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      created.push(name);
      return { done: true };
    });
    // The throttling runs on the operator's clock: the test ends it, then moves time well past it.
    const clock = new clocks.VirtualClock({ start: Date.now() });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, clock });
    suite.cluster.faults.add({
      method: 'PATCH',
      resource: 'kopfexamples',
      times: 1,
      action: { respond: { code: 409, message: 'the object has been modified' } },
    });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Throttling for 0.1 seconds').length === 1, 'throttling to start');
    await clock.advance(99);
    expect(logs.grep('Throttling is over. Switching back to normal operations.')).toEqual([]);
    await clock.advance(1);
    await fx.eventually(() => logs.grep('Throttling is over. Switching back to normal operations.').length === 1, 'throttling to end');
    await clock.advance(5_000);
    // Without further events, nothing is retried.
    expect(created).toEqual(['kopf-example-1']);
    expect(fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC]).toBeUndefined();

    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { metadata: { labels: { other: 'label' } } }, { namespace: 'default' });
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    const throttled = logs.records.filter((r) => r.message.startsWith('Throttling for '));
    expect(throttled.map((r) => [r.level, r.line])).toEqual([
      [fx.ERROR, "[default/kopf-example-1] Throttling for 0.1 seconds due to an unexpected error: ApiConflictError('the object has been modified')"],
    ]);
    expect(throttled[0]!.error).toBeInstanceOf(Error); // logged with the stack trace
    expect(created).toEqual(['kopf-example-1', 'kopf-example-1']); // the success was not persisted (idempotence)
    expect(logs.grep('Creation is processed: 1 succeeded; 0 failed.')).toHaveLength(2);
    const lhcWrites = fx.patchBodies(suite.cluster, 'kopf-example-1').filter((b) => JSON.stringify(b).includes('last-handled-configuration'));
    expect(lhcWrites).toHaveLength(2); // the refused one and the stored one
    expect(logs.grep('Request attempt')).toEqual([]); // 409 is not retried by the client
  });

  it('R-AUTH-5 a 429 with Retry-After is retried after the advised delay, a 5xx with the back-offs; the handler runs once', async () => {
    const { registry, created } = registryWithFinalizer();
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    // The finalizer's JSON-patch gets a 429 once; the diff-base's merge-patch a 503 twice.
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', times: 1, action: { respond: { code: 429, retryAfterSeconds: 1 } } });
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', skip: 1, times: 2, action: { respond: { code: 503 } } });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(created).toEqual(['kopf-example-1']);
    const url = `${suite.cluster.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples/kopf-example-1`;
    const attempts = logs.records.filter((r) => r.message.startsWith('Request attempt #') && r.level === fx.ERROR).map((r) => r.message);
    expect(attempts).toHaveLength(3);
    expect(attempts[0]).toMatch(new RegExp(`^Request attempt #1/3 failed; will retry: PATCH ${escaped(url)} -> \\w*TooManyRequests\\w*: `));
    expect(attempts[1]).toMatch(new RegExp(`^Request attempt #1/3 failed; will retry: PATCH ${escaped(url)} -> \\w+: `));
    expect(attempts[2]).toMatch(new RegExp(`^Request attempt #2/3 failed; will retry: PATCH ${escaped(url)} -> \\w+: `));
    const patches = suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.name === 'kopf-example-1');
    const [refused, retried] = patches;
    expect([refused!.code, retried!.code]).toEqual([429, 200]);
    expect(retried!.body).toBe(refused!.body);
    expect(retried!.time - refused!.time).toBeGreaterThanOrEqual(900); // Retry-After: 1 beats the 0.05 s back-off
    expect(patches.slice(2, 5).map((r) => [r.code, r.headers.contentType])).toEqual([
      [503, 'application/merge-patch+json'],
      [503, 'application/merge-patch+json'],
      [200, 'application/merge-patch+json'],
    ]);
    expect(patches[2]!.body).toContain('last-handled-configuration');
    expect(logs.grep('Throttling')).toEqual([]);
    expect(finalizersOf(suite.cluster, 'kopf-example-1')).toEqual([FINALIZER]);
  });

  it('R-AUTH-5 R-PATCH-3 patches applied by the server whose responses were lost are retried harmlessly: one finalizer, one run', async () => {
    const { registry, created, deleted } = registryWithFinalizer();
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    // The finalizer JSON-patch and the merge-patch of the diff-base: applied, then the connection breaks.
    // (The retry of the former fails its `test` with 422: the functions are carried over, R-PATCH-3.)
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', times: 1, action: { reset: 'after' } });
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', skip: 1, times: 1, action: { reset: 'after' } });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined && created.length > 0, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    expect(finalizersOf(suite.cluster, 'kopf-example-1')).toEqual([FINALIZER]);

    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.eventually(() => suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default') === undefined, 'the object to go');
    await fx.atRest(logs, 'kopf-example-1', { gone: true });
    await op.stop();

    expect(op.error).toBeUndefined();
    const patches = suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.name === 'kopf-example-1');
    expect(patches.slice(0, 5).map((r) => [r.code, r.headers.contentType, r.subresource])).toEqual([
      [0, 'application/json-patch+json', undefined], // the finalizer: applied, the response lost
      [422, 'application/json-patch+json', undefined], // the retry: the `test` of the old version fails
      [0, 'application/merge-patch+json', undefined], // the diff-base: applied, the response lost
      [200, 'application/merge-patch+json', undefined], // the retry: merge-patches are idempotent
      [200, 'application/merge-patch+json', 'status'],
    ]);
    expect(patches[3]!.body).toBe(patches[2]!.body);
    expect(created).toEqual(['kopf-example-1']);
    expect(deleted).toEqual(['kopf-example-1']);
    expect(logs.grep('Deleted, really deleted, and we are notified.')).toHaveLength(1);
    expect(logs.grep('Throttling')).toEqual([]);
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
