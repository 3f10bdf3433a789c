/**
 * The generator's one deep copy and one deep equality (generator/json.ts) follow JSON's data
 * model: copies are independent to any depth and keep every key (`__proto__` too, as an ordinary
 * key), and equality ignores the order of object keys but not of list items.
 */
import { describe, expect, it } from 'vitest';
import * as json from '../../generator/json.js';

describe('copyJson', () => {
  it('copies to any depth, keeping key order, sharing nothing', () => {
    const value = { b: [1, { c: 'x' }], a: { d: null, e: true } };
    const copy = json.copyJson(value);
    expect(copy).toEqual(value);
    expect(Object.keys(copy)).toEqual(['b', 'a']);
    copy.b.push(2);
    (copy.a as { d: unknown }).d = 'changed';
    expect(value).toEqual({ b: [1, { c: 'x' }], a: { d: null, e: true } });
  });

  it('keeps a key named __proto__ as an own key, without changing the prototype', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const copy = json.copyJson(value);
    expect(Object.keys(copy)).toEqual(['__proto__', 'x']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true });
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('returns scalars as they are', () => {
    for (const scalar of [null, 0, -1.5, '', 'text', true, false]) expect(json.copyJson(scalar)).toBe(scalar);
  });
});

describe('sameJson', () => {
  it('ignores the order of object keys, not of list items', () => {
    expect(json.sameJson({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBe(true);
    expect(json.sameJson([1, 2], [2, 1])).toBe(false);
    expect(json.sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(json.sameJson({ a: 1 }, [1])).toBe(false);
    expect(json.sameJson(null, {})).toBe(false);
    expect(json.sameJson('1', 1)).toBe(false);
  });

  it('compares __proto__ keys as ordinary keys', () => {
    const one = JSON.parse('{"__proto__": {"a": 1}}') as unknown;
    const other = JSON.parse('{"__proto__": {"a": 2}}') as unknown;
    expect(json.sameJson(one, other)).toBe(false);
    expect(json.sameJson(one, json.copyJson(one))).toBe(true);
    expect(json.sameJson(one, {})).toBe(false);
  });
});
