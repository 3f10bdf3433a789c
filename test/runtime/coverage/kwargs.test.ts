/**
 * The kwargs objects of handlers: read-only views of the body (R-KWARGS-8), through a running
 * operator and at the builder; index names overriding built-in kwargs (R-KWARGS-9), at the
 * builder (no indexing engine runs in this issue, but the builder takes an `indices` record).
 */
import { describe, expect, it } from 'vitest';

import * as patches from '../../../runtime/cogs/structs/patches.js';
import * as loggers from '../../../runtime/cogs/structs/loggers.js';
import * as diffs from '../../../runtime/cogs/structs/diffs.js';
import type * as bodies from '../../../runtime/cogs/structs/bodies.js';
import type * as causes from '../../../runtime/core/intents/causes.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as kwargs from '../../../runtime/core/reactor/arguments.js';
import { viewOf } from '../../../runtime/cogs/structs/views.js';
import { on } from '../../../runtime/on.js';
import * as h from '../../support/scenarios.js';
import * as fx from '../../support/operators.js';

/** A handler as the kwargs builders see it (only `param` and `field` are read). */
const fnHandler = { id: 'fn', fn: (): undefined => undefined, param: undefined };

type Json = Record<string, unknown>;

/** Tries every kind of mutation of the views a handler gets; returns what each attempt did. */
function tryMutations(views: Json): Record<string, string> {
  const attempts: Record<string, (v: Json) => void> = {
    'body.spec.field': (v) => {
      ((v['body'] as Json)['spec'] as Json)['field'] = 'mutated';
    },
    'body.new': (v) => {
      (v['body'] as Json)['extra'] = 1;
    },
    'spec.field': (v) => {
      (v['spec'] as Json)['field'] = 'mutated';
    },
    'spec.items.push': (v) => {
      ((v['spec'] as Json)['items'] as string[]).push('item3');
    },
    'meta.name': (v) => {
      (v['meta'] as Json)['name'] = 'other';
    },
    'status.x': (v) => {
      (v['status'] as Json)['x'] = 1;
    },
    'labels.x': (v) => {
      (v['labels'] as Json)['x'] = 'y';
    },
    'annotations.x': (v) => {
      (v['annotations'] as Json)['x'] = 'y';
    },
    'delete spec.field': (v) => {
      delete (v['spec'] as Json)['field'];
    },
  };
  const out: Record<string, string> = {};
  for (const [what, attempt] of Object.entries(attempts)) {
    try {
      attempt(views);
      out[what] = 'mutated';
    } catch (error) {
      out[what] = error instanceof TypeError ? 'TypeError' : String(error);
    }
  }
  return out;
}

const ALL_THROW = {
  'body.spec.field': 'TypeError',
  'body.new': 'TypeError',
  'spec.field': 'TypeError',
  'spec.items.push': 'TypeError',
  'meta.name': 'TypeError',
  'status.x': 'TypeError',
  'labels.x': 'TypeError',
  'annotations.x': 'TypeError',
  'delete spec.field': 'TypeError',
};

function scopeOf(body: bodies.RawBody, indices?: Record<string, unknown>): kwargs.ResourceScope {
  return {
    resource: h.kexResource(),
    body,
    view: viewOf(body),
    patch: new patches.Patch<object>(),
    logger: loggers.silentLogger,
    memo: { the: 'memo' },
    signal: new AbortController().signal,
    ...(indices ? { indices } : {}),
  };
}

function causeOf(body: bodies.RawBody): causes.ChangingCause {
  const essence = { spec: body['spec'] } as Json;
  return {
    reason: 'create',
    initial: false,
    deleted: false,
    resource: h.kexResource(),
    event: { type: 'ADDED', object: body },
    body,
    old: null,
    new: essence as never,
    diff: diffs.EMPTY,
  };
}

describe('kwargs views', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  it('R-KWARGS-8 the body views handlers get are frozen: every mutation throws; the handler sees the processed body', async () => {
    const registry = new OperatorRegistry();
    const seen: { reason: string; outcome: Record<string, string>; field: unknown }[] = [];
    const eventSeen: Record<string, string>[] = [];
    on.create('kopfexamples', { registry }, function create_fn(views: object) {
      seen.push({ reason: 'create', outcome: tryMutations(views as Json), field: ((views as Json)['spec'] as Json)['field'] });
    });
    on.update('kopfexamples', { registry }, function update_fn(views: object) {
      seen.push({ reason: 'update', outcome: tryMutations(views as Json), field: ((views as Json)['spec'] as Json)['field'] });
    });
    on.event('kopfexamples', { registry }, function ev_fn(views: object) {
      if (eventSeen.length === 0) eventSeen.push(tryMutations(views as Json));
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry });
    await suite.cluster.store.create(fx.kopfExample());
    await fx.eventually(() => seen.length === 1, 'the create handler');
    await fx.eventually(() => fx.annotationsOf(suite.cluster, 'kopf-example-1')['kopf.zalando.org/last-handled-configuration'] !== undefined, 'the diff-base');
    await suite.cluster.store.patch(fx.KEX, 'kopf-example-1', { spec: { field: 'changed' } }, { namespace: 'default' });
    await fx.eventually(() => seen.length === 2, 'the update handler');
    await fx.atRest(logs, 'kopf-example-1');
    await op.stop();

    expect(op.error).toBeUndefined();
    expect(seen).toEqual([
      { reason: 'create', outcome: ALL_THROW, field: 'value' },
      { reason: 'update', outcome: ALL_THROW, field: 'changed' },
    ]);
    expect(eventSeen).toEqual([ALL_THROW]);
    // Nothing leaked into the stored object.
    const stored = suite.cluster.store.get(fx.KEX, 'kopf-example-1', 'default') as Json;
    expect(stored['spec']).toEqual({ duration: '1m', field: 'changed', items: ['item1', 'item2'] });
    expect((stored['metadata'] as Json)['labels']).toEqual({ somelabel: 'somevalue' });
  });

  it('R-KWARGS-8 the builder gives frozen views over a copy: the raw body is neither frozen nor changed', () => {
    const body = fx.kopfExample() as bodies.RawBody;
    const before = JSON.stringify(body);
    const built = kwargs.changingKwargs(scopeOf(body), causeOf(body), fnHandler, { retry: 0, started: new Date(0), runtime: 0 }) as Json;
    expect(tryMutations({ ...built })).toEqual(ALL_THROW);
    expect(Object.isFrozen(body)).toBe(false);
    expect(JSON.stringify(body)).toBe(before);
  });
});

describe('kwargs and indices', () => {
  it('R-KWARGS-9 index names override built-in kwargs of the same name; other built-ins stay', () => {
    const body = fx.kopfExample() as bodies.RawBody;
    const byName = { 'kopf-example-1': ['x'] };
    const memoIndex = { an: 'index named memo' };
    const specIndex = ['an index named spec'];
    const indices = { byName, memo: memoIndex, spec: specIndex };
    const handler = { id: 'fn', fn: () => undefined, param: 'p' };
    const changing = kwargs.changingKwargs(scopeOf(body, indices), causeOf(body), handler, { retry: 2, started: new Date(0), runtime: 1 }) as Json;
    const watching = kwargs.watchingKwargs(scopeOf(body, indices), { type: 'ADDED', object: body }, handler) as Json;
    for (const built of [changing, watching]) {
      expect(built['byName']).toBe(byName);
      expect(built['memo']).toBe(memoIndex);
      expect(built['spec']).toBe(specIndex);
      expect(built['name']).toBe('kopf-example-1');
      expect(built['param']).toBe('p');
      expect((built['body'] as Json)['spec']).toEqual({ duration: '1m', field: 'value', items: ['item1', 'item2'] });
    }
    expect(changing['retry']).toBe(2);
    expect(watching['type']).toBe('ADDED');
    // Without indices, the built-ins are what they are.
    const plain = kwargs.changingKwargs(scopeOf(body), causeOf(body), handler, { retry: 0, started: new Date(0), runtime: 0 }) as Json;
    expect(plain['memo']).toEqual({ the: 'memo' });
    expect(plain['spec']).toEqual({ duration: '1m', field: 'value', items: ['item1', 'item2'] });
    expect(plain['byName']).toBeUndefined();
  });
});
