/**
 * Reconcile handlers across the operator's pause and stop (R-RECONCILE-212, -213), through a real
 * operator on a devcluster over loopback, on a virtual clock: a requeue coming due while the
 * operator is paused waits for the resume; a call in flight at the stop sees its signal aborted
 * and the stop waits for it to end; a call woken by the scheduler has the operator's client.
 */
import { describe, expect, it } from 'vitest';

import { builtins, on, OperatorRegistry } from '../../../runtime/index.js';
import * as fx from '../../support/operators.js';
import { advanceUntil, flushed } from '../../support/waiting.js';
import { startVirtual } from '../../support/virtualtime.js';

describe('reconcile handlers: pause and stop', () => {
  const env = fx.clusterPerTest();

  it('R-RECONCILE-212: while the operator is paused a due requeue holds back; it runs after the resume', async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('held'));
    const registry = new OperatorRegistry();
    const at: number[] = [];
    on.reconcile('kopfexamples', { registry, id: 'ticker' }, ({ now }) => {
      at.push(now.getTime());
      return at.length === 1 ? { requeueAfter: 10 } : undefined;
    });
    const op = await startVirtual({ cluster, registry });
    try {
      await fx.eventually(() => at.length === 1, 'the resync');
      const freeze = op.context.paused!.makeToggle(true, 'a freeze of the test');
      // The requeue comes due during the pause: the entry is kept, its call waits at the gate.
      await op.clock.advance(30_000);
      await flushed();
      expect(at).toHaveLength(1);
      expect(op.context.reconcilers?.size).toBe(1);
      freeze.turnOff();
      await fx.eventually(() => at.length === 2 && op.context.reconcilers?.size === 0, 'the call after the resume');
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(30_000);
    } finally {
      await op.stop();
    }
  });

  it("R-RECONCILE-201 R-RECONCILE-204: a call woken by a requeue (the scheduler's timer) has the operator's client", async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('again'));
    const registry = new OperatorRegistry();
    const seen: string[] = [];
    on.reconcile('kopfexamples', { registry, id: 'reader' }, async ({ client, name, namespace }) => {
      const pods = await client.list(builtins.Pods, { namespace: namespace ?? undefined });
      seen.push(`${name}:${pods.items.length}`);
      return seen.length === 1 ? { requeueAfter: 5 } : undefined;
    });
    const op = await startVirtual({ cluster, registry });
    try {
      await fx.eventually(() => seen.length === 1, 'the resync');
      await advanceUntil(op.clock, () => seen.length === 2 && op.context.reconcilers?.size === 0, 'the requeued call', { stepMs: 1000 });
      expect(seen).toEqual(['again:0', 'again:0']);
    } finally {
      await op.stop();
    }
  });

  it('R-RECONCILE-213: at the stop, a call in flight sees its signal aborted, and the stop waits for it', async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('busy'));
    const registry = new OperatorRegistry();
    const events: string[] = [];
    const entered = fx.deferred();
    const finish = fx.deferred();
    on.reconcile('kopfexamples', { registry, id: 'busy' }, async ({ signal }) => {
      events.push('entered');
      entered.resolve();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      events.push('aborted');
      await finish.promise;
      events.push('finished');
    });
    const op = await startVirtual({ cluster, registry });
    await entered.promise;
    const stopping = op.stop().then(() => events.push('stopped'));
    await fx.eventually(() => events.includes('aborted'), 'the signal to abort');
    expect(op.stopped).toBe(false);
    finish.resolve();
    await stopping;
    expect(events).toEqual(['entered', 'aborted', 'finished', 'stopped']);
    expect(op.error).toBeUndefined();
  });
});
