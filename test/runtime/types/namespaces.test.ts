// Type-level tests of `namespace` in handler arguments (R-TYPES-301): a descriptor that knows its
// scope (generated descriptors, `builtins.*`, `resource<…, true | false>`) makes it a `string` for
// namespaced kinds and `null` for cluster-scoped ones, in every kind of resource handler; references
// whose scope is unknown keep `string | null`. `tsc` checks this file in `npm test`; vitest runs it
// too (the registrations are real, into a private registry, and never invoked).
import { describe, expect, expectTypeOf, it } from 'vitest';
import { Bundles } from '../../../fixtures/generated/bundles.example.com.v1.js';
import type * as runtime from '../../../runtime/index.js';
import { builtins, on, OperatorRegistry, resource } from '../../../runtime/index.js';
import type { ChangingArgs, NamespaceOf, NamespaceOfRef, Scoped } from '../../../runtime/index.js';

interface Gizmo {
  apiVersion?: 'example.com/v1';
  kind?: 'Gizmo';
  metadata?: runtime.ObjectMeta;
  spec: { size: number };
}

const info = { group: 'example.com', version: 'v1', plural: 'gizmos', kind: 'Gizmo' } as const;
const NamespacedGizmos = resource<Gizmo, runtime.InputOf<Gizmo>, unknown, true>({ ...info, namespaced: true });
const ClusterGizmos = resource<Gizmo, runtime.InputOf<Gizmo>, unknown, false>({ ...info, namespaced: false });
const UnscopedGizmos = resource<Gizmo>({ ...info, namespaced: true });

describe('R-TYPES-301: namespace typed by the scope of the descriptor', () => {
  const registry = new OperatorRegistry();

  it('R-TYPES-301: NamespaceOf tells string, null, or string | null from the reference', () => {
    expectTypeOf<NamespaceOf<typeof builtins.Pods>>().toEqualTypeOf<string>();
    expectTypeOf<NamespaceOf<typeof builtins.Jobs>>().toEqualTypeOf<string>();
    expectTypeOf<NamespaceOf<typeof builtins.Nodes>>().toEqualTypeOf<null>();
    expectTypeOf<NamespaceOf<typeof builtins.ClusterRoles>>().toEqualTypeOf<null>();
    expectTypeOf<NamespaceOf<typeof Bundles>>().toEqualTypeOf<string>();
    expectTypeOf<NamespaceOf<typeof NamespacedGizmos>>().toEqualTypeOf<string>();
    expectTypeOf<NamespaceOf<typeof ClusterGizmos>>().toEqualTypeOf<null>();
    expectTypeOf<NamespaceOf<typeof UnscopedGizmos>>().toEqualTypeOf<string | null>();
    const inferred = resource({ ...info, namespaced: false });
    expectTypeOf<NamespaceOf<typeof inferred>>().toEqualTypeOf<null>();
    expectTypeOf<NamespaceOfRef<'pods'>>().toEqualTypeOf<string | null>();
    expectTypeOf<NamespaceOfRef<{ readonly kind: 'Pod' }>>().toEqualTypeOf<string | null>();
    expectTypeOf<NamespaceOfRef<readonly ['apps', 'v1', 'deployments']>>().toEqualTypeOf<string | null>();
  });

  it('R-TYPES-301: the descriptor carries a scope that matches its run-time value', () => {
    expect(builtins.Pods.namespaced).toBe(true);
    expect(builtins.Nodes.namespaced).toBe(false);
    expect(Bundles.namespaced).toBe(true);
    // @ts-expect-error: a descriptor typed namespaced cannot say otherwise at run time
    resource<Gizmo, runtime.InputOf<Gizmo>, unknown, true>({ ...info, namespaced: false });
  });

  it('R-TYPES-301: every change handler of a namespaced kind gets namespace: string', () => {
    on.create(builtins.Jobs, { registry, id: 'c' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string>());
    on.update(Bundles, { registry, id: 'u' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string>());
    on.delete(NamespacedGizmos, { registry, id: 'd', optional: true }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string>());
    on.resume(builtins.Pods, { registry }, async function resumed({ namespace }) {
      expectTypeOf(namespace).toEqualTypeOf<string>();
    });
    on.field(builtins.Pods, 'spec.nodeName', { registry, id: 'f' }, ({ namespace, subhandler }) => {
      expectTypeOf(namespace).toEqualTypeOf<string>();
      return subhandler;
    });
    expect(registry.handlers.length).toBeGreaterThan(0);
  });

  it('R-TYPES-301: events, daemons, timers, indices and admission handlers of a namespaced kind get namespace: string', () => {
    on.event(builtins.Pods, { registry, id: 'e' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string>());
    on.daemon(builtins.Pods, { registry, id: 'dm' }, async ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string>());
    on.timer(Bundles, { registry, id: 't', interval: 1 }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string>());
    const byNamespace = on.index(builtins.Pods, { registry, id: 'byNamespace' }, ({ namespace, name }) => ({ [namespace]: name }));
    expectTypeOf<runtime.IndexOf<typeof byNamespace>>().toEqualTypeOf<runtime.Index<string, string>>();
    on.validate(builtins.ConfigMaps, { registry, id: 'v' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string>());
    on.mutate(NamespacedGizmos, { registry, id: 'm' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string>());
  });

  it('R-TYPES-301: handlers of a cluster-scoped kind get namespace: null', () => {
    on.create(builtins.Nodes, { registry, id: 'nc' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<null>());
    on.field(ClusterGizmos, 'spec.size', { registry, id: 'nf' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<null>());
    on.daemon(builtins.Namespaces, { registry, id: 'nd' }, async ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<null>());
    on.validate(builtins.ClusterRoles, { registry, id: 'nv' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<null>());
  });

  it('R-TYPES-301: references of unknown scope keep namespace: string | null', () => {
    on.create('pods', { registry, id: 'sc' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string | null>());
    on.event({ kind: 'Pod' }, { registry, id: 'se' }, ({ namespace }) => expectTypeOf(namespace).toEqualTypeOf<string | null>());
    on.timer(UnscopedGizmos, { registry, id: 'st', interval: 1 }, (args) => {
      expectTypeOf(args).toEqualTypeOf<runtime.TimerArgs<Gizmo>>();
      expectTypeOf(args.namespace).toEqualTypeOf<string | null>();
    });
  });

  it('R-TYPES-301: a function written for the unscoped arguments is still accepted', () => {
    async function generic({ namespace, name }: ChangingArgs<Gizmo>): Promise<string> {
      return `${namespace ?? '-'}/${name}`;
    }
    on.create(NamespacedGizmos, { registry, id: 'g' }, generic);
    const scoped = (args: Scoped<ChangingArgs<Gizmo>, string>): string => args.namespace.toUpperCase();
    on.update(NamespacedGizmos, { registry, id: 'su' }, scoped);
    // @ts-expect-error: a function that needs a namespace cannot be registered for a cluster-scoped kind
    on.update(ClusterGizmos, { registry, id: 'sx' }, scoped);
  });
});

describe('R-TYPES-301: namespace of reconcile handlers typed by the scope', () => {
  const registry = new OperatorRegistry();

  it('R-TYPES-301: a reconcile handler and its finalize of a namespaced kind get namespace: string', () => {
    on.reconcile(builtins.Deployments, { registry, id: 'rd' }, ({ namespace }) => {
      expectTypeOf(namespace).toEqualTypeOf<string>();
    });
    on.reconcile(
      Bundles,
      {
        registry,
        id: 'rb',
        owns: [builtins.Jobs],
        finalize: ({ namespace }) => {
          expectTypeOf(namespace).toEqualTypeOf<string>();
        },
      },
      ({ namespace, owned: [jobs] }) => {
        expectTypeOf(namespace).toEqualTypeOf<string>();
        expectTypeOf(jobs).toEqualTypeOf<readonly runtime.Job[]>();
      },
    );
    on.reconcile(NamespacedGizmos, { registry, id: 'rg' }, (args) => {
      expectTypeOf(args).toEqualTypeOf<runtime.ReconcileArgsOf<typeof NamespacedGizmos>>();
      expectTypeOf(args.namespace.length).toEqualTypeOf<number>();
    });
    expect(registry.handlers.length).toBe(3);
  });

  it('R-TYPES-301: of a cluster-scoped kind, namespace: null; of an unknown scope, string | null', () => {
    on.reconcile(builtins.Namespaces, { registry, id: 'rn', owns: [builtins.ConfigMaps] }, ({ namespace }) => {
      expectTypeOf(namespace).toEqualTypeOf<null>();
    });
    on.reconcile(ClusterGizmos, { registry, id: 'rc', finalize: ({ namespace }) => void expectTypeOf(namespace).toEqualTypeOf<null>() }, ({ namespace }) => {
      expectTypeOf(namespace).toEqualTypeOf<null>();
    });
    on.reconcile('kopfexamples', { registry, id: 'rk' }, ({ namespace }) => {
      expectTypeOf(namespace).toEqualTypeOf<string | null>();
    });
    on.reconcile(UnscopedGizmos, { registry, id: 'ru' }, ({ namespace }) => {
      expectTypeOf(namespace).toEqualTypeOf<string | null>();
    });
  });

  it('R-TYPES-301: a reconcile function written for the unscoped arguments is still accepted; one needing a namespace is not, for a cluster-scoped kind', () => {
    function generic({ namespace, name }: runtime.ReconcileArgs<Gizmo>): void {
      void `${namespace ?? '-'}/${name}`;
    }
    on.reconcile(NamespacedGizmos, { registry, id: 'rgen' }, generic);
    on.reconcile(ClusterGizmos, { registry, id: 'rgen2', finalize: generic, finalizer: 'example.com/generic' }, generic);
    const scoped = (args: Scoped<runtime.ReconcileArgs<Gizmo>, string>): void => void args.namespace.toUpperCase();
    on.reconcile(NamespacedGizmos, { registry, id: 'rs' }, scoped);
    // @ts-expect-error: a function that needs a namespace cannot reconcile a cluster-scoped kind
    on.reconcile(ClusterGizmos, { registry, id: 'rx' }, scoped);
  });
});
