/**
 * Filters through a running operator: field/value filters of on-event handlers resolved in the
 * current body (R-FILTERS-3), and `when` callbacks getting the handler's own kwargs and running
 * after all other filters (R-FILTERS-6).
 */
import { describe, expect, it } from 'vitest';

import { ABSENT, PRESENT } from '../../../runtime/core/intents/filters.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import * as fx from '../../support/operators.js';

type Json = Record<string, unknown>;

/** The kwargs a callback or handler got, reduced to comparable facts. */
function facts(kw: Json): Json {
  return Object.fromEntries(
    Object.keys(kw)
      .sort()
      .map((key) => [key, kw[key]]),
  );
}

describe('filters', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-FILTERS-3 on-event field/value filters: presence, literal (deep equality), PRESENT, ABSENT, callbacks — on the current body', async () => {
    const registry = new OperatorRegistry();
    const seen: string[] = [];
    const callbackKwargs: Json[] = [];
    const record =
      (id: string) =>
      ({ spec, type }: { spec: { flag?: unknown; mark?: string }; type: string | null }): void => {
        seen.push(`${String(type)} flag=${JSON.stringify(spec.flag ?? null)}: ${id}${spec.mark ? ` (${spec.mark})` : ''}`);
      };
    on.event('kopfexamples', { registry, id: 'present', field: 'spec.flag' }, record('present'));
    on.event('kopfexamples', { registry, id: 'literal', field: 'spec.flag', value: 'on' }, record('literal'));
    on.event('kopfexamples', { registry, id: 'deep', field: 'spec.flag', value: { nested: [1, 2] } }, record('deep'));
    on.event('kopfexamples', { registry, id: 'marker_present', field: 'spec.flag', value: PRESENT }, record('marker_present'));
    on.event('kopfexamples', { registry, id: 'marker_absent', field: 'spec.flag', value: ABSENT }, record('marker_absent'));
    on.event(
      'kopfexamples',
      {
        registry,
        id: 'callback',
        field: 'spec.flag',
        value: (value: unknown, kw: object): boolean => {
          callbackKwargs.push({ value, name: (kw as Json)['name'] });
          return value === 'off';
        },
      },
      record('callback'),
    );

    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    const step = async (flag: unknown, count: number): Promise<void> => {
      if (flag === undefined) await suite.cluster.store.create(fx.kopfExample());
      else await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { flag } }, { namespace: 'default', type: 'merge-patch' });
      await fx.eventually(() => seen.length >= count, `${count} invocations`);
    };
    await step(undefined, 1);
    await step('on', 4);
    await step('off', 7);
    await step({ nested: [1, 2] }, 10);
    await step({ nested: [1, 2, 3] }, 12);
    await step(null, 13);
    // The explicit end: one more change outside the filtered field, handled after every earlier event
    // of the object (one object's events are handled in order); only the handler for an absent flag
    // matches it. Anything else invoked meanwhile stands before it.
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { mark: 'last' } }, { namespace: 'default', type: 'merge-patch' });
    await fx.eventually(() => seen.at(-1)?.endsWith('(last)') === true, 'the last change');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(seen.pop()).toBe('MODIFIED flag=null: marker_absent (last)');
    expect(seen).toEqual([
      'ADDED flag=null: marker_absent',
      'MODIFIED flag="on": present',
      'MODIFIED flag="on": literal',
      'MODIFIED flag="on": marker_present',
      'MODIFIED flag="off": present',
      'MODIFIED flag="off": marker_present',
      'MODIFIED flag="off": callback',
      'MODIFIED flag={"nested":[1,2]}: present',
      'MODIFIED flag={"nested":[1,2]}: deep',
      'MODIFIED flag={"nested":[1,2]}: marker_present',
      'MODIFIED flag={"nested":[1,2,3]}: present',
      'MODIFIED flag={"nested":[1,2,3]}: marker_present',
      'MODIFIED flag=null: marker_absent',
    ]);
    // The value callback is called with the field's value and the kwargs.
    expect(callbackKwargs.map((c) => c['value'])).toEqual(expect.arrayContaining(['on', 'off']));
    expect(callbackKwargs.every((c) => c['name'] === 'kopf-example-1')).toBe(true);
  });

  it('R-FILTERS-6 `when` gets the same kwargs as the handler and runs last (not at all when an earlier filter fails)', async () => {
    const registry = new OperatorRegistry();
    const whenKwargs: Record<string, Json> = {};
    const handlerKwargs: Record<string, Json> = {};
    const whenCalls: string[] = [];
    const when =
      (id: string) =>
      (kw: object): boolean => {
        whenCalls.push(id);
        whenKwargs[id] ??= facts(kw as Json);
        return true;
      };
    const handler =
      (id: string) =>
      (kw: object): void => {
        handlerKwargs[id] ??= facts(kw as Json);
      };
    on.create('kopfexamples', { registry, id: 'create_fn', param: 'p', when: when('create_fn') }, handler('create_fn'));
    on.event('kopfexamples', { registry, id: 'ev_fn', param: 'q', when: when('ev_fn') }, handler('ev_fn'));
    // Earlier filters fail: `when` must not even be called.
    on.create('kopfexamples', { registry, id: 'by_label', labels: { somelabel: 'othervalue' }, when: when('by_label') }, handler('by_label'));
    on.create(
      'kopfexamples',
      { registry, id: 'by_annotation', annotations: { someannotation: ABSENT }, when: when('by_annotation') },
      handler('by_annotation'),
    );
    on.create('kopfexamples', { registry, id: 'by_value', field: 'spec.field', value: 'other', when: when('by_value') }, handler('by_value'));
    on.event('kopfexamples', { registry, id: 'ev_by_field', field: 'spec.missing', when: when('ev_by_field') }, handler('ev_by_field'));

    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => handlerKwargs['create_fn'] !== undefined && handlerKwargs['ev_fn'] !== undefined, 'the handlers');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(new Set(whenCalls)).toEqual(new Set(['create_fn', 'ev_fn']));
    expect(Object.keys(handlerKwargs).sort()).toEqual(['create_fn', 'ev_fn']);
    // Every kwarg the handler got, `when` got too, with equal values (the same patch, memo, logger, …);
    // except the per-invocation ones, which exist only once a handler is invoked.
    const perInvocation = new Set(['retry', 'started', 'runtime', 'signal']);
    const missing: Record<string, string[]> = {};
    const different: string[] = [];
    for (const id of ['create_fn', 'ev_fn']) {
      const got = whenKwargs[id]!;
      const expected = handlerKwargs[id]!;
      missing[id] = Object.keys(expected).filter((key) => !perInvocation.has(key) && !(key in got));
      for (const key of Object.keys(expected)) {
        if (perInvocation.has(key) || !(key in got)) continue;
        try {
          expect(got[key]).toStrictEqual(expected[key]);
        } catch {
          different.push(`${id}: ${key}`);
        }
      }
    }
    expect({ missing, different }).toEqual({ missing: { create_fn: [], ev_fn: [] }, different: [] });
  });
});
