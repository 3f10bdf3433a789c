/**
 * Scenario A-31 (simulation): the consistency window (R-QUEUE-4) protects against running a
 * handler twice when a foreign change made before our patch arrives after it; and, when our own
 * patch never comes back, the object is re-read after `consistencyTimeout` and handled as the
 * server has it — so the first handler is not invoked a second time (Kopf handles the older body
 * then and runs it again; kopf-gen does not).
 *
 * The foreign change is made by the first handler itself (out of band, while it runs), so the
 * devcluster stores it before the operator's PATCH. "Never feed our version" is a watch stream
 * that ends right after the foreign change's event, with every reconnection hanging.
 *
 * Also scenario A-39 (simulation): a JSON-patch conflict (HTTP 422 on the finalizer's JSON-patch)
 * carries the transformation over to the next cycle, which re-sends it against the newer version
 * (R-PATCH-3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import * as twohandlers from '../../../fixtures/operators/a05-two-handlers.js';
import * as single from '../../../fixtures/operators/a32-throttling.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import { VirtualClock } from '../../../runtime/cogs/aio/clocks.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

type Op = { op: string; path: string; value?: unknown };

describe('consistency', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  /**
   * Handler A's hook: a foreign change of the object, once, made while A runs (so before our
   * PATCH). With `cut`, the watch stream then ends after delivering it, and reconnections hang:
   * the version of our PATCH never arrives.
   */
  function foreignChange(name: string, options: { cut?: boolean; held?: boolean } = {}): { hook: () => Promise<void>; version: () => number } {
    let rv = 0;
    return {
      hook: async () => {
        if (rv) return;
        if (options.held) {
          // Held: the stream is cut, and reconnections hang, before the foreign change is made.
          cluster.faults.add({ resource: 'kopfexamples', watch: true, action: { hang: true } });
          cluster.dropWatches({ resource: 'kopfexamples' }, 'abort');
        }
        const changed = await cluster.store.patch(h.KEX, name, { metadata: { labels: { foreign: 'change' } } }, { namespace: 'default', type: 'merge-patch' });
        rv = Number((changed['metadata'] as Record<string, unknown>)['resourceVersion']);
        if (options.cut && !options.held) {
          cluster.faults.add({ resource: 'kopfexamples', watch: true, action: { hang: true } });
          // The foreign change's event goes out before the stream ends.
          await h.eventually(() => cluster.watchEvents.some((e) => Number(e.rv) === rv), 'the foreign change sent to the watch');
          cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
        }
      },
      version: () => rv,
    };
  }

  it('A-31 a foreign change older than our patch runs no handlers; the next one runs when our version arrives', async () => {
    const calls = new Calls();
    const foreign = foreignChange('kopf-example-1');
    const op = await h.startOperator(cluster, { registry: twohandlers.register(new OperatorRegistry(), calls, { a: foreign.hook }) });
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Creation is processed:');
    expect(calls.ids).toEqual(['A', 'B']);
    expect(Number(calls.of('B')[0]!.args['resourceVersion'])).toBeGreaterThan(foreign.version());
    expect(Number(calls.of('A')[0]!.args['resourceVersion'])).toBeLessThan(foreign.version());
    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true });
  });

  it('A-31 R-QUEUE-4 when our version never arrives, the object is re-read after the timeout: A is not run again, B runs on the re-read body', async () => {
    const calls = new Calls();
    const foreign = foreignChange('kopf-example-2', { cut: true });
    // On virtual time: the consistency timeout (5 s) passes when the test moves the clock.
    const clock = new VirtualClock({ start: Date.now() });
    const op = await h.startOperator(cluster, { registry: twohandlers.register(new OperatorRegistry(), calls, { a: foreign.hook }), clock });
    await h.apply(cluster, h.referenceObject({ name: 'kopf-example-2' }));
    await h.eventually(() => calls.count('A') >= 1, 'handler A');
    const patched = await cluster.requests.waitFor((r) => r.method === 'PATCH' && r.name === 'kopf-example-2' && r.code === 200);
    const ours = Number((h.getObject(cluster, 'kopf-example-2')!['metadata'] as Record<string, unknown>)['resourceVersion']);
    // Until the timeout, nothing runs: the foreign change's event is older than our patch.
    await clock.advance(4_000);
    expect(calls.count('B')).toBe(0);
    const since = cluster.requests.all.length;
    await clock.advance(1_500);
    await h.eventually(() => calls.count('B') >= 1, 'handler B on the re-read body');
    // The object was read again (no watch event brought our version), and that body was handled.
    const reads = cluster.requests.all.slice(since).filter((r) => r.method === 'GET' && r.verb === 'get' && r.name === 'kopf-example-2');
    expect(reads.length).toBe(1);
    expect(reads[0]!.time).toBeGreaterThan(patched.time);
    expect(Number(calls.of('B')[0]!.args['resourceVersion'])).toBeGreaterThanOrEqual(ours);
    expect(calls.count('A')).toBe(1);
    expect(op.output.count(`Handler 'A' succeeded.`)).toBe(1);
    await op.output.waitFor('Creation is processed: 2 succeeded; 0 failed.');
    cluster.faults.clear();
    await op.stop();
    h.genericChecks(op, { object: 'default/kopf-example-2', created: true });
  });
  it('A-31 R-QUEUE-4 an event older than our patch that arrives after the deadline is not handled as it is: the object is re-read, A is not run again', async () => {
    const calls = new Calls();
    const foreign = foreignChange('kopf-example-3', { held: true });
    const clock = new VirtualClock({ start: Date.now() });
    const op = await h.startOperator(cluster, { registry: twohandlers.register(new OperatorRegistry(), calls, { a: foreign.hook }), clock });
    await h.apply(cluster, h.referenceObject({ name: 'kopf-example-3' }));
    await h.eventually(() => calls.count('A') >= 1, 'handler A');
    await cluster.requests.waitFor((r) => r.method === 'PATCH' && r.name === 'kopf-example-3' && r.code === 200);
    // The deadline of our patch passes while no event comes at all (the stream is cut, reconnections hang).
    await clock.advance(6_000);
    expect(calls.count('B')).toBe(0);
    // Then the watch comes back: the foreign change's event (older than our patch) arrives late.
    // (The hanging reconnection ends at the watcher's inactivity timeout, 70 s on the operator's clock.)
    cluster.faults.clear();
    await clock.advance(75_000);
    await op.output.waitFor('Creation is processed: 2 succeeded; 0 failed.');
    expect(calls.count('A')).toBe(1);
    expect(calls.count('B')).toBe(1);
    await op.stop();
    h.genericChecks(op, { object: 'default/kopf-example-3', created: true });
  });

  it('R-SEC-2 when the re-read after the timeout is forbidden, the event is handled as it is (as Kopf does): no failure, no throttling, one report', async () => {
    const calls = new Calls();
    const foreign = foreignChange('kopf-example-4', { cut: true });
    cluster.auth.authorizer.setRules([{ effect: 'deny', verbs: ['get'], resources: ['kopfexamples'] }]);
    try {
      const clock = new VirtualClock({ start: Date.now() });
      const op = await h.startOperator(cluster, { registry: twohandlers.register(new OperatorRegistry(), calls, { a: foreign.hook }), clock });
      await h.apply(cluster, h.referenceObject({ name: 'kopf-example-4' }));
      await h.eventually(() => calls.count('A') >= 1, 'handler A');
      await cluster.requests.waitFor((r) => r.method === 'PATCH' && r.name === 'kopf-example-4' && r.code === 200);
      const since = cluster.requests.all.length;
      await clock.advance(5_500);
      // The re-read is refused once and not retried; the foreign change's body (without A's record)
      // is then handled as it is: A runs again — the watch-gap case that `get` protects against.
      await h.eventually(() => calls.count('A') >= 2, 'handler A on the event as it is');
      const reads = cluster.requests.all.slice(since).filter((r) => r.method === 'GET' && r.verb === 'get' && r.name === 'kopf-example-4');
      expect(reads.map((r) => r.code)).toEqual([403]);
      // Last in this suite: the object is left as it is (the watch is still cut).
      cluster.faults.clear();
      await op.stop();
      expect(
        op.output.matching(/^Forbidden \(HTTP 403\): user "[^"]+" may not get "kopfexamples\.kopf\.dev" in namespace "default"/).map((e) => e.level),
      ).toEqual(['ERROR']);
      expect(op.output.count('Throttling')).toBe(0);
      expect(op.output.count('Request attempt')).toBe(0);
    } finally {
      cluster.auth.authorizer.setRules([]);
      cluster.faults.clear();
    }
  });
});

describe('JSON-patch conflicts', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-39 the finalizer JSON-patch rejected with 422 is re-sent on the next event with the newer version', async () => {
    const calls = new Calls();
    // On virtual time, "not before the next event" is checked by moving the operator's clock well
    // past the delays after which it could retry on its own (its back-off is 1 s).
    const clock = new VirtualClock({ start: Date.now() });
    const op = await h.startOperator(cluster, { registry: single.register(new OperatorRegistry(), calls, { withDeletion: true }), clock });
    cluster.faults.add({ resource: 'kopfexamples', method: 'PATCH', times: 1, action: { respond: { code: 422, message: 'the test operation failed' } } });
    const since = cluster.requests.all.length;
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Could not apply the patch in full due to conflicts with newer changes.');
    await clock.advance(5_000);
    expect(calls.count('create_fn')).toBe(0);
    expect(h.finalizersOf(h.getObject(cluster))).toEqual([]);

    // A newer version of the object: the leftover transformation goes out first, against it.
    const changed = await h.mergePatch(cluster, { metadata: { labels: { poke: 'yes' } } });
    const newer = String((changed['metadata'] as Record<string, unknown>)['resourceVersion']);
    await op.output.waitFor('Creation is processed: 1 succeeded; 0 failed.');
    await op.output.waitFor('Something has changed, but we are not interested');

    const patches = h.patchesOf(cluster, { since });
    const json = patches.filter((p) => p.contentType === 'application/json-patch+json');
    expect(json.map((p) => p.code)).toEqual([422, 200]);
    const [rejected, accepted] = json.map((p) => p.body as Op[]);
    const add = { op: 'add', path: '/metadata/finalizers', value: [h.FINALIZER] };
    expect(rejected).toEqual([{ op: 'test', path: '/metadata/resourceVersion', value: expect.any(String) }, add]);
    expect(accepted).toEqual([{ op: 'test', path: '/metadata/resourceVersion', value: newer }, add]);
    expect(h.finalizersOf(h.getObject(cluster))).toEqual([h.FINALIZER]);
    // The create handler runs in the cycle after the finalizer is added.
    expect(calls.count('create_fn')).toBe(1);
    expect(calls.of('create_fn')[0]!.args['finalizers']).toEqual([h.FINALIZER]);

    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true, finalizerAdded: true, deletionHandled: true });
  });
});
