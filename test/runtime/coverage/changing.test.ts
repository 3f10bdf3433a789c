/**
 * Change handling as users meet it, through running operators against the devcluster: which cause
 * each watch-event becomes and what it runs (R-CAUSE-1), how resume handlers join the causes of
 * objects found at startup (R-CAUSE-3), when field handlers and update handlers with a field fire
 * (R-CAUSE-4, R-HANDLERS-11) and how their value filter reads both sides of a change (R-FILTERS-4),
 * when the finalizer is needed at all (R-FINAL-2), and what a permanent error leaves behind
 * (R-ERRORS-2). The decision functions have unit tests of their own (test/runtime/core/intents);
 * these prove that the running operator behaves as they say.
 */
import { describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../devcluster/testing.js';
import { PermanentError } from '../../../runtime/core/actions/errors.js';
import { ABSENT, PRESENT } from '../../../runtime/core/intents/filters.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, unknown>;
const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
const FOREIGN = 'example.com/keeps-it';
const LHC = 'kopf.zalando.org/last-handled-configuration';

function finalizersOf(cluster: DevCluster, name = 'kopf-example-1'): string[] | undefined {
  const body = cluster.store.get(fx.KEX, name, 'default') as { metadata: { finalizers?: string[] } } | undefined;
  return body?.metadata.finalizers;
}

describe('change handling through a running operator', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  /** Waits until a log line has been captured `times` times in all. */
  const logged = (text: string, times = 1): Promise<void> => fx.eventually(() => logs.grep(text).length >= times, `${times}× "${text}"`);

  it('R-CAUSE-1 every row of the decision table: create, update, noop, resume, delete, free and gone, each with the handlers it runs and the DEBUG line of those that run none', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    const record = (id: string) =>
      function handler({ reason }: { reason: string }): void {
        calls.push(`${id}:${reason}`);
      };
    on.create('kopfexamples', { registry, id: 'created' }, record('created'));
    on.update('kopfexamples', { registry, id: 'updated' }, record('updated'));
    on.delete('kopfexamples', { registry, id: 'deleted' }, record('deleted'));
    on.resume('kopfexamples', { registry, id: 'resumed' }, record('resumed'));

    const first = await fx.startOperator({ cluster: suite.cluster, registry });
    // Row 4: no diff-base yet. A foreign finalizer keeps the object after ours is gone (row 2).
    await suite.cluster.store.create(fx.kopfExample('kopf-example-1', { metadata: { finalizers: [FOREIGN] } }));
    await logged('Creation is processed: 1 succeeded; 0 failed.');
    // Row 7: an essential change.
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default' });
    await logged('Updating is processed: 1 succeeded; 0 failed.');
    // Row 6: the operator's own patch of the new diff-base comes back as an event with the same
    // essence; once that cycle is over (the object at rest), a change outside the essence (the
    // status) is one more.
    const noop = 'Something has changed, but we are not interested (the essence is the same).';
    await fx.atRest(logs, 'kopf-example-1');
    const before = logs.grep(noop).length;
    expect(before).toBeGreaterThan(0);
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { status: { note: 'x' } }, { namespace: 'default', subresource: 'status' });
    await logged(noop, before + 1);
    await first.stop();

    // Row 5: found at startup without changes.
    const second = await fx.startOperator({ cluster: suite.cluster, registry });
    await logged('Resuming is processed: 1 succeeded; 0 failed.');
    // Row 3: deletion requested, our finalizer present.
    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    await logged('Deletion is processed: 1 succeeded; 0 failed.');
    // Row 2: still there (the foreign finalizer), but our finalizer is gone.
    await logged('Deletion, but we are done with it, and we do not care.');
    expect(finalizersOf(suite.cluster)).toEqual([FOREIGN]);
    // Row 1: really deleted.
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { metadata: { finalizers: null } }, { namespace: 'default' });
    await logged('Deleted, really deleted, and we are notified.');
    await second.stop();

    expect([first.error, second.error]).toEqual([undefined, undefined]);
    expect(calls).toEqual(['created:create', 'updated:update', 'resumed:resume', 'deleted:delete']);
    const levelsOf = (text: string): number[] => logs.records.filter((r) => r.message.includes(text)).map((r) => r.level);
    expect(new Set(levelsOf('Something has changed, but we are not interested'))).toEqual(new Set([fx.DEBUG]));
    expect(levelsOf('Deletion, but we are done with it')).toEqual([fx.DEBUG]);
    expect(levelsOf('Deleted, really deleted')).toEqual([fx.DEBUG]);
  });

  /** Runs an operator once per phase: the action, then until `done` is logged; returns the calls of each phase. */
  async function phases(registry: OperatorRegistry, calls: string[], steps: [string, () => Promise<unknown>][]): Promise<string[][]> {
    const seen: string[][] = [];
    for (const [done, action] of steps) {
      calls.length = 0;
      const op = await fx.startOperator({ cluster: suite.cluster, registry });
      await action();
      await logged(done, 1);
      await op.stop();
      expect(op.error).toBeUndefined();
      seen.push([...calls]);
      logs.clear();
    }
    return seen;
  }
  const nothing = async (): Promise<void> => undefined;
  const patchSpec = (spec: Json) => suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec }, { namespace: 'default' });

  it('R-CAUSE-3 objects found at startup: a change made while down runs the update and the resume handlers in registration order (resume sees reason update); a deletion only the resume handlers registered with deleted: true; never on creation', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    const record = (id: string) =>
      function handler({ reason }: { reason: string }): void {
        calls.push(`${id}:${reason}`);
      };
    on.resume('kopfexamples', { registry, id: 'resumed' }, record('resumed'));
    on.create('kopfexamples', { registry, id: 'created' }, record('created'));
    on.update('kopfexamples', { registry, id: 'updated' }, record('updated'));
    on.resume('kopfexamples', { registry, id: 'resumedAlsoDeleted', deleted: true }, record('resumedAlsoDeleted'));
    on.delete('kopfexamples', { registry, id: 'deleted' }, record('deleted'));

    const seen = await phases(registry, calls, [
      ['Creation is processed:', () => suite.cluster.store.create(fx.kopfExample())],
      ['Resuming is processed:', nothing],
    ]);
    await patchSpec({ field: 'changed while down' });
    seen.push(...(await phases(registry, calls, [['Updating is processed:', nothing]])));
    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    seen.push(...(await phases(registry, calls, [['Deletion is processed:', nothing]])));

    expect(seen).toEqual([
      // Creation: no resume handlers.
      ['created:create'],
      // A restart without changes: the resume handlers alone.
      ['resumed:resume', 'resumedAlsoDeleted:resume'],
      // A restart after a change: resume handlers mixed into the update, in registration order.
      ['resumed:update', 'updated:update', 'resumedAlsoDeleted:update'],
      // A restart after a deletion request: only the resume handler registered for deletions.
      ['resumedAlsoDeleted:delete', 'deleted:delete'],
    ]);
  });

  it('R-CAUSE-4 field handlers ignore the reason: they fire on creation when the field is present, on an update (also one made while down) and a deletion that changes the field; never on a resume without changes nor on a change of another field', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.field('kopfexamples', 'spec.field', { registry, id: 'fielded' }, function fielded({ reason, old, new: value }) {
      calls.push(`${reason}:${String(old)}→${String(value)}`);
    });
    on.delete('kopfexamples', { registry, id: 'deleted' }, function deleted() {
      calls.push('deleted');
    });
    // A resume handler makes each restart observable ('Resuming is processed', or mixed into the cause).
    on.resume('kopfexamples', { registry, id: 'resumed' }, function resumed() {
      calls.push('resumed');
    });
    on.update('kopfexamples', { registry, id: 'updated' }, function updated() {});

    const seen = await phases(registry, calls, [
      ['Creation is processed:', () => suite.cluster.store.create(fx.kopfExample())],
      ['Resuming is processed:', nothing],
    ]);
    // While running: another field, then the field.
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    calls.length = 0;
    await patchSpec({ other: 1 });
    await logged('Updating is processed:', 1);
    seen.push([...calls]);
    calls.length = 0;
    await patchSpec({ field: 'two' });
    await logged('Updating is processed:', 2);
    seen.push([...calls]);
    await op.stop();
    expect(op.error).toBeUndefined();
    logs.clear();
    // While down: a change, then a change together with a deletion request.
    await patchSpec({ field: 'three' });
    seen.push(...(await phases(registry, calls, [['Updating is processed:', nothing]])));
    await patchSpec({ field: 'four' });
    await suite.cluster.store.delete(fx.KEX, 'kopf-example-1', { namespace: 'default' });
    seen.push(...(await phases(registry, calls, [['Deletion is processed:', nothing]])));

    expect(seen).toEqual([
      ['create:undefined→value'],
      ['resumed'],
      [],
      ['update:value→two'],
      ['update:two→three', 'resumed'],
      ['delete:three→four', 'deleted'],
    ]);
  });

  /** Creates the object with `spec.field: one`, then applies each change; returns the handlers each change ran. */
  async function updates(registry: OperatorRegistry, calls: string[], changes: [string, Json][]): Promise<[string, string[]][]> {
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample('kopf-example-1', { spec: { field: 'one' } }));
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')[LHC] !== undefined, 'the diff-base');
    const steps: [string, string[]][] = [];
    for (const [what, patch] of changes) {
      calls.length = 0;
      await patchSpec(patch);
      await logged('Updating is processed:', steps.length + 1);
      steps.push([what, [...calls]]);
    }
    await op.stop();
    expect(op.error).toBeUndefined();
    return steps;
  }
  const recorder = (calls: string[]) => (id: string) =>
    function handler(): void {
      calls.push(id);
    };

  it('R-HANDLERS-11 update handlers: without a field on every essential change; with a field only when its value changes, appearing and disappearing included', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    const record = recorder(calls);
    on.update('kopfexamples', { registry, id: 'any' }, record('any'));
    on.update('kopfexamples', { registry, id: 'field', field: 'spec.field' }, record('field'));
    on.update('kopfexamples', { registry, id: 'extra', field: 'spec.extra' }, record('extra'));
    const steps = await updates(registry, calls, [
      ['another field', { other: 1 }],
      ['one → two', { field: 'two' }],
      ['extra appears', { extra: 1 }],
      ['extra changes', { extra: 2 }],
      ['extra disappears', { extra: null }],
    ]);
    expect(steps).toEqual([
      ['another field', ['any']],
      ['one → two', ['any', 'field']],
      ['extra appears', ['any', 'extra']],
      ['extra changes', ['any', 'extra']],
      ['extra disappears', ['any', 'extra']],
    ]);
  });

  it('R-FILTERS-4 the value filter of a change handler passes when the old or the new value satisfies it: a value, PRESENT and ABSENT', async () => {
    const registry = new OperatorRegistry();
    const calls: string[] = [];
    const record = recorder(calls);
    // Without a field, it runs on every change (and so every change logs that it is processed).
    on.update('kopfexamples', { registry, id: 'any' }, record('any'));
    on.update('kopfexamples', { registry, id: 'wasOrIsOne', field: 'spec.field', value: 'one' }, record('wasOrIsOne'));
    on.update('kopfexamples', { registry, id: 'wasOrIsPresent', field: 'spec.extra', value: PRESENT }, record('wasOrIsPresent'));
    on.update('kopfexamples', { registry, id: 'wasOrIsAbsent', field: 'spec.extra', value: ABSENT }, record('wasOrIsAbsent'));
    const steps = await updates(registry, calls, [
      ['one → two', { field: 'two' }],
      ['two → three', { field: 'three' }],
      ['three → one', { field: 'one' }],
      ['extra appears', { extra: 1 }],
      ['extra changes', { extra: 2 }],
      ['extra disappears', { extra: null }],
    ]);
    expect(steps).toEqual([
      ['one → two', ['any', 'wasOrIsOne']],
      ['two → three', ['any']],
      ['three → one', ['any', 'wasOrIsOne']],
      ['extra appears', ['any', 'wasOrIsPresent', 'wasOrIsAbsent']],
      ['extra changes', ['any', 'wasOrIsPresent']],
      ['extra disappears', ['any', 'wasOrIsPresent', 'wasOrIsAbsent']],
    ]);
  });

  it('R-FINAL-2 the finalizer is added only when required: for a non-optional delete handler that pre-matches, or a matching timer; not for optional or mismatching delete handlers, nor for other handlers', async () => {
    const registry = new OperatorRegistry();
    on.create('kopfexamples', { registry }, function created() {});
    on.delete('kopfexamples', { registry, labels: { cleanup: 'yes' } }, function cleanup() {});
    on.delete('kopfexamples', { registry, optional: true }, function optionalCleanup() {});
    on.timer('kopfexamples', { registry, labels: { timed: 'yes' }, interval: 3600 }, function timed() {});
    on.event('kopfexamples', { registry }, function observed() {});
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample('plain'));
    await suite.cluster.store.create(fx.kopfExample('cleaned', { metadata: { labels: { cleanup: 'yes' } } }));
    await suite.cluster.store.create(fx.kopfExample('timed', { metadata: { labels: { timed: 'yes' } } }));
    // The finalizer is added before the first handler runs: once creation is processed, it is there or it is not.
    await logged('Creation is processed:', 3);
    expect(logs.grep('[default/plain] Creation is processed:')).toHaveLength(1);
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(finalizersOf(suite.cluster, 'plain')).toBeUndefined();
    expect(finalizersOf(suite.cluster, 'cleaned')).toEqual([FINALIZER]);
    expect(finalizersOf(suite.cluster, 'timed')).toEqual([FINALIZER]);
    expect(logs.grep('Adding the finalizer').map((line) => line.split(']')[0])).toEqual(expect.arrayContaining(['[default/cleaned', '[default/timed']));
    expect(logs.grep('[default/plain] Adding the finalizer')).toEqual([]);
  });

  it('R-ERRORS-2 a PermanentError fails the handler for this change: failure, stopped and message are stored, it is not retried, and one ERROR line without a stack trace says so', async () => {
    const registry = new OperatorRegistry();
    let attempts = 0;
    on.create('kopfexamples', { registry }, function doomed() {
      attempts += 1;
      throw new PermanentError('Fail once and for all.');
    });
    on.create('kopfexamples', { registry }, function fine() {});
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await logged('Creation is processed: 1 succeeded; 1 failed.');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(attempts).toBe(1);
    const lines = logs.records.filter((r) => r.message.includes("Handler 'doomed' failed permanently"));
    expect(lines.map((r) => [r.level, r.line, r.error])).toEqual([
      [fx.ERROR, "[default/kopf-example-1] Handler 'doomed' failed permanently: Fail once and for all.", undefined],
    ]);
    // The outcome was stored (then purged with the other records at the end of the change).
    const stored = fx
      .patchBodies(suite.cluster, 'kopf-example-1')
      .map((patch) => (patch as { metadata?: { annotations?: Json } }).metadata?.annotations?.['kopf.zalando.org/doomed'])
      .filter((value): value is string => typeof value === 'string')
      .map((value) => JSON.parse(value) as Json);
    expect(stored).toEqual([expect.objectContaining({ purpose: 'create', retries: 1, success: false, failure: true, message: 'Fail once and for all.' })]);
    expect(stored[0]!['stopped']).toEqual(expect.any(String));
  });
});
