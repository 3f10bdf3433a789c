// Type-level and registration tests of on.reconcile (issue 29): the owned children are a tuple typed
// from `owns`, `watches` maps are typed by their resource, the result is nothing or
// `{ requeueAfter }`, and malformed options are refused at registration. `tsc` checks this file;
// vitest runs the registrations into private registries (nothing is invoked).
import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as runtime from '../../../runtime/index.js';
import { builtins, on, OperatorRegistry, resource } from '../../../runtime/index.js';
import type { Clock, Job, ReconcileArgs, ReconcileHandler, Secret } from '../../../runtime/index.js';

interface Backup {
  apiVersion?: 'example.com/v1';
  kind?: 'Backup';
  metadata?: runtime.ObjectMeta;
  spec: { schedule: string; secretName?: string };
  status?: { lastRun?: string };
}
const Backups = resource<Backup>({ group: 'example.com', version: 'v1', plural: 'backups', kind: 'Backup', namespaced: true });

describe('on.reconcile registration', () => {
  it('R-RECONCILE-201: the arguments are typed from the descriptor; owned is a tuple typed from owns', () => {
    const registry = new OperatorRegistry();
    on.reconcile(Backups, { registry, id: 'backup', owns: [builtins.Jobs, builtins.Secrets] }, async (args) => {
      expectTypeOf(args.spec.schedule).toEqualTypeOf<string>();
      expectTypeOf(args.owned).toEqualTypeOf<readonly [readonly Job[], readonly Secret[]]>();
      expectTypeOf(args.clock).toEqualTypeOf<Clock>();
      expectTypeOf(args.now).toEqualTypeOf<Date>();
      expectTypeOf(args.retry).toEqualTypeOf<number>();
      expectTypeOf(args.signal).toEqualTypeOf<AbortSignal>();
      return { requeueAfter: 10 };
    });
    on.reconcile(Backups, { registry, id: 'plain' }, (args) => {
      expectTypeOf(args).toEqualTypeOf<ReconcileArgs<Backup, unknown, readonly []>>();
    });
    // @ts-expect-error -- a result is nothing or { requeueAfter }
    on.reconcile(Backups, { registry, id: 'wrong' }, () => ({ requeue: true }));
    const handlers = registry.reconcileHandlersOf({ group: 'example.com', version: 'v1', plural: 'backups', preferred: true } as never);
    expect(handlers.map((h) => h.id)).toEqual(['backup', 'plain', 'wrong']);
  });

  it('R-RECONCILE-203: a watches map receives the watched kind typed and returns object refs', () => {
    const registry = new OperatorRegistry();
    on.reconcile(
      Backups,
      {
        registry,
        id: 'bySecret',
        watches: [
          {
            resource: builtins.Secrets,
            map: (secret) => {
              expectTypeOf(secret).toEqualTypeOf<Secret>();
              return { name: secret.metadata?.annotations?.['backup'] ?? '' };
            },
          },
        ],
      },
      () => undefined,
    );
    const [handler] = registry.handlers as ReconcileHandler[];
    expect(handler?.watches.map((w) => w.resource.plural)).toEqual(['secrets']);
  });

  it('R-RECONCILE-209: reconciled, owned and watched kinds are watched (discovered and served)', () => {
    const registry = new OperatorRegistry();
    on.reconcile(Backups, { registry, id: 'r', owns: [builtins.Jobs], watches: [{ resource: builtins.Secrets, map: () => null }] }, () => undefined);
    const watched = [...registry.selectorUsage().watched].map((s) => s.plural);
    expect(watched).toEqual(['backups', 'jobs', 'secrets']);
    expect(registry.hasReconcileHandlers()).toBe(true);
  });

  it('R-RECONCILE-210: malformed options are refused at registration', () => {
    const registry = new OperatorRegistry();
    const fn = (): undefined => undefined;
    const bad =
      (options: object): (() => void) =>
      () =>
        on.reconcile(Backups, { registry, id: 'x', ...options } as never, fn);
    expect(bad({ retries: 3 })).toThrow(/Unknown options of on.reconcile\(\): retries/);
    expect(bad({ owns: ['jobs'] })).toThrow(/'owns' must be a resource descriptor/);
    expect(bad({ owns: builtins.Jobs })).toThrow(/'owns' must be a list/);
    expect(bad({ watches: [{ resource: 'secrets', map: fn }] })).toThrow(/must be a resource descriptor/);
    expect(bad({ watches: [{ resource: builtins.Secrets, map: 'name' }] })).toThrow(/map of the entry 0 of 'watches' must be a function/);
    expect(bad({ finalize: fn, finalizer: 'cleanup' })).toThrow(/domain-qualified/);
    expect(bad({ finalizer: 'example.com/cleanup' })).toThrow(/needs the option 'finalize'/);
    expect(bad({ backoff: { base: -1 } })).toThrow(/'base' must be a non-negative number/);
    expect(bad({ backoff: { base: 0 } })).toThrow(/'base' must be more than 0/);
    expect(bad({ backoff: { base: 2, max: 1 } })).toThrow(/must not be less than base/);
    expect(() => on.reconcile(Backups, { registry }, () => undefined)).toThrow(/anonymous/);
  });

  it('R-RECONCILE-207: a finalizer only with finalize; two finalizing handlers on one resource need distinct finalizers', () => {
    const registry = new OperatorRegistry();
    on.reconcile(Backups, { registry, id: 'a' }, () => undefined);
    on.reconcile(Backups, { registry, id: 'b', finalize: () => undefined }, () => undefined);
    const [a, b] = registry.handlers as ReconcileHandler[];
    expect(a?.finalizer).toBeNull();
    expect(b?.finalizer).toBe('kopf-gen.dev/reconcile');
    expect(() => on.reconcile(Backups, { registry, id: 'c', finalize: () => undefined }, () => undefined)).toThrow(
      /both finalize with 'kopf-gen.dev\/reconcile'/,
    );
    on.reconcile(Backups, { registry, id: 'd', finalize: () => undefined, finalizer: 'example.com/d' }, () => undefined);
    expect((registry.handlers as ReconcileHandler[]).map((h) => h.finalizer)).toEqual([null, 'kopf-gen.dev/reconcile', 'example.com/d']);
  });
});
