/**
 * R-INDEX-3 at the edges of "plain object": keys are compared by value through a canonical JSON
 * encoding, so class instances (a `Date`, a `Map`) are refused as keys instead of all encoding as
 * `{}` and colliding; and an indexer's result that is a class instance is "any other value",
 * stored under the key `null`, not read as an empty object (which would drop the object's values).
 * Pure logic, plain values.
 */
import { describe, expect, it } from 'vitest';

import { encodeKey, interpretResult } from '../../../../runtime/core/engines/indexing.js';
import { IndexKeyError } from '../../../../runtime/core/engines/errors.js';

describe('index keys and results (R-INDEX-3)', () => {
  it('R-INDEX-3 composite keys are equal by value, plain objects with their keys sorted', () => {
    expect(encodeKey(['default', 'web-1'])).toBe(encodeKey(['default', 'web-1']));
    expect(encodeKey({ b: 1, a: [2, null] })).toBe(encodeKey({ a: [2, null], b: 1 }));
    expect(encodeKey(Object.assign(Object.create(null) as object, { a: 1 }))).toBe(encodeKey({ a: 1 }));
    expect(encodeKey(['a', 'b'])).not.toBe(encodeKey(['b', 'a']));
  });

  it('R-INDEX-3 class instances are not JSON-encodable keys: refused, not encoded as {}', () => {
    expect(() => encodeKey(new Date(0))).toThrow(IndexKeyError);
    expect(() => encodeKey(new Map([['a', 1]]))).toThrow(/got a Map/);
    expect(() => encodeKey(['default', new Set(['x'])])).toThrow(/got a Set/);
    expect(() => encodeKey({ when: new Date(0) })).toThrow(/got a Date/);
  });

  it('R-INDEX-3 a result that is a class instance goes under the key null; a plain object gives its entries', () => {
    const when = new Date(0);
    expect([...interpretResult(when)!.values()]).toEqual([{ key: null, value: when }]);
    const tags = new Set(['a']);
    expect([...interpretResult(tags)!.values()]).toEqual([{ key: null, value: tags }]);
    expect([...interpretResult({ web: 1, db: 2 })!.values()]).toEqual([
      { key: 'web', value: 1 },
      { key: 'db', value: 2 },
    ]);
    expect([...interpretResult(new Map([[['ns', 'n'], true]]))!.values()]).toEqual([{ key: ['ns', 'n'], value: true }]);
    expect(interpretResult(null)).toBeNull();
    expect(interpretResult(undefined)).toBeNull();
  });
});
