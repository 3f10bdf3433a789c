import { describe, expect, it } from 'vitest';
import type * as schemas from '../../../devcluster/crds/schemas.js';
import * as validation from '../../../devcluster/crds/validation.js';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as widgets from './widgets.js';

const rendered = (errors: readonly fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);
const obj = (properties: Record<string, schemas.JSONSchemaProps>, extra: schemas.JSONSchemaProps = {}): schemas.JSONSchemaProps => ({
  type: 'object',
  properties,
  ...extra,
});
/** Validates `{spec: {x: value}}` against a schema whose `spec.x` is `x`. */
const validateX = (x: schemas.JSONSchemaProps, value: unknown): fielderrors.FieldError[] =>
  validation.validateCustomObject(widgets.widget({ x: value }), obj({ spec: obj({ x }) }));

describe('validateCustomObject', () => {
  it('D-CRD-11 a valid Widget has no errors', () => {
    const input = widgets.widget({ size: 3, replicas: 2, mode: 'a', name: 'abc', tags: ['x', 'y'], color: 'blue', extra: { any: 1 } });
    expect(validation.validateCustomObject(input, widgets.widgetSchema())).toEqual([]);
  });

  it('C-93 D-CRD-11 reports all violations together with their cause types', () => {
    const input = widgets.widget({ size: '3', mode: 'c', name: 'ABC', tags: ['a', 'b', 'c'] });
    const errors = validation.validateCustomObject(input, widgets.widgetSchema());
    expect(errors.map((e) => [e.field, e.type])).toEqual([
      ['spec.size', 'FieldValueTypeInvalid'],
      ['spec.mode', 'FieldValueNotSupported'],
      ['spec.name', 'FieldValueInvalid'],
      ['spec.tags', 'FieldValueTooMany'],
    ]);
    expect(rendered(errors)).toEqual([
      'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
      'spec.mode: Unsupported value: "c": supported values: "a", "b"',
      'spec.name: Invalid value: "ABC": spec.name in body should match \'^[a-z]+$\'',
      'spec.tags: Too many: 3: must have at most 2 items',
    ]);
  });

  it('C-94 D-CRD-11 spec.size 11 exceeds the maximum', () => {
    expect(rendered(validation.validateCustomObject(widgets.widget({ size: 11 }), widgets.widgetSchema()))).toEqual([
      'spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10',
    ]);
  });

  it('C-94 D-CRD-11 spec without size is FieldValueRequired on spec.size', () => {
    const errors = validation.validateCustomObject(widgets.widget({}), widgets.widgetSchema());
    expect(errors).toEqual([{ type: 'FieldValueRequired', field: 'spec.size' }]);
    expect(rendered(errors)).toEqual(['spec.size: Required value']);
  });

  const keywordCases: { title: string; schema: schemas.JSONSchemaProps; value: unknown; type: fielderrors.FieldErrorType; text: string }[] = [
    {
      title: 'type integer rejects 1.5',
      schema: { type: 'integer' },
      value: 1.5,
      type: 'FieldValueTypeInvalid',
      text: 'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"',
    },
    {
      title: 'type string rejects an object',
      schema: { type: 'string' },
      value: {},
      type: 'FieldValueTypeInvalid',
      text: 'spec.x: Invalid value: "object": spec.x in body must be of type string: "object"',
    },
    {
      title: 'type object rejects an array',
      schema: { type: 'object' },
      value: [],
      type: 'FieldValueTypeInvalid',
      text: 'spec.x: Invalid value: "array": spec.x in body must be of type object: "array"',
    },
    {
      title: 'type boolean rejects a string',
      schema: { type: 'boolean' },
      value: 'true',
      type: 'FieldValueTypeInvalid',
      text: 'spec.x: Invalid value: "string": spec.x in body must be of type boolean: "string"',
    },
    {
      title: 'type array rejects a number',
      schema: { type: 'array', items: { type: 'string' } },
      value: 1,
      type: 'FieldValueTypeInvalid',
      text: 'spec.x: Invalid value: "integer": spec.x in body must be of type array: "integer"',
    },
    {
      title: 'int-or-string rejects a boolean',
      schema: { 'x-kubernetes-int-or-string': true },
      value: true,
      type: 'FieldValueTypeInvalid',
      text: 'spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"',
    },
    {
      title: 'format email',
      schema: { type: 'string', format: 'email' },
      value: 'foo',
      type: 'FieldValueTypeInvalid',
      text: 'spec.x: Invalid value: "foo": spec.x in body must be of type email: "foo"',
    },
    {
      title: 'format date-time',
      schema: { type: 'string', format: 'date-time' },
      value: '2024-13-01T00:00:00Z',
      type: 'FieldValueTypeInvalid',
      text: 'spec.x: Invalid value: "2024-13-01T00:00:00Z": spec.x in body must be of type date-time: "2024-13-01T00:00:00Z"',
    },
    {
      title: 'enum with non-string values',
      schema: { type: 'integer', enum: [1, 2] },
      value: 3,
      type: 'FieldValueNotSupported',
      text: 'spec.x: Unsupported value: 3: supported values: 1, 2',
    },
    {
      title: 'exclusiveMaximum',
      schema: { type: 'number', maximum: 10, exclusiveMaximum: true },
      value: 10,
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: 10: spec.x in body should be less than 10',
    },
    {
      title: 'minimum',
      schema: { type: 'integer', minimum: 1 },
      value: 0,
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1',
    },
    {
      title: 'exclusiveMinimum',
      schema: { type: 'number', minimum: 1, exclusiveMinimum: true },
      value: 1,
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: 1: spec.x in body should be greater than 1',
    },
    {
      title: 'multipleOf',
      schema: { type: 'integer', multipleOf: 5 },
      value: 7,
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: 7: spec.x in body should be a multiple of 5',
    },
    {
      title: 'maxLength counts characters',
      schema: { type: 'string', maxLength: 5 },
      value: 'abcdef',
      type: 'FieldValueTooLong',
      text: 'spec.x: Too long: may not be more than 5 bytes',
    },
    {
      title: 'minLength',
      schema: { type: 'string', minLength: 3 },
      value: 'ab',
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: "ab": spec.x in body should be at least 3 chars long',
    },
    {
      title: 'pattern',
      schema: { type: 'string', pattern: '^[a-z]+$' },
      value: 'x1',
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: "x1": spec.x in body should match \'^[a-z]+$\'',
    },
    {
      title: 'maxItems',
      schema: { type: 'array', items: { type: 'string' }, maxItems: 2 },
      value: ['a', 'b', 'c'],
      type: 'FieldValueTooMany',
      text: 'spec.x: Too many: 3: must have at most 2 items',
    },
    {
      title: 'minItems',
      schema: { type: 'array', items: { type: 'string' }, minItems: 2 },
      value: ['a'],
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: 1: spec.x in body should have at least 2 items',
    },
    {
      title: 'uniqueItems',
      schema: { type: 'array', items: { type: 'integer' }, uniqueItems: true },
      value: [1, 2, 1],
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: "": spec.x in body shouldn\'t contain duplicates',
    },
    {
      title: 'maxProperties',
      schema: { type: 'object', additionalProperties: { type: 'integer' }, maxProperties: 3 },
      value: { a: 1, b: 2, c: 3, d: 4 },
      type: 'FieldValueTooMany',
      text: 'spec.x: Too many: 4: must have at most 3 items',
    },
    {
      title: 'minProperties',
      schema: { type: 'object', minProperties: 1 },
      value: {},
      type: 'FieldValueInvalid',
      text: 'spec.x: Invalid value: 0: spec.x in body should have at least 1 properties',
    },
    {
      title: 'set duplicates',
      schema: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
      value: ['a', 'b', 'a'],
      type: 'FieldValueDuplicate',
      text: 'spec.x[2]: Duplicate value: "a"',
    },
    {
      title: 'map duplicate keys',
      schema: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: obj({ name: { type: 'string' }, port: { type: 'integer' } }),
      },
      value: [
        { name: 'http', port: 80 },
        { name: 'http', port: 8080 },
      ],
      type: 'FieldValueDuplicate',
      text: 'spec.x[1]: Duplicate value: {"name":"http"}',
    },
  ];

  it.each(keywordCases)('D-CRD-11 $title', ({ schema, value, type, text }) => {
    const errors = validateX(schema, value);
    expect(errors.map((e) => e.type)).toEqual([type]);
    expect(rendered(errors)).toEqual([text]);
  });

  it.each([
    { title: 'number accepts integers', schema: { type: 'number', maximum: 3 }, value: 2 },
    { title: 'int-or-string accepts an integer', schema: { 'x-kubernetes-int-or-string': true }, value: 8080 },
    { title: 'int-or-string accepts a string', schema: { 'x-kubernetes-int-or-string': true }, value: '50%' },
    { title: 'unknown formats are ignored', schema: { type: 'string', format: 'no-such-format' }, value: 'whatever' },
    { title: 'numeric formats are not checked', schema: { type: 'integer', format: 'int32' }, value: 2 ** 40 },
    { title: 'maxLength counts characters, not bytes', schema: { type: 'string', maxLength: 3 }, value: 'äöü' },
    { title: 'nullable accepts null', schema: { type: 'string', nullable: true }, value: null },
    { title: 'preserve-unknown-fields accepts anything', schema: { 'x-kubernetes-preserve-unknown-fields': true }, value: { a: [1, 'b'] } },
  ] as { title: string; schema: schemas.JSONSchemaProps; value: unknown }[])('D-CRD-11 $title', ({ schema, value }) => {
    expect(validateX(schema, value)).toEqual([]);
  });

  it.each([
    ['date', '2024-02-29', '2023-02-29'],
    ['date-time', '2024-01-02T03:04:05.123+02:00', 'yesterday'],
    ['ipv4', '10.0.0.1', '10.0.0.256'],
    ['ipv6', 'fe80::1', 'fe80::g'],
    ['cidr', '10.0.0.0/8', '10.0.0.0/33'],
    ['hostname', 'a-b.example.com', '-bad.example.com'],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', '123e4567e89b12d3a456426614174000'],
    ['uuid4', '123e4567-e89b-42d3-a456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
    ['mac', '01:23:45:67:89:ab', '01:23:45:67:89'],
    ['byte', 'aGVsbG8=', 'hello!'],
    ['duration', '1h30m', 'soon'],
    ['uri', 'https://example.com/x', 'not a uri'],
  ])('D-CRD-11 format %s accepts %s and rejects %s', (format, good, bad) => {
    expect(validateX({ type: 'string', format }, good)).toEqual([]);
    expect(validateX({ type: 'string', format }, bad)).toEqual([
      expect.objectContaining({
        type: 'FieldValueTypeInvalid',
        field: 'spec.x',
        value: bad,
        detail: `spec.x in body must be of type ${format}: ${JSON.stringify(bad)}`,
      }),
    ]);
  });

  it('D-CRD-11 int-or-string quantities: integers pass, strings must match the pattern', () => {
    const quantity: schemas.JSONSchemaProps = {
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      pattern: '^[0-9]+(m|Mi|Gi)?$',
    };
    expect(validateX(quantity, 2)).toEqual([]);
    expect(validateX(quantity, '500m')).toEqual([]);
    expect(validateX(quantity, 'lots').map((e) => [e.field, e.type])).toEqual([['spec.x', 'FieldValueInvalid']]);
    expect(validateX(quantity, 1.5).map((e) => e.type)).toEqual(['FieldValueTypeInvalid']);
  });

  it('D-CRD-11 null in a non-nullable array item is a type error', () => {
    const errors = validateX({ type: 'array', items: { type: 'string' } }, ['a', null]);
    expect(rendered(errors)).toEqual(['spec.x[1]: Invalid value: "null": spec.x[1] in body must be of type string: "null"']);
    expect(errors[0]!.type).toBe('FieldValueTypeInvalid');
  });

  it('D-CRD-11 nested paths use dots and [i]', () => {
    const schema = obj({ spec: obj({ items: { type: 'array', items: obj({ name: { type: 'string', minLength: 2 } }, { required: ['name'] }) } }) });
    const errors = validation.validateCustomObject(widgets.widget({ items: [{ name: 'ok' }, {}, { name: 'x' }] }), schema);
    expect(errors.map((e) => e.field)).toEqual(['spec.items[1].name', 'spec.items[2].name']);
  });

  it('D-CRD-11 additionalProperties values are validated under their key', () => {
    const errors = validateX({ type: 'object', additionalProperties: { type: 'integer' } }, { a: 1, b: 'two' });
    expect(errors.map((e) => [e.field, e.type])).toEqual([['spec.x.b', 'FieldValueTypeInvalid']]);
  });

  it('D-CRD-11 allOf reports the failures of its members', () => {
    const errors = validateX({ type: 'integer', allOf: [{ minimum: 5 }, { multipleOf: 2 }] }, 3);
    expect(errors.map((e) => e.detail)).toEqual(['spec.x in body should be greater than or equal to 5', 'spec.x in body should be a multiple of 2']);
  });

  it('D-CRD-11 anyOf, oneOf and not are FieldValueInvalid on the node', () => {
    const anyOf = validateX({ type: 'object', anyOf: [{ required: ['a'] }, { required: ['b'] }] }, {});
    const oneOf = validateX({ type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] }, { a: 1, b: 2 });
    const not = validateX({ type: 'string', not: { enum: ['forbidden'] } }, 'forbidden');
    for (const errors of [anyOf, oneOf, not]) expect(errors).toEqual([expect.objectContaining({ type: 'FieldValueInvalid', field: 'spec.x' })]);
    expect(validateX({ type: 'object', anyOf: [{ required: ['a'] }, { required: ['b'] }] }, { b: 1 })).toEqual([]);
    expect(validateX({ type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] }, { a: 1 })).toEqual([]);
    expect(validateX({ type: 'string', not: { enum: ['forbidden'] } }, 'fine')).toEqual([]);
  });

  it('D-CRD-11 leaves the root metadata to the ObjectMeta validator but applies name constraints from the schema', () => {
    const schema = obj({ metadata: obj({ name: { type: 'string', maxLength: 3 } }), spec: obj({}) });
    const input = { apiVersion: 1, kind: false, metadata: { name: 'toolong', labels: 'not-a-map' }, spec: {} };
    expect(rendered(validation.validateCustomObject(input, schema))).toEqual(['metadata.name: Too long: may not be more than 3 bytes']);
  });

  it('D-CRD-7 embedded resources need apiVersion and kind, and their content is validated', () => {
    const schema = obj({
      spec: obj({ pod: obj({ spec: obj({ replicas: { type: 'integer' } }) }, { 'x-kubernetes-embedded-resource': true }) }),
    });
    const errors = validation.validateCustomObject(widgets.widget({ pod: { kind: '', metadata: { labels: { a: 1 } }, spec: { replicas: 'x' } } }), schema);
    expect(errors.map((e) => [e.field, e.type])).toEqual([
      ['spec.pod.apiVersion', 'FieldValueRequired'],
      ['spec.pod.kind', 'FieldValueInvalid'],
      ['spec.pod.metadata.labels', 'FieldValueInvalid'],
      ['spec.pod.spec.replicas', 'FieldValueTypeInvalid'],
    ]);
  });

  it('D-CRD-11 basePath prefixes fields but not messages', () => {
    const errors = validation.validateCustomObject({ max: 7 }, obj({ max: { type: 'integer', maximum: 5 } }), { root: false, basePath: 'x.default' });
    expect(rendered(errors)).toEqual(['x.default.max: Invalid value: 7: max in body should be less than or equal to 5']);
  });
});
