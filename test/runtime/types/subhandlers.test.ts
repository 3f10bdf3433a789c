// Type-level tests of sub-handlers (R-HANDLERS-13): the `subhandler`/`register`/`execute` in a change
// handler's arguments are typed by the handler's body, nested ones too; the free functions take the
// body as a type argument (or from an annotated parameter) and default to untyped bodies. `tsc`
// checks this file; vitest runs the registrations (into a private registry) and one real cycle.
import { describe, expect, expectTypeOf, it } from 'vitest';

import * as patches from '../../../runtime/cogs/structs/patches.js';
import * as loggers from '../../../runtime/cogs/structs/loggers.js';
import * as diffs from '../../../runtime/cogs/structs/diffs.js';
import type * as causes from '../../../runtime/core/intents/causes.js';
import * as kwargs from '../../../runtime/core/reactor/arguments.js';
import { viewOf } from '../../../runtime/cogs/structs/views.js';
import type * as runtime from '../../../runtime/index.js';
import { builtins, execute, on, OperatorRegistry, register, resource, subhandler } from '../../../runtime/index.js';
import type { ChangingArgs, Logger, Patch } from '../../../runtime/index.js';
import { handler, makeWorld, runCycle } from '../core/actions/helpers.js';
import * as h from '../../support/scenarios.js';

interface Widget {
  apiVersion?: 'example.com/v1';
  kind?: 'Widget';
  metadata?: runtime.ObjectMeta;
  spec: { items: string[]; replicas: number; owner?: string };
  status?: { phase?: 'Pending' | 'Ready' };
}
const Widgets = resource<Widget>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });

describe('typed sub-handlers', () => {
  const registry = new OperatorRegistry();

  it('R-HANDLERS-13 subhandler/register/execute from the handler arguments are typed by the parent body', () => {
    on.create(Widgets, { registry, id: 'create_fn' }, async ({ spec, subhandler, register, execute }) => {
      for (const item of spec.items) {
        subhandler({ id: item }, async ({ logger, spec, status, patch, retry, old }) => {
          expectTypeOf(logger).toEqualTypeOf<Logger>();
          expectTypeOf(spec.replicas).toEqualTypeOf<number>();
          expectTypeOf(status).toEqualTypeOf<Widget['status']>();
          expectTypeOf(patch).toEqualTypeOf<Patch<Widget>>();
          expectTypeOf(retry).toEqualTypeOf<number>();
          expectTypeOf(old?.spec).toEqualTypeOf<Widget['spec'] | undefined>();
          patch.status.phase = 'Ready';
          // @ts-expect-error: the spec has no such field
          void spec.replicaz;
          // @ts-expect-error: not a phase
          patch.status.phase = 'Gone';
        });
      }
      register(
        async function second({ spec }) {
          expectTypeOf(spec.items).toEqualTypeOf<string[]>();
        },
        { id: 'second' },
      );
      // @ts-expect-error: options of register() are checked
      register(async function third() {}, { field: 'spec.items' });
      await execute({
        fns: {
          a: ({ spec }) => {
            expectTypeOf(spec.replicas).toEqualTypeOf<number>();
          },
        },
      });
      // @ts-expect-error: fns get the parent's arguments
      await execute({ fns: [({ spec }) => spec.replicaz] });
    });
    expect(registry.handlers.at(-1)).toMatchObject({ id: 'create_fn', kind: 'change' });
  });

  it('R-HANDLERS-13 nested sub-handlers, field sub-handlers and filters are typed too', () => {
    on.update(Widgets, { registry, id: 'update_fn' }, ({ subhandler }) => {
      subhandler({ id: 'outer' }, ({ subhandler: inner }) => {
        inner({ id: 'inner' }, ({ spec }) => {
          expectTypeOf(spec.owner).toEqualTypeOf<string | undefined>();
        });
      });
      subhandler({ id: 'replicas', field: 'spec.replicas', old: 1, new: (value) => (value ?? 0) > 1 }, ({ old, new: now, spec }) => {
        expectTypeOf(old).toEqualTypeOf<number | undefined>();
        expectTypeOf(now).toEqualTypeOf<number | undefined>();
        expectTypeOf(spec.items).toEqualTypeOf<string[]>();
      });
      subhandler({ id: 'filtered', when: ({ spec }) => spec.replicas > 0, labels: { app: (value, { spec }) => value === spec.owner } }, () => undefined);
      // @ts-expect-error: the body has no such field
      subhandler({ id: 'bad', field: 'spec.replicaz' }, () => undefined);
      // @ts-expect-error: old/new filters are typed by the field
      subhandler({ id: 'bad2', field: 'spec.replicas', old: 'three' }, () => undefined);
      // @ts-expect-error: when callbacks get the parent's arguments
      subhandler({ id: 'bad3', when: ({ spec }) => spec.replicaz === 1 }, () => undefined);
    });
  });

  it('R-HANDLERS-13 built-in bodies type their sub-handlers', () => {
    on.create(builtins.ConfigMaps, { registry, id: 'cm_fn' }, ({ subhandler }) => {
      subhandler({ id: 'data' }, ({ body }) => {
        expectTypeOf(body.data).toEqualTypeOf<runtime.ConfigMap['data']>();
      });
    });
  });

  it('R-HANDLERS-13 the free functions default to untyped bodies, take the body as a type argument, or from an annotated parameter', () => {
    on.create(Widgets, { registry, id: 'free_fn' }, () => {
      subhandler({ id: 'untyped' }, ({ logger, spec, patch, body }) => {
        expectTypeOf(logger).toEqualTypeOf<Logger>();
        expectTypeOf(spec).toEqualTypeOf<Record<string, unknown>>();
        expectTypeOf(patch).toEqualTypeOf<Patch<runtime.RawBody>>();
        void body.metadata?.name;
      });
      subhandler<Widget>({ id: 'explicit', when: ({ spec }) => spec.replicas > 1 }, ({ spec }) => {
        expectTypeOf(spec.replicas).toEqualTypeOf<number>();
      });
      subhandler({ id: 'annotated' }, ({ spec }: ChangingArgs<Widget>) => {
        expectTypeOf(spec.items).toEqualTypeOf<string[]>();
      });
      subhandler({ id: 'structural' }, function structural({ logger }: { logger: { info(message: string): void } }) {
        logger.info('fine');
      });
      register(
        ({ name }) => {
          expectTypeOf(name).toEqualTypeOf<string>();
        },
        { id: 'registered' },
      );
      void execute<Widget>({
        fns: [
          function each({ spec }) {
            expectTypeOf(spec.replicas).toEqualTypeOf<number>();
          },
        ],
      });
      // @ts-expect-error: a typed body rejects unknown fields
      subhandler<Widget>({ id: 'wrong' }, ({ spec }) => spec.replicaz);
    });
  });

  it("R-HANDLERS-13 a change handler's arguments carry the very sub-handler functions, which register under the parent", async () => {
    const body = { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'n', namespace: 'default', uid: 'u' }, spec: {} };
    const cause: causes.ChangingCause = {
      reason: 'create',
      initial: false,
      deleted: false,
      resource: h.kexResource(),
      event: { type: 'ADDED', object: body },
      body,
      old: null,
      new: { spec: {} },
      diff: diffs.EMPTY,
    };
    const scope: kwargs.ResourceScope = {
      resource: h.kexResource(),
      body,
      view: viewOf(body),
      patch: new patches.Patch<object>(),
      logger: loggers.silentLogger,
      memo: {},
      signal: new AbortController().signal,
    };
    const args = kwargs.changingKwargs(scope, cause, { param: undefined }) as ChangingArgs<runtime.RawBody>;
    expect([args.subhandler, args.register, args.execute]).toEqual([subhandler, register, execute]);

    const world = makeWorld();
    const calls: string[] = [];
    const typedKwargs = (invocable: { readonly param?: unknown }, retry: { retry: number; started: Date; runtime: number }) => ({
      ...kwargs.changingKwargs(scope, cause, invocable, retry),
    });
    await runCycle(
      world,
      [
        handler('parent', (raw) => {
          const { subhandler: sub } = raw as unknown as ChangingArgs<runtime.RawBody>;
          sub({ id: 'child' }, () => {
            calls.push('child');
          });
        }),
      ],
      { scope: { kwargs: typedKwargs } },
    );
    expect(calls).toEqual(['child']);
  });
});
