import { describe, expect, it } from 'vitest';
import * as celfieldpaths from '../../../devcluster/crds/cel-fieldpaths.js';
import type * as celschemas from '../../../devcluster/crds/cel-schemas.js';

const schema: celschemas.CelSchemaNode = {
  type: 'object',
  properties: {
    host: { type: 'string' },
    'foo.34$': { type: 'string' },
    limits: { type: 'object', properties: { max: { type: 'integer' } } },
    labels: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'string' } } } },
    list: { type: 'array', items: { type: 'string' } },
  },
};

describe('parseFieldPath', () => {
  it.each<[string, celfieldpaths.PathSegment[]]>([
    ['.host', [{ name: 'host', asMapKey: false }]],
    ["['host']", [{ name: 'host', asMapKey: false }]],
    ["['foo.34$']", [{ name: 'foo.34$', asMapKey: false }]],
    [
      '.limits.max',
      [
        { name: 'limits', asMapKey: false },
        { name: 'max', asMapKey: false },
      ],
    ],
    [
      ".labels['a.b/c'].v",
      [
        { name: 'labels', asMapKey: false },
        { name: 'a.b/c', asMapKey: true },
        { name: 'v', asMapKey: false },
      ],
    ],
    [
      ".labels['it\\'s']",
      [
        { name: 'labels', asMapKey: false },
        { name: "it's", asMapKey: true },
      ],
    ],
    [
      '.labels.plain',
      [
        { name: 'labels', asMapKey: false },
        { name: 'plain', asMapKey: true },
      ],
    ],
  ])('D-CRD-13 %s resolves against the schema', (path, expected) => {
    expect(celfieldpaths.parseFieldPath(path, schema)).toEqual(expected);
  });

  it.each([
    ['.nope', /does not refer to a valid field/],
    ['.list[0]', /expected single quoted string/],
    ['.host.deeper', /does not refer to a valid field/],
    ['host', /expected \[ or \. but got: host/],
    ['.', /unexpected end of JSON path/],
    ["['host'", /expected \] but got end of path/],
    ["['unterminated]", /unterminated string literal/],
    ["['bad\\q']", /invalid escape char/],
    ['', /empty field path/],
  ])('D-CRD-13 %s is rejected', (path, message) => {
    expect(() => celfieldpaths.parseFieldPath(path, schema)).toThrow(celfieldpaths.FieldPathError);
    expect(() => celfieldpaths.parseFieldPath(path, schema)).toThrow(message);
  });
});
