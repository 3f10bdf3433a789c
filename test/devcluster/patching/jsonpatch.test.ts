import { describe, expect, it } from 'vitest';

import * as jsonpatch from '../../../devcluster/patching/jsonpatch.js';
import { deepFreeze } from './freezing.js';

/** Parses and applies in one go, as the API does. */
function patched(doc: unknown, body: unknown): unknown {
  return jsonpatch.applyJsonPatch(doc, jsonpatch.parseJsonPatch(body));
}

/** The error code thrown by `fn`, or `undefined` when it does not throw a JsonPatchError. */
function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof jsonpatch.JsonPatchError) return err.code;
    throw err;
  }
  return undefined;
}

describe('applyJsonPatch: RFC 6902 appendix A', () => {
  const examples: Array<[title: string, doc: unknown, ops: unknown, expected: unknown]> = [
    ['A.1 adding an object member', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { baz: 'qux', foo: 'bar' }],
    ['A.2 adding an array element', { foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }], { foo: ['bar', 'qux', 'baz'] }],
    ['A.3 removing an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    ['A.4 removing an array element', { foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { foo: ['bar', 'baz'] }],
    ['A.5 replacing a value', { baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { baz: 'boo', foo: 'bar' }],
    [
      'A.6 moving a value',
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      'A.7 moving an array element',
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      'A.8 testing a value: success',
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    [
      'A.10 adding a nested member object',
      { foo: 'bar' },
      [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      { foo: 'bar', child: { grandchild: {} } },
    ],
    ['A.11 ignoring unrecognized elements', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }], { foo: 'bar', baz: 'qux' }],
    ['A.14 ~ escape ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { '/': 9, '~1': 10 }],
    ['A.16 adding an array value', { foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }], { foo: ['bar', ['abc', 'def']] }],
  ];
  it.each(examples)('D-VERB-19 %s', (_title, doc, ops, expected) => {
    expect(patched(doc, ops)).toEqual(expected);
  });

  const failures: Array<[title: string, doc: unknown, ops: unknown]> = [
    ['A.9 testing a value: error', { baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]],
    ['A.12 adding to a nonexistent target', { foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]],
    ['A.15 comparing strings and numbers', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]],
  ];
  it.each(failures)('D-VERB-19 %s fails', (_title, doc, ops) => {
    expect(codeOf(() => patched(doc, ops))).toBe('failed');
  });
});

describe('applyJsonPatch: D-VERB-19 semantics', () => {
  const widget = { metadata: { name: 'w', resourceVersion: '12' }, spec: { size: 3, items: ['a', 'b'] } };

  it("D-VERB-19 Kopf's resourceVersion test passes when current and the patch applies (C-37)", () => {
    const result = patched(widget, [
      { op: 'test', path: '/metadata/resourceVersion', value: '12' },
      { op: 'replace', path: '/spec/size', value: 5 },
    ]);
    expect(result).toEqual({ ...widget, spec: { size: 5, items: ['a', 'b'] } });
  });

  it('D-VERB-19 a failed test op rejects the whole patch and leaves the document untouched (C-37)', () => {
    const doc = structuredClone(widget);
    const ops = [
      { op: 'replace', path: '/spec/size', value: 5 },
      { op: 'test', path: '/metadata/resourceVersion', value: '11' },
    ];
    expect(codeOf(() => patched(doc, ops))).toBe('failed');
    expect(doc).toEqual(widget);
  });

  const failing: Array<[title: string, ops: unknown]> = [
    ['a test whose string value differs from the number', [{ op: 'test', path: '/spec/size', value: '3' }]],
    ['a test of a missing path', [{ op: 'test', path: '/spec/missing', value: null }]],
    ['remove of a missing member (C-38)', [{ op: 'remove', path: '/spec/doesNotExist' }]],
    ['remove of an out-of-range index', [{ op: 'remove', path: '/spec/items/2' }]],
    ['remove of the whole document', [{ op: 'remove', path: '' }]],
    ['replace of a missing member', [{ op: 'replace', path: '/spec/mode', value: 'x' }]],
    ['replace with "-" as index', [{ op: 'replace', path: '/spec/items/-', value: 'x' }]],
    ['add under a missing parent', [{ op: 'add', path: '/status/phase', value: 'Ready' }]],
    ['add past the end of an array', [{ op: 'add', path: '/spec/items/3', value: 'x' }]],
    ['add with a leading-zero index', [{ op: 'add', path: '/spec/items/01', value: 'x' }]],
    ['add into a scalar', [{ op: 'add', path: '/spec/size/x', value: 1 }]],
    ['move from a missing path', [{ op: 'move', from: '/spec/nope', path: '/spec/x' }]],
    ['move into its own child', [{ op: 'move', from: '/spec', path: '/spec/inner' }]],
    ['copy from a missing path', [{ op: 'copy', from: '/spec/nope', path: '/spec/x' }]],
  ];
  it.each(failing)('D-VERB-19 fails for %s', (_title, ops) => {
    expect(codeOf(() => patched(widget, ops))).toBe('failed');
  });

  it('D-VERB-19 test compares objects deeply, ignoring member order', () => {
    const doc = { spec: { a: 1, b: [1, { c: 2 }] } };
    expect(patched(doc, [{ op: 'test', path: '/spec', value: { b: [1, { c: 2 }], a: 1 } }])).toEqual(doc);
    expect(codeOf(() => patched(doc, [{ op: 'test', path: '/spec', value: { a: 1, b: [{ c: 2 }, 1] } }]))).toBe('failed');
    expect(codeOf(() => patched(doc, [{ op: 'test', path: '/spec', value: { a: 1 } }]))).toBe('failed');
  });

  it('D-VERB-19 pointers unescape ~1 to "/" and ~0 to "~"', () => {
    const doc = { metadata: { annotations: { 'example.com/owner': 'a', 'x~y': 'b' } } };
    const result = patched(doc, [
      { op: 'replace', path: '/metadata/annotations/example.com~1owner', value: 'c' },
      { op: 'remove', path: '/metadata/annotations/x~0y' },
    ]);
    expect(result).toEqual({ metadata: { annotations: { 'example.com/owner': 'c' } } });
  });

  it('D-VERB-19 "-" appends to an array and an index inserts before it', () => {
    const result = patched({ l: [1, 2] }, [
      { op: 'add', path: '/l/-', value: 3 },
      { op: 'add', path: '/l/0', value: 0 },
      { op: 'add', path: '/l/4', value: 4 },
    ]);
    expect(result).toEqual({ l: [0, 1, 2, 3, 4] });
  });

  it('D-VERB-19 add replaces an existing member, and the empty path addresses the whole document', () => {
    expect(patched({ a: 1 }, [{ op: 'add', path: '/a', value: 2 }])).toEqual({ a: 2 });
    expect(patched({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }])).toEqual({ b: 2 });
    expect(patched({ a: 1 }, [{ op: 'add', path: '', value: [1] }])).toEqual([1]);
  });

  it('D-VERB-19 copy duplicates a value without aliasing it', () => {
    const result = patched({ a: { x: [1] } }, [
      { op: 'copy', from: '/a', path: '/b' },
      { op: 'add', path: '/b/x/-', value: 2 },
    ]);
    expect(result).toEqual({ a: { x: [1] }, b: { x: [1, 2] } });
  });

  it('D-VERB-19 operations see the effects of earlier ones', () => {
    const result = patched({}, [
      { op: 'add', path: '/metadata', value: {} },
      { op: 'add', path: '/metadata/labels', value: { a: '1' } },
      { op: 'move', from: '/metadata/labels/a', path: '/metadata/labels/b' },
    ]);
    expect(result).toEqual({ metadata: { labels: { b: '1' } } });
  });

  it('never mutates the document or the operations', () => {
    const doc = deepFreeze(structuredClone(widget));
    const ops = deepFreeze(
      jsonpatch.parseJsonPatch([
        { op: 'add', path: '/spec/items/-', value: { deep: ['x'] } },
        { op: 'remove', path: '/metadata/name' },
        { op: 'move', from: '/spec/size', path: '/spec/count' },
        { op: 'copy', from: '/spec/items', path: '/status' },
      ]),
    );
    const result = jsonpatch.applyJsonPatch(doc, ops) as { spec: { items: unknown[] } };
    expect(result).toEqual({
      metadata: { resourceVersion: '12' },
      spec: { items: ['a', 'b', { deep: ['x'] }], count: 3 },
      status: ['a', 'b', { deep: ['x'] }],
    });
    expect(result.spec.items[2]).not.toBe((ops[0] as jsonpatch.JsonPatchValueOperation).value);
  });
});

describe('parseJsonPatch', () => {
  it('D-VERB-19 returns the operations of a well-formed body', () => {
    const ops = jsonpatch.parseJsonPatch([
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'remove', path: '/a' },
      { op: 'move', from: '/a', path: '/b' },
    ]);
    expect(ops).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'remove', path: '/a' },
      { op: 'move', from: '/a', path: '/b' },
    ]);
  });

  it('D-VERB-19 accepts null as a value', () => {
    expect(jsonpatch.parseJsonPatch([{ op: 'add', path: '/a', value: null }])).toEqual([{ op: 'add', path: '/a', value: null }]);
  });

  const malformed: Array<[title: string, body: unknown]> = [
    ['an object instead of an array (C-38)', {}],
    ['a string', '[]'],
    ['null', null],
    ['an element that is not an object', ['add']],
    ['an unknown op', [{ op: 'merge', path: '/a', value: 1 }]],
    ['a missing op', [{ path: '/a', value: 1 }]],
    ['a missing path', [{ op: 'remove' }]],
    ['a path that is not a string', [{ op: 'remove', path: 3 }]],
    ['a path that is not a pointer', [{ op: 'remove', path: 'a/b' }]],
    ['a path with a bad escape', [{ op: 'remove', path: '/a~2' }]],
    ['add without value', [{ op: 'add', path: '/a' }]],
    ['replace without value', [{ op: 'replace', path: '/a' }]],
    ['test without value', [{ op: 'test', path: '/a' }]],
    ['move without from', [{ op: 'move', path: '/a' }]],
    ['copy with a non-string from', [{ op: 'copy', from: 1, path: '/a' }]],
  ];
  it.each(malformed)('D-VERB-19 rejects %s as malformed', (_title, body) => {
    expect(codeOf(() => jsonpatch.parseJsonPatch(body))).toBe('malformed');
  });

  it('D-VERB-19 more than 10000 operations is too large, 10000 is accepted', () => {
    const op = { op: 'test', path: '/a', value: 1 };
    expect(jsonpatch.parseJsonPatch(Array.from({ length: 10000 }, () => op))).toHaveLength(10000);
    expect(codeOf(() => jsonpatch.parseJsonPatch(Array.from({ length: 10001 }, () => op)))).toBe('too-large');
  });

  it('D-VERB-19 errors carry their class and code', () => {
    const error = (() => {
      try {
        jsonpatch.parseJsonPatch({});
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(jsonpatch.JsonPatchError);
    expect(error).toBeInstanceOf(Error);
    expect((error as jsonpatch.JsonPatchError).name).toBe('JsonPatchError');
  });
});
