import { describe, expect, it } from 'vitest';
import * as defaulting from '../../../devcluster/crds/defaulting.js';
import type * as schemas from '../../../devcluster/crds/schemas.js';
import * as widgets from './widgets.js';

const obj = (properties: Record<string, schemas.JSONSchemaProps>, extra: schemas.JSONSchemaProps = {}): schemas.JSONSchemaProps => ({
  type: 'object',
  properties,
  ...extra,
});

describe('applyDefaults', () => {
  it('C-92 D-CRD-10 fills spec.color from its default', () => {
    const result = defaulting.applyDefaults(widgets.widget({ size: 2 }), widgets.widgetSchema());
    expect(result).toEqual(widgets.widget({ size: 2, color: 'blue' }));
  });

  it('C-92 D-CRD-10 a default added to the schema appears on an existing object', () => {
    const stored = widgets.widget({ size: 2, color: 'red' });
    const schema = widgets.widgetSchema();
    schema.properties!.spec!.properties!.level = { type: 'integer', default: 1 };
    expect(defaulting.applyDefaults(stored, schema)).toEqual(widgets.widget({ size: 2, color: 'red', level: 1 }));
  });

  it('D-CRD-10 a default of {} enables the defaults below it', () => {
    const schema = obj({
      spec: obj({ a: { type: 'string', default: 'x' }, inner: obj({ b: { type: 'integer', default: 2 } }, { default: {} }) }, { default: {} }),
    });
    expect(defaulting.applyDefaults({}, schema)).toEqual({ spec: { a: 'x', inner: { b: 2 } } });
  });

  it('D-CRD-10 no defaults are applied inside absent nodes', () => {
    const schema = obj({ spec: obj({ a: { type: 'string', default: 'x' } }) });
    expect(defaulting.applyDefaults({ metadata: { name: 'w' } }, schema)).toEqual({ metadata: { name: 'w' } });
  });

  it.each([
    { title: 'null non-nullable property is replaced', prop: { type: 'string', default: 'x' }, input: null, output: 'x' },
    { title: 'null nullable property is kept', prop: { type: 'string', nullable: true, default: 'x' }, input: null, output: null },
    { title: 'present value is kept', prop: { type: 'string', default: 'x' }, input: 'y', output: 'y' },
    { title: 'falsy present value is kept', prop: { type: 'integer', default: 5 }, input: 0, output: 0 },
  ] as { title: string; prop: schemas.JSONSchemaProps; input: unknown; output: unknown }[])('D-CRD-10 $title', ({ prop, input, output }) => {
    expect(defaulting.applyDefaults({ spec: { v: input } }, obj({ spec: obj({ v: prop }) }))).toEqual({ spec: { v: output } });
  });

  it('D-CRD-10 under additionalProperties and items only nulls are replaced', () => {
    const schema = obj({
      spec: obj({
        map: { type: 'object', additionalProperties: { type: 'string', default: 'd' } },
        list: { type: 'array', items: obj({ n: { type: 'integer', default: 1 } }, { default: {} }) },
      }),
    });
    const input = { spec: { map: { a: null, b: 'kept' }, list: [null, { n: 5 }, {}] } };
    expect(defaulting.applyDefaults(input, schema)).toEqual({ spec: { map: { a: 'd', b: 'kept' }, list: [{ n: 1 }, { n: 5 }, { n: 1 }] } });
  });

  it('D-CRD-10 inserts deep copies and does not mutate the input', () => {
    const schema = obj({ spec: obj({ list: { type: 'array', items: { type: 'string' }, default: ['a'] } }) });
    const input = { spec: {} };
    const first = defaulting.applyDefaults(input, schema) as { spec: { list: string[] } };
    first.spec.list.push('b');
    const second = defaulting.applyDefaults(input, schema) as { spec: { list: string[] } };
    expect(second.spec.list).toEqual(['a']);
    expect(schema.properties!.spec!.properties!.list!.default).toEqual(['a']);
    expect(input).toEqual({ spec: {} });
  });
});
