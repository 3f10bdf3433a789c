/**
 * The hierarchy helpers on plain objects (R-HIER-1..6): defaults, order, `forced`/`strict`,
 * `nested` only where it exists, one object or an array, the owner defaulting to the object of
 * the running handler, and the owner references Kubernetes would not honour refused at the call.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';

import * as execution from '../../../runtime/core/actions/execution.js';
import * as subhandling from '../../../runtime/core/reactor/subhandling.js';
import {
  adjustNamespace,
  adopt,
  appendOwnerReference,
  buildObjectReference,
  buildOwnerReference,
  harmonizeNaming,
  HierarchyError,
  label,
  removeOwnerReference,
} from '../../../runtime/index.js';
import type { ConfigMap, Deployment, KubernetesObject, OwnerLike } from '../../../runtime/index.js';
import { handler, makeWorld, runCycle } from '../core/actions/helpers.js';

const OWNER = {
  apiVersion: 'kopf.dev/v1',
  kind: 'KopfExample',
  metadata: { name: 'parent', namespace: 'ns1', uid: 'uid-p', labels: { app: 'demo', tier: 'web' } },
} as const satisfies OwnerLike;

const CLUSTER_OWNER = { apiVersion: 'example.com/v1', kind: 'Tenant', metadata: { name: 'tenant', uid: 'uid-t' } } satisfies OwnerLike;

function child(extra: Partial<KubernetesObject> = {}): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' }, ...extra };
}

function refused(fn: () => unknown): HierarchyError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(HierarchyError);
    return error as HierarchyError;
  }
  throw new Error('Expected a HierarchyError, nothing was thrown.');
}

/** Runs `fn` inside a change handler of `world.body` (the reference object `kopf-example-1` in `default`). */
async function inHandler(fn: () => void): Promise<void> {
  const world = makeWorld();
  const failures: unknown[] = [];
  await runCycle(world, [
    handler('h', () => {
      try {
        fn();
      } catch (error) {
        failures.push(error);
      }
    }),
  ]);
  if (failures.length > 0) throw failures[0];
}

describe('R-HIER-6 references', () => {
  it('R-HIER-6 buildObjectReference: apiVersion, kind, name, uid, namespace without empty fields', () => {
    expect(buildObjectReference(OWNER)).toEqual({ apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'parent', uid: 'uid-p', namespace: 'ns1' });
    expect(buildObjectReference(CLUSTER_OWNER)).toEqual({ apiVersion: 'example.com/v1', kind: 'Tenant', name: 'tenant', uid: 'uid-t' });
    expect(buildObjectReference({ kind: 'Node', metadata: { name: 'n', namespace: '' } })).toEqual({ kind: 'Node', name: 'n' });
  });

  it('R-HIER-6 buildOwnerReference: controller and blockOwnerDeletion default true, null fields left out', () => {
    expect(buildOwnerReference(OWNER)).toEqual({
      controller: true,
      blockOwnerDeletion: true,
      apiVersion: 'kopf.dev/v1',
      kind: 'KopfExample',
      name: 'parent',
      uid: 'uid-p',
    });
    expect(JSON.stringify(buildOwnerReference(OWNER))).toBe(
      '{"controller":true,"blockOwnerDeletion":true,"apiVersion":"kopf.dev/v1","kind":"KopfExample","name":"parent","uid":"uid-p"}',
    );
    expect(buildOwnerReference(OWNER, { controller: false, blockOwnerDeletion: null })).toEqual({
      controller: false,
      apiVersion: 'kopf.dev/v1',
      kind: 'KopfExample',
      name: 'parent',
      uid: 'uid-p',
    });
  });

  it('R-HIER-6 an owner without apiVersion, kind, name or uid is refused (the API server would reject the reference)', () => {
    const error = refused(() => buildOwnerReference({ kind: 'KopfExample', metadata: { name: 'parent' } }));
    expect(error.code).toBe('INCOMPLETE_OWNER');
    expect(error.message).toContain('has no apiVersion, uid');
  });
});

describe('R-HIER-1 owner references', () => {
  it('R-HIER-1 appends the owner reference once per uid, to one object or to each of an array; returns the same objects', () => {
    const one = child();
    expect(appendOwnerReference(one, OWNER)).toBe(one);
    appendOwnerReference(one, OWNER);
    expect(one.metadata!.ownerReferences).toEqual([buildOwnerReference(OWNER)]);

    const many = [child(), child({ metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'uid-x' }] } })];
    expect(appendOwnerReference(many, OWNER, { controller: false })).toBe(many);
    expect(many[0]!.metadata!.ownerReferences).toEqual([{ ...buildOwnerReference(OWNER), controller: false }]);
    expect(many[1]!.metadata!.ownerReferences!.map((ref) => ref.uid)).toEqual(['uid-x', 'uid-p']);
  });

  it("R-HIER-1 removes the references with the owner's uid only", () => {
    const obj = child();
    appendOwnerReference(obj, CLUSTER_OWNER, { controller: false });
    appendOwnerReference(obj, OWNER);
    expect(removeOwnerReference([obj], OWNER)).toEqual([obj]);
    expect(obj.metadata!.ownerReferences!.map((ref) => ref.uid)).toEqual(['uid-t']);
    removeOwnerReference(obj, OWNER);
    expect(obj.metadata!.ownerReferences!.map((ref) => ref.uid)).toEqual(['uid-t']);
  });

  it('R-HIER-1 the owner defaults to the object of the running handler; outside of a handler it must be given', async () => {
    const obj = child();
    await inHandler(() => {
      appendOwnerReference(obj);
    });
    expect(obj.metadata!.ownerReferences).toEqual([
      {
        controller: true,
        blockOwnerDeletion: true,
        apiVersion: 'kopf.dev/v1',
        kind: 'KopfExample',
        name: 'kopf-example-1',
        uid: 'uid-1',
      },
    ]);
    const error = refused(() => appendOwnerReference(child()));
    expect(error.code).toBe('NO_OWNER');
    expect(error.message).toBe('appendOwnerReference() was called outside of a handler: pass the owner explicitly.');
  });

  it('R-HIER-1 a handler of no object (an activity) has no default owner', () => {
    const context: execution.HandlerContext = {
      handler: { id: 'startup_fn', fn: () => undefined },
      scope: { settings: makeWorld().settings, clock: makeWorld().clock, logger: makeWorld().logger, kwargs: () => ({}) },
      subhandlers: [],
      subrefs: [],
      subexecuted: false,
    };
    const error = execution.runInHandler(context, () => refused(() => adopt(child())));
    expect(error.code).toBe('NO_OWNER');
    expect(error.message).toContain("handler 'startup_fn', which runs for no object");
  });

  it('R-HIER-1 a namespaced owner of a child in another namespace is refused before anything changes', () => {
    const objs = [child({ metadata: { namespace: 'ns1' } }), child({ metadata: { namespace: 'ns2' } })];
    const error = refused(() => appendOwnerReference(objs, OWNER));
    expect(error.code).toBe('CROSS_NAMESPACE_OWNER');
    expect(error.message).toContain("KopfExample ns1/parent cannot own ConfigMap ns2/<unnamed> in namespace 'ns2'");
    expect(objs[0]!.metadata!.ownerReferences).toBeUndefined();
  });

  it('R-HIER-1 a namespaced owner of a cluster-scoped child is refused; a cluster-scoped owner may own namespaced children', () => {
    const error = refused(() => appendOwnerReference({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'child-ns' } }, OWNER));
    expect(error.code).toBe('NAMESPACED_OWNER_OF_CLUSTER_OBJECT');
    const namespaced = child({ metadata: { namespace: 'anywhere' } });
    appendOwnerReference(namespaced, CLUSTER_OWNER);
    expect(namespaced.metadata!.ownerReferences!.map((ref) => ref.uid)).toEqual(['uid-t']);
  });

  it('R-HIER-1 a second controller reference is refused (the API server allows one); a non-controller one is fine', () => {
    const obj = child({ metadata: { namespace: 'ns1' } });
    appendOwnerReference(obj, CLUSTER_OWNER);
    const error = refused(() => appendOwnerReference(obj, OWNER));
    expect(error.code).toBe('SECOND_CONTROLLER');
    expect(error.message).toContain('already controlled by Tenant/tenant');
    appendOwnerReference(obj, OWNER, { controller: false });
    expect(obj.metadata!.ownerReferences!.map((ref) => [ref.uid, ref.controller])).toEqual([
      ['uid-t', true],
      ['uid-p', false],
    ]);
  });
});

describe('R-HIER-2 labels', () => {
  it('R-HIER-2 sets labels without overwriting existing keys unless forced', () => {
    const obj = child({ metadata: { labels: { app: 'mine' } } });
    label(obj, { app: 'demo', tier: 'web' });
    expect(obj.metadata!.labels).toEqual({ app: 'mine', tier: 'web' });
    label(obj, { app: 'demo' }, { forced: true });
    expect(obj.metadata!.labels).toEqual({ app: 'demo', tier: 'web' });
  });

  it('R-HIER-2 nested paths are labelled only if they exist; a path that is not an object is refused', () => {
    const deployment: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      spec: { selector: {}, template: { metadata: { labels: { own: 'x' } }, spec: { containers: [] } } },
    };
    const bare = child();
    label([deployment, bare], { app: 'demo' }, { nested: ['spec.template', 'spec.jobTemplate.spec.template'] });
    expect(deployment.metadata!.labels).toEqual({ app: 'demo' });
    expect(deployment.spec!.template.metadata!.labels).toEqual({ own: 'x', app: 'demo' });
    expect(bare).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' }, metadata: { labels: { app: 'demo' } } });
    expect(refused(() => label(bare, { app: 'demo' }, { nested: 'data.a' })).code).toBe('NOT_AN_OBJECT');
  });

  it("R-HIER-2 labels default to the labels of the handler's object", async () => {
    const obj = child();
    await inHandler(() => {
      label(obj);
    });
    expect(obj.metadata!.labels).toEqual({ somelabel: 'somevalue' });
  });
});

describe('R-HIER-3 naming', () => {
  it('R-HIER-3 unnamed objects get generateName "<name>-", or the exact name with strict; named ones are kept unless forced', () => {
    const unnamed = child();
    const named = child({ metadata: { name: 'own' } });
    const prefixed = child({ metadata: { generateName: 'own-' } });
    harmonizeNaming([unnamed, named, prefixed], 'parent');
    expect(unnamed.metadata).toEqual({ generateName: 'parent-' });
    expect(named.metadata).toEqual({ name: 'own' });
    expect(prefixed.metadata).toEqual({ generateName: 'own-' });

    harmonizeNaming([named, prefixed], 'parent', { forced: true, strict: true });
    expect(named.metadata).toEqual({ name: 'parent' });
    expect(prefixed.metadata).toEqual({ name: 'parent' });
    harmonizeNaming(named, 'parent', { forced: true });
    expect(named.metadata).toEqual({ generateName: 'parent-' });
  });

  it("R-HIER-3 the name defaults to the handler's object's; none available → an error", async () => {
    const obj = child();
    await inHandler(() => {
      harmonizeNaming(obj, undefined, { strict: true });
    });
    expect(obj.metadata).toEqual({ name: 'kopf-example-1' });
    expect(refused(() => harmonizeNaming(child())).code).toBe('NO_OWNER');
    expect(refused(() => adopt(child(), { ...CLUSTER_OWNER, metadata: { uid: 'u' }, apiVersion: 'v1' })).code).toBe('INCOMPLETE_OWNER');
  });
});

describe('R-HIER-4 namespace', () => {
  it("R-HIER-4 sets the namespace unless already set (or forced); defaults to the handler's object's", async () => {
    const bare = child();
    const placed = child({ metadata: { namespace: 'elsewhere' } });
    adjustNamespace([bare, placed], 'ns1');
    expect([bare.metadata!.namespace, placed.metadata!.namespace]).toEqual(['ns1', 'elsewhere']);
    adjustNamespace(placed, 'ns1', { forced: true });
    expect(placed.metadata!.namespace).toBe('ns1');
    const defaulted = child();
    await inHandler(() => {
      adjustNamespace(defaulted);
    });
    expect(defaulted.metadata!.namespace).toBe('default');
    adjustNamespace(placed, null, { forced: true });
    expect(placed.metadata).toEqual({});
  });
});

describe('R-HIER-5 adopt', () => {
  it('R-HIER-5 owner reference, naming, namespace, labels from the owner, in this order', () => {
    const obj = child();
    expect(adopt(obj, OWNER)).toBe(obj);
    expect(obj.metadata).toEqual({
      ownerReferences: [buildOwnerReference(OWNER)],
      generateName: 'parent-',
      namespace: 'ns1',
      labels: { app: 'demo', tier: 'web' },
    });
    expect(Object.keys(obj.metadata!)).toEqual(['ownerReferences', 'generateName', 'namespace', 'labels']);
  });

  it('R-HIER-5 forced, strict and nested are passed on; several objects at once', () => {
    const objs: [ConfigMap, Deployment] = [
      child({ metadata: { name: 'own', namespace: 'ns1', labels: { app: 'mine' } } }),
      { apiVersion: 'apps/v1', kind: 'Deployment', spec: { selector: {}, template: { spec: { containers: [] } } } },
    ];
    adopt(objs, OWNER, { forced: true, strict: true, nested: 'spec.template' });
    expect(objs[0]!.metadata).toMatchObject({ name: 'parent', namespace: 'ns1', labels: { app: 'demo', tier: 'web' } });
    expect(objs[1]!.metadata).toMatchObject({ name: 'parent', namespace: 'ns1', labels: { app: 'demo', tier: 'web' } });
    expect(objs[1].spec!.template).toEqual({ metadata: { labels: { app: 'demo', tier: 'web' } }, spec: { containers: [] } });
  });

  it("R-HIER-5 a child kept in another namespace is refused; forced moves it into the owner's", () => {
    const obj = child({ metadata: { namespace: 'ns2' } });
    const error = refused(() => adopt(obj, OWNER));
    expect(error.code).toBe('CROSS_NAMESPACE_OWNER');
    expect(obj.metadata).toEqual({ namespace: 'ns2' });
    adopt(obj, OWNER, { forced: true });
    expect(obj.metadata!.namespace).toBe('ns1');
  });

  it('R-HIER-5 a cluster-scoped owner leaves the namespace alone', () => {
    const obj = child({ metadata: { namespace: 'anywhere' } });
    adopt(obj, CLUSTER_OWNER);
    expect(obj.metadata).toMatchObject({ namespace: 'anywhere', generateName: 'tenant-' });
    const bare = child();
    adopt(bare, CLUSTER_OWNER);
    expect(bare.metadata!.namespace).toBeUndefined();
  });

  it("R-HIER-5 adopt() defaults to the handler's object, also from a sub-handler", async () => {
    const obj = child();
    const world = makeWorld();
    await runCycle(world, [
      handler('parent', () => {
        subhandling.subhandler({ id: 'child' }, () => {
          adopt(obj);
        });
      }),
    ]);
    expect(obj.metadata).toEqual({
      ownerReferences: [{ controller: true, blockOwnerDeletion: true, apiVersion: 'kopf.dev/v1', kind: 'KopfExample', name: 'kopf-example-1', uid: 'uid-1' }],
      generateName: 'kopf-example-1-',
      namespace: 'default',
      labels: { somelabel: 'somevalue' },
    });
  });

  it('R-HIER-5 the helpers keep the types of what they get', () => {
    const configMap = adopt(child(), OWNER);
    expectTypeOf(configMap).toEqualTypeOf<ConfigMap>();
    const both = label([child(), { apiVersion: 'apps/v1', kind: 'Deployment' } as Deployment], { a: 'b' });
    expectTypeOf(both).toEqualTypeOf<(ConfigMap | Deployment)[]>();
    // @ts-expect-error: not a Kubernetes object
    expect(refused(() => adopt('a string', OWNER)).code).toBe('NOT_AN_OBJECT');
    // @ts-expect-error: labels are strings
    label(child(), { replicas: 3 });
  });
});
