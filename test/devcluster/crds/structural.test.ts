import { describe, expect, it } from 'vitest';
import * as structural from '../../../devcluster/crds/structural.js';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as widgets from './widgets.js';

const ROOT = 'spec.versions[0].schema.openAPIV3Schema';
const check = (schema: unknown): fielderrors.FieldError[] => structural.validateStructuralSchema(schema, ROOT);
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ type: 'object', properties, ...extra });

describe('validateStructuralSchema', () => {
  it('D-CRD-6 accepts the Setup W schema', () => {
    expect(check(widgets.widgetSchema())).toEqual([]);
  });

  it('D-CRD-6 accepts preserve-unknown-fields without type, int-or-string with its anyOf, and nested metadata fields', () => {
    const schema = obj({
      spec: obj({
        anything: { 'x-kubernetes-preserve-unknown-fields': true },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        port2: { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^[0-9a-z]+$' }] },
        template: obj({ metadata: obj({ labels: { type: 'object', additionalProperties: { type: 'string' } } }) }),
        labels: { type: 'object', additionalProperties: true },
        oneOrOther: obj({ a: { type: 'string' }, b: { type: 'string' } }, { oneOf: [{ required: ['a'] }, { required: ['b'] }] }),
        podSpec: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: obj({ name: { type: 'string' }, port: { type: 'integer' } }, { required: ['name'] }),
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        limits: {
          type: 'object',
          additionalProperties: {
            anyOf: [{ type: 'integer' }, { type: 'string' }],
            pattern: String.raw`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`,
            'x-kubernetes-int-or-string': true,
          },
        },
        ref: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { name: { type: 'string', default: '' } } },
      }),
      metadata: obj({ name: { type: 'string', maxLength: 20 } }),
    });
    expect(check(schema)).toEqual([]);
  });

  const cases: { title: string; schema: unknown; expected: Partial<fielderrors.FieldError>[] }[] = [
    {
      title: 'D-CRD-6 a root without type',
      schema: { properties: { spec: { type: 'object' } } },
      expected: [{ type: 'FieldValueRequired', field: `${ROOT}.type`, detail: 'must not be empty at the root' }],
    },
    {
      title: 'D-CRD-6 a root that is not an object',
      schema: { type: 'string' },
      expected: [{ type: 'FieldValueInvalid', field: `${ROOT}.type`, value: 'string', detail: 'must be object at the root' }],
    },
    {
      title: 'D-CRD-6 array items without type',
      schema: obj({ list: { type: 'array', items: { pattern: '^a' } } }),
      expected: [{ type: 'FieldValueRequired', field: `${ROOT}.properties[list].items.type`, detail: 'must not be empty for specified array items' }],
    },
    {
      title: 'D-CRD-6 an array without items',
      schema: obj({ list: { type: 'array' } }),
      expected: [{ type: 'FieldValueRequired', field: `${ROOT}.properties[list].items`, detail: 'must be specified' }],
    },
    {
      title: 'D-CRD-6 int-or-string with a type',
      schema: obj({ port: { type: 'string', 'x-kubernetes-int-or-string': true } }),
      expected: [{ type: 'FieldValueInvalid', field: `${ROOT}.properties[port].type` }],
    },
    {
      title: 'D-CRD-6 properties together with additionalProperties',
      schema: obj({ m: obj({ a: { type: 'string' } }, { additionalProperties: { type: 'string' } }) }),
      expected: [
        {
          type: 'FieldValueForbidden',
          field: `${ROOT}.properties[m].additionalProperties`,
          detail: 'additionalProperties and properties are mutual exclusive',
        },
      ],
    },
    {
      title: 'D-CRD-6 additionalProperties false',
      schema: obj({ m: { type: 'object', additionalProperties: false } }),
      expected: [{ type: 'FieldValueForbidden', field: `${ROOT}.properties[m].additionalProperties`, detail: 'additionalProperties cannot be set to false' }],
    },
    {
      title: 'D-CRD-6 additionalProperties at the root',
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      expected: [{ type: 'FieldValueForbidden', field: `${ROOT}.additionalProperties`, detail: 'must not be used at the root' }],
    },
    {
      title: 'D-CRD-6 structural keywords inside junctors',
      schema: obj({ spec: obj({ a: { type: 'string' } }, { anyOf: [{ type: 'object', description: 'x', nullable: true, default: {} }] }) }),
      expected: [
        { type: 'FieldValueForbidden', field: `${ROOT}.properties[spec].anyOf[0].type`, detail: 'must be empty to be structural' },
        { type: 'FieldValueForbidden', field: `${ROOT}.properties[spec].anyOf[0].default`, detail: 'must be undefined to be structural' },
        { type: 'FieldValueForbidden', field: `${ROOT}.properties[spec].anyOf[0].description`, detail: 'must be empty to be structural' },
        { type: 'FieldValueForbidden', field: `${ROOT}.properties[spec].anyOf[0].nullable`, detail: 'must be false to be structural' },
      ],
    },
    {
      title: 'D-CRD-6 x-kubernetes extensions inside junctors',
      schema: obj({ spec: obj({ a: { type: 'string' } }, { not: { 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-int-or-string': true } }) }),
      expected: [
        { type: 'FieldValueForbidden', field: `${ROOT}.properties[spec].not.x-kubernetes-preserve-unknown-fields`, detail: 'must be false to be structural' },
        { type: 'FieldValueForbidden', field: `${ROOT}.properties[spec].not.x-kubernetes-int-or-string`, detail: 'must be false to be structural' },
      ],
    },
    {
      title: 'D-CRD-6 metadata inside a junctor',
      schema: obj({ spec: { type: 'object' } }, { allOf: [{ properties: { metadata: { required: ['name'] } } }] }),
      expected: [
        { type: 'FieldValueForbidden', field: `${ROOT}.allOf[0].properties[metadata]`, detail: 'must not be specified in a nested context' },
        { type: 'FieldValueRequired', field: `${ROOT}.properties[metadata]`, detail: `because it is defined in ${ROOT}.allOf[0].properties[metadata]` },
      ],
    },
    {
      title: 'D-CRD-6 a junctor field that the structural part does not specify',
      schema: obj({ spec: obj({ a: { type: 'string' } }, { oneOf: [{ properties: { b: { minLength: 1 } } }] }) }),
      expected: [
        {
          type: 'FieldValueRequired',
          field: `${ROOT}.properties[spec].properties[b]`,
          detail: `because it is defined in ${ROOT}.properties[spec].oneOf[0].properties[b]`,
        },
      ],
    },
    {
      title: 'D-CRD-6 root metadata constraining more than name and generateName',
      schema: obj({ metadata: obj({ name: { type: 'string' }, labels: { type: 'object' } }) }),
      expected: [
        {
          type: 'FieldValueForbidden',
          field: `${ROOT}.properties[metadata]`,
          detail: 'must not specify anything other than name and generateName, but metadata is implicitly specified',
        },
      ],
    },
    {
      title: 'D-CRD-6 x-kubernetes-preserve-unknown-fields false',
      schema: obj({ spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } }),
      expected: [
        {
          type: 'FieldValueInvalid',
          field: `${ROOT}.properties[spec].x-kubernetes-preserve-unknown-fields`,
          value: false,
          detail: 'must be true or undefined',
        },
      ],
    },
    {
      title: 'D-CRD-6 an embedded resource without type and properties',
      schema: obj({ res: { 'x-kubernetes-embedded-resource': true } }),
      expected: [
        { type: 'FieldValueRequired', field: `${ROOT}.properties[res].type`, detail: 'must be object if x-kubernetes-embedded-resource is true' },
        {
          type: 'FieldValueRequired',
          field: `${ROOT}.properties[res].properties`,
          detail: 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
        },
      ],
    },
    {
      title: 'D-CRD-6 an invalid pattern',
      schema: obj({ s: { type: 'string', pattern: '^[a-z' } }),
      expected: [{ type: 'FieldValueInvalid', field: `${ROOT}.properties[s].pattern`, value: '^[a-z' }],
    },
    {
      title: 'D-CRD-6 a pattern with look-ahead',
      schema: obj({ s: { type: 'string', pattern: '^(?!admin)[a-z]+$' } }),
      expected: [{ type: 'FieldValueInvalid', field: `${ROOT}.properties[s].pattern` }],
    },
    {
      title: 'D-CRD-6 a pattern with look-behind',
      schema: obj({ s: { type: 'string', pattern: '(?<=a)b' } }),
      expected: [{ type: 'FieldValueInvalid', field: `${ROOT}.properties[s].pattern` }],
    },
    {
      title: 'D-CRD-19 a back-reference in a pattern inside anyOf',
      schema: obj({ s: { type: 'string', anyOf: [{ pattern: '(a)\\1' }] } }),
      expected: [
        {
          type: 'FieldValueInvalid',
          field: `${ROOT}.properties[s].anyOf[0].pattern`,
          value: '(a)\\1',
          detail: "must be a valid regular expression, but isn't: error parsing regexp: invalid escape sequence: `\\1`",
        },
      ],
    },
    {
      title: 'D-CRD-20 a CEL rule whose literal pattern Go rejects',
      schema: obj({ s: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.find('a**') == 'a'" }] } }),
      expected: [
        {
          type: 'FieldValueInvalid',
          field: `${ROOT}.properties[s].x-kubernetes-validations[0].rule`,
          value: { rule: "self.find('a**') == 'a'" },
          detail: 'program instantiation failed: error parsing regexp: invalid nested repetition operator: `**`',
        },
      ],
    },
    {
      title: 'D-CRD-6 a default of the wrong type',
      schema: obj({ spec: obj({ size: { type: 'integer', default: 'big' } }) }),
      expected: [
        {
          type: 'FieldValueTypeInvalid',
          field: `${ROOT}.properties[spec].properties[size].default`,
          value: 'string',
          detail: 'in body must be of type integer: "string"',
        },
      ],
    },
    {
      title: 'D-CRD-6 a default violating nested constraints',
      schema: obj({ spec: obj({ limits: obj({ max: { type: 'integer', maximum: 5 } }, { default: { max: 7 } }) }) }),
      expected: [
        {
          type: 'FieldValueInvalid',
          field: `${ROOT}.properties[spec].properties[limits].default.max`,
          value: 7,
          detail: 'max in body should be less than or equal to 5',
        },
      ],
    },
    {
      title: 'D-CRD-6 a default that pruning would change',
      schema: obj({ spec: obj({ limits: obj({ max: { type: 'integer' } }, { default: { max: 1, bogus: true } }) }) }),
      expected: [{ type: 'FieldValueInvalid', field: `${ROOT}.properties[spec].properties[limits].default`, detail: 'must not have unknown fields' }],
    },
    {
      title: 'D-CRD-6 a default inside the root metadata',
      schema: obj({ metadata: obj({ name: { type: 'string', default: 'x' } }) }),
      expected: [{ type: 'FieldValueForbidden', field: `${ROOT}.properties[metadata].properties[name].default` }],
    },
    {
      title: 'D-CRD-6 unsupported keywords',
      schema: obj({ a: { type: 'string', $ref: '#/definitions/x' }, b: { type: 'array', items: { type: 'string' }, uniqueItems: true } }),
      expected: [
        { type: 'FieldValueForbidden', field: `${ROOT}.properties[a].$ref`, detail: '$ref is not supported' },
        { type: 'FieldValueForbidden', field: `${ROOT}.properties[b].uniqueItems` },
      ],
    },
    {
      title: 'D-CRD-6 a map list without keys',
      schema: obj({ l: { type: 'array', 'x-kubernetes-list-type': 'map', items: obj({ k: { type: 'string' } }) } }),
      expected: [
        { type: 'FieldValueRequired', field: `${ROOT}.properties[l].x-kubernetes-list-map-keys`, detail: 'must not be empty if x-kubernetes-list-type is map' },
      ],
    },
    {
      title: 'D-CRD-6 a map-list key that is neither required nor defaulted',
      schema: obj({ l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: obj({ k: { type: 'string' } }) } }),
      expected: [
        {
          type: 'FieldValueRequired',
          field: `${ROOT}.properties[l].items.properties[k].default`,
          detail: 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
        },
      ],
    },
    {
      title: 'D-CRD-6 an unknown list type',
      schema: obj({ l: { type: 'array', 'x-kubernetes-list-type': 'bag', items: { type: 'string' } } }),
      expected: [{ type: 'FieldValueNotSupported', field: `${ROOT}.properties[l].x-kubernetes-list-type`, value: 'bag' }],
    },
  ];

  it.each(cases)('$title is rejected', ({ schema, expected }) => {
    const errors = check(schema);
    expect(errors).toHaveLength(expected.length);
    for (const want of expected) expect(errors).toContainEqual(expect.objectContaining(want));
  });

  it('D-CRD-6 reports every nested violation with upstream property paths', () => {
    const schema = widgets.widgetSchema();
    delete schema.properties!.spec!.properties!.size!.type;
    delete schema.properties!.status!.properties!.phase!.type;
    expect(check(schema).map(fielderrors.renderError)).toEqual([
      `${ROOT}.properties[spec].properties[size].type: Required value: must not be empty for specified object fields`,
      `${ROOT}.properties[status].properties[phase].type: Required value: must not be empty for specified object fields`,
    ]);
  });
});

describe('unknown schema types', () => {
  it('D-CRD-6 a type outside array/boolean/integer/number/object/string is an Unsupported value', () => {
    const errors = structural.validateStructuralSchema(
      { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'strnig' } } } } },
      'spec.versions[0].schema.openAPIV3Schema',
    );
    expect(errors).toContainEqual(
      expect.objectContaining({
        type: 'FieldValueNotSupported',
        field: 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type',
        value: 'strnig',
      }),
    );
  });
});
