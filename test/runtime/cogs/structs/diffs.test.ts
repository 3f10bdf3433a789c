import { describe, expect, it } from 'vitest';

import * as diffs from '../../../../runtime/cogs/structs/diffs.js';

describe('diff items', () => {
  it('R-ESSENCE-5 an item is a read-only 4-tuple with named getters', () => {
    const item = diffs.diffItem('change', ['spec', 'size'], '1G', '2G');
    expect([...item]).toEqual(['change', ['spec', 'size'], '1G', '2G']);
    expect(item.operation).toBe('change');
    expect(item.op).toBe('change');
    expect(item.field).toEqual(['spec', 'size']);
    expect(item.old).toBe('1G');
    expect(item.new).toBe('2G');
    expect(Object.isFrozen(item)).toBe(true);
    expect(Object.isFrozen(item.field)).toBe(true);
    expect(() => {
      (item as unknown as unknown[])[0] = 'add';
    }).toThrow(TypeError);
  });

  it('R-ESSENCE-5 a diff destructures like tuples and compares equal to plain arrays', () => {
    const d = diffs.diff({ spec: { size: '1G' }, metadata: {} }, { spec: { size: '2G' }, metadata: { labels: { label1: 'v' } } });
    expect(d).toEqual([
      ['add', ['metadata', 'labels'], null, { label1: 'v' }],
      ['change', ['spec', 'size'], '1G', '2G'],
    ]);
    const [[op, field, old, now]] = d as unknown as [[string, string[], unknown, unknown]];
    expect([op, field, old, now]).toEqual(['add', ['metadata', 'labels'], null, { label1: 'v' }]);
    expect(Object.isFrozen(d)).toBe(true);
  });
});

describe('diff', () => {
  it.each<[string, unknown, unknown, unknown[]]>([
    ['equal values give nothing', { a: [1, 2] }, { a: [1, 2] }, []],
    ['both absent give nothing', null, undefined, []],
    ['absent old gives add at the root', null, { a: 1 }, [['add', [], null, { a: 1 }]]],
    ['absent new gives remove at the root', { a: 1 }, null, [['remove', [], { a: 1 }, null]]],
    ['scalars change', 1, 2, [['change', [], 1, 2]]],
    ['type changes are changes', { a: { b: 1 } }, { a: 'x' }, [['change', ['a'], { b: 1 }, 'x']]],
    ['arrays are whole values', { a: [1, 2] }, { a: [1, 2, 3] }, [['change', ['a'], [1, 2], [1, 2, 3]]]],
    ['null values count as absent', { a: null, b: 1 }, { b: 1, c: null }, []],
    ['null to value is an add', { a: null }, { a: 5 }, [['add', ['a'], null, 5]]],
  ])('R-ESSENCE-3 %s', (_title, a, b, expected) => {
    expect(diffs.diff(a, b)).toEqual(expected);
  });

  it('R-ESSENCE-3 orders new-only keys, then old-only keys, then common keys, each sorted', () => {
    const a = { z: 1, k: 1, b: 1, common2: 1, common1: 1 };
    const b = { y: 2, c: 2, common2: 2, common1: 2 };
    expect(diffs.diff(a, b).map((item) => [item.op, item.field.join('.')])).toEqual([
      ['add', 'c'],
      ['add', 'y'],
      ['remove', 'b'],
      ['remove', 'k'],
      ['remove', 'z'],
      ['change', 'common1'],
      ['change', 'common2'],
    ]);
  });

  it('R-ESSENCE-3 recurses into nested maps with full paths', () => {
    expect(diffs.diff({ spec: { a: { b: 1, c: 1 } } }, { spec: { a: { b: 2 } } })).toEqual([
      ['remove', ['spec', 'a', 'c'], 1, null],
      ['change', ['spec', 'a', 'b'], 1, 2],
    ]);
  });

  it('R-ESSENCE-5 the label example of the spec', () => {
    const old = { spec: { size: '1G' }, metadata: { labels: {} } };
    const now = { spec: { size: '2G' }, metadata: { labels: { label1: 'v' } } };
    expect(diffs.diff(old, now)).toEqual([
      ['add', ['metadata', 'labels', 'label1'], null, 'v'],
      ['change', ['spec', 'size'], '1G', '2G'],
    ]);
  });
});

describe('field-scoped diffs', () => {
  it('R-ESSENCE-4 adding a whole spec yields one add item with path [] for spec.field', () => {
    expect(diffs.diffAt('spec.field', {}, { spec: { field: 'value', other: 1 } })).toEqual([['add', [], null, 'value']]);
  });

  it('R-ESSENCE-4 items under the field keep their path relative to it; unrelated ones are dropped', () => {
    const old = { spec: { struct: { a: 1, b: 1 }, other: 1 }, metadata: { labels: { x: '1' } } };
    const now = { spec: { struct: { a: 2, c: 3 }, other: 2 }, metadata: { labels: { x: '2' } } };
    expect(diffs.diffAt(['spec', 'struct'], old, now)).toEqual([
      ['add', ['c'], null, 3],
      ['remove', ['b'], 1, null],
      ['change', ['a'], 1, 2],
    ]);
  });

  it('R-ESSENCE-4 a parent change is re-diffed at the field, including removals and no-ops', () => {
    const removed = diffs.reduceDiff(diffs.diff({ spec: { f: { x: 1 } } }, {}), 'spec.f');
    expect(removed).toEqual([['remove', [], { x: 1 }, null]]);
    const typeChange = diffs.diff({ spec: 'broken' }, { spec: { f: 1 } });
    expect(diffs.reduceDiff(typeChange, 'spec.f')).toEqual([['add', [], null, 1]]);
    const untouched = diffs.diff({}, { spec: { other: 1 } });
    expect(diffs.reduceDiff(untouched, 'spec.f')).toEqual([]);
  });

  it('R-ESSENCE-4 the root field keeps the whole diff', () => {
    const d = diffs.diff({ a: 1 }, { a: 2 });
    expect(diffs.reduceDiff(d, [])).toEqual(d);
  });
});
