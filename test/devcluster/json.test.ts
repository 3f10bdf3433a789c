import { describe, expect, it } from 'vitest';
import * as json from '../../devcluster/json.js';

describe('deepEqual: one structural equality for the whole API server', () => {
  it.each([
    [{ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }, true],
    [{ a: 1, b: undefined }, { a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, true],
    [{ a: { b: undefined, c: 2 } }, { a: { c: 2 } }, true],
    [{ a: 1, b: undefined }, { a: 1, c: undefined }, true],
    [{ a: 1 }, { a: 1, b: null }, false],
    [{ a: undefined }, { a: null }, false],
    [[undefined], [null], false],
    [{ a: 1, b: 2 }, { a: 1 }, false],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: [1, 2] }, { a: [2, 1] }, false],
    [{ a: [1] }, { a: { 0: 1 } }, false],
    [{ a: '1' }, { a: 1 }, false],
    [{}, {}, true],
    [[], [], true],
    [null, null, true],
    [null, {}, false],
    [null, undefined, false],
    [{ a: { b: { c: [true] } } }, { a: { b: { c: [false] } } }, false],
  ])('%j and %j are equal: %s', (a, b, equal) => {
    expect(json.deepEqual(a, b)).toBe(equal);
    expect(json.deepEqual(b, a)).toBe(equal);
  });

  it('a member whose value is undefined equals its absence, exactly as after a round trip through JSON', () => {
    const built = { spec: { size: 3, mode: undefined }, status: undefined };
    const wire = JSON.parse(JSON.stringify(built)) as unknown;
    expect(json.deepEqual(built, wire)).toBe(true);
    expect(json.deepEqual(built, { spec: { size: 3 } })).toBe(true);
  });

  it('a member named __proto__ is compared as an ordinary member', () => {
    const a = JSON.parse('{"__proto__":{"x":1}}') as unknown;
    const b = JSON.parse('{"__proto__":{"x":2}}') as unknown;
    expect(json.deepEqual(a, b)).toBe(false);
    expect(json.deepEqual(a, {})).toBe(false);
  });
});

describe('isObject', () => {
  it.each([
    [{}, true],
    [{ a: 1 }, true],
    [[], false],
    [null, false],
    ['x', false],
    [1, false],
    [undefined, false],
  ])('%j → %s', (value, expected) => {
    expect(json.isObject(value)).toBe(expected);
  });
});

describe('deepCopy: one deep copy for the whole API server (D-GEN-9)', () => {
  it('D-GEN-9 gives what a round trip through JSON gives, sharing nothing', () => {
    const original = { z: 1, a: { list: [{ x: 1 }, undefined] }, u: undefined, f: () => 1 };
    const copy = json.deepCopy(original) as unknown as { a: { list: { x: number }[] } };
    expect(JSON.stringify(copy)).toBe(JSON.stringify(original));
    expect(Object.keys(copy)).toEqual(['z', 'a']);
    expect(copy.a.list[1]).toBeNull();
    copy.a.list[0]!.x = 2;
    expect(original.a.list[0]!.x).toBe(1);
    const value = { z: 1, a: { list: [{ x: 1 }, null] }, u: undefined };
    expect(json.deepEqual(json.deepCopy(value), value)).toBe(true);
  });

  it('D-GEN-9 keeps a member named __proto__ as an own member, never as the prototype', () => {
    const parsed = JSON.parse('{"spec":{"__proto__":{"polluted":"yes"},"size":1}}') as json.JsonObject;
    const copy = json.deepCopy(parsed);
    const spec = copy['spec'] as json.JsonObject;
    expect(Object.getPrototypeOf(spec)).toBe(Object.prototype);
    expect(Object.keys(spec)).toEqual(['__proto__', 'size']);
    expect(spec['polluted']).toBeUndefined();
    expect(json.deepEqual(copy, parsed)).toBe(true);
    const target: json.JsonObject = {};
    json.setMember(target, '__proto__', { a: 1 });
    expect(JSON.stringify(target)).toBe('{"__proto__":{"a":1}}');
  });
});

describe('deepEqual with members left out', () => {
  it('ignores the named members of the two top-level objects only', () => {
    expect(json.deepEqual({ a: 1, rv: '1' }, { a: 1, rv: '2' }, ['rv'])).toBe(true);
    expect(json.deepEqual({ a: 1, rv: '1' }, { a: 1 }, ['rv'])).toBe(true);
    expect(json.deepEqual({ a: { rv: '1' } }, { a: { rv: '2' } }, ['rv'])).toBe(false);
    expect(json.deepEqual({ a: 1, rv: '1' }, { a: 2, rv: '1' }, ['rv'])).toBe(false);
  });
});
