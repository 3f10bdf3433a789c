import { describe, expect, it } from 'vitest';

import * as merge from '../../../devcluster/patching/merge.js';
import { deepFreeze } from './freezing.js';

describe('applyMergePatch', () => {
  // The test vectors of RFC 7386, appendix A.
  const rfcExamples: Array<[target: unknown, patch: unknown, expected: unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  it.each(rfcExamples)('D-VERB-20 RFC 7386 example: %j patched with %j', (target, patch, expected) => {
    expect(merge.applyMergePatch(target, patch)).toEqual(expected);
  });

  it('D-VERB-20 null deletes a member and scalars replace (C-35)', () => {
    const widget = { metadata: { name: 'w' }, spec: { mode: 'fast', size: 3, tags: ['a'] } };
    const result = merge.applyMergePatch(widget, { spec: { mode: null, size: 4 } });
    expect(result).toEqual({ metadata: { name: 'w' }, spec: { size: 4, tags: ['a'] } });
  });

  it('D-VERB-20 arrays are replaced, never merged', () => {
    const result = merge.applyMergePatch({ spec: { items: [{ n: 1 }, { n: 2 }] } }, { spec: { items: [{ n: 3 }] } });
    expect(result).toEqual({ spec: { items: [{ n: 3 }] } });
  });

  it('D-VERB-20 nulls inside a member that is new to the target are dropped', () => {
    expect(merge.applyMergePatch({}, { status: { phase: 'Ready', reason: null } })).toEqual({ status: { phase: 'Ready' } });
  });

  it('keeps the order of existing members and appends new ones', () => {
    const result = merge.applyMergePatch({ a: 1, b: 2, c: 3 }, { d: 4, b: 20 });
    expect(Object.keys(result as object)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('treats a "__proto__" member as ordinary data', () => {
    const patch = JSON.parse('{"spec":{"__proto__":{"polluted":true}}}') as unknown;
    const result = merge.applyMergePatch({ spec: {} }, patch) as { spec: Record<string, unknown> };
    expect(Object.getPrototypeOf(result.spec)).toBe(Object.prototype);
    expect(Object.keys(result.spec)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('never mutates its inputs and returns no structure shared with them', () => {
    const target = deepFreeze({ metadata: { labels: { a: '1' } }, spec: { list: [1, 2], keep: { x: 1 } } });
    const patch = deepFreeze({ metadata: { labels: { a: null, b: '2' } }, spec: { list: [3], added: { y: [1] } } });
    const result = merge.applyMergePatch(target, patch) as {
      metadata: unknown;
      spec: { list: number[]; keep: unknown; added: { y: unknown } };
    };
    expect(result).toEqual({ metadata: { labels: { b: '2' } }, spec: { list: [3], keep: { x: 1 }, added: { y: [1] } } });
    expect(result.spec.keep).not.toBe(target.spec.keep);
    expect(result.spec.list).not.toBe(patch.spec.list);
    expect(result.spec.added.y).not.toBe(patch.spec.added.y);
  });
});
