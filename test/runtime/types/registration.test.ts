// Type-level tests of the registration API: handler arguments are inferred from the descriptor,
// wrong field paths and wrong patch writes do not compile. `tsc` checks this file in `npm test`;
// vitest runs it too, so every registration here is real (into a private registry).
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as runtime from '../../../runtime/index.js';
import { builtins, on, OperatorRegistry, PRESENT, resource } from '../../../runtime/index.js';
import type { Diff, DaemonStopped, Patch, Resource, WebhookOperation } from '../../../runtime/index.js';

interface WidgetSpec {
  replicas: number;
  owner: string;
  image?: string;
  tags?: string[];
  nested?: { depth: { level: number } };
}
interface WidgetStatus {
  replicas?: number;
  phase?: 'Pending' | 'Ready';
}
interface Widget {
  apiVersion?: 'example.com/v1';
  kind?: 'Widget';
  metadata?: runtime.ObjectMeta;
  spec: WidgetSpec;
  status?: WidgetStatus;
}

const Widgets = resource<Widget>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });

// Augmentation is program-wide: an optional, distinctive name keeps it harmless for other files.
declare module '../../../runtime/index.js' {
  interface OperatorMemo {
    typeTestCounter?: number;
  }
}

describe('typed registration', () => {
  const registry = new OperatorRegistry();

  it('infers spec, status, name and patch of on.create from a descriptor', () => {
    const fn = on.create(Widgets, { registry, id: 'created' }, async ({ spec, status, name, namespace, patch, logger, memo, retry, started }) => {
      expectTypeOf(spec).toEqualTypeOf<WidgetSpec>();
      expectTypeOf(status).toEqualTypeOf<WidgetStatus | undefined>();
      expectTypeOf(name).toEqualTypeOf<string>();
      expectTypeOf(namespace).toEqualTypeOf<string | null>();
      expectTypeOf(patch).toEqualTypeOf<Patch<Widget>>();
      expectTypeOf(memo.typeTestCounter).toEqualTypeOf<number | undefined>();
      expectTypeOf(memo['free-form']).toEqualTypeOf<unknown>();
      expectTypeOf(retry).toEqualTypeOf<number>();
      expectTypeOf(started).toEqualTypeOf<Date>();
      expectTypeOf(logger.info).parameter(0).toEqualTypeOf<string>();
      patch.status.replicas = spec.replicas;
      patch.status.phase = 'Ready';
      patch.spec.image = null;
      // @ts-expect-error: a string is not a replica count
      patch.status.replicas = 'three';
      // @ts-expect-error: not a phase of the status type
      patch.status.phase = 'Unknown';
      // @ts-expect-error: the status type has no such field
      patch.status.replicaz = 1;
      return { message: `created ${name}` };
    });
    expect(registry.handlers.at(-1)).toMatchObject({ kind: 'change', reason: 'create', id: 'created', fn });
  });

  it('types old/new of on.update as essences and the diff as Diff', () => {
    on.update(Widgets, { registry, id: 'updated' }, ({ old, new: now, oldValue, newValue, diff, reason }) => {
      expectTypeOf(old).toEqualTypeOf(now);
      expectTypeOf(oldValue).toEqualTypeOf(newValue);
      expectTypeOf(old).toEqualTypeOf(oldValue);
      expectTypeOf(now?.spec).toEqualTypeOf<WidgetSpec | undefined>();
      expectTypeOf(now?.metadata?.labels).toEqualTypeOf<{ [key: string]: string } | undefined>();
      // @ts-expect-error: status is not part of the essence
      void now?.status;
      expectTypeOf(diff).toEqualTypeOf<Diff>();
      expectTypeOf(reason).toEqualTypeOf<'create' | 'update' | 'delete' | 'resume'>();
    });
  });

  it('types old/new of on.field by the dotted path, and rejects unknown paths', () => {
    const fn = on.field(Widgets, 'spec.replicas', { registry, id: 'scaled' }, ({ old, new: now, spec }) => {
      expectTypeOf(old).toEqualTypeOf<number | undefined>();
      expectTypeOf(now).toEqualTypeOf<number | undefined>();
      expectTypeOf(spec).toEqualTypeOf<WidgetSpec>();
    });
    expect(registry.handlers.at(-1)).toMatchObject({ id: 'scaled/spec.replicas', field: ['spec', 'replicas'], fn });

    on.field(Widgets, 'spec.nested.depth', { registry, id: 'deep' }, ({ old }) => {
      expectTypeOf(old).toEqualTypeOf<{ level: number } | undefined>();
    });
    on.field(Widgets, 'metadata.labels.app', { registry, id: 'label' }, ({ new: now }) => {
      expectTypeOf(now).toEqualTypeOf<string | undefined>();
    });
    on.field(Widgets, { registry, id: 'tagged', field: 'spec.tags', new: PRESENT }, ({ new: now }) => {
      expectTypeOf(now).toEqualTypeOf<string[] | undefined>();
    });
    // @ts-expect-error: the spec has no such field
    expect(() => on.field(Widgets, 'spec.replicaz', { registry }, () => undefined)).toThrow(TypeError);
    // @ts-expect-error: value filters are typed by the field
    on.field(Widgets, 'spec.replicas', { registry, id: 'v', value: 'three' }, () => undefined);
  });

  it('types the field of on.update from its options', () => {
    on.update(Widgets, { registry, id: 'owner', field: 'spec.owner', old: 'alice' }, ({ old, new: now }) => {
      expectTypeOf(old).toEqualTypeOf<string | undefined>();
      expectTypeOf(now).toEqualTypeOf<string | undefined>();
    });
    // @ts-expect-error: old/new filters are typed by the field
    on.update(Widgets, { registry, id: 'o2', field: 'spec.owner', old: 1 }, () => undefined);
  });

  it('types filter callbacks with the handler arguments', () => {
    on.create(
      Widgets,
      {
        registry,
        id: 'filtered',
        labels: { app: PRESENT, tier: (value, { spec }) => value === 'web' && spec.replicas > 0 },
        when: ({ spec, status }) => spec.owner !== '' && status?.phase !== 'Ready',
      },
      function filtered() {},
    );
    on.daemon(
      Widgets,
      {
        registry,
        id: 'fielded',
        field: 'spec.replicas',
        value: (value) => (value ?? 0) > 1,
      },
      async function fielded() {},
    );
  });

  it('types daemons, timers, indexers and on-event handlers', () => {
    on.daemon(Widgets, { registry, id: 'd', initialDelay: ({ spec }) => spec.replicas }, async ({ spec, stopped, signal, patch }) => {
      expectTypeOf(spec).toEqualTypeOf<WidgetSpec>();
      expectTypeOf(stopped).toEqualTypeOf<DaemonStopped>();
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
      expectTypeOf(stopped.isSet()).toEqualTypeOf<boolean>();
      patch.status.phase = 'Pending';
    });
    runtime.timer(Widgets, { registry, id: 't', interval: 10, sharp: true }, ({ runtime: seconds, resource: r }) => {
      expectTypeOf(seconds).toEqualTypeOf<number>();
      expectTypeOf(r).toEqualTypeOf<Resource>();
    });
    runtime.index(Widgets, { registry, id: 'byOwner' }, ({ name, spec }) => ({ [spec.owner]: name }));
    on.event(Widgets, { registry, id: 'e' }, ({ type, event, body }) => {
      expectTypeOf(type).toEqualTypeOf<null | 'ADDED' | 'MODIFIED' | 'DELETED'>();
      expectTypeOf(event.object).toEqualTypeOf<Widget>();
      expectTypeOf(body.spec).toEqualTypeOf<WidgetSpec>();
      // @ts-expect-error: the body is read-only; write through the patch
      body.spec = { replicas: 1, owner: 'x' };
    });
    // @ts-expect-error: on-event handlers take no retry options
    expect(() => on.event(Widgets, { registry, id: 'e2', retries: 3 }, () => undefined)).toThrow(/Unknown options of on.event\(\): retries/);
  });

  it('R-ADMISSION-1 types admission handlers with WebhookArgs (see admission.test.ts for the whole set)', () => {
    on.validate(Widgets, { registry, id: 'check', operations: ['CREATE', 'UPDATE'] }, ({ spec, old, new: now, operation, warnings, dryRun }) => {
      expectTypeOf(spec).toEqualTypeOf<WidgetSpec>();
      expectTypeOf(old).toEqualTypeOf<Readonly<Widget> | undefined>();
      expectTypeOf(now).toEqualTypeOf<Readonly<Widget> | undefined>();
      expectTypeOf(operation).toEqualTypeOf<WebhookOperation | null>();
      expectTypeOf(dryRun).toEqualTypeOf<boolean>();
      warnings.push('fine');
    });
    on.validate(Widgets, { registry, id: 'whole' }, ({ body, patch, subresource, userInfo, headers, diff }) => {
      expectTypeOf(body).toEqualTypeOf<Readonly<Widget>>();
      expectTypeOf(patch).toEqualTypeOf<Patch<Widget>>();
      expectTypeOf(subresource).toEqualTypeOf<string | null>();
      expectTypeOf(userInfo).toEqualTypeOf<runtime.UserInfo>();
      expectTypeOf(headers).toEqualTypeOf<Readonly<Record<string, string>>>();
      expectTypeOf(diff).toEqualTypeOf<Diff>();
      // @ts-expect-error: the body is read-only; changes go through the patch
      body.spec = {};
      throw new runtime.AdmissionError('no', 555);
    });
    expectTypeOf(new runtime.AdmissionError('no', 555).status).toEqualTypeOf<number>();
    expectTypeOf(new runtime.AdmissionError('no').code).toEqualTypeOf<'AdmissionError'>();
    on.mutate(Widgets, { registry, id: 'defaults' }, ({ patch }) => {
      patch.spec.image = 'nginx';
      // @ts-expect-error: the image is a string
      patch.spec.image = 42;
    });
    // @ts-expect-error: not an operation
    expect(() => on.validate(Widgets, { registry, id: 'x', operations: ['PATCH'] }, () => undefined)).toThrow(/non-empty list/);
  });

  it('gives untyped bodies to string, tuple and selector references', () => {
    on.create('kopfexamples', { registry, id: 's' }, ({ spec, body, patch, old }) => {
      expectTypeOf(spec).toEqualTypeOf<Record<string, unknown>>();
      expectTypeOf(body.spec).toEqualTypeOf<unknown>();
      expectTypeOf(old).toEqualTypeOf<Record<string, unknown> | undefined>();
      patch.status['anything'] = 1;
    });
    on.create(['kopf.dev', 'v1', 'kopfexamples'], { registry, id: 'tuple' }, ({ spec }) => {
      expectTypeOf(spec).toEqualTypeOf<Record<string, unknown>>();
    });
    on.field(['kopf.dev', 'kopfexamples'], 'spec.anything.at.all', { registry, id: 'f' }, ({ old }) => {
      expectTypeOf(old).toEqualTypeOf<unknown>();
    });
    on.event({ category: 'all' }, { registry, id: 'c', value: (v) => v !== undefined, field: 'spec.x' }, () => undefined);
    on.event(
      (r) => r.group === 'kopf.dev',
      { registry, id: 'p' },
      () => undefined,
    );
    expect(registry.handlers.filter((h) => ['s', 'tuple', 'f/spec.anything.at.all', 'c/spec.x', 'p'].includes(h.id))).toHaveLength(5);
  });

  it('types built-in resources with JSON-shaped models (string timestamps, quantities, int-or-strings)', () => {
    on.create(builtins.Pods, { registry, id: 'pod' }, ({ spec, status, meta, body, patch }) => {
      expectTypeOf(spec.containers[0]!.name).toEqualTypeOf<string>();
      expectTypeOf(spec.containers[0]!.resources?.limits).toEqualTypeOf<{ [name: string]: string } | undefined>();
      expectTypeOf(status?.startTime).toEqualTypeOf<string | undefined>();
      expectTypeOf(meta.creationTimestamp).toEqualTypeOf<string | undefined>();
      expectTypeOf(body.metadata).toEqualTypeOf<runtime.ObjectMeta | undefined>();
      expectTypeOf(body.kind).toEqualTypeOf<string | undefined>();
      patch.status.phase = 'Running';
      patch.metadata.labels = { app: 'web' };
      // @ts-expect-error a pod's phase is a string
      patch.status.phase = 1;
    });
    on.field(builtins.Deployments, 'spec.replicas', { registry, id: 'deploy' }, ({ new: now }) => {
      expectTypeOf(now).toEqualTypeOf<number | undefined>();
    });
    on.field(builtins.Deployments, 'spec.strategy.rollingUpdate.maxSurge', { registry, id: 'surge' }, ({ new: now }) => {
      expectTypeOf(now).toEqualTypeOf<number | string | undefined>();
    });
    on.event(builtins.ConfigMaps, { registry, id: 'cm' }, ({ body }) => {
      expectTypeOf(body.data).toEqualTypeOf<{ [key: string]: string } | undefined>();
    });
  });

  it('types activities and returns every function unchanged', () => {
    async function setup({ settings, memo, activity }: runtime.ActivityArgs): Promise<void> {
      expectTypeOf(activity).toEqualTypeOf<'startup' | 'cleanup' | 'authentication' | 'probe'>();
      settings.posting.enabled = false;
      memo.typeTestCounter = 0;
      // @ts-expect-error: the augmented entry is a number
      memo.typeTestCounter = 'zero';
    }
    expect(on.startup({ registry }, setup)).toBe(setup);
    const probe = ({ activity }: runtime.ActivityArgs): { activity: string } => ({ activity });
    expect(on.probe({ registry, id: 'health' }, probe)).toBe(probe);
    expectTypeOf(on.probe({ registry, id: 'health2' }, probe)).toEqualTypeOf(probe);
    expectTypeOf(on.startup({ registry }, setup)).toEqualTypeOf(setup);
    function both({ reason }: runtime.ChangingArgs<Widget>): void {
      void reason;
    }
    expect(on.create(Widgets, { registry }, on.resume(Widgets, { registry }, both))).toBe(both);
  });
});
