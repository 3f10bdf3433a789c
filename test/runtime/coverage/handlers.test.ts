/**
 * Change handlers through a running operator: the end of a change (R-HANDLERS-7), `param`
 * (R-HANDLERS-12), the scope of successes and permanent failures (R-ERRORS-7), and the documented
 * idempotence contract (R-HANDLERS-14).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

import { PermanentError } from '../../../runtime/core/actions/errors.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, unknown>;
const LHC = 'kopf.zalando.org/last-handled-configuration';
/** The user guide's page for Kopf users, where the pitfalls Kopf users know are documented. */
const GUIDE = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/kopf-migration.md'), 'utf8');

/** The text of a section of that page (from its `## ` heading to the next one). */
function section(title: string): string {
  const start = GUIDE.indexOf(`\n## ${title}\n`);
  expect(start, `docs/kopf-migration.md section ${title}`).toBeGreaterThanOrEqual(0);
  const end = GUIDE.indexOf('\n## ', start + 1);
  return GUIDE.slice(start, end < 0 ? undefined : end).replace(/\s+/g, ' ');
}

function annotationsIn(patch: unknown): Record<string, unknown> {
  return (patch as { metadata?: { annotations?: Record<string, unknown> } }).metadata?.annotations ?? {};
}

describe('change handlers', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-HANDLERS-7 when all handlers are finished (one failed permanently), one cycle logs the totals, purges the records and stores the diff-base', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.create('kopfexamples', { registry }, function a_fn() {
      calls.push('a_fn');
    });
    on.create('kopfexamples', { registry }, function b_fn() {
      calls.push('b_fn');
      throw new PermanentError('no way');
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Creation is processed:').length > 0, 'the end of the creation');
    await fx.eventually(() => logs.grep('Something has changed, but we are not interested').length > 0, 'the noop');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(calls).toEqual(['a_fn', 'b_fn']);
    expect(logs.records.filter((r) => r.message.includes('is processed:')).map((r) => [r.level, r.line])).toEqual([
      [fx.INFO, '[default/kopf-example-1] Creation is processed: 1 succeeded; 1 failed.'],
    ]);
    // The records were written while in progress, and purged in the very patch that stores the diff-base.
    const patches = fx.patchBodies(suite.cluster, 'kopf-example-1');
    const final = patches.filter((p) => LHC in annotationsIn(p));
    expect(final).toHaveLength(1);
    expect(annotationsIn(final[0])['kopf.zalando.org/a_fn']).toBeNull();
    expect(annotationsIn(final[0])['kopf.zalando.org/b_fn']).toBeNull();
    expect(patches.indexOf(final[0])).toBe(patches.length - 1);
    const stored = fx.annotationsOf(suite.cluster, 'kopf-example-1');
    expect(
      Object.keys(stored)
        .filter((k) => k.startsWith('kopf.zalando.org/'))
        .sort(),
    ).toEqual([LHC]);
    expect(JSON.parse(stored[LHC]!)).toMatchObject({ spec: { field: 'value' } });
  });

  it('R-HANDLERS-7 no selected handlers: the change is done at once — diff-base stored, no totals logged', async () => {
    const registry = new OperatorRegistry();
    const updates: unknown[] = [];
    on.update('kopfexamples', { registry }, function update_fn({ diff }: { diff: unknown }) {
      updates.push(diff);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => logs.grep('Updating is processed:').length > 0, 'the update');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(logs.grep('Creation is in progress:')).toHaveLength(1);
    expect(logs.grep('Creation is processed:')).toEqual([]);
    expect(logs.grep('Updating is processed:')).toEqual(['[default/kopf-example-1] Updating is processed: 1 succeeded; 0 failed.']);
    // The first cycle stored the diff-base, so the change arrived as an update with a diff.
    expect(updates).toHaveLength(1);
    expect(JSON.parse(JSON.stringify(updates[0]))).toEqual([['change', ['spec', 'field'], 'value', 'changed']]);
    const first = fx.patchBodies(suite.cluster, 'kopf-example-1')[0];
    expect(Object.keys(annotationsIn(first))).toEqual([LHC]);
  });

  it('R-HANDLERS-12 param is passed unchanged as the param kwarg, per registration of one function', async () => {
    const registry = new OperatorRegistry();
    const seen: [string, unknown][] = [];
    const shared = { some: ['param'] };
    function both_fn({ param, reason }: { param: unknown; reason: string }): void {
      seen.push([reason, param]);
    }
    on.create('kopfexamples', { registry, id: 'first', param: shared }, both_fn);
    on.create('kopfexamples', { registry, id: 'second', param: 2 }, both_fn);
    on.create('kopfexamples', { registry, id: 'none' }, both_fn);
    const events: unknown[] = [];
    on.event('kopfexamples', { registry, param: 'for events' }, function ev_fn({ param }: { param: unknown }) {
      events.push(param);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => logs.grep('Creation is processed:').length > 0, 'the creation');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(seen).toHaveLength(3);
    expect(seen[0]![1]).toBe(shared); // the very object, not a copy
    expect(seen[1]).toEqual(['create', 2]);
    expect(seen[2]![0]).toBe('create');
    expect(seen[2]![1] === null || seen[2]![1] === undefined).toBe(true);
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events)).toEqual(new Set(['for events']));
  });

  it('R-ERRORS-7 success and permanent failure exclude a handler only for the current change; the next essential change selects it again', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.update('kopfexamples', { registry }, function ok_fn({ spec }: { spec: Json }) {
      calls.push(`ok_fn:${String(spec['field'])}`);
    });
    on.update('kopfexamples', { registry }, function fail_fn({ spec }: { spec: Json }) {
      calls.push(`fail_fn:${String(spec['field'])}`);
      throw new PermanentError('never for this change');
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    const change = async (patch: Json, processed: number): Promise<void> => {
      await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', patch, { namespace: 'default' });
      await fx.eventually(() => logs.grep('Updating is processed:').length >= processed, `update #${processed}`);
    };
    await change({ spec: { field: 'first' } }, 1);
    await fx.atRest(logs, 'kopf-example-1');
    // Non-essential changes (status, the operator's own annotations) select nobody.
    const rests = logs.grep(fx.AT_REST).length;
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { status: { other: 'x' } }, { namespace: 'default', subresource: 'status' });
    await fx.eventually(() => logs.grep(fx.AT_REST).length > rests, 'the cycle of the status change');
    await fx.atRest(logs, 'kopf-example-1');
    expect(calls).toEqual(['ok_fn:first', 'fail_fn:first']);
    await change({ spec: { field: 'second' } }, 2);
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(calls).toEqual(['ok_fn:first', 'fail_fn:first', 'ok_fn:second', 'fail_fn:second']);
    expect(logs.grep('Updating is processed:')).toEqual([
      '[default/kopf-example-1] Updating is processed: 1 succeeded; 1 failed.',
      '[default/kopf-example-1] Updating is processed: 1 succeeded; 1 failed.',
    ]);
    expect(logs.grep("Handler 'fail_fn' failed permanently: never for this change")).toHaveLength(2);
  });

  it('R-ERRORS-7 the user guide documents the recipe to exclude a handler for good: an annotation set via patch and filtered with ABSENT', () => {
    const text = section('Pitfalls Kopf users learned the hard way, and how they apply here');
    expect(text).toMatch(/permanently failed handler runs again on the next essential change/i);
    expect(text).toMatch(/annotation through `patch` and filter on it/);
    expect(text).toContain(': ABSENT }');
  });

  it('R-HANDLERS-14 the user guide documents that parent handlers are re-invoked and handlers may be re-invoked after a crash', () => {
    const text = section('Pitfalls Kopf users learned the hard way, and how they apply here');
    expect(text).toMatch(/parent of sub-handlers is re-invoked (on every cycle )?until (all its sub-handlers|they) finish/);
    expect(text).toMatch(/any handler may (be re-invoked|run again) after (an operator )?crash before its success was (stored|persisted)/);
    expect(text).toMatch(/idempotent/);
  });
});
