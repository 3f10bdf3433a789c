/**
 * Cause detection over time, through running operators: records of another purpose superseded by
 * the current cause, with handlers of both purposes re-purposed (R-CAUSE-6); level-triggered
 * continuity across operator restarts (R-CAUSE-8).
 */
import { describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { PermanentError, TemporaryError } from '../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, unknown>;
const LHC = 'kopf.zalando.org/last-handled-configuration';

interface Invocation {
  readonly id: string;
  readonly reason: string;
  readonly retry: number;
  readonly started: number;
}

function recordOf(cluster: DevCluster, id: string): Json | undefined {
  const value = fx.annotationsOf(cluster, 'kopf-example-1')[`kopf.zalando.org/${id}`];
  return value === undefined ? undefined : (JSON.parse(value) as Json);
}

describe('causes over time', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-CAUSE-6 a deletion supersedes an unfinished update: counts logged, records purged, handlers of both purposes re-purposed', async () => {
    const registry = new OperatorRegistry();
    const calls: Invocation[] = [];
    const track = (id: string, kw: { reason: string; retry: number; started: Date }): void => {
      calls.push({ id, reason: kw.reason, retry: kw.retry, started: kw.started.getTime() });
    };
    on.update('kopfexamples', { registry }, function upd_ok(kw: { reason: string; retry: number; started: Date }) {
      track('upd_ok', kw);
    });
    on.update('kopfexamples', { registry }, function upd_fail(kw: { reason: string; retry: number; started: Date }) {
      track('upd_fail', kw);
      throw new PermanentError('no');
    });
    on.update('kopfexamples', { registry }, function upd_retry(kw: { reason: string; retry: number; started: Date }) {
      track('upd_retry', kw);
      throw new TemporaryError('not yet', { delay: 60 });
    });
    // One function, one id, both purposes.
    function both(kw: { reason: string; retry: number; started: Date }): void {
      track('both', kw);
      if (kw.reason === 'update') throw new TemporaryError('later', { delay: 3 });
    }
    on.update('kopfexamples', { registry }, both);
    on.delete('kopfexamples', { registry }, both);
    on.delete('kopfexamples', { registry }, function del_fn(kw: { reason: string; retry: number; started: Date }) {
      track('del_fn', kw);
    });

    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => recordOf(suite.cluster, 'both')?.['retries'] === 1, 'the first failure of `both`');
    const before = recordOf(suite.cluster, 'both')!;
    expect(before).toMatchObject({ purpose: 'update', retries: 1, success: false, failure: false });
    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await fx.eventually(() => logs.grep('Deleted, really deleted, and we are notified.').length > 0, 'the deletion', 10_000);
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(logs.records.filter((r) => r.message.includes('is superseded by')).map((r) => [r.level, r.line])).toEqual([
      [fx.INFO, '[default/kopf-example-1] Updating is superseded by deletion: 1 succeeded; 1 failed; 2 left to the moment.'],
    ]);
    // Update-only handlers: never again. Their records were nulled in one patch.
    expect(calls.filter((c) => c.id.startsWith('upd_')).map((c) => c.id)).toEqual(['upd_ok', 'upd_fail', 'upd_retry']);
    const purges = fx.patchBodies(suite.cluster, 'kopf-example-1').filter((p) => {
      const annotations = (p as { metadata?: { annotations?: Json } }).metadata?.annotations ?? {};
      return annotations['kopf.zalando.org/upd_retry'] === null;
    });
    expect(purges).toHaveLength(1);
    const purged = (purges[0] as { metadata: { annotations: Json } }).metadata.annotations;
    expect([purged['kopf.zalando.org/upd_ok'], purged['kopf.zalando.org/upd_fail']]).toEqual([null, null]);
    expect(purged['kopf.zalando.org/both']).not.toBeNull();
    // The deletion starts from scratch for its own handler, but continues the re-purposed one.
    const deletions = calls.filter((c) => c.reason === 'delete');
    expect(deletions.map((c) => [c.id, c.retry])).toEqual([
      ['del_fn', 0],
      ['both', 1],
    ]);
    const updatesOfBoth = calls.filter((c) => c.id === 'both' && c.reason === 'update');
    expect(updatesOfBoth).toHaveLength(1);
    expect(deletions[1]!.started).toBe(updatesOfBoth[0]!.started);
    expect(logs.grep('Deletion is processed: 2 succeeded; 0 failed.')).toHaveLength(1);
  });

  it('R-CAUSE-8 changes made while the operator is down arrive as one update with one combined diff', async () => {
    const registry = new OperatorRegistry();
    const updates: { reason: string; diff: unknown; old: unknown; new: unknown }[] = [];
    let creations = 0;
    on.create('kopfexamples', { registry }, function create_fn() {
      creations++;
    });
    on.update('kopfexamples', { registry }, function update_fn({ reason, diff, old, new: now }: { reason: string; diff: unknown; old?: Json; new?: Json }) {
      updates.push({ reason, diff: JSON.parse(JSON.stringify(diff)), old: old?.['spec'], new: now?.['spec'] });
    });
    const first = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await fx.atRest(logs, 'kopf-example-1');
    await first.stop();

    // While down: three changes of two fields.
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'a' } }, { namespace: 'default' });
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'b', extra: 1 } }, { namespace: 'default' });
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'c' } }, { namespace: 'default' });

    const second = await fx.startOperator({ cluster: suite.cluster, registry });
    await fx.eventually(() => updates.length > 0, 'the update');
    await fx.atRest(logs, 'kopf-example-1');
    await second.stop();

    expect([first.error, second.error]).toEqual([undefined, undefined]);
    expect(creations).toBe(1);
    expect(updates).toEqual([
      {
        reason: 'update',
        diff: [
          ['add', ['spec', 'extra'], null, 1],
          ['change', ['spec', 'field'], 'value', 'c'],
        ],
        old: { duration: '1m', field: 'value', items: ['item1', 'item2'] },
        new: { duration: '1m', field: 'c', items: ['item1', 'item2'], extra: 1 },
      },
    ]);
  });

  it('R-CAUSE-8 after a restart, succeeded handlers are not re-run; retrying ones continue from their persisted retries, started and delay', async () => {
    const registry = new OperatorRegistry();
    const calls: Invocation[] = [];
    on.create('kopfexamples', { registry }, function ok_fn(kw: { reason: string; retry: number; started: Date }) {
      calls.push({ id: 'ok_fn', reason: kw.reason, retry: kw.retry, started: kw.started.getTime() });
    });
    on.create('kopfexamples', { registry }, function retry_fn(kw: { reason: string; retry: number; started: Date }) {
      calls.push({ id: 'retry_fn', reason: kw.reason, retry: kw.retry, started: kw.started.getTime() });
      if (kw.retry === 0) throw new TemporaryError('not yet', { delay: 2 });
    });
    const first = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => recordOf(suite.cluster, 'retry_fn')?.['retries'] === 1, 'the persisted failure');
    const failedAt = Date.now();
    await first.stop();
    const record = recordOf(suite.cluster, 'retry_fn')!;

    const second = await fx.startOperator({ cluster: suite.cluster, registry });
    await fx.eventually(() => logs.grep('Creation is processed:').length > 0, 'the end of the creation', 10_000);
    const retriedAt = Date.now();
    await second.stop();

    expect([first.error, second.error]).toEqual([undefined, undefined]);
    expect(calls.map((c) => [c.id, c.reason, c.retry])).toEqual([
      ['ok_fn', 'create', 0],
      ['retry_fn', 'create', 0],
      ['retry_fn', 'create', 1],
    ]);
    expect(calls[2]!.started).toBe(calls[1]!.started);
    expect(new Date(calls[2]!.started).toISOString().slice(0, 19)).toBe(String(record['started']).slice(0, 19));
    // The persisted delay was honoured across the restart (not retried at once, not reset to a full new delay).
    expect(retriedAt - failedAt).toBeGreaterThan(1500);
    expect(retriedAt - failedAt).toBeLessThan(6000);
    expect(logs.grep('Creation is processed: 2 succeeded; 0 failed.')).toHaveLength(1);
  });
});
