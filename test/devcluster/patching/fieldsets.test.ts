import { describe, expect, it } from 'vitest';
import * as fieldsets from '../../../devcluster/patching/fieldsets.js';

const set = (...paths: string[][]): fieldsets.FieldSet => fieldsets.fromPaths(paths);
const listed = (s: fieldsets.FieldSet): string[] => fieldsets.paths(s).map(fieldsets.formatPath);

describe('fieldsV1 encoding', () => {
  it('D-META-15 a fieldsV1 object survives decode then encode byte for byte', () => {
    const fieldsV1 = {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:containers': { 'k:{"name":"c1"}': { '.': {}, 'f:image': {}, 'f:name': {} } },
        'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} },
        'f:size': {},
      },
    };
    const decoded = fieldsets.decode(fieldsV1);
    expect(JSON.stringify(fieldsets.encode(decoded))).toBe(JSON.stringify(fieldsV1));
    expect(listed(decoded)).toEqual([
      '.metadata.labels',
      '.metadata.labels.app',
      '.spec.size',
      '.spec.containers[name="c1"]',
      '.spec.containers[name="c1"].image',
      '.spec.containers[name="c1"].name',
      '.spec.finalizers[="a"]',
      '.spec.finalizers[="b"]',
    ]);
  });

  it('D-META-15 encode writes "." first, then fields before keys, values and indices', () => {
    const s = set(['f:a'], ['f:a', 'i:1'], ['f:a', 'v:2'], ['f:a', 'k:{"n":1}'], ['f:a', 'f:z'], ['f:a', 'f:b']);
    expect(JSON.stringify(fieldsets.encode(s))).toBe('{"f:a":{".":{},"f:b":{},"f:z":{},"k:{\\"n\\":1}":{},"v:2":{},"i:1":{}}}');
  });

  it('D-META-15 keyed elements use sorted key order, whatever order they are decoded in', () => {
    const decoded = fieldsets.decode({ 'f:ports': { 'k:{"protocol":"TCP","containerPort":80}': {} } });
    expect(fieldsets.has(decoded, ['f:ports', fieldsets.keyElement({ containerPort: 80, protocol: 'TCP' })])).toBe(true);
    expect(Object.keys(fieldsets.encode(decoded)['f:ports'] as object)).toEqual(['k:{"containerPort":80,"protocol":"TCP"}']);
  });

  it.each([
    ['an array', []],
    ['an unknown element prefix', { 'x:a': {} }],
    ['a key element that is not an object', { 'k:[1]': {} }],
    ['invalid JSON in a value element', { 'v:{': {} }],
    ['a non-object child', { 'f:a': 1 }],
  ])('decode rejects %s', (_what, raw) => {
    expect(() => fieldsets.decode(raw)).toThrow(fieldsets.FieldsV1Error);
  });
});

describe('paths in display form', () => {
  it.each([
    [['f:spec', 'f:size'], '.spec.size'],
    [['f:spec', 'f:containers', 'k:{"name":"c1"}', 'f:image'], '.spec.containers[name="c1"].image'],
    [['f:ports', 'k:{"containerPort":80,"protocol":"TCP"}'], '.ports[containerPort=80,protocol="TCP"]'],
    [['f:metadata', 'f:finalizers', 'v:"example.com/f"'], '.metadata.finalizers[="example.com/f"]'],
    [['f:args', 'i:3'], '.args[3]'],
    [['f:metadata', 'f:labels', 'f:app.kubernetes.io/name'], '.metadata.labels.app.kubernetes.io/name'],
  ])('D-VERB-22 %j prints as %s', (path, text) => {
    expect(fieldsets.formatPath(path)).toBe(text);
  });
});

describe('set algebra', () => {
  const a = set(['f:spec', 'f:size'], ['f:spec', 'f:mode'], ['f:metadata', 'f:labels', 'f:x']);
  const b = set(['f:spec', 'f:size'], ['f:status', 'f:phase']);

  it('union holds the members of both', () => {
    expect(listed(fieldsets.union(a, b)).sort()).toEqual(['.metadata.labels.x', '.spec.mode', '.spec.size', '.status.phase']);
  });

  it('difference keeps only the members of the first that the second lacks', () => {
    expect(listed(fieldsets.difference(a, b)).sort()).toEqual(['.metadata.labels.x', '.spec.mode']);
    expect(fieldsets.isEmpty(fieldsets.difference(b, fieldsets.union(a, b)))).toBe(true);
  });

  it('intersection holds the common members only', () => {
    expect(listed(fieldsets.intersection(a, b))).toEqual(['.spec.size']);
  });

  it('a node member and its children are distinct members', () => {
    const item = set(['f:c', 'k:{"name":"x"}'], ['f:c', 'k:{"name":"x"}', 'f:image']);
    const onlyChild = set(['f:c', 'k:{"name":"x"}', 'f:image']);
    expect(listed(fieldsets.difference(item, onlyChild))).toEqual(['.c[name="x"]']);
    expect(fieldsets.has(item, ['f:c'])).toBe(false);
  });

  it('operations never mutate their inputs', () => {
    const before = JSON.stringify(fieldsets.encode(a));
    fieldsets.union(a, b);
    fieldsets.difference(a, b);
    fieldsets.withoutSubtree(a, ['f:spec']);
    fieldsets.insert(a, ['f:new']);
    expect(JSON.stringify(fieldsets.encode(a))).toBe(before);
  });
});
