/**
 * Scenario A-32 (simulation): throttling of unexpected errors (R-QUEUE-8). The devcluster fails
 * the first three PATCHes of the object with HTTP 500 (no client retries); new watch-events are
 * provoked by out-of-band changes of an unrelated annotation (the cause stays `create`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as single from '../../../fixtures/operators/a32-throttling.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

describe('error throttling', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-32 unexpected errors suspend the object for 1, 1, 2 seconds; events meanwhile are skipped but the newest', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, {
      registry: single.register(new OperatorRegistry(), calls),
      configure: (settings) => {
        settings.networking.errorBackoffs = [];
      },
    });
    cluster.faults.add({ resource: 'kopfexamples', method: 'PATCH', times: 3, action: { respond: { code: 500, message: 'Simulated failure.' } } });
    const versions: string[] = [];
    const ping = async (n: number): Promise<number> => {
      const changed = await h.mergePatch(cluster, { metadata: { annotations: { 'example.com/ping': String(n) } } });
      versions.push(String((changed['metadata'] as Record<string, unknown>)['resourceVersion']));
      return Date.now();
    };

    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Throttling is over. Switching back to normal operations.');
    // Nothing is retried without a new event: proved below, where every invocation has a
    // resource version of its own (a retry without an event would repeat one).
    expect(calls.count('create_fn')).toBe(1);

    const second = await ping(2);
    await op.output.waitFor('Throttling is over. Switching back to normal operations.', { times: 2 });
    expect(calls.count('create_fn')).toBe(2);
    expect(calls.of('create_fn')[1]!.time).toBeGreaterThanOrEqual(second);

    await ping(3);
    await op.output.waitFor('Throttling for 2 seconds due to an unexpected error');
    const throttled = Date.now();
    // Two events while the object is suspended for 2 seconds (each patch is an event of its own).
    await ping(4);
    await ping(5);
    await h.eventually(() => h.annotationsOf(h.getObject(cluster))[h.LHC] !== undefined, 'the diff-base', 10_000);

    const invocations = calls.of('create_fn');
    expect(invocations).toHaveLength(4);
    expect(invocations[3]!.time).toBeGreaterThanOrEqual(throttled + 1900);
    expect(new Set(invocations.map((call) => call.args['resourceVersion'])).size).toBe(4);
    expect(op.output.count('Creation is processed: 1 succeeded; 0 failed.')).toBe(4);
    // Of the two events during the last delay, only the newest one was processed.
    expect(invocations[3]!.args['resourceVersion']).toBe(versions[versions.length - 1]);

    const throttles = op.output.matching(/^Throttling for \d+ seconds due to an unexpected error/);
    expect(throttles.map((e) => /Throttling for (\d+) seconds/.exec(e.message)![1])).toEqual(['1', '1', '2']);
    for (const entry of throttles) {
      expect(entry.level).toBe('ERROR');
      expect(entry.trace).toMatch(/^\s+at /m);
    }
    const sequence = op.output.matching(/^Throttling/).map((e) => (e.message.startsWith('Throttling is over') ? 'over' : 'throttle'));
    expect(sequence).toEqual(['throttle', 'over', 'throttle', 'over', 'throttle', 'over']);
    // The diff-base is stored once.
    const stored = h
      .patchesOf(cluster)
      .filter((p) => p.code === 200 && h.LHC in ((p.body as { metadata?: { annotations?: object } }).metadata?.annotations ?? {}));
    expect(stored).toHaveLength(1);

    await h.remove(cluster);
    await op.output.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    // G-4 does not apply: the handler succeeds in every cycle, as its success was never stored.
    h.genericChecks(op, { created: true, deleted: true, skipG4: true, skipG6: true });
  });
});
