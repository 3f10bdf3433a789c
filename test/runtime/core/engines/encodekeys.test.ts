/**
 * The canonical encoding of index keys (R-INDEX-3): scalars and tuples of scalars take a fast path
 * (every lookup encodes its key), which must give exactly what the general encoding gives.
 */
import { describe, expect, it } from 'vitest';
import { encodeKey, IndexTable } from '../../../../runtime/core/engines/indexing.js';
import { IndexKeyError } from '../../../../runtime/core/engines/errors.js';

describe('index keys', () => {
  it('R-INDEX-3 scalars and tuples encode as their JSON, equal to the general (sorted) encoding of the same values', () => {
    expect(encodeKey('ns')).toBe('"ns"');
    expect(encodeKey(null)).toBe('null');
    expect(encodeKey(-0)).toBe('0');
    expect(encodeKey(['ns', 'name'])).toBe('["ns","name"]');
    expect(encodeKey(['ns', 1, true, null])).toBe('["ns",1,true,null]');
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is tested
    expect(encodeKey([, 'a'])).toBe('[null,"a"]'); // a hole, as JSON has it
    // A nested object takes the general path; its keys are sorted, the tuple around it is kept.
    expect(encodeKey(['ns', { b: 1, a: 2 }])).toBe('["ns",{"a":2,"b":1}]');
  });

  it('R-INDEX-3 tuples with values that are not JSON-encodable are refused, fast path or not', () => {
    expect(() => encodeKey(['ns', Number.NaN])).toThrow(IndexKeyError);
    expect(() => encodeKey(['ns', undefined])).toThrow(IndexKeyError);
    expect(() => encodeKey(Number.POSITIVE_INFINITY)).toThrow(IndexKeyError);
    expect(() => encodeKey([1n])).toThrow(IndexKeyError);
  });

  it('R-INDEX-2 lookups with a fresh tuple find what was stored under an equal one', () => {
    const table = new IndexTable<readonly [string, string], string>('byApp');
    const key = ['ns', 'app'] as const;
    table.replace('ns/a', new Map([[encodeKey(key), { key, value: 'a' }]]));
    expect([...table.get(['ns', 'app'])!]).toEqual(['a']);
    expect(table.has(['ns', 'other'])).toBe(false);
  });
});
