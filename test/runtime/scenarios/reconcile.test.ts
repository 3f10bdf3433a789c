/**
 * Reconcile handlers through a real operator on a devcluster over loopback, on a virtual clock
 * (R-RECONCILE): resync on start, coalescing, requeueAfter, back-off, TemporaryError, owned
 * children, watches maps, finalizers, own writes, pause. Every wait is on a signal or on virtual
 * time moved by the test, never a real sleep that hopes nothing happens.
 */
import { describe, expect, it } from 'vitest';

import { builtins, on, OperatorRegistry, resource, TemporaryError } from '../../../runtime/index.js';
import * as fx from '../../support/operators.js';
import { advanceUntil } from '../../support/waiting.js';
import { EPOCH, startVirtual } from '../../support/virtualtime.js';
import { VirtualClock } from '../../../runtime/cogs/aio/clocks.js';

type Json = Record<string, any>;
const JOB = { apiVersion: 'batch/v1', kind: 'Job' } as const;
const KopfExamples = resource<Json>({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true });

describe('reconcile handlers', () => {
  const env = fx.clusterPerTest();

  function calls(): { names: string[]; at: number[]; retries: number[] } {
    return { names: [], at: [], retries: [] };
  }

  it('R-RECONCILE-209 R-RECONCILE-204: every existing object is reconciled once on start; requeueAfter calls again on virtual time', async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('a'));
    await cluster.store.create(fx.kopfExample('b'));
    const registry = new OperatorRegistry();
    const seen = calls();
    const clock = new VirtualClock({ start: EPOCH });
    on.reconcile('kopfexamples', { registry, id: 'tick' }, ({ name, now }) => {
      seen.names.push(name);
      seen.at.push(now.getTime());
      return name === 'a' ? { requeueAfter: 30 } : undefined;
    });
    const op = await startVirtual({ cluster, registry, clock });
    try {
      await fx.eventually(() => seen.names.length >= 2, 'the resync');
      expect([...seen.names].sort()).toEqual(['a', 'b']);
      await advanceUntil(clock, () => seen.names.length >= 3, 'the requeue', { stepMs: 1000 });
      expect(seen.names[2]).toBe('a');
      expect(seen.at[2]! - seen.at[seen.names.indexOf('a')]!).toBeGreaterThanOrEqual(30_000);
      expect(seen.names.filter((n) => n === 'b')).toHaveLength(1);
    } finally {
      await op.stop();
    }
  });

  it("R-RECONCILE-204 R-RECONCILE-205: calls woken by a requeue or a retry on virtual time get the operator's client", async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('w'));
    const registry = new OperatorRegistry();
    const seen: string[] = [];
    const clock = new VirtualClock({ start: EPOCH });
    // 1st call (the resync): requeue; 2nd (woken by the requeue): a read, then a failure; 3rd (woken by the back-off): a read.
    on.reconcile('kopfexamples', { registry, id: 'reader', backoff: { base: 1, max: 1 } }, async ({ name, client }) => {
      if (seen.length === 0) {
        seen.push('resync');
        return { requeueAfter: 30 };
      }
      try {
        const body = await client.get(KopfExamples, name, { namespace: 'default' });
        seen.push(`read ${body.metadata?.name}`);
      } catch (error) {
        seen.push(`failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (seen.length === 2) throw new Error('once more');
      return undefined;
    });
    const op = await startVirtual({ cluster, registry, clock });
    try {
      await advanceUntil(clock, () => seen.length >= 3, 'the requeued call and its retry', { stepMs: 1000 });
      expect(seen).toEqual(['resync', 'read w', 'read w']);
    } finally {
      await op.stop();
    }
  });

  it('R-RECONCILE-206: changes during a call cause exactly one more call', async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('c'));
    const registry = new OperatorRegistry();
    const seen = calls();
    const gate = fx.deferred();
    const entered = fx.deferred();
    on.reconcile('kopfexamples', { registry, id: 'slow' }, async ({ name }) => {
      seen.names.push(name);
      if (seen.names.length === 1) {
        entered.resolve();
        await gate.promise;
      }
    });
    const op = await startVirtual({ cluster, registry });
    try {
      await entered.promise;
      const version = (): string | undefined => fx.versionOf(cluster, fx.KEX, 'c');
      for (let i = 0; i < 5; i++) {
        await cluster.store.patch(fx.KEX, 'c', { spec: { field: `v${i}` } }, { namespace: 'default', type: 'merge-patch' });
      }
      const last = version();
      await fx.eventually(() => op.context.cache?.get(cacheResource(op), 'default', 'c')?.metadata?.resourceVersion === last, 'the cache to hold the burst');
      gate.resolve();
      await fx.eventually(() => seen.names.length >= 2 && (op.context.reconcilers?.size ?? 1) === 0, 'the second call and rest');
      expect(seen.names).toEqual(['c', 'c']);
    } finally {
      await op.stop();
    }
  });

  it('R-RECONCILE-205: failures are retried with exponential back-off; TemporaryError after its delay; success resets', async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('d'));
    const registry = new OperatorRegistry();
    const seen = calls();
    const clock = new VirtualClock({ start: EPOCH });
    on.reconcile('kopfexamples', { registry, id: 'flaky', backoff: { base: 1, max: 4 } }, ({ now, retry }) => {
      seen.at.push(now.getTime());
      seen.retries.push(retry);
      if (seen.at.length === 4) throw new TemporaryError('later', { delay: 10 });
      if (seen.at.length <= 5) throw new Error('boom');
    });
    const op = await startVirtual({ cluster, registry, clock });
    try {
      await advanceUntil(clock, () => seen.at.length >= 6, 'six calls', { stepMs: 100 });
      const gaps = seen.at.slice(1).map((t, i) => (t - seen.at[i]!) / 1000);
      // base·2^n with ±10 % jitter: ~1, ~2, then the TemporaryError's 10, then ~4 (capped), …
      expect(gaps[0]).toBeGreaterThanOrEqual(0.9);
      expect(gaps[0]).toBeLessThanOrEqual(1.2);
      expect(gaps[1]).toBeGreaterThanOrEqual(1.8);
      expect(gaps[1]).toBeLessThanOrEqual(2.3);
      expect(gaps[2]).toBeGreaterThanOrEqual(3.6);
      expect(gaps[3]).toBeGreaterThanOrEqual(10);
      expect(gaps[3]).toBeLessThanOrEqual(10.2);
      expect(seen.retries).toEqual([0, 1, 2, 3, 4, 5]);
    } finally {
      await op.stop();
    }
  });

  it("R-RECONCILE-202: a child Job's status change reconciles its owner once; owned holds the children", async () => {
    const { cluster } = env;
    const parent = (await cluster.store.create(fx.kopfExample('p'))) as Json;
    const registry = new OperatorRegistry();
    const owned: number[] = [];
    on.reconcile('kopfexamples', { registry, id: 'parent', owns: [builtins.Jobs] }, ({ owned: [jobs] }) => {
      owned.push(jobs.length);
    });
    const op = await startVirtual({ cluster, registry });
    try {
      await fx.eventually(() => owned.length === 1, 'the resync');
      await cluster.store.create({
        ...JOB,
        metadata: {
          name: 'p-job',
          namespace: 'default',
          ownerReferences: [{ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'p', uid: parent['metadata']['uid'], controller: true }],
        },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
      });
      await fx.eventually(() => owned.length === 2, 'the creation of the child');
      expect(owned[1]).toBe(1);
      await cluster.store.patch(JOB, 'p-job', { status: { active: 1 } }, { namespace: 'default', subresource: 'status' });
      await fx.eventually(() => owned.length === 3 && (op.context.reconcilers?.size ?? 1) === 0, 'the reconcile of the owner');
      expect(owned).toEqual([0, 1, 1]);
    } finally {
      await op.stop();
    }
  });

  it('R-RECONCILE-211 R-RECONCILE-208: own patches do not retrigger; no finalizer without finalize', async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('e'));
    const registry = new OperatorRegistry();
    const seen = calls();
    on.reconcile('kopfexamples', { registry, id: 'writer' }, ({ name, patch }) => {
      seen.names.push(name);
      (patch as Json)['status'] = { seen: seen.names.length };
      (patch as Json)['metadata'] = { labels: { touched: 'yes' } };
    });
    const op = await startVirtual({ cluster, registry });
    try {
      await advanceUntil(op.clock, () => (cluster.store.get(fx.KEX, 'e', 'default') as Json)?.['metadata']?.['labels']?.['touched'] === 'yes', 'the patch');
      await advanceUntil(op.clock, () => (op.context.reconcilers?.size ?? 1) === 0, 'rest');
      // Another writer's change does trigger.
      await cluster.store.patch(fx.KEX, 'e', { spec: { field: 'other' } }, { namespace: 'default', type: 'merge-patch' });
      await advanceUntil(op.clock, () => seen.names.length >= 2 && (op.context.reconcilers?.size ?? 1) === 0, 'the second call');
      expect(seen.names).toEqual(['e', 'e']);
      const body = cluster.store.get(fx.KEX, 'e', 'default') as Json;
      expect(body['metadata']['finalizers'] ?? []).toEqual([]);
    } finally {
      await op.stop();
    }
  });

  it('R-RECONCILE-207: with finalize, the finalizer is added first, finalize runs on deletion and the finalizer is removed', async () => {
    const { cluster } = env;
    await cluster.store.create(fx.kopfExample('f'));
    const registry = new OperatorRegistry();
    const events: string[] = [];
    on.reconcile(
      'kopfexamples',
      {
        registry,
        id: 'fin',
        finalize: ({ name, meta }) => {
          events.push(`finalize ${name} ${String(meta.finalizers)}`);
        },
      },
      ({ name, meta }) => {
        events.push(`reconcile ${name} ${String(meta.finalizers)}`);
      },
    );
    const op = await startVirtual({ cluster, registry });
    try {
      await fx.eventually(() => events.length >= 1, 'the first call');
      expect(events[0]).toBe('reconcile f kopf-gen.dev/reconcile');
      await cluster.store.delete(fx.KEX, 'f', { namespace: 'default' });
      await fx.eventually(() => cluster.store.get(fx.KEX, 'f', 'default') === undefined, 'the object to go');
      expect(events).toContain('finalize f kopf-gen.dev/reconcile');
      await fx.eventually(() => (op.context.reconcilers?.size ?? 1) === 0, 'nothing kept');
    } finally {
      await op.stop();
    }
  });
});

function cacheResource(op: { readonly context: { readonly cache?: unknown } }): never {
  void op;
  return { group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', namespaced: true } as never;
}
