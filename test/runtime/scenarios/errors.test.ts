/**
 * Scenario A-9 (the original's `03-exceptions` example): permanent, temporary and arbitrary
 * errors of create handlers, with retries limits and error modes (R-ERRORS-1..4).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as exceptions from '../../../fixtures/operators/a09-exceptions.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

describe('handler errors', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-9 each kind of failure is retried or not as its kind says, with the exact log lines', async () => {
    const calls = new Calls();
    const op = await h.startOperator(cluster, { registry: exceptions.register(new OperatorRegistry(), calls) });
    await h.apply(cluster, h.referenceObject());
    await op.output.waitFor('Creation is processed:', { timeoutMs: 20_000 });
    await op.output.waitFor('Something has changed, but we are not interested');

    expect(calls.count('instant_failure_with_only_a_message')).toBe(1);
    expect(calls.count('eventual_success_with_a_few_messages')).toBe(4);
    expect(calls.count('eventual_failure_with_tracebacks')).toBe(3);
    expect(calls.count('instant_failure_with_traceback')).toBe(1);

    const out = op.output;
    expect(out.count("Handler 'instant_failure_with_only_a_message' failed permanently: Fail once and for all.")).toBe(1);
    expect(out.count("Handler 'eventual_success_with_a_few_messages' failed temporarily: Expected recoverable error.")).toBe(3);
    expect(out.count("Handler 'eventual_success_with_a_few_messages' succeeded.")).toBe(1);
    expect(
      out.count(
        "Handler 'eventual_failure_with_tracebacks' failed with an exception and will try again in 1 seconds: " +
          'An error that is supposed to be recoverable.',
      ),
    ).toBe(2);
    // Logged once as an error; the record of the failure stores the same line (as Kopf's does).
    const exceeded =
      "Handler 'eventual_failure_with_tracebacks' failed with an exception and will stop now " +
      '(it would exceed 3 retries on the next attempt): An error that is supposed to be recoverable.';
    expect(out.matching(exceeded).filter((e) => e.level === 'ERROR').length).toBe(1);
    expect(
      out.count("Handler 'instant_failure_with_traceback' failed with an exception and will stop now: " + 'An error that is supposed to be recoverable.'),
    ).toBe(1);
    expect(out.count('Creation is processed: 1 succeeded; 3 failed.')).toBe(1);

    // Stack traces only for the plain errors.
    const traced = out.entries.filter((e) => e.trace !== undefined);
    expect(traced.map((e) => e.message.includes('An error that is supposed to be recoverable.'))).toEqual([true, true, true, true]);
    for (const entry of traced) expect(entry.trace).toMatch(/^\s+at /m);
    expect(out.matching(/failed (permanently|temporarily)/).filter((e) => e.trace !== undefined)).toEqual([]);

    // The diff-base is stored and all four records are nulled.
    const annotations = h.annotationsOf(h.getObject(cluster));
    expect(annotations[h.LHC]).toBeDefined();
    expect(Object.keys(annotations).filter((key) => key.startsWith('kopf.zalando.org/') && key !== h.LHC)).toEqual([]);

    // The failed handlers are not invoked again without an essential change.
    const noops = out.count('Something has changed, but we are not interested');
    await cluster.store.patch(h.KEX, 'kopf-example-1', { status: { touched: true } }, { namespace: 'default', subresource: 'status' });
    await out.waitFor('Something has changed, but we are not interested', { times: noops + 1 });
    expect(calls.count('eventual_success_with_a_few_messages')).toBe(4);
    expect(calls.count('instant_failure_with_only_a_message')).toBe(1);
    expect(calls.count('eventual_failure_with_tracebacks')).toBe(3);
    await h.remove(cluster);
    await out.waitFor('Deleted, really deleted, and we are notified.');
    await op.stop();
    h.genericChecks(op, { created: true, deleted: true, skipG5: true, skipG6: true });
  });
});
