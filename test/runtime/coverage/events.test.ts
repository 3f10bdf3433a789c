/**
 * On-event handlers (R-EVENT-2..4) through a running operator against the devcluster: all matching
 * handlers in registration order once per event, no progress records, errors ignored, results
 * written to status, and their log messages never posted as k8s-events.
 */
import { describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as vt from '../../support/virtualtime.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, unknown>;
const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;

function statusOf(cluster: DevCluster, name = 'kopf-example-1'): Json {
  return (cluster.store.get(fx.KEX, name, 'default')?.['status'] ?? {}) as Json;
}

describe('on-event handlers', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-EVENT-2 all matching handlers run in registration order once per event; no records, no retries, errors ignored', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    const record =
      (id: string) =>
      ({ type, body }: { type: string | null; body: { metadata?: { resourceVersion?: string } } }): void => {
        calls.push(`${id}:${String(type)}:${body.metadata?.resourceVersion ?? ''}`);
      };
    on.event('kopfexamples', { registry, id: 'ev_a' }, record('a'));
    on.event('kopfexamples', { registry, id: 'ev_b' }, (kwargs: { type: string | null; body: { metadata?: { resourceVersion?: string } } }) => {
      record('b')(kwargs);
      throw new Error('boom');
    });
    on.event('kopfexamples', { registry, id: 'ev_skipped', labels: { somelabel: 'othervalue' } }, record('skipped'));
    on.event('kopfexamples', { registry, id: 'ev_c' }, record('c'));
    // Retry options are refused for on-event handlers.
    for (const option of ['errors', 'timeout', 'retries', 'backoff']) {
      const value = option === 'errors' ? 'TEMPORARY' : 1;
      expect(() => on.event('kopfexamples', { registry, id: `bad_${option}`, [option]: value } as never, () => undefined)).toThrow(TypeError);
    }

    // On virtual time, so that "no retries" is proven by moving the clock past any back-off.
    const op = await vt.startVirtual({ cluster: suite.cluster, registry });
    const created = await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => calls.length >= 3, 'the ADDED event');
    const modified = await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => calls.length >= 6, 'the MODIFIED event');
    await op.clock.advance(10 * 60_000); // far beyond the back-offs: a retry would have run by now
    await op.stop();

    expect(op.error).toBeUndefined();
    const rv1 = (created['metadata'] as Json)['resourceVersion'] as string;
    const rv2 = (modified['metadata'] as Json)['resourceVersion'] as string;
    expect(calls).toEqual([`a:ADDED:${rv1}`, `b:ADDED:${rv1}`, `c:ADDED:${rv1}`, `a:MODIFIED:${rv2}`, `b:MODIFIED:${rv2}`, `c:MODIFIED:${rv2}`]);
    const failures = logs.records.filter((r) => r.message.includes("Handler 'ev_b' failed"));
    expect(failures.map((r) => [r.level, r.line])).toEqual([
      [fx.ERROR, "[default/kopf-example-1] Handler 'ev_b' failed with an exception and will ignore it: boom"],
      [fx.ERROR, "[default/kopf-example-1] Handler 'ev_b' failed with an exception and will ignore it: boom"],
    ]);
    // No progress records: nothing was patched at all (the handlers returned nothing).
    expect(suite.cluster.requests.filter((r) => r.method === 'PATCH')).toEqual([]);
    expect(Object.keys(fx.annotationsOf(suite.cluster, 'kopf-example-1')).filter((k) => k.startsWith('kopf.zalando.org/'))).toEqual([]);
  });

  it('R-EVENT-3 non-null results of on-event handlers are written to status.<id>; null ones are not', async () => {
    const registry = new OperatorRegistry();
    on.event('kopfexamples', { registry }, function ev_result({ spec }: { spec: { field?: string } }) {
      return { field: spec.field ?? null };
    });
    on.event('kopfexamples', { registry }, function ev_nothing() {
      return null;
    });
    const observer = new fx.Observer(registry);
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => statusOf(suite.cluster)['ev_result'] !== undefined, 'the result in status');
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => (statusOf(suite.cluster)['ev_result'] as Json | undefined)?.['field'] === 'changed', 'the new result');
    await fx.quiet(op, suite.cluster, observer, 'kopf-example-1'); // nothing more is written for it
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(statusOf(suite.cluster)).toEqual({ ev_result: { field: 'changed' } });
    const statusPatches = fx.patchBodies(suite.cluster, 'kopf-example-1', 'status');
    // Each new result is written (the cycle of its own event may write the unchanged value again: a
    // no-op for the server, which produces no further event — so no endless loop).
    const values = statusPatches.map((p) => (p as { status: { ev_result: Json } }).status.ev_result['field']);
    expect(values.filter((v, i) => i === 0 || v !== values[i - 1])).toEqual(['value', 'changed']);
    expect(values.length).toBeLessThanOrEqual(4);
    expect(suite.cluster.requests.filter((r) => r.method === 'PATCH' && r.subresource !== 'status')).toEqual([]);
  });

  it('R-EVENT-4 messages about on-event handlers and of their loggers are never posted as k8s-events, even with posting.loggers', async () => {
    const registry = new OperatorRegistry();
    on.event('kopfexamples', { registry }, function ev_fn({ logger }: { logger: { info(m: string): void } }) {
      logger.info('A message from the on-event handler.');
      throw new Error('ignored failure');
    });
    // The control: a change handler's messages ARE posted in the same setup.
    on.create('kopfexamples', { registry }, function create_fn({ logger }: { logger: { info(m: string): void } }) {
      logger.info('A message from the create handler.');
    });
    on.update('kopfexamples', { registry }, function update_fn({ logger }: { logger: { info(m: string): void } }) {
      logger.info('A message from the update handler.');
    });
    const settings = fx.fastSettings((s) => {
      s.posting.enabled = true;
      s.posting.loggers = true;
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, settings });
    await suite.cluster.store.create(fx.kopfExample());
    const posted = (): string[] => suite.cluster.store.list(EVENTS, 'default').map((e) => String(e['message']));
    await fx.eventually(() => posted().includes("Handler 'create_fn' succeeded."), 'the posted success of create_fn');
    // The explicit end: a change runs the on-event handler and then, in the same cycle, the update
    // handler; events are posted in the order they were queued, so once the update handler's message
    // is posted, anything the on-event handler's logger queued before it would have been posted too.
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => posted().includes('A message from the update handler.'), 'the posted message of update_fn');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(posted()).toContain('A message from the create handler.');
    // The on-event handler ran and logged (locally), several times.
    expect(logs.grep('A message from the on-event handler.').length).toBeGreaterThan(0);
    expect(logs.grep("Handler 'ev_fn' failed with an exception and will ignore it").length).toBeGreaterThan(0);
    expect(posted().filter((m) => m.includes('on-event handler') || m.includes('ev_fn'))).toEqual([]);
  });
});
