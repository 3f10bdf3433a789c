/**
 * The API failing the operator's PATCH requests (R-PATCH-2..4, R-AUTH-5, R-QUEUE-8, A-32, A-39):
 * JSON-patch conflicts carried over to the next cycle, conflicts of merge-patches throttled and
 * redone on the next event, 429 with Retry-After and 5xx retried with the back-offs, and patches
 * stored by the server whose response was lost — not resent once a re-read shows them stored, and
 * a vanished object's stale events ignored — so every handler still succeeds exactly once. The
 * status (results) is written before the object (progress), and a refused status holds nothing back.
 */
import { describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../devcluster/testing.js';
import * as clocks from '../../../runtime/cogs/aio/clocks.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

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

  it('R-QUEUE-8 A-32 a 409 on the merge-patch is throttled, and the unsaved success is redone on the next event (the stored status one)', async () => {
    const registry = new OperatorRegistry();
    const created: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name }: { name: string }) {
      created.push(name);
      return { done: true };
    });
    // The throttling runs on the operator's clock: the test ends it, then moves time well past it.
    const clock = new clocks.VirtualClock({ start: Date.now() });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, clock });
    // The object's merge-patch (progress and diff-base), after the status one with the result.
    suite.cluster.faults.add({
      method: 'PATCH',
      resource: 'kopfexamples',
      skip: 1,
      times: 1,
      action: { respond: { code: 409, message: 'the object has been modified' } },
    });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Throttling for 0.1 seconds').length === 1, 'throttling to start');
    await clock.advance(99);
    expect(logs.grep('Throttling is over. Switching back to normal operations.')).toEqual([]);
    await clock.advance(1);
    await fx.eventually(() => logs.grep('Throttling is over. Switching back to normal operations.').length === 1, 'throttling to end');
    // The next event is the one of the stored status (the result went first): it redoes the handler.
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    const throttled = logs.records.filter((r) => r.message.startsWith('Throttling for '));
    expect(throttled.map((r) => [r.level, r.line])).toEqual([
      [
        fx.ERROR,
        "[default/kopf-example-1] Throttling for 0.1 seconds due to an unexpected error: ApiConflictError('the object has been modified: " +
          `patch kopf.dev/v1/kopfexamples "kopf-example-1" in namespace "default" (PATCH ${suite.cluster.url}/apis/kopf.dev/v1/namespaces/default/kopfexamples/kopf-example-1)')`,
      ],
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
    // The finalizer's JSON-patch gets a 429 once; the diff-base's merge-patch (after the status's) a 503 twice.
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', times: 1, action: { respond: { code: 429, retryAfterSeconds: 1 } } });
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', skip: 2, times: 2, action: { respond: { code: 503 } } });
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
    expect(patches.slice(2, 6).map((r) => [r.code, r.headers.contentType, r.subresource])).toEqual([
      [200, 'application/merge-patch+json', 'status'],
      [503, 'application/merge-patch+json', undefined],
      [503, 'application/merge-patch+json', undefined],
      [200, 'application/merge-patch+json', undefined],
    ]);
    expect(patches[3]!.body).toContain('last-handled-configuration');
    // A 503 may come after a write: before each retry, the object was re-read (R-PATCH-9), and
    // as the write was not stored, it was sent again.
    const reads = suite.cluster.requests.filter((r) => r.method === 'GET' && r.verb === 'get' && r.name === 'kopf-example-1');
    expect(reads.map((r) => r.code)).toEqual([200, 200]);
    expect(reads[0]!.time).toBeGreaterThanOrEqual(patches[3]!.time);
    expect(reads[1]!.time).toBeGreaterThanOrEqual(patches[4]!.time);
    expect(logs.grep('what it writes is stored')).toEqual([]);
    expect(logs.grep('Throttling')).toEqual([]);
    expect(finalizersOf(suite.cluster, 'kopf-example-1')).toEqual([FINALIZER]);
  });

  it('R-PATCH-9 patches stored by the server whose responses were lost are not resent: the object is re-read; one finalizer, one run', async () => {
    const { registry, created, deleted } = registryWithFinalizer();
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    // The finalizer JSON-patch and the merge-patch of the diff-base (after the status's): stored,
    // then the connection breaks before the response.
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', times: 1, action: { reset: 'after' } });
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', skip: 1, times: 1, action: { reset: 'after' } }); // counts from the second PATCH
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
    expect(patches.slice(0, 3).map((r) => [r.code, r.headers.contentType, r.subresource])).toEqual([
      [0, 'application/json-patch+json', undefined], // the finalizer: stored, the response lost — not resent
      [200, 'application/merge-patch+json', 'status'], // the result
      [0, 'application/merge-patch+json', undefined], // the diff-base: stored, the response lost — not resent
    ]);
    expect(patches[3]!.body).not.toBe(patches[2]!.body);
    const reads = suite.cluster.requests.filter((r) => r.method === 'GET' && r.verb === 'get' && r.name === 'kopf-example-1');
    expect(reads.map((r) => r.code)).toEqual([200, 200]);
    expect(logs.grep('failed, but what it writes is stored; not sending it again', fx.WARNING)).toHaveLength(2);
    expect(created).toEqual(['kopf-example-1']);
    expect(deleted).toEqual(['kopf-example-1']);
    expect(logs.grep('Deleted, really deleted, and we are notified.')).toHaveLength(1);
    expect(logs.grep('Throttling')).toEqual([]);
  });

  it('R-PATCH-9 the finalizer release stored but its response lost: the object is known gone, its stale events run no delete handler again', async () => {
    const registry = new OperatorRegistry();
    const deleted: string[] = [];
    on.delete('kopfexamples', { registry }, function delete_fn({ name }: { name: string }) {
      deleted.push(name);
      return { cleaned: true };
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    // The deletion cycle: the status merge-patch with the handler's result, then the JSON-patch
    // releasing the finalizer — stored (the object vanishes), its response lost.
    const since = suite.cluster.requests.all.length;
    suite.cluster.faults.add({ method: 'PATCH', resource: 'kopfexamples', skip: 1, times: 1, action: { reset: 'after' } });
    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.atRest(logs, 'kopf-example-1', { gone: true });
    await op.stop();

    expect(op.error).toBeUndefined();
    const requests = suite.cluster.requests.all.slice(since).filter((r) => r.name === 'kopf-example-1' && r.method !== 'DELETE');
    expect(requests.map((r) => [r.method, r.code, r.headers.contentType ?? null])).toEqual([
      ['PATCH', 200, 'application/merge-patch+json'], // the status
      ['PATCH', 0, 'application/json-patch+json'],
      ['GET', 404, null], // what is stored: nothing — the object is gone
    ]);
    // The stale event of the status merge-patch (deletion marked, finalizer still there, no record
    // of the handler) came after the release: skipped, not handled as a new deletion.
    expect(logs.grep('The event is skipped: the object is known to be gone.', fx.DEBUG)).toHaveLength(1);
    expect(deleted).toEqual(['kopf-example-1']);
  });

  it('R-PATCH-10 the result goes to the status before the progress goes to the object; a refused status does not hold the progress back', async () => {
    const { registry, created } = registryWithFinalizer();
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    suite.cluster.faults.add({
      method: 'PATCH',
      resource: 'kopfexamples',
      subresource: 'status',
      times: 1,
      action: { respond: { code: 422, message: 'status.create_fn: Invalid value' } },
    });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    const merges = suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.headers.contentType === 'application/merge-patch+json');
    expect(merges.map((r) => [r.code, r.subresource])).toEqual([
      [422, 'status'],
      [200, undefined],
    ]);
    expect(merges[0]!.body).toContain('create_fn');
    expect(merges[1]!.body).toContain('last-handled-configuration');
    const refused = logs.grep('The server refused the status; its fields are not stored:', fx.ERROR);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain('status.create_fn: Invalid value');
    expect(created).toEqual(['kopf-example-1']); // the progress was stored: not run again
    expect(logs.grep('Throttling')).toEqual([]);
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
