// Type-level tests of daemons and timers (issue 8, "typed like the rest"): every argument of a
// daemon or timer function is inferred from the resource descriptor it is registered for —
// `spec`, `status`, `patch`, `stopped`, `retry`, `signal`, … — and wrong writes or options do not
// compile. `tsc` checks this file in `npm test`; vitest runs it too (the registrations are real,
// into a private registry, and never invoked).
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as runtime from '../../../runtime/index.js';
import { on, OperatorRegistry, resource } from '../../../runtime/index.js';
import type { DaemonArgs, DaemonStopped, Logger, Patch, Resource, TimerArgs } from '../../../runtime/index.js';

interface DatabaseSpec {
  engine: 'postgres' | 'mysql';
  size: number;
  replicas?: number;
}
interface DatabaseStatus {
  phase?: 'Provisioning' | 'Ready';
  message?: string;
  checkedAt?: string;
}
interface Database {
  apiVersion?: 'example.com/v1';
  kind?: 'Database';
  metadata?: runtime.ObjectMeta;
  spec: DatabaseSpec;
  status?: DatabaseStatus;
}

const Databases = resource<Database>({ group: 'example.com', version: 'v1', plural: 'databases', kind: 'Database', namespaced: true });

describe('typed daemons and timers', () => {
  const registry = new OperatorRegistry();

  it('R-DAEMON-1 R-DAEMON-5 a daemon gets spec, status, patch, stopped, retry, signal… typed from the descriptor', () => {
    const fn = on.daemon(Databases, { registry, id: 'monitor' }, async (args) => {
      expectTypeOf(args).toEqualTypeOf<DaemonArgs<Database>>();
      const {
        spec,
        status,
        body,
        meta,
        patch,
        stopped,
        retry,
        started,
        runtime: seconds,
        signal,
        logger,
        name,
        namespace,
        labels,
        annotations,
        param,
        resource: r,
      } = args;
      expectTypeOf(spec).toEqualTypeOf<DatabaseSpec>();
      expectTypeOf(spec.engine).toEqualTypeOf<'postgres' | 'mysql'>();
      expectTypeOf(status).toEqualTypeOf<DatabaseStatus | undefined>();
      expectTypeOf(body).toEqualTypeOf<Readonly<Database>>();
      expectTypeOf(meta).toEqualTypeOf<Readonly<runtime.ObjectMeta>>();
      expectTypeOf(patch).toEqualTypeOf<Patch<Database>>();
      expectTypeOf(stopped).toEqualTypeOf<DaemonStopped>();
      expectTypeOf(retry).toEqualTypeOf<number>();
      expectTypeOf(started).toEqualTypeOf<Date>();
      expectTypeOf(seconds).toEqualTypeOf<number>();
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
      expectTypeOf(logger).toEqualTypeOf<Logger>();
      expectTypeOf(name).toEqualTypeOf<string>();
      expectTypeOf(namespace).toEqualTypeOf<string | null>();
      expectTypeOf(labels).toEqualTypeOf<Readonly<Record<string, string>>>();
      expectTypeOf(annotations).toEqualTypeOf<Readonly<Record<string, string>>>();
      expectTypeOf(param).toEqualTypeOf<unknown>();
      expectTypeOf(r).toEqualTypeOf<Resource>();

      // The stop flag: a boolean-like check, the reasons, an awaitable wait, the abort signal.
      expectTypeOf(stopped.isSet()).toEqualTypeOf<boolean>();
      expectTypeOf(stopped.reason).toEqualTypeOf<number | null>();
      expectTypeOf(stopped.wait).toEqualTypeOf<(timeout?: number) => Promise<boolean>>();
      expectTypeOf(stopped.signal).toEqualTypeOf<AbortSignal>();
      if (stopped.reason !== null && (stopped.reason & runtime.DaemonStoppingReason.RESOURCE_DELETED) !== 0) logger.info('deleted');
      // @ts-expect-error: a daemon cannot set its own flag (the engine does)
      stopped.set(runtime.DaemonStoppingReason.DONE);
      // @ts-expect-error: nor replace its reason
      stopped.reason = 1;

      while (!(await stopped.wait(10))) {
        patch.status.phase = spec.size > 0 ? 'Ready' : 'Provisioning';
        patch.status.message = `${spec.engine} is fine (attempt ${retry})`;
        patch.status.checkedAt = null; // null deletes the field (merge-patch)
        // @ts-expect-error: not a phase of the status type
        patch.status.phase = 'Broken';
        // @ts-expect-error: the message is a string
        patch.status.message = 42;
        // @ts-expect-error: the status type has no such field
        patch.status.phaze = 'Ready';
        // @ts-expect-error: the size is a number
        patch.spec.size = 'large';
        // @ts-expect-error: the body is read-only (it is a live view); write through the patch
        body.spec = { engine: 'mysql', size: 1 };
      }
    });
    expect(registry.handlers.at(-1)).toMatchObject({ kind: 'daemon', id: 'monitor', fn });
  });

  it('R-DAEMON-1 daemon options are typed: initialDelay callbacks get the daemon arguments; durations are numbers', () => {
    on.daemon(
      Databases,
      {
        registry,
        id: 'options',
        initialDelay: ({ spec, stopped }) => {
          expectTypeOf(stopped).toEqualTypeOf<DaemonStopped>();
          return spec.size;
        },
        cancellationBackoff: 1,
        cancellationTimeout: 0.5,
        cancellationPolling: 10,
        backoff: 3,
        retries: 5,
        field: 'spec.engine',
        value: 'postgres',
      },
      async function options() {},
    );
    // @ts-expect-error: an initial delay is a number of seconds, not the engine's name
    on.daemon(Databases, { registry, id: 'wrong-delay', initialDelay: ({ spec }) => spec.engine }, async () => undefined);
    // @ts-expect-error: durations are numbers (and the registration refuses them at run time too)
    expect(() => on.daemon(Databases, { registry, id: 'wrong-backoff', cancellationBackoff: '1s' }, async () => undefined)).toThrow(TypeError);
    // @ts-expect-error: the field's value must fit the field's type
    on.daemon(Databases, { registry, id: 'wrong-value', field: 'spec.engine', value: 'oracle' }, async () => undefined);
  });

  it('R-TIMER-1 a timer gets the same typed arguments, its stop flag included', () => {
    runtime.timer(Databases, { registry, id: 'check', interval: 10, sharp: true, idle: 5, initialDelay: ({ spec }) => spec.size }, (args) => {
      expectTypeOf(args).toEqualTypeOf<TimerArgs<Database>>();
      const { spec, status, patch, stopped, retry, signal } = args;
      expectTypeOf(spec).toEqualTypeOf<DatabaseSpec>();
      expectTypeOf(status?.phase).toEqualTypeOf<'Provisioning' | 'Ready' | undefined>();
      expectTypeOf(patch).toEqualTypeOf<Patch<Database>>();
      expectTypeOf(stopped).toEqualTypeOf<DaemonStopped>();
      expectTypeOf(retry).toEqualTypeOf<number>();
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
      patch.status.checkedAt = new Date().toISOString();
      // @ts-expect-error: a timestamp is a string here
      patch.status.checkedAt = new Date();
      return { checked: true };
    });
    // @ts-expect-error: an interval is a number of seconds (and the registration refuses it at run time too)
    expect(() => runtime.timer(Databases, { registry, id: 'wrong-interval', interval: '10' }, () => undefined)).toThrow(TypeError);
    // @ts-expect-error: cancellation stages are daemons' options, not timers'
    expect(() => runtime.timer(Databases, { registry, id: 'wrong-option', cancellationTimeout: 1 }, () => undefined)).toThrow(TypeError);
  });

  it('R-DAEMON-1 string references give untyped, open bodies to daemons and timers', () => {
    on.daemon('kopfexamples', { registry, id: 'untyped' }, async ({ spec, status, patch, stopped }) => {
      expectTypeOf(spec).toEqualTypeOf<Record<string, unknown>>();
      expectTypeOf(status).toEqualTypeOf<Record<string, unknown>>();
      expectTypeOf(stopped).toEqualTypeOf<DaemonStopped>();
      patch.status['anything'] = spec['field'];
    });
    on.timer('kopfexamples', { registry, id: 'untyped-timer', interval: 1 }, ({ spec, stopped }) => {
      expectTypeOf(spec).toEqualTypeOf<Record<string, unknown>>();
      expectTypeOf(stopped.isSet()).toEqualTypeOf<boolean>();
    });
    expect(registry.handlers.filter((handler) => handler.id.startsWith('untyped')).map((handler) => handler.kind)).toEqual(['daemon', 'timer']);
  });

  it('R-FILTERS-6 filter callbacks of daemons and timers get their arguments without the stop flag and the retry fields', () => {
    on.daemon(
      Databases,
      {
        registry,
        id: 'filtered-daemon',
        when: (args) => {
          expectTypeOf(args.spec).toEqualTypeOf<DatabaseSpec>();
          // @ts-expect-error: there is no stop flag before the daemon exists
          void args.stopped;
          // @ts-expect-error: nor retry fields before an invocation
          void args.retry;
          return true;
        },
      },
      async () => undefined,
    );
    on.timer(Databases, { registry, id: 'filtered-timer', interval: 1, labels: { tier: (value, args) => value === args.name } }, () => undefined);
    expect(registry.handlers.filter((handler) => handler.id.startsWith('filtered-')).map((handler) => handler.kind)).toEqual(['daemon', 'timer']);
  });
});
