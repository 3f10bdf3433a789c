import { describe, expect, it } from 'vitest';

import * as errors from '../../../../runtime/core/actions/errors.js';
import * as execution from '../../../../runtime/core/actions/execution.js';
import * as lifecycles from '../../../../runtime/core/actions/lifecycles.js';
import * as progression from '../../../../runtime/core/actions/progression.js';
import * as handlers from '../../../../runtime/core/intents/handlers.js';
import * as subhandling from '../../../../runtime/core/reactor/subhandling.js';
import { handler, makeWorld, runCycle } from '../actions/helpers.js';

type Annotations = Record<string, string>;
const annotationsOf = (body: Record<string, unknown>): Annotations => (body['metadata'] as { annotations: Annotations }).annotations;
const recordOf = (body: Record<string, unknown>, key: string): Record<string, unknown> =>
  JSON.parse(annotationsOf(body)[`kopf.zalando.org/${key}`]!) as Record<string, unknown>;

describe('A-13 sub-handlers', () => {
  function operator(calls: string[], items: readonly string[] = ['item1', 'item2']) {
    return handler('create_fn', () => {
      calls.push('create_fn');
      for (const item of items) {
        subhandling.subhandler({ id: item }, async function handle() {
          calls.push(item);
          return { handled: item };
        });
      }
    });
  }

  it('R-HANDLERS-13 one sub-handler per parent invocation; subrefs sorted; the parent re-invoked until children finish', async () => {
    const world = makeWorld();
    const calls: string[] = [];
    const parent = operator(calls);

    const first = await runCycle(world, [parent]);
    expect(calls).toEqual(['create_fn', 'item1']);
    expect(first.state.done).toBe(false);
    expect(first.outcomes.get('create_fn')).toMatchObject({ final: false, delay: 0, subrefs: ['create_fn/item1', 'create_fn/item2'] });
    expect(first.outcomes.get('create_fn')!.error).toBeInstanceOf(errors.HandlerChildrenRetryError);
    expect(world.logger.messages('debug')).toContain("Handler 'create_fn' has unfinished sub-handlers. Will retry soon.");
    expect(recordOf(world.body, 'create_fn')).toMatchObject({
      retries: 1,
      success: false,
      failure: false,
      purpose: 'create',
      subrefs: ['create_fn/item1', 'create_fn/item2'],
    });
    expect(recordOf(world.body, 'create_fn.item1')).toMatchObject({ retries: 1, success: true, failure: false, purpose: 'create' });
    expect(recordOf(world.body, 'create_fn.item2')).toEqual({ started: expect.any(String), purpose: 'create', retries: 0, success: false, failure: false });
    expect(first.patch.toMergePatch()['status']).toEqual({ 'create_fn/item1': { handled: 'item1' } });

    const second = await runCycle(world, [parent], { apply: false });
    expect(calls).toEqual(['create_fn', 'item1', 'create_fn', 'item2']);
    expect(second.state.done).toBe(true);
    expect(second.state.counts).toEqual({ success: 1, failure: 0, running: 0 });
    expect(second.patch.toMergePatch()).toEqual({
      metadata: { annotations: { 'kopf.zalando.org/create_fn.item2': null, 'kopf.zalando.org/create_fn': null, 'kopf.zalando.org/create_fn.item1': null } },
      status: { 'create_fn/item2': { handled: 'item2' } },
    });
    expect(world.logger.count("Handler 'create_fn/item1' succeeded.")).toBe(1);
    expect(world.logger.count("Handler 'create_fn/item2' succeeded.")).toBe(1);
    expect(world.logger.count("Handler 'create_fn' succeeded.")).toBe(1);
  });

  it('R-HANDLERS-13 the parent shares its lifecycle with the children (allAtOnce: everything in one cycle)', async () => {
    const world = makeWorld();
    const calls: string[] = [];
    const result = await runCycle(world, [operator(calls)], { scope: { lifecycle: lifecycles.allAtOnce } });
    expect(calls).toEqual(['create_fn', 'item1', 'item2']);
    expect(result.state.done).toBe(true);
    expect(result.patch.toMergePatch()['metadata']).toBeUndefined();
  });

  it('R-HANDLERS-13 an explicit execute() runs the children once; the parent stops there while they are unfinished', async () => {
    const world = makeWorld();
    const calls: string[] = [];
    const parent = handler('parent', async () => {
      calls.push('parent');
      subhandling.register(function first() {
        calls.push('first');
      });
      subhandling.register(function second() {
        calls.push('second');
      });
      await subhandling.execute();
      calls.push('after');
    });
    await runCycle(world, [parent]);
    expect(calls).toEqual(['parent', 'first']);
    await runCycle(world, [parent]);
    expect(calls).toEqual(['parent', 'first', 'parent', 'second', 'after']);
  });

  it('R-HANDLERS-13 execute() with fns by id or as an array; explicit ids prefixed by the parent', async () => {
    const world = makeWorld();
    const calls: string[] = [];
    const parent = handler('parent', async () => {
      await subhandling.execute({
        fns: {
          a: () => {
            calls.push('a');
          },
          b: () => {
            calls.push('b');
          },
        },
        lifecycle: lifecycles.allAtOnce,
      });
      await subhandling.execute({
        fns: [
          function named() {
            calls.push('named');
          },
        ],
        lifecycle: lifecycles.allAtOnce,
      });
    });
    const result = await runCycle(world, [parent]);
    expect(calls).toEqual(['a', 'b', 'named']);
    expect(result.outcomes.get('parent')).toMatchObject({ final: true, subrefs: ['parent/a', 'parent/b', 'parent/named'] });
    const anonymous = makeWorld();
    await runCycle(anonymous, [handler('p', () => subhandling.execute({ fns: [() => undefined] }))]);
    expect(anonymous.logger.messages('error')).toEqual([
      expect.stringMatching(
        /^Handler 'p' failed with an exception and will try again in 60 seconds: Cannot derive a stable handler id from an anonymous function/,
      ),
    ]);
    expect(world.logger.count("Handler 'parent/a' succeeded.")).toBe(1);
  });

  it('R-HANDLERS-13 sub-sub-handlers are listed in the subrefs of every ancestor', async () => {
    const world = makeWorld();
    const parent = handler('top', () => {
      subhandling.subhandler({ id: 'mid' }, () => {
        subhandling.subhandler({ id: 'leaf' }, () => 'leaf done');
      });
    });
    const result = await runCycle(world, [parent], { scope: { lifecycle: lifecycles.allAtOnce } });
    expect(result.outcomes.get('top')).toMatchObject({ final: true, subrefs: ['top/mid', 'top/mid/leaf'] });
    expect(result.patch.toMergePatch()['status']).toEqual({ 'top/mid/leaf': 'leaf done' });
  });

  it('R-HANDLERS-13 unfinished children delay the parent by their minimal delay; failed children finish it', async () => {
    const world = makeWorld();
    let attempts = 0;
    const parent = handler('parent', () => {
      subhandling.subhandler({ id: 'flaky' }, () => {
        attempts += 1;
        if (attempts === 1) throw new errors.TemporaryError('later', { delay: 5 });
        throw new errors.PermanentError('never');
      });
    });
    const first = await runCycle(world, [parent]);
    expect(first.outcomes.get('parent')).toMatchObject({ final: false, delay: 5 });
    expect(first.state.delays(world.clock.now())).toEqual([5]);
    await world.clock.advance(5000);
    const second = await runCycle(world, [parent]);
    expect(attempts).toBe(2);
    expect(second.outcomes.get('parent')).toMatchObject({ final: true });
    expect(second.outcomes.get('parent')!.error).toBeUndefined();
    expect(world.logger.count("Handler 'parent/flaky' failed permanently: never")).toBe(1);
  });

  it('R-FILTERS-1 sub-handler filters are checked against the object: mismatching ones are never offered', async () => {
    const world = makeWorld();
    const calls: string[] = [];
    const parent = handler('parent', () => {
      subhandling.subhandler({ id: 'matching', labels: { somelabel: 'somevalue' } }, () => {
        calls.push('matching');
      });
      subhandling.subhandler({ id: 'other', labels: { somelabel: 'other' } }, () => {
        calls.push('other');
      });
      subhandling.subhandler({ id: 'never', when: () => false }, () => {
        calls.push('never');
      });
    });
    const result = await runCycle(world, [parent], { scope: { lifecycle: lifecycles.allAtOnce } });
    expect(calls).toEqual(['matching']);
    expect(result.state.done).toBe(true);
  });
});

describe('sub-handler misuse', () => {
  it('R-API-6 the helpers throw outside of a handler', async () => {
    expect(() => subhandling.subhandler({ id: 'x' }, () => undefined)).toThrow('subhandler() was called outside of a handler');
    expect(() => subhandling.register(function f() {})).toThrow('register() was called outside of a handler');
    await expect(subhandling.execute()).rejects.toThrow('execute() was called outside of a handler');
  });

  it('R-HANDLERS-13 on-event handlers cannot have sub-handlers', async () => {
    const world = makeWorld();
    const state = progression.State.fromScratch().withHandlers(['on_event'], world.clock.now());
    const h = handler('on_event', () => {
      subhandling.subhandler({ id: 'x' }, () => undefined);
    });
    const outcomes = await execution.executeHandlersOnce({
      handlers: [h],
      state,
      scope: { settings: world.settings, clock: world.clock, logger: world.logger, kwargs: () => ({}), defaultErrors: errors.ErrorsMode.IGNORED },
    });
    expect(world.logger.messages('error')).toEqual([
      "Handler 'on_event' failed with an exception and will ignore it: Sub-handlers are only supported for resource-changing handlers.",
    ]);
    expect(outcomes.get('on_event')!.final).toBe(true);
  });

  it('R-HANDLERS-2 anonymous sub-handlers need an id; invalid options and conflicting sources are refused', async () => {
    const world = makeWorld();
    const problems: string[] = [];
    const attempt = (fn: () => unknown): void => {
      try {
        fn();
      } catch (error) {
        problems.push((error as Error).message);
      }
    };
    const parent = handler('parent', async () => {
      attempt(() => subhandling.subhandler({}, () => undefined));
      attempt(() => subhandling.subhandler({ id: 'x', bogus: 1 } as never, () => undefined));
      attempt(() => subhandling.register(function f() {}, { field: 'spec' } as never));
      attempt(() => subhandling.subhandler({ id: 'x', old: 'a', field: 'spec.field' }, () => undefined));
      await subhandling.execute({ fns: {}, handlers: [] }).catch((error: Error) => problems.push(error.message));
    });
    await runCycle(world, [parent]);
    expect(problems).toEqual([
      expect.stringContaining('anonymous function'),
      expect.stringContaining('bogus'),
      expect.stringContaining('Unknown options of register(): field'),
      'Filters old=/new= can only be used in sub-handlers of update or field handlers.',
      'Only one of the fns, handlers, registry can be passed. Got more.',
    ]);
  });

  it('R-HANDLERS-13 old/new filters are accepted under update handlers', async () => {
    const world = makeWorld();
    let accepted = false;
    const parent = handlers.changingHandler(
      function update_fn() {
        subhandling.subhandler({ id: 'x', field: 'spec.field', new: 'value' }, () => undefined);
        accepted = true;
      },
      {},
      { registration: 'update', selector: null },
    );
    await runCycle(world, [parent], { reason: 'update' });
    expect(accepted).toBe(true);
  });
});

describe('Kopf-equal progress records of unfinished parents and messageless temporary errors', () => {
  // Kopf stores `str(exc)`: `TemporaryError.__init__(self, __msg=None, delay=60)` passes `None` on
  // to `Exception`, so a parent waiting on sub-handlers (`HandlerChildrenRetry(delay=...)`) and a
  // `TemporaryError()` are stored with `"message":"None"`; fields in `ProgressRecord` order.
  it('R-HANDLERS-13 a parent waiting on its sub-handlers is stored with "message":"None", byte for byte', async () => {
    const world = makeWorld();
    await runCycle(world, [
      handler('create_fn', () => {
        for (const item of ['item1', 'item2']) subhandling.subhandler({ id: item }, () => undefined);
      }),
    ]);
    expect(annotationsOf(world.body)['kopf.zalando.org/create_fn']).toBe(
      '{"started":"2024-05-01T10:00:00.123456+00:00","delayed":"2024-05-01T10:00:00.123456+00:00","purpose":"create",' +
        '"retries":1,"success":false,"failure":false,"message":"None","subrefs":["create_fn/item1","create_fn/item2"]}',
    );
  });

  it('R-ERRORS-1 a TemporaryError without a message is stored as "None"; with an empty message as ""', async () => {
    const world = makeWorld();
    await runCycle(
      world,
      [
        handler('bare', () => {
          throw new errors.TemporaryError(undefined, { delay: 5 });
        }),
        handler('empty', () => {
          throw new errors.TemporaryError('', { delay: 5 });
        }),
      ],
      { scope: { lifecycle: lifecycles.allAtOnce } },
    );
    expect(annotationsOf(world.body)['kopf.zalando.org/bare']).toBe(
      '{"started":"2024-05-01T10:00:00.123456+00:00","delayed":"2024-05-01T10:00:05.123456+00:00","purpose":"create",' +
        '"retries":1,"success":false,"failure":false,"message":"None"}',
    );
    expect(annotationsOf(world.body)['kopf.zalando.org/empty']).toBe(
      '{"started":"2024-05-01T10:00:00.123456+00:00","delayed":"2024-05-01T10:00:05.123456+00:00","purpose":"create",' +
        '"retries":1,"success":false,"failure":false,"message":""}',
    );
    expect(world.logger.messages('error')).toEqual(["Handler 'bare' failed temporarily: None", "Handler 'empty' failed temporarily: TemporaryError"]);
  });
});
