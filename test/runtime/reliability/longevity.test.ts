/**
 * A long-running operator must not accumulate per-event state on its long-lived signals: every
 * processed event and every interruptible sleep (delays, consistency waits) listens to the
 * operator's signal for cancellation, and those listeners must go when the event or the sleep is
 * over (otherwise memory grows with every event for as long as the operator runs).
 */
import { getEventListeners } from 'node:events';
import * as aborts from '../../../runtime/cogs/aio/aborts.js';
import { describe, expect, it } from 'vitest';
import { TemporaryError } from '../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

describe('long-running operators', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-PATCH-7 R-ERRORS-8 processed events and sleeps leave no listeners behind on the operator signal', async () => {
    const registry = new OperatorRegistry();
    const attempts: string[] = [];
    on.create('kopfexamples', { registry }, function create_fn({ name, retry }: { name: string; retry: number }) {
      attempts.push(name);
      if (retry < 3) throw new TemporaryError('Not yet.', { delay: 0.3 });
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    // One warm-up object: the first events attach the runtime's shared fan-out listener (once).
    await suite.cluster.store.create(fx.kopfExample('kex-0'));
    await fx.eventually(() => logs.grep('Creation is processed: 1 succeeded; 0 failed.').length === 1, 'the warm-up processed', 20_000);
    await fx.atRest(logs, 'kex-0');
    const baseline = getEventListeners(op.context.signal, 'abort').length;
    const baselineFollowers = aborts.followers(op.context.signal);
    const names = ['kex-1', 'kex-2', 'kex-3', 'kex-4', 'kex-5'];
    for (const name of names) await suite.cluster.store.create(fx.kopfExample(name));
    await fx.eventually(() => logs.grep('Creation is processed: 1 succeeded; 0 failed.').length === names.length + 1, 'all processed', 20_000);
    for (const name of names) await fx.atRest(logs, name);
    const after = getEventListeners(op.context.signal, 'abort').length;
    const afterFollowers = aborts.followers(op.context.signal);
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(fx.tally(attempts)).toEqual(Object.fromEntries(['kex-0', ...names].map((n) => [n, 4])));
    // Most retries sleep out the rest of their delay (then touch the object), some are woken early.
    const sleeps = logs.records.filter((r) => /^Sleeping for 0\.\d+ seconds for the delayed handlers\.$/.test(r.message));
    expect(sleeps.length).toBeGreaterThanOrEqual(names.length + 1);
    expect(logs.grep('Sleeping was interrupted by new changes').length + logs.grep('touch-dummy').length).toBeGreaterThan(0);
    expect(after).toBe(baseline);
    expect(afterFollowers).toBe(baselineFollowers);
  });
});
