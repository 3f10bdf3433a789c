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
