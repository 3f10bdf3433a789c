import { describe, expect, it } from 'vitest';

import * as dicts from '../../../../runtime/cogs/structs/dicts.js';

describe('parseField', () => {
  it.each([
    ['spec.items', ['spec', 'items']],
    ['spec', ['spec']],
    [
      ['metadata', 'annotations', 'a.b/c'],
      ['metadata', 'annotations', 'a.b/c'],
    ],
    ['', []],
    [undefined, []],
    [null, []],
  ] as const)('parses %j into %j', (field, expected) => {
    expect(dicts.parseField(field)).toEqual(expected);
  });

  it('returns a frozen path that does not alias the input array', () => {
    const input = ['spec', 'x'];
    const path = dicts.parseField(input);
    input.push('y');
    expect(path).toEqual(['spec', 'x']);
    expect(Object.isFrozen(path)).toBe(true);
  });
});

describe('resolve and has', () => {
  const body = { spec: { a: { b: 1 }, n: null, s: 'text', list: [1, 2] } };

  it.each([
    [['spec', 'a', 'b'], 1],
    ['spec.a', { b: 1 }],
    ['spec.n', null],
    ['spec.missing', 'fallback'],
    ['spec.s.deeper', 'fallback'],
    ['spec.list.0', 'fallback'],
    ['nothing.at.all', 'fallback'],
  ] as const)('resolves %j to %j', (path, expected) => {
    expect(dicts.resolve(body, path, 'fallback')).toEqual(expected);
  });

  it('resolves the root to the object itself and absent fields to undefined by default', () => {
    expect(dicts.resolve(body, [])).toBe(body);
    expect(dicts.resolve(body, 'spec.zzz')).toBeUndefined();
  });

  it('tells present (even null) fields from absent ones', () => {
    expect(dicts.has(body, 'spec.n')).toBe(true);
    expect(dicts.has(body, 'spec.a.b')).toBe(true);
    expect(dicts.has(body, 'spec.zzz')).toBe(false);
    expect(dicts.has(body, 'spec.s.x')).toBe(false);
  });
});

describe('ensure, remove, cherrypick', () => {
  it('ensure creates missing and non-object parents', () => {
    const obj: Record<string, unknown> = { a: 'scalar' };
    dicts.ensure(obj, 'a.b.c', 1);
    dicts.ensure(obj, ['x'], null);
    expect(obj).toEqual({ a: { b: { c: 1 } }, x: null });
  });

  it('remove deletes the field and the parents it left empty, but not others', () => {
    const obj: Record<string, unknown> = { a: { b: { c: 1 } }, k: { l: 1, m: 2 } };
    dicts.remove(obj, 'a.b.c');
    dicts.remove(obj, 'k.l');
    dicts.remove(obj, 'absent.field');
    expect(obj).toEqual({ k: { m: 2 } });
  });

  it('cherrypick copies present fields deeply and skips absent ones', () => {
    const src = { metadata: { labels: { a: '1' } }, status: { phase: 'x' } };
    const dst: Record<string, unknown> = { spec: {} };
    dicts.cherrypick(src, dst, ['metadata.labels', 'status.missing', 'status.phase']);
    expect(dst).toEqual({ spec: {}, metadata: { labels: { a: '1' } }, status: { phase: 'x' } });
    (dst['metadata'] as { labels: Record<string, string> }).labels['a'] = 'changed';
    expect(src.metadata.labels.a).toBe('1');
  });

  it('refuses to set or remove the root', () => {
    expect(() => dicts.ensure({}, [], 1)).toThrow(TypeError);
    expect(() => dicts.remove({}, '')).toThrow(TypeError);
  });
});

describe('deepEqual', () => {
  it.each([
    [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    [null, undefined, true],
    [{ a: null }, {}, false],
    [{ a: undefined }, {}, true],
    [[1, 2], [2, 1], false],
    [{ a: 1 }, { a: '1' }, false],
    [[], {}, false],
    ['x', 'x', true],
  ] as const)('deepEqual(%j, %j) is %s', (a, b, expected) => {
    expect(dicts.deepEqual(a, b)).toBe(expected);
  });
});

describe('copies and frozen views', () => {
  it('deepCopy keeps key order, drops undefined, and shares nothing', () => {
    const original = { z: 1, a: { list: [{ x: 1 }] }, u: undefined };
    const copy = dicts.deepCopy(original);
    expect(Object.keys(copy)).toEqual(['z', 'a']);
    copy.a.list[0]!.x = 2;
    expect(original.a.list[0]!.x).toBe(1);
  });

  it('frozenCopy is deeply frozen and leaves the input writable', () => {
    const original = { spec: { items: ['a'] } };
    const view = dicts.frozenCopy(original);
    expect(Object.isFrozen(view.spec.items)).toBe(true);
    expect(() => {
      (view.spec.items as string[]).push('b');
    }).toThrow(TypeError);
    original.spec.items.push('b');
    expect(view.spec.items).toEqual(['a']);
  });
});

describe('a key named __proto__ (R-ESSENCE-6)', () => {
  const parsed = (): Record<string, unknown> => JSON.parse('{"spec":{"__proto__":{"polluted":"yes"},"size":1}}') as Record<string, unknown>;

  it('R-ESSENCE-6 deepCopy keeps it as an own key, and the copy keeps the plain prototype', () => {
    const copy = dicts.deepCopy(parsed());
    const spec = copy['spec'] as Record<string, unknown>;
    expect(Object.getPrototypeOf(spec)).toBe(Object.prototype);
    expect(Object.keys(spec)).toEqual(['__proto__', 'size']);
    expect(spec['polluted']).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"spec":{"__proto__":{"polluted":"yes"},"size":1}}');
    expect(JSON.stringify(dicts.frozenCopy(parsed()))).toBe(JSON.stringify(parsed()));
  });

  it('R-ESSENCE-6 deepEqual compares it as a key: a copy equals its original, a change or an absence does not', () => {
    expect(dicts.deepEqual(dicts.deepCopy(parsed()), parsed())).toBe(true);
    expect(dicts.deepEqual(parsed(), { spec: { size: 1 } })).toBe(false);
    expect(dicts.deepEqual(parsed(), JSON.parse('{"spec":{"__proto__":{"polluted":"no"},"size":1}}'))).toBe(false);
  });

  it('R-ESSENCE-6 ensure writes it as an own key, and never into Object.prototype', () => {
    const target: Record<string, unknown> = {};
    dicts.ensure(target, ['spec', '__proto__', 'polluted'], 'yes');
    expect(JSON.stringify(target)).toBe('{"spec":{"__proto__":{"polluted":"yes"}}}');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(dicts.resolve(target, ['spec', '__proto__', 'polluted'])).toBe('yes');
    dicts.remove(target, ['spec', '__proto__', 'polluted']);
    expect(target).toEqual({});
  });
});
