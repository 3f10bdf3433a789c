import { describe, expect, it } from 'vitest';

import * as settings from '../../../../runtime/cogs/configs/settings.js';
import type * as events from '../../../../runtime/core/actions/events.js';
import * as execution from '../../../../runtime/core/actions/execution.js';
import * as invocation from '../../../../runtime/core/actions/invocation.js';
import { makeWorld } from './helpers.js';

function operatorScope(): invocation.OperatorScope & { posted: events.QueuedEvent[] } {
  const posted: events.QueuedEvent[] = [];
  return { settings: new settings.OperatorSettings({ warn: () => undefined }), events: (event) => posted.push(event), posted };
}

describe('async contexts', () => {
  it('R-API-6 the operator context is visible at any depth of async calls, and only inside', async () => {
    const scope = operatorScope();
    expect(invocation.findOperator()).toBeUndefined();
    expect(() => invocation.currentOperator('event()')).toThrow('event() was called outside of an operator');
    const deep = async (): Promise<invocation.OperatorScope> => {
      await new Promise((resolve) => setTimeout(resolve, 1)); // the context must cross a timer: the timer is the subject
      return Promise.resolve().then(() => invocation.currentOperator());
    };
    await expect(invocation.runInOperator(scope, deep)).resolves.toBe(scope);
    expect(invocation.findOperator()).toBeUndefined();
  });

  it('R-API-6 the handler context is visible inside and throws outside', async () => {
    const world = makeWorld();
    expect(() => execution.currentHandler('subhandler()')).toThrow('subhandler() was called outside of a handler');
    const context: execution.HandlerContext = {
      handler: { id: 'h', fn: () => undefined },
      scope: { settings: world.settings, clock: world.clock, logger: world.logger, kwargs: () => ({}) },
      subhandlers: [],
      subrefs: [],
      subexecuted: false,
    };
    const seen = await execution.runInHandler(context, async () => {
      await Promise.resolve();
      return execution.currentHandler().handler.id;
    });
    expect(seen).toBe('h');
  });

  it('two concurrent operators never see each other', async () => {
    const one = operatorScope();
    const two = operatorScope();
    const probe = async (): Promise<invocation.OperatorScope> => {
      await new Promise((resolve) => setTimeout(resolve, 5)); // both wait across a timer at once: the overlap is the subject
      return invocation.currentOperator();
    };
    const [a, b] = await Promise.all([invocation.runInOperator(one, probe), invocation.runInOperator(two, probe)]);
    expect(a).toBe(one);
    expect(b).toBe(two);
  });
});

describe('kwargs and invocation', () => {
  it('R-FILTERS-1 lazy kwargs compute each field once, on first access, and are read-only', () => {
    let computed = 0;
    const kwargs = invocation.lazyKwargs<{ diff: number; name: string }>({
      diff: () => {
        computed += 1;
        return 42;
      },
      name: () => 'x',
    });
    expect(computed).toBe(0);
    expect(kwargs.diff).toBe(42);
    expect(kwargs.diff).toBe(42);
    expect(computed).toBe(1);
    const { name, ...rest } = kwargs;
    expect(name).toBe('x');
    expect(rest).toEqual({ diff: 42 });
    expect(() => {
      (kwargs as { name: string }).name = 'y';
    }).toThrow(TypeError);
  });

  it('R-API-3 functions get one kwargs object; sync and async results alike; errors propagate', async () => {
    const received: unknown[] = [];
    await expect(
      invocation.invoke(
        (kwargs: { a: number }) => {
          received.push(kwargs);
          return kwargs.a + 1;
        },
        { a: 1 },
      ),
    ).resolves.toBe(2);
    await expect(invocation.invoke(async (kwargs: { a: number }) => kwargs.a * 10, { a: 2 })).resolves.toBe(20);
    await expect(
      invocation.invoke(() => {
        throw new Error('sync');
      }, {}),
    ).rejects.toThrow('sync');
    await expect(invocation.invoke(() => Promise.reject(new Error('async')), {})).rejects.toThrow('async');
    expect(received).toEqual([{ a: 1 }]);
  });
});
