import { describe, expect, expectTypeOf, it } from 'vitest';

import * as patches from '../../../../runtime/cogs/structs/patches.js';

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: { [key: string]: string } };
  spec: { x?: number; nested?: { deep?: { value?: string } }; items?: string[] };
  status?: { replicas?: number; conditions?: { type: string }[] };
}

const F = 'kopf.zalando.org/KopfFinalizerMarker';

describe('the merge-patch accumulator', () => {
  it('R-PATCH-1 writing through accessors creates the intermediate maps', () => {
    const patch = new patches.Patch<Widget>();
    patch.status.replicas = 3;
    patch.spec.nested.deep.value = 'v';
    patch.metadata.labels['app'] = 'demo';
    patch.meta.annotations['note'] = 'x';
    expect(patch.toMergePatch()).toEqual({
      status: { replicas: 3 },
      spec: { nested: { deep: { value: 'v' } } },
      metadata: { labels: { app: 'demo' }, annotations: { note: 'x' } },
    });
  });

  it('R-PATCH-1 reading without writing creates nothing; the patch stays empty', () => {
    const patch = new patches.Patch<Widget>();
    void patch.status.conditions;
    void patch.spec.nested.deep;
    void patch.metadata.labels;
    expect(patch.isEmpty()).toBe(true);
    expect(patch.toMergePatch()).toEqual({});
  });

  it('R-PATCH-1 nulls are kept in the merge-patch (they delete fields)', () => {
    const patch = new patches.Patch<Widget>();
    patch.spec.x = null;
    patch.metadata.labels['gone'] = null;
    patch.status = null;
    expect(patch.toMergePatch()).toEqual({ spec: { x: null }, metadata: { labels: { gone: null } }, status: null });
    expect(JSON.stringify(patch)).toBe('{"spec":{"x":null},"metadata":{"labels":{"gone":null}},"status":null}');
  });

  it('R-PATCH-1 other top-level keys of a body are writable too', () => {
    const patch = new patches.Patch();
    patch['data'] = { key: 'value' };
    expect(patch.toMergePatch()).toEqual({ data: { key: 'value' } });
  });

  it('R-PATCH-1 nested views support in, keys, delete and JSON', () => {
    const patch = new patches.Patch();
    patch.status['a'] = { b: 1, c: 2 };
    expect('a' in patch.status).toBe(true);
    expect('z' in patch.status).toBe(false);
    expect(Object.keys(patch.status)).toEqual(['a']);
    expect(JSON.stringify(patch.status)).toBe('{"a":{"b":1,"c":2}}');
    delete (patch.status['a'] as Record<string, unknown>)['b'];
    expect(patch.toMergePatch()).toEqual({ status: { a: { c: 2 } } });
    delete (patch.status['a'] as Record<string, unknown>)['c'];
    expect(patch.toMergePatch()).toEqual({});
  });

  it('R-PATCH-1 a patch is empty only with no keys and no functions', () => {
    const patch = new patches.Patch();
    expect(patch.isEmpty()).toBe(true);
    patch.fns.push(() => undefined);
    expect(patch.isEmpty()).toBe(false);
    patch.clear({ keepFns: true });
    expect(patch.isEmpty()).toBe(false);
    patch.clear();
    patch.setAt('metadata.annotations.x', null);
    expect(patch.isEmpty()).toBe(false);
    patch.removeAt('metadata.annotations.x');
    expect(patch.isEmpty()).toBe(true);
  });

  it('path helpers read, test and remove pending fields', () => {
    const patch = new patches.Patch({ metadata: { annotations: { a: '1', b: null } } });
    expect(patch.getAt('metadata.annotations.a')).toBe('1');
    expect(patch.getAt('metadata.annotations.zzz')).toBeUndefined();
    expect(patch.hasAt(['metadata', 'annotations', 'b'])).toBe(true);
    patch.removeAt('metadata.annotations.a');
    expect(patch.toMergePatch()).toEqual({ metadata: { annotations: { b: null } } });
  });

  it('toMergePatch returns a copy that does not alias the patch', () => {
    const patch = new patches.Patch();
    patch.spec['list'] = [1];
    const copy = patch.toMergePatch();
    (copy['spec'] as { list: number[] }).list.push(2);
    expect(patch.getAt('spec.list')).toEqual([1]);
  });

  it('assigning one view into another copies its content', () => {
    const patch = new patches.Patch();
    patch.spec['a'] = { b: 1 };
    patch.status['copy'] = patch.spec['a'];
    expect(patch.toMergePatch()).toEqual({ spec: { a: { b: 1 } }, status: { copy: { b: 1 } } });
  });
});

describe('splitting for the object and its status', () => {
  it('R-PATCH-2 with a status subresource, status goes to its own request', () => {
    const patch = new patches.Patch({ metadata: { annotations: { a: 'b' } }, status: { x: 1 } });
    expect(patch.split({ statusSubresource: true })).toEqual({
      main: { metadata: { annotations: { a: 'b' } } },
      status: { status: { x: 1 } },
    });
  });

  it('R-PATCH-2 without a status subresource everything goes to the object', () => {
    const patch = new patches.Patch({ spec: { a: 1 }, status: { x: 1 } });
    expect(patch.split({ statusSubresource: false })).toEqual({ main: { spec: { a: 1 }, status: { x: 1 } }, status: {} });
  });

  it('R-PATCH-2 a status-only patch leaves the object part empty', () => {
    const patch = new patches.Patch({ status: { x: 1 } });
    expect(patch.split({ statusSubresource: true })).toEqual({ main: {}, status: { status: { x: 1 } } });
  });
});

describe('JSON-Patch from transformation functions', () => {
  const body = (finalizers?: string[]): Record<string, unknown> => ({
    metadata: { name: 'n', resourceVersion: '7', ...(finalizers ? { finalizers } : {}) },
    spec: { a: 1, list: [1, 2] },
  });
  const append =
    (name: string) =>
    (b: { metadata?: { finalizers?: string[] } }): void => {
      b.metadata ??= {};
      b.metadata.finalizers = [...(b.metadata.finalizers ?? []), name];
    };
  const drop =
    (name: string) =>
    (b: { metadata?: { finalizers?: string[] } }): void => {
      if (b.metadata?.finalizers) b.metadata.finalizers = b.metadata.finalizers.filter((f) => f !== name);
    };

  it('R-FINAL-3 adding the finalizer when absent adds the whole list', () => {
    const patch = new patches.Patch();
    patch.fns.push(append(F));
    expect(patch.toJsonPatch(body())).toEqual([{ op: 'add', path: '/metadata/finalizers', value: [F] }]);
  });

  it('R-FINAL-3 appending to existing finalizers adds at the next index', () => {
    const patch = new patches.Patch();
    patch.fns.push(append(F));
    expect(patch.toJsonPatch(body(['other', 'another']))).toEqual([{ op: 'add', path: '/metadata/finalizers/2', value: F }]);
  });

  it('R-FINAL-5 removing the only finalizer removes the field', () => {
    const patch = new patches.Patch();
    patch.fns.push(drop(F));
    expect(patch.toJsonPatch(body([F]))).toEqual([{ op: 'remove', path: '/metadata/finalizers' }]);
  });

  it('R-FINAL-5 removing one of several finalizers removes it by index, others untouched', () => {
    const patch = new patches.Patch();
    patch.fns.push(drop(F));
    expect(patch.toJsonPatch(body(['a', F, 'b']))).toEqual([{ op: 'remove', path: '/metadata/finalizers/1' }]);
  });

  it('R-PATCH-1 functions that change nothing give no operations (idempotence)', () => {
    const patch = new patches.Patch();
    patch.fns.push(append(F));
    patch.fns.length = 0;
    patch.fns.push(drop('not-there'));
    expect(patch.toJsonPatch(body(['x']))).toEqual([]);
  });

  it('R-PATCH-2 the merge-patch is applied before the functions; maps per key, arrays whole', () => {
    const patch = new patches.Patch({ spec: { a: null, b: 'new', list: [3] }, metadata: { labels: { 'x/y~z': 'v' } } });
    patch.fns.push((b) => {
      (b['spec'] as Record<string, unknown>)['c'] = true;
    });
    expect(patch.toJsonPatch(body())).toEqual([
      { op: 'add', path: '/metadata/labels', value: { 'x/y~z': 'v' } },
      { op: 'remove', path: '/spec/a' },
      { op: 'replace', path: '/spec/list', value: [3] },
      { op: 'add', path: '/spec/b', value: 'new' },
      { op: 'add', path: '/spec/c', value: true },
    ]);
    expect(patch.toJsonPatch(body(), { merge: false })).toEqual([{ op: 'add', path: '/spec/c', value: true }]);
  });

  it('JSON pointers escape ~ and / in keys', () => {
    const patch = new patches.Patch({ metadata: { annotations: { 'a/b~c': 'v' } } });
    const fresh = { metadata: { annotations: { other: 'x' } } };
    expect(patch.toJsonPatch(fresh)).toEqual([{ op: 'add', path: '/metadata/annotations/a~1b~0c', value: 'v' }]);
  });

  it('toJsonPatch does not mutate the fresh body', () => {
    const fresh = body(['x']);
    const before = JSON.stringify(fresh);
    const patch = new patches.Patch({ spec: { a: 9 } });
    patch.fns.push(append(F));
    patch.toJsonPatch(fresh);
    expect(JSON.stringify(fresh)).toBe(before);
  });
});

describe('PatchOf types', () => {
  it('R-PATCH-1 typed writes compile, wrong types do not', () => {
    const patch = new patches.Patch<Widget>();
    patch.status.replicas = 3;
    patch.status.replicas = null;
    patch.spec.x = null;
    patch.spec.items = ['a'];
    patch.spec.nested.deep.value = 'v';
    patch.metadata.labels['x'] = null;
    patch.status = { replicas: 1 };
    // @ts-expect-error -- a string is not a number
    patch.status.replicas = 'x';
    // @ts-expect-error -- unknown fields of a typed section are rejected
    patch.spec.unknownField = 1;
    // @ts-expect-error -- arrays keep their element type
    patch.spec.items = [1];
    expect(patch.toMergePatch()['spec']).toEqual({ x: null, items: [1], nested: { deep: { value: 'v' } }, unknownField: 1 });
  });

  it('R-PATCH-1 PatchOf makes scalars nullable and nested objects always present', () => {
    type P = patches.PatchOf<{ status?: { replicas?: number; sub?: { a?: string } }; list?: number[] }>;
    expectTypeOf<P['status']['replicas']>().toEqualTypeOf<number | null>();
    expectTypeOf<P['status']['sub']>().toEqualTypeOf<{ a: string | null }>();
    expectTypeOf<P['list']>().toEqualTypeOf<number[] | null>();
    expectTypeOf<patches.Patch<Widget>['status']>().toEqualTypeOf<patches.PatchOf<NonNullable<Widget['status']>>>();
  });

  it('R-PATCH-1 untyped bodies accept anything one level down', () => {
    const patch = new patches.Patch();
    patch.spec['anything'] = { nested: true };
    patch.status['gone'] = null;
    expectTypeOf(patch.spec).toEqualTypeOf<{ [key: string]: unknown }>();
    expect(patch.toMergePatch()).toEqual({ spec: { anything: { nested: true } }, status: { gone: null } });
  });
});

describe('a key named __proto__ in patches (R-ESSENCE-6)', () => {
  it('R-ESSENCE-6 is written as an own key, by path or as a property of a section', () => {
    const patch = new patches.Patch();
    patch.setAt(['spec', '__proto__', 'polluted'], 'yes');
    Reflect.set(patch.status as object, '__proto__', { top: true });
    Reflect.set(patch, '__proto__', { root: true });
    expect(JSON.stringify(patch.toMergePatch())).toBe(
      '{"spec":{"__proto__":{"polluted":"yes"}},"status":{"__proto__":{"top":true}},"__proto__":{"root":true}}',
    );
    expect(patch).toBeInstanceOf(patches.PatchBase);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
