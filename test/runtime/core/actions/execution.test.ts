import { describe, expect, it } from 'vitest';

import * as clientErrors from '../../../../runtime/cogs/client/errors.js';
import * as timestamps from '../../../../runtime/cogs/configs/timestamps.js';
import type * as instruments from '../../../../runtime/cogs/structs/instruments.js';
import * as errors from '../../../../runtime/core/actions/errors.js';
import * as execution from '../../../../runtime/core/actions/execution.js';
import * as lifecycles from '../../../../runtime/core/actions/lifecycles.js';
import type * as outcomes from '../../../../runtime/core/actions/outcomes.js';
import * as progression from '../../../../runtime/core/actions/progression.js';
import { RecordingLogger, T0, handler, makeWorld, runCycle, type World } from './helpers.js';

function scopeOf(world: World, extra?: Partial<execution.ExecutionScope>): execution.ExecutionScope {
  return {
    settings: world.settings,
    clock: world.clock,
    logger: world.logger,
    kwargs: (h, retry) => ({ param: h.param, ...retry }),
    ...extra,
  };
}

/** A handler state that has run `retries` times, started `ago` seconds before now. */
function stateOf(world: World, retries = 0, ago = 0): progression.HandlerState {
  return progression.HandlerState.fromStorage(
    {
      started: timestamps.formatTimestamp(world.clock.now() - ago * 1000),
      retries,
      success: false,
      failure: false,
    },
    { now: world.clock.now() },
  );
}

async function once(world: World, h: execution.Invocable, state = stateOf(world), extra?: Partial<execution.ExecutionScope>) {
  return execution.executeHandlerOnce({ handler: h, state, scope: scopeOf(world, extra) });
}

describe('one invocation', () => {
  it('R-HANDLERS-8 success logs "is invoked" and "succeeded", and returns the result', async () => {
    const world = makeWorld();
    const outcome = await once(
      world,
      handler('h', () => ({ message: 'hello world' })),
    );
    expect(outcome).toEqual({ final: true, result: { message: 'hello world' }, subrefs: [] });
    expect(world.logger.lines).toEqual([
      { level: 'debug', message: "Handler 'h' is invoked.", extra: undefined },
      { level: 'info', message: "Handler 'h' succeeded.", extra: undefined },
    ]);
  });

  it('R-KWARGS-2 handlers get retry, started and runtime from the persisted state; async results are awaited', async () => {
    const world = makeWorld();
    let seen: Record<string, unknown> = {};
    const outcome = await once(
      world,
      handler(
        'h',
        async (kwargs) => {
          seen = kwargs;
          return 'done';
        },
        { param: 'p' },
      ),
      stateOf(world, 2, 30),
    );
    expect(outcome.result).toBe('done');
    expect(seen['retry']).toBe(2);
    expect(seen['param']).toBe('p');
    expect(seen['runtime']).toBeCloseTo(30, 6);
    expect((seen['started'] as Date).getTime()).toBe(Math.round(T0 - 30_000));
  });

  type Case = [string, () => unknown, Partial<execution.Invocable>, Partial<execution.ExecutionScope>, string, boolean, Partial<outcomes.Outcome>];
  const cases: Case[] = [
    [
      'R-ERRORS-1 a temporary error retries after its delay',
      () => {
        throw new errors.TemporaryError('Expected recoverable error.', { delay: 10 });
      },
      {},
      {},
      "Handler 'h' failed temporarily: Expected recoverable error.",
      false,
      { final: false, delay: 10 },
    ],
    [
      'R-ERRORS-1 a temporary error with a null delay retries on the next cycle',
      () => {
        throw new errors.TemporaryError('soon', { delay: null });
      },
      {},
      {},
      "Handler 'h' failed temporarily: soon",
      false,
      { final: false, delay: null },
    ],
    [
      'R-ERRORS-2 a permanent error stops',
      () => {
        throw new errors.PermanentError('Fail once and for all.');
      },
      {},
      {},
      "Handler 'h' failed permanently: Fail once and for all.",
      false,
      { final: true },
    ],
    [
      'R-ERRORS-3 an arbitrary error retries after settings.execution.defaultBackoff by default',
      () => {
        throw new Error('Oops!');
      },
      {},
      {},
      "Handler 'h' failed with an exception and will try again in 60 seconds: Oops!",
      true,
      { final: false, delay: 60 },
    ],
    [
      'R-ERRORS-3 the handler backoff wins over the default',
      () => {
        throw new Error('Oops!');
      },
      { backoff: 1.5 },
      {},
      "Handler 'h' failed with an exception and will try again in 1.5 seconds: Oops!",
      true,
      { final: false, delay: 1.5 },
    ],
    [
      'R-ERRORS-3 PERMANENT mode stops',
      () => {
        throw new Error('An error that is supposed to be recoverable.');
      },
      { errors: errors.ErrorsMode.PERMANENT, backoff: 1 },
      {},
      "Handler 'h' failed with an exception and will stop now: An error that is supposed to be recoverable.",
      true,
      { final: true },
    ],
    [
      'R-ERRORS-3 IGNORED mode finishes as if succeeded, without a result',
      () => {
        throw new Error('Oops!');
      },
      { errors: errors.ErrorsMode.IGNORED },
      {},
      "Handler 'h' failed with an exception and will ignore it: Oops!",
      true,
      { final: true },
    ],
    [
      'R-ERRORS-3 the default mode comes from the scope (on-event handlers ignore)',
      () => {
        throw new Error('Oops!');
      },
      {},
      { defaultErrors: errors.ErrorsMode.IGNORED },
      "Handler 'h' failed with an exception and will ignore it: Oops!",
      true,
      { final: true },
    ],
    [
      'R-ERRORS-3 an empty message is replaced by the type name',
      () => {
        throw new TypeError('');
      },
      { errors: errors.ErrorsMode.PERMANENT },
      {},
      "Handler 'h' failed with an exception and will stop now: TypeError",
      true,
      { final: true },
    ],
    [
      'R-ERRORS-3 an empty TemporaryError message is replaced by the type name',
      () => {
        throw new errors.TemporaryError('', { delay: 1 });
      },
      {},
      {},
      "Handler 'h' failed temporarily: TemporaryError",
      false,
      { final: false, delay: 1 },
    ],
    [
      'R-ERRORS-3 a thrown string is its own message',
      () => {
        throw 'plain text';
      },
      { errors: errors.ErrorsMode.PERMANENT },
      {},
      "Handler 'h' failed with an exception and will stop now: plain text",
      true,
      { final: true },
    ],
    [
      'R-ERRORS-3 a thrown undefined is described by its type',
      () => {
        throw undefined;
      },
      { errors: errors.ErrorsMode.PERMANENT },
      {},
      "Handler 'h' failed with an exception and will stop now: undefined",
      true,
      { final: true },
    ],
    [
      'R-ERRORS-3 a thrown plain object is described by its type',
      () => {
        throw { code: 1 };
      },
      { backoff: 2 },
      {},
      "Handler 'h' failed with an exception and will try again in 2 seconds: Object",
      true,
      { final: false, delay: 2 },
    ],
    [
      'R-ERRORS-3 a login error (a built-in login reading a broken kubeconfig) is logged in one line, without a stack trace',
      () => {
        throw new clientErrors.LoginError('kc: cluster "c": the certificate-authority file /nope/ca.crt does not exist.');
      },
      { errors: errors.ErrorsMode.IGNORED },
      {},
      'Handler \'h\' failed with an exception and will ignore it: kc: cluster "c": the certificate-authority file /nope/ca.crt does not exist.',
      false,
      { final: true },
    ],
    [
      'R-ERRORS-3 a rejected promise is an error like a thrown one',
      () => Promise.reject(new Error('async oops')),
      { errors: errors.ErrorsMode.PERMANENT },
      {},
      "Handler 'h' failed with an exception and will stop now: async oops",
      true,
      { final: true },
    ],
  ];

  it.each(cases)('%s', async (_title, fn, options, extra, message, traced, expected) => {
    const world = makeWorld();
    const outcome = await once(world, handler('h', fn, options), stateOf(world), extra);
    const failure = world.logger.lines.filter((line) => line.level === 'error');
    expect(failure.map((line) => line.message)).toEqual([message]);
    expect(failure[0]!.extra?.error !== undefined).toBe(traced);
    expect(outcome).toMatchObject(expected);
    if (message.includes('ignore it')) expect(outcome.error).toBeUndefined();
    else expect(outcome.error).toBeInstanceOf(Error);
    expect(outcome.result).toBeUndefined();
    expect(world.logger.messages('info')).toEqual([]);
  });

  it('R-ERRORS-3 the record message of a thrown non-Error is its message, possibly empty', async () => {
    const world = makeWorld();
    const outcome = await once(
      world,
      handler('h', () => {
        throw { code: 1 };
      }),
    );
    expect(outcome.error?.message).toBe('');
    expect((outcome.error as errors.ThrownValueError).value).toEqual({ code: 1 });
  });
});

describe('limits', () => {
  it('R-ERRORS-4 a handler that reached its retries is not invoked', async () => {
    const world = makeWorld();
    let calls = 0;
    const outcome = await once(
      world,
      handler(
        'h',
        () => {
          calls += 1;
        },
        { retries: 3 },
      ),
      stateOf(world, 3),
    );
    expect(calls).toBe(0);
    expect(world.logger.messages('error')).toEqual(["Handler 'h' has exceeded 3 retries."]);
    expect(outcome.final).toBe(true);
    expect(outcome.error).toBeInstanceOf(errors.HandlerRetriesError);
  });

  it('R-ERRORS-5 a handler that reached its timeout is not invoked; runtime includes downtime', async () => {
    const world = makeWorld();
    let calls = 0;
    const outcome = await once(
      world,
      handler(
        'h',
        () => {
          calls += 1;
        },
        { timeout: 60 },
      ),
      stateOf(world, 1, 65.5),
    );
    expect(calls).toBe(0);
    expect(world.logger.messages('error')).toEqual(["Handler 'h' has timed out after 0:01:05.500000."]);
    expect(outcome.error).toBeInstanceOf(errors.HandlerTimeoutError);
    expect(outcome.final).toBe(true);
  });

  it.each([
    [
      'R-ERRORS-4 a temporary failure that would exceed the retries fails now',
      () => {
        throw new errors.TemporaryError('msg', { delay: 1 });
      },
      { retries: 3 },
      2,
      0,
      "Handler 'h' failed temporarily but will exceed 3 retries: msg",
      errors.HandlerRetriesError,
    ],
    [
      'R-ERRORS-5 a temporary failure whose delay reaches the timeout fails now',
      () => {
        throw new errors.TemporaryError('msg', { delay: 10 });
      },
      { timeout: 15 },
      0,
      6,
      "Handler 'h' failed temporarily but will time out after 15 seconds: msg",
      errors.HandlerTimeoutError,
    ],
    [
      'R-ERRORS-4 an arbitrary failure that would exceed the retries stops now',
      () => {
        throw new Error('msg');
      },
      { retries: 3, backoff: 1 },
      2,
      0,
      "Handler 'h' failed with an exception and will stop now (it would exceed 3 retries on the next attempt): msg",
      errors.HandlerRetriesError,
    ],
    [
      'R-ERRORS-5 an arbitrary failure whose backoff reaches the timeout stops now',
      () => {
        throw new Error('msg');
      },
      { timeout: 15, backoff: 10 },
      0,
      6,
      "Handler 'h' failed with an exception and will stop now (it would time out in 15 seconds on the next attempt): msg",
      errors.HandlerTimeoutError,
    ],
  ] as const)('%s', async (_title, fn, options, retries, ago, message, Class) => {
    const world = makeWorld();
    const outcome = await once(world, handler('h', fn, options), stateOf(world, retries, ago));
    expect(world.logger.messages('error')).toEqual([message]);
    expect(outcome.final).toBe(true);
    expect(outcome.error).toBeInstanceOf(Class);
    // The escalated error's message is the whole logged line, as Kopf stores it in the record.
    expect(outcome.error?.message).toBe(message);
  });

  it('R-ERRORS-5 limits below the threshold still retry', async () => {
    const world = makeWorld();
    const outcome = await once(
      world,
      handler(
        'h',
        () => {
          throw new errors.TemporaryError('msg', { delay: 5 });
        },
        { timeout: 15, retries: 3 },
      ),
      stateOf(world, 1, 9.9),
    );
    expect(outcome).toMatchObject({ final: false, delay: 5 });
    expect(world.logger.messages('error')).toEqual(["Handler 'h' failed temporarily: msg"]);
  });

  it('D-5 a running invocation is not interrupted by its timeout; cancellation escalates without an outcome', async () => {
    const world = makeWorld();
    const controller = new AbortController();
    const running = once(
      world,
      handler('h', () => new Promise(() => undefined), { timeout: 1 }),
      stateOf(world),
      { signal: controller.signal },
    );
    let settled = false;
    running.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    await world.clock.advance(3_600_000);
    expect(settled).toBe(false);
    const reason = new DOMException('Operator stopped.', 'AbortError');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(world.logger.messages('warning')).toEqual(["Handler 'h' is cancelled. Will escalate."]);
    expect(world.logger.messages('error')).toEqual([]);
  });

  it('R-ERRORS-8 a handler that fails because of the cancellation is not judged as failed', async () => {
    const world = makeWorld();
    const controller = new AbortController();
    const h = handler('h', async () => {
      controller.abort();
      throw new Error('interrupted');
    });
    await expect(once(world, h, stateOf(world), { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(world.logger.messages('warning')).toEqual(["Handler 'h' is cancelled. Will escalate."]);
    expect(world.logger.messages('error')).toEqual([]);
  });

  it('R-ERRORS-8 a cancelled cycle records nothing: the record stays as before', async () => {
    const world = makeWorld();
    const controller = new AbortController();
    const cycle = runCycle(world, [handler('h', () => new Promise(() => undefined))], { signal: controller.signal });
    await world.clock.advance(10);
    controller.abort();
    await expect(cycle).rejects.toBeDefined();
    expect((world.body['metadata'] as { annotations: object }).annotations).toEqual({ someannotation: 'somevalue' });
  });

  it('formats durations as Python timedeltas', () => {
    expect(execution.formatDuration(0)).toBe('0:00:00');
    expect(execution.formatDuration(10)).toBe('0:00:10');
    expect(execution.formatDuration(3725.25)).toBe('1:02:05.250000');
    expect(execution.formatDuration(90_000)).toBe('1 day, 1:00:00');
    expect(execution.formatDuration(2 * 86_400)).toBe('2 days, 0:00:00');
  });
});

describe('cycles of a change', () => {
  it('R-HANDLERS-4 only awakened handlers are offered; asap runs exactly one per cycle', async () => {
    const world = makeWorld();
    const calls: string[] = [];
    const handlers = ['a', 'b', 'c'].map((id) =>
      handler(id, () => {
        calls.push(id);
      }),
    );
    const state = progression.State.fromScratch()
      .withPurpose('create')
      .withHandlers(['a', 'b', 'c'], world.clock.now())
      .withOutcomes(
        new Map([
          ['a', { final: true }],
          ['b', { final: false, delay: 5 }],
        ]),
        world.clock.now(),
      );
    const seen: string[][] = [];
    const spy: lifecycles.Lifecycle = (hs, context) => {
      seen.push(hs.map((h) => h.id));
      return lifecycles.asap(hs, context);
    };
    const outcomes = await execution.executeHandlersOnce({ handlers, state, scope: scopeOf(world, { lifecycle: spy }) });
    expect(seen).toEqual([['c']]);
    expect(calls).toEqual(['c']);
    expect([...outcomes.keys()]).toEqual(['c']);
  });

  it('R-HANDLERS-5 allAtOnce invokes every awakened handler in order in one cycle', async () => {
    const world = makeWorld();
    const calls: string[] = [];
    const handlers = ['a', 'b'].map((id) =>
      handler(id, () => {
        calls.push(id);
      }),
    );
    const result = await runCycle(world, handlers, { scope: { lifecycle: lifecycles.allAtOnce } });
    expect(calls).toEqual(['a', 'b']);
    expect(result.state.done).toBe(true);
  });

  it('trace 4.4: a temporary error with delay 10 sleeps until the record is awakened', async () => {
    const world = makeWorld();
    const retries: number[] = [];
    const h = handler('h', ({ retry }) => {
      retries.push(retry as number);
      if (retry === 0) throw new errors.TemporaryError('Not ready yet.', { delay: 10 });
    });
    const first = await runCycle(world, [h]);
    expect(first.state.delays(world.clock.now())).toEqual([10]);
    expect(first.patch.toMergePatch()).toEqual({
      metadata: {
        annotations: {
          'kopf.zalando.org/h':
            '{"started":"2024-05-01T10:00:00.123456+00:00","delayed":"2024-05-01T10:00:10.123456+00:00","purpose":"create","retries":1,"success":false,"failure":false,"message":"Not ready yet."}',
        },
      },
    });
    const second = await runCycle(world, [h]);
    expect(retries).toEqual([0]);
    expect(second.patch.isEmpty()).toBe(true);
    expect(second.state.delay(world.clock.now())).toBe(10);
    await world.clock.advance(10_000);
    const third = await runCycle(world, [h]);
    expect(retries).toEqual([0, 1]);
    expect(third.state.done).toBe(true);
    expect(third.patch.toMergePatch()).toEqual({ metadata: { annotations: { 'kopf.zalando.org/h': null } } });
  });

  it('A-9 error handling: invocation counts 1, 4, 3, 1 and the exact log lines', async () => {
    const world = makeWorld();
    world.settings.execution.defaultBackoff = 1;
    const counts: Record<string, number> = {};
    const count = (id: string): void => {
      counts[id] = (counts[id] ?? 0) + 1;
    };
    const handlers = [
      handler('instant_failure_with_only_a_message', () => {
        count('a');
        throw new errors.PermanentError('Fail once and for all.');
      }),
      handler('eventual_success_with_a_few_messages', ({ retry }) => {
        count('b');
        if ((retry as number) < 3) throw new errors.TemporaryError('Expected recoverable error.', { delay: 1 });
      }),
      handler(
        'eventual_failure_with_tracebacks',
        () => {
          count('c');
          throw new Error('An error that is supposed to be recoverable.');
        },
        { retries: 3, backoff: 1 },
      ),
      handler(
        'instant_failure_with_traceback',
        () => {
          count('d');
          throw new Error('An error that is supposed to be recoverable.');
        },
        { errors: errors.ErrorsMode.PERMANENT, backoff: 1 },
      ),
    ];
    let result = await runCycle(world, handlers);
    for (let cycles = 1; !result.state.done; cycles += 1) {
      expect(cycles).toBeLessThan(30);
      const delay = result.state.delay(world.clock.now()) ?? 0;
      if (delay > 0) await world.clock.advance(delay * 1000);
      result = await runCycle(world, handlers);
    }
    expect(counts).toEqual({ a: 1, b: 4, c: 3, d: 1 });
    const log = world.logger;
    expect(log.count('failed permanently: Fail once and for all.')).toBe(1);
    expect(log.count('failed temporarily: Expected recoverable error.')).toBe(3);
    expect(log.count("Handler 'eventual_success_with_a_few_messages' succeeded.")).toBe(1);
    expect(log.count('failed with an exception and will try again in 1 seconds')).toBe(2);
    expect(log.count('failed with an exception and will stop now (it would exceed 3 retries on the next attempt)')).toBe(1);
    expect(log.count("Handler 'instant_failure_with_traceback' failed with an exception and will stop now: An error that is supposed to be recoverable.")).toBe(
      1,
    );
    const traced = log.lines.filter((line) => line.extra?.error !== undefined).map((line) => line.message);
    expect(traced.every((message) => message.includes('An error that is supposed to be recoverable.'))).toBe(true);
    expect(traced).toHaveLength(4);
    expect(result.state.counts).toEqual({ success: 1, failure: 3, running: 0 });
    const annotations = (world.body['metadata'] as { annotations: Record<string, string> }).annotations;
    expect(Object.keys(annotations)).toEqual(['someannotation']);
  });

  it('sync handlers run as they are, and results are delivered to status', async () => {
    const world = makeWorld();
    const logger = new RecordingLogger();
    const result = await runCycle(world, [handler('create_fn', () => 'sync result')], { scope: { logger } });
    expect(result.patch.toMergePatch()).toEqual({ status: { create_fn: 'sync result' } });
    expect(logger.messages('info')).toEqual(["Handler 'create_fn' succeeded."]);
  });
});

describe('reports to the instruments (metrics)', () => {
  type Report = [string, instruments.HandlerResult, boolean, number];

  /** Instruments that record what they hear, on the world's virtual clock. */
  function recorder(world: World): instruments.HandlerInstruments & { readonly reports: Report[] } {
    const reports: Report[] = [];
    return {
      reports,
      now: () => world.clock.now(),
      handled: (id, result, retrying, since) => {
        reports.push([id, result, retrying, world.clock.now() - since]);
      },
    };
  }

  type Case = [string, () => unknown, Partial<execution.Invocable>, number, instruments.HandlerResult, boolean];
  const cases: Case[] = [
    ['a success', () => 'ok', {}, 0, 'success', false],
    [
      'a temporary error, retried',
      () => {
        throw new errors.TemporaryError('t', { delay: 1 });
      },
      {},
      0,
      'temporary',
      true,
    ],
    [
      'a permanent error',
      () => {
        throw new errors.PermanentError('p');
      },
      {},
      0,
      'permanent',
      false,
    ],
    [
      'an arbitrary error, retried',
      () => {
        throw new Error('a');
      },
      { backoff: 1 },
      0,
      'arbitrary',
      true,
    ],
    [
      'an arbitrary error in PERMANENT mode',
      () => {
        throw new Error('a');
      },
      { errors: errors.ErrorsMode.PERMANENT },
      0,
      'arbitrary',
      false,
    ],
    [
      'a temporary error escalated by the retries limit',
      () => {
        throw new errors.TemporaryError('t', { delay: 1 });
      },
      { retries: 3 },
      2,
      'permanent',
      false,
    ],
    [
      'an arbitrary error escalated by the retries limit',
      () => {
        throw new Error('a');
      },
      { retries: 3, backoff: 1 },
      2,
      'permanent',
      false,
    ],
    [
      'a non-Error thrown',
      () => {
        throw 'a string';
      },
      { backoff: 1 },
      0,
      'arbitrary',
      true,
    ],
  ];
  for (const [title, fn, options, retries, result, retrying] of cases) {
    it(`reports ${title} as ${result}${retrying ? ', to be retried' : ''}, with its duration`, async () => {
      const world = makeWorld();
      const recording = recorder(world);
      const slow = async (): Promise<unknown> => {
        await world.clock.sleep(250);
        return fn();
      };
      const running = once(world, handler('h', slow, options), stateOf(world, retries), { instruments: recording });
      await world.clock.advance(250);
      await running;
      expect(recording.reports).toEqual([['h', result, retrying, 250]]);
    });
  }

  it('reports nothing for a cancelled invocation', async () => {
    const world = makeWorld();
    const recording = recorder(world);
    const stopping = new AbortController();
    stopping.abort(new Error('the operator stops'));
    await expect(
      once(
        world,
        handler('h', () => {
          throw new Error('interrupted');
        }),
        stateOf(world),
        { instruments: recording, stopping: stopping.signal },
      ),
    ).rejects.toThrow();
    expect(recording.reports).toEqual([]);
  });
});
