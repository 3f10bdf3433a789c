import { describe, expect, it } from 'vitest';

import * as jsonpatches from '../../../../runtime/cogs/structs/jsonpatches.js';

const F = 'kopf.zalando.org/KopfFinalizerMarker';

describe('merge-patch application', () => {
  it('applyMergePatch follows RFC 7386 and does not mutate its inputs', () => {
    const target = { a: { b: 1, c: 2 }, list: [1] };
    const merge = { a: { b: null, d: 3 }, list: [2], e: { f: null } };
    expect(jsonpatches.applyMergePatch(target, merge)).toEqual({ a: { c: 2, d: 3 }, list: [2], e: {} });
    expect(target).toEqual({ a: { b: 1, c: 2 }, list: [1] });
    expect(merge).toEqual({ a: { b: null, d: 3 }, list: [2], e: { f: null } });
  });

  it('a non-object merge-patch replaces the target; a non-object target becomes a map', () => {
    expect(jsonpatches.applyMergePatch({ a: 1 }, ['x'])).toEqual(['x']);
    expect(jsonpatches.applyMergePatch('text', { a: 1 })).toEqual({ a: 1 });
  });
});

describe('diffing bodies into JSON-Patch operations', () => {
  it.each<[string, unknown, unknown, jsonpatches.JsonPatchOperation[]]>([
    ['equal bodies give nothing', { a: [1] }, { a: [1] }, []],
    ['new keys are added', { a: 1 }, { a: 1, b: { c: 2 } }, [{ op: 'add', path: '/b', value: { c: 2 } }]],
    ['gone keys are removed', { a: 1, b: 2 }, { a: 1 }, [{ op: 'remove', path: '/b' }]],
    ['changed scalars are replaced', { a: { b: 1 } }, { a: { b: 2 } }, [{ op: 'replace', path: '/a/b', value: 2 }]],
    ['arrays are replaced whole', { a: [1, 2] }, { a: [1, 2, 3] }, [{ op: 'replace', path: '/a', value: [1, 2, 3] }]],
    ['keys are escaped', {}, { 'a/b~c': 1 }, [{ op: 'add', path: '/a~1b~0c', value: 1 }]],
    ['null-valued keys are replaced, not added', { a: null }, { a: 1 }, [{ op: 'replace', path: '/a', value: 1 }]],
  ])('%s', (_title, old, now, expected) => {
    expect(jsonpatches.diffAsJsonPatch(old, now)).toEqual(expected);
  });

  it.each<[string, string[] | undefined, string[] | undefined, jsonpatches.JsonPatchOperation[]]>([
    ['R-FINAL-3 adding to an absent list adds the list', undefined, [F], [{ op: 'add', path: '/metadata/finalizers', value: [F] }]],
    ['R-FINAL-3 appending adds at the next index', ['a'], ['a', F], [{ op: 'add', path: '/metadata/finalizers/1', value: F }]],
    ['R-FINAL-3 appending to an empty list adds at index 0', [], [F], [{ op: 'add', path: '/metadata/finalizers/0', value: F }]],
    ['R-FINAL-5 removing the only one removes the list', [F], [], [{ op: 'remove', path: '/metadata/finalizers' }]],
    ['R-FINAL-5 removing the list itself removes it', [F], undefined, [{ op: 'remove', path: '/metadata/finalizers' }]],
    ['R-FINAL-5 removing one of several removes by index', ['a', F, 'b'], ['a', 'b'], [{ op: 'remove', path: '/metadata/finalizers/1' }]],
    [
      'R-FINAL-5 removals are indexed as they apply, one after another',
      ['x', 'a', 'y', 'b'],
      ['a', 'b'],
      [
        { op: 'remove', path: '/metadata/finalizers/0' },
        { op: 'remove', path: '/metadata/finalizers/1' },
      ],
    ],
    ['reordering falls back to replacing the list', ['a', 'b'], ['b', 'a'], [{ op: 'replace', path: '/metadata/finalizers', value: ['b', 'a'] }]],
  ])('%s', (_title, before, after, expected) => {
    const body = (finalizers?: string[]): unknown => ({ metadata: { name: 'n', ...(finalizers ? { finalizers } : {}) } });
    expect(jsonpatches.diffAsJsonPatch(body(before), body(after))).toEqual(expected);
  });
});

describe('request helpers', () => {
  it("R-PATCH-2 the resource-version test guards by the body's version; /status operations split off", () => {
    expect(jsonpatches.resourceVersionTest({ metadata: { resourceVersion: '7' } })).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '7' });
    const ops: jsonpatches.JsonPatchOperation[] = [
      { op: 'add', path: '/metadata/finalizers', value: [F] },
      { op: 'replace', path: '/status/x', value: 1 },
      { op: 'remove', path: '/statusish' },
    ];
    expect(jsonpatches.splitJsonPatch(ops, { statusSubresource: true })).toEqual({
      main: [ops[0], ops[2]],
      status: [ops[1]],
    });
    expect(jsonpatches.splitJsonPatch(ops, { statusSubresource: false })).toEqual({ main: ops, status: [] });
  });
});

describe('a key named __proto__ in merge-patches (R-ESSENCE-6)', () => {
  it('R-ESSENCE-6 is merged as an own key', () => {
    const merged = jsonpatches.applyMergePatch(JSON.parse('{"spec":{"__proto__":{"a":1}}}'), JSON.parse('{"spec":{"__proto__":{"b":2}}}'));
    expect(JSON.stringify(merged)).toBe('{"spec":{"__proto__":{"a":1,"b":2}}}');
    expect(({} as Record<string, unknown>)['b']).toBeUndefined();
  });
});
