import { describe, expect, it } from 'vitest';
import * as jsonpaths from '../../../devcluster/crds/jsonpaths.js';
import * as printercolumns from '../../../devcluster/crds/printercolumns.js';
import type * as schemas from '../../../devcluster/crds/schemas.js';

const now = new Date('2024-05-01T12:00:00Z');
const ago = (ms: number): string => new Date(now.getTime() - ms).toISOString();

const bare: schemas.CustomResourceDefinitionVersion = { name: 'v1', served: true, storage: true };
const withColumns: schemas.CustomResourceDefinitionVersion = {
  ...bare,
  additionalPrinterColumns: [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    { name: 'Mode', type: 'string', jsonPath: '.spec.mode', description: 'the mode', priority: 1 },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Tags', type: 'string', jsonPath: '.spec.tags' },
    { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
    { name: 'Created', type: 'date', format: 'date-time', jsonPath: '.metadata.creationTimestamp' },
  ],
};

const widget = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w1', creationTimestamp: ago(5 * 60_000) },
  spec: { size: 3, mode: 'a', tags: ['x', 'y'] },
  status: {
    conditions: [
      { type: 'Synced', status: 'False' },
      { type: 'Ready', status: 'True' },
    ],
  },
};

describe('columnDefinitions', () => {
  it('D-CRD-14 without printer columns are Name and Age', () => {
    const columns = printercolumns.columnDefinitions(bare);
    expect(columns.map((c) => [c.name, c.type, c.format, c.priority])).toEqual([
      ['Name', 'string', 'name', 0],
      ['Age', 'date', '', 0],
    ]);
    expect(columns.every((c) => c.description.length > 0)).toBe(true);
  });

  it('D-CRD-14 are Name followed by the declared columns, with the description fallback', () => {
    const columns = printercolumns.columnDefinitions(withColumns);
    expect(columns.map((c) => c.name)).toEqual(['Name', 'Size', 'Mode', 'Ready', 'Tags', 'Enabled', 'Created']);
    expect(columns[1]).toEqual({
      name: 'Size',
      type: 'integer',
      format: '',
      description: 'Custom resource definition column (in JSONPath format): .spec.size',
      priority: 0,
    });
    expect(columns[2]).toMatchObject({ description: 'the mode', priority: 1 });
    expect(columns[6]).toMatchObject({ type: 'date', format: 'date-time' });
  });
});

describe('rowCells', () => {
  it('D-CRD-14 renders Name and Age by default', () => {
    expect(printercolumns.rowCells(bare, widget, now)).toEqual(['w1', '5m']);
  });

  it('D-CRD-14 evaluates the declared columns; missing values are null', () => {
    expect(printercolumns.rowCells(withColumns, widget, now)).toEqual(['w1', 3, 'a', 'True', '["x","y"]', null, '5m']);
  });

  it('D-CRD-14 an unparsable date renders as <invalid>', () => {
    const odd = { ...widget, metadata: { name: 'w1', creationTimestamp: 'yesterday' } };
    expect(printercolumns.rowCells(bare, odd, now)).toEqual(['w1', '<invalid>']);
  });
});

describe('formatAge', () => {
  const s = 1000;
  const m = 60 * s;
  const h = 60 * m;
  const d = 24 * h;
  const y = 365 * d;
  it.each([
    [-3 * s, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [5 * s, '5s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [3 * m + 20 * s, '3m20s'],
    [5 * m, '5m'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h + 2 * m, '3h2m'],
    [7 * h, '7h'],
    [8 * h + 30 * m, '8h'],
    [47 * h, '47h'],
    [2 * d, '2d'],
    [3 * d + 4 * h, '3d4h'],
    [8 * d + 5 * h, '8d'],
    [400 * d, '400d'],
    [2 * y, '2y'],
    [3 * y + 5 * d, '3y5d'],
    [12 * y + 100 * d, '12y'],
  ])('D-WIRE-18 %i ms → %s', (ms, expected) => {
    expect(printercolumns.formatAge(ms)).toBe(expected);
  });
});

describe('evaluateJsonPath', () => {
  const doc = {
    spec: {
      list: [
        { n: 'a', v: 1 },
        { n: 'b', v: 2 },
      ],
      'dotted.key': 'k',
    },
  };
  it.each([
    ['.spec.list[1].v', [2]],
    ['.spec.list[-1].n', ['b']],
    ['.spec.list[*].n', ['a', 'b']],
    ['{.spec.list[0].n}', ['a']],
    [".spec['dotted.key']", ['k']],
    ['.spec.list[?(@.n=="b")].v', [2]],
    ['.spec.list[?(@.v!=1)].n', ['b']],
    ['.spec.missing', []],
    ['.spec..n', []],
  ])('%s → %j', (path, expected) => {
    expect(jsonpaths.evaluateJsonPath(doc, path)).toEqual(expected);
  });
});
