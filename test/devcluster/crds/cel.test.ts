import { describe, expect, it } from 'vitest';
import * as celrules from '../../../devcluster/crds/cel.js';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';

type Schema = celrules.CelSchemaNode;

/** A Widget-like root schema with `spec` built by the test. */
const root = (spec: Schema): Schema => ({ type: 'object', properties: { spec } });

const evaluate = (schema: Schema, obj: unknown, oldObj?: unknown): fielderrors.FieldError[] =>
  celrules.evaluateRules(celrules.compileRules(schema), obj, oldObj);

const bodies = (errors: readonly fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);

describe('compileRules', () => {
  it('D-CRD-13 compiles every rule of the schema and caches by schema identity', () => {
    const schema = root({
      type: 'object',
      properties: { size: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= 0' }] } },
      'x-kubernetes-validations': [{ rule: 'self.size <= 5', message: 'too big' }],
    });
    const compiled = celrules.compileRules(schema);
    expect(compiled.ruleCount).toBe(2);
    expect(compiled.warnings).toEqual([]);
    expect(celrules.compileRules(schema)).toBe(compiled);
    expect(celrules.compileRules(structuredClone(schema))).not.toBe(compiled);
  });

  it('D-CRD-13 a rule that fails to compile yields a warning and no error', () => {
    const schema = root({
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.size <=', message: 'broken' },
        { rule: 'quantity(self.size) > 1' },
        { rule: 'self.size + 1' },
        { rule: 'self.size <= 5', message: 'too big' },
      ],
    });
    const compiled = celrules.compileRules(schema);
    expect(compiled.ruleCount).toBe(1);
    expect(compiled.warnings).toHaveLength(3);
    expect(compiled.warnings[0]).toMatch(
      /^openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: skipped "self\.size <=": compilation failed/,
    );
    expect(compiled.warnings[1]).toContain('x-kubernetes-validations[1].rule');
    expect(compiled.warnings[1]).toContain('quantity');
    expect(compiled.warnings[2]).toContain('must evaluate to bool, not int');
    expect(evaluate(schema, { spec: { size: 3 } })).toEqual([]);
    expect(bodies(evaluate(schema, { spec: { size: 9 } }))).toEqual(['spec: Invalid value: "object": too big']);
  });

  it("D-CRD-20 a rule with a literal pattern Go rejects is skipped with upstream's reason", () => {
    const schema = root({
      type: 'object',
      'x-kubernetes-validations': [{ rule: "self.all(k, k.matches('^(?<!x)a'))" }, { rule: String.raw`self.all(k, k.matches(r'^\pL+$'))` }],
    });
    const compiled = celrules.compileRules(schema);
    expect(compiled.ruleCount).toBe(1);
    expect(compiled.warnings).toEqual([
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: skipped "self.all(k, k.matches(\'^(?<!x)a\'))": ' +
        'program instantiation failed: error parsing regexp: invalid named capture: `(?<!x)a`',
    ]);
    expect(evaluate(schema, { spec: { été: 1n } })).toEqual([]);
    expect(evaluate(schema, { spec: { e1: 1n } })).toHaveLength(1);
  });

  it('D-CRD-13 malformed rule entries are reported, never thrown', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'object', 'x-kubernetes-validations': [{ message: 'no rule' }, 'self > 1', { rule: '' }] },
        b: { type: 'object', 'x-kubernetes-validations': 'self > 1' },
      },
    } as unknown as Schema;
    const compiled = celrules.compileRules(schema);
    expect(compiled.ruleCount).toBe(0);
    expect(compiled.warnings).toHaveLength(4);
    expect(compiled.warnings[3]).toBe('openAPIV3Schema.properties[b].x-kubernetes-validations: skipped: not a list');
    expect(celrules.evaluateRules(compiled, { a: {}, b: {} }, undefined)).toEqual([]);
  });
});

describe('evaluateRules', () => {
  const sizeSpec: Schema = {
    type: 'object',
    properties: { size: { type: 'integer' } },
    'x-kubernetes-validations': [{ rule: 'self.size <= 5', message: 'too big' }],
  };

  it('C-96 self.size <= 5 with message "too big" on spec rejects size 6 with a cause on spec', () => {
    const errors = evaluate(root(sizeSpec), { apiVersion: 'example.com/v1', kind: 'Widget', spec: { size: 6 } });
    expect(errors).toEqual([{ type: 'FieldValueInvalid', field: 'spec', value: 'object', detail: 'too big' }]);
    expect(fielderrors.renderBody(errors[0]!)).toBe('Invalid value: "object": too big');
    expect(fielderrors.renderBody(errors[0]!).endsWith('too big')).toBe(true);
    expect(evaluate(root(sizeSpec), { spec: { size: 5 } })).toEqual([]);
  });

  it('D-CRD-13 a rule without message reports "failed rule: <rule>"', () => {
    const schema = root({ type: 'object', 'x-kubernetes-validations': [{ rule: ' self.size <= 5 ' }] });
    expect(bodies(evaluate(schema, { spec: { size: 6 } }))).toEqual(['spec: Invalid value: "object": failed rule: self.size <= 5']);
  });

  it('D-CRD-13 the value shown is the type name of the node', () => {
    const schema = root({
      type: 'object',
      properties: {
        name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() < 3', message: 'long' }] },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.size() < 2', message: 'many' }] },
        port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [{ rule: 'self != 80', message: 'no 80' }] },
      },
    });
    expect(bodies(evaluate(schema, { spec: { name: 'abcd', tags: ['a', 'b'], port: 80 } }))).toEqual([
      'spec.name: Invalid value: "string": long',
      'spec.tags: Invalid value: "array": many',
      'spec.port: Invalid value: "": no 80',
    ]);
  });

  it('D-CRD-13 rules bind self only where the node is present and not null', () => {
    const schema = root({
      type: 'object',
      properties: { size: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 0', message: 'never' }] } },
    });
    expect(evaluate(schema, { spec: {} })).toEqual([]);
    expect(evaluate(schema, { spec: { size: null } })).toEqual([]);
    expect(evaluate(schema, {})).toEqual([]);
    expect(bodies(evaluate(schema, { spec: { size: 1 } }))).toEqual(['spec.size: Invalid value: "integer": never']);
  });

  it('D-CRD-13 JSON integers are CEL ints and type number stays double', () => {
    const schema = root({
      type: 'object',
      properties: { size: { type: 'integer' }, ratio: { type: 'number' }, port: { 'x-kubernetes-int-or-string': true }, extra: {} },
      'x-kubernetes-validations': [
        { rule: 'type(self.size) == int && self.size + 1 == 7', message: 'size' },
        { rule: 'type(self.ratio) == double', message: 'ratio' },
        { rule: 'type(self.port) == int && self.port % 2 == 0', message: 'port' },
        { rule: 'type(self.extra.n) == int && type(self.extra.f) == double', message: 'extra' },
      ],
    });
    expect(evaluate(schema, { spec: { size: 6, ratio: 2, port: 8, extra: { n: 3, f: 1.5 } } })).toEqual([]);
    expect(bodies(evaluate(schema, { spec: { size: 5, ratio: 2, port: 7, extra: { n: 3, f: 1.5 } } }))).toEqual([
      'spec: Invalid value: "object": size',
      'spec: Invalid value: "object": port',
    ]);
  });

  it('D-CRD-13 an int-or-string holding a string is still usable as a string', () => {
    const schema = root({
      type: 'object',
      properties: {
        port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [{ rule: 'type(self) == string ? self.endsWith("%") : self <= 100' }] },
      },
    });
    expect(evaluate(schema, { spec: { port: '50%' } })).toEqual([]);
    expect(evaluate(schema, { spec: { port: 50 } })).toEqual([]);
    expect(evaluate(schema, { spec: { port: 500 } })).toHaveLength(1);
    expect(evaluate(schema, { spec: { port: '50' } })).toHaveLength(1);
  });

  it('D-CRD-13 evaluation errors become field errors describing the error', () => {
    const schema = root({
      type: 'object',
      properties: { port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [{ rule: 'self > 0' }] } },
      'x-kubernetes-validations': [{ rule: 'self.missing == 1', message: 'needs missing' }],
    });
    const errors = evaluate(schema, { spec: { port: 'http' } });
    expect(errors.map((e) => [e.type, e.field])).toEqual([
      ['FieldValueInvalid', 'spec'],
      ['FieldValueInvalid', 'spec.port'],
    ]);
    expect(errors[0]!.detail).toBe('no such key: missing evaluating rule: needs missing');
    expect(errors[1]!.detail).toMatch(
      /^'no such overload.*': call arguments did not match a supported operator, function or macro signature for rule: self > 0$/,
    );
  });

  it('D-CRD-13 messageExpression supplies the message', () => {
    const schema = root({
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.size <= 5', message: 'too big', messageExpression: '"size " + string(self.size) + " exceeds 5"' }],
    });
    expect(bodies(evaluate(schema, { spec: { size: 7 } }))).toEqual(['spec: Invalid value: "object": size 7 exceeds 5']);
  });

  it('D-CRD-13 messageExpression that fails, is blank or spans lines falls back to message or rule', () => {
    const schema = root({
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.size <= 5', message: 'too big', messageExpression: 'self.nope' },
        { rule: 'self.size <= 4', messageExpression: '"  "' },
        { rule: 'self.size <= 3', message: 'three', messageExpression: '"a\\nb"' },
      ],
    });
    expect(bodies(evaluate(schema, { spec: { size: 7 } }))).toEqual([
      'spec: Invalid value: "object": too big',
      'spec: Invalid value: "object": failed rule: self.size <= 4',
      'spec: Invalid value: "object": three',
    ]);
  });

  it('D-CRD-13 a messageExpression that does not compile is reported and the message is used', () => {
    const schema = root({ type: 'object', 'x-kubernetes-validations': [{ rule: 'false', message: 'm', messageExpression: '1 + ' }] });
    const compiled = celrules.compileRules(schema);
    expect(compiled.warnings).toHaveLength(1);
    expect(compiled.warnings[0]).toContain('x-kubernetes-validations[0].messageExpression: ignored');
    expect(bodies(celrules.evaluateRules(compiled, { spec: {} }, undefined))).toEqual(['spec: Invalid value: "object": m']);
  });

  it('D-CRD-13 fieldPath moves the cause to the named field', () => {
    const schema = root({
      type: 'object',
      properties: {
        size: { type: 'integer' },
        limits: { type: 'object', properties: { max: { type: 'integer' } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
      'x-kubernetes-validations': [
        { rule: 'self.size <= 5', message: 'too big', fieldPath: '.size' },
        { rule: 'self.size <= 4', message: 'over max', fieldPath: ".limits['max']" },
        { rule: '!("app.kz/x" in self.labels)', message: 'reserved', fieldPath: ".labels['app.kz/x']" },
      ],
    });
    expect(bodies(evaluate(schema, { spec: { size: 6, limits: {}, labels: { 'app.kz/x': 'y' } } }))).toEqual([
      'spec.size: Invalid value: "object": too big',
      'spec.limits.max: Invalid value: "object": over max',
      'spec.labels[app.kz/x]: Invalid value: "object": reserved',
    ]);
  });

  it('D-CRD-13 an invalid fieldPath is reported and the node path is used', () => {
    const schema = root({
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'string' } } },
      'x-kubernetes-validations': [
        { rule: 'false', message: 'a', fieldPath: '.nope' },
        { rule: 'false', message: 'b', fieldPath: '.items[0]' },
      ],
    });
    const compiled = celrules.compileRules(schema);
    expect(compiled.warnings).toHaveLength(2);
    expect(compiled.warnings[0]).toContain('x-kubernetes-validations[0].fieldPath: ignored ".nope"');
    expect(compiled.warnings[1]).toContain('x-kubernetes-validations[1].fieldPath: ignored ".items[0]"');
    expect(celrules.evaluateRules(compiled, { spec: { items: [] } }, undefined).map((e) => e.field)).toEqual(['spec', 'spec']);
  });

  it.each([
    ['FieldValueForbidden', 'spec: Forbidden: no'],
    ['FieldValueRequired', 'spec: Required value: no'],
    ['FieldValueDuplicate', 'spec: Duplicate value: "object"'],
    ['FieldValueInvalid', 'spec: Invalid value: "object": no'],
  ])('D-CRD-13 reason %s sets the cause type', (reason, text) => {
    const errors = evaluate(root({ type: 'object', 'x-kubernetes-validations': [{ rule: 'false', message: 'no', reason }] }), { spec: {} });
    expect(errors.map((e) => e.type)).toEqual([reason]);
    expect(bodies(errors)).toEqual([text]);
  });

  it('D-CRD-13 an unknown reason is reported and FieldValueInvalid is used', () => {
    const schema = root({ type: 'object', 'x-kubernetes-validations': [{ rule: 'false', message: 'no', reason: 'FieldValueTooLong' }] });
    expect(celrules.compileRules(schema).warnings).toEqual([
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[0].reason: ignored unsupported reason "FieldValueTooLong"',
    ]);
    expect(evaluate(schema, { spec: {} }).map((e) => e.type)).toEqual(['FieldValueInvalid']);
  });
});

describe('transition rules (oldSelf)', () => {
  const immutable = root({
    type: 'object',
    properties: { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] } },
  });

  it('D-CRD-13 self == oldSelf rejects a change on update', () => {
    expect(bodies(evaluate(immutable, { spec: { name: 'b' } }, { spec: { name: 'a' } }))).toEqual(['spec.name: Invalid value: "string": name is immutable']);
    expect(evaluate(immutable, { spec: { name: 'a' } }, { spec: { name: 'a' } })).toEqual([]);
  });

  it('D-CRD-13 transition rules are skipped on create and when the old value is absent', () => {
    expect(evaluate(immutable, { spec: { name: 'b' } })).toEqual([]);
    expect(evaluate(immutable, { spec: { name: 'b' } }, { spec: {} })).toEqual([]);
    expect(evaluate(immutable, { spec: { name: 'b' } }, { spec: { name: null } })).toEqual([]);
  });

  it('D-CRD-13 whole-object immutability compares deeply', () => {
    const schema = root({ type: 'object', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'frozen' }] });
    expect(evaluate(schema, { spec: { a: [1, { b: 2 }] } }, { spec: { a: [1, { b: 2 }] } })).toEqual([]);
    expect(bodies(evaluate(schema, { spec: { a: [1, { b: 3 }] } }, { spec: { a: [1, { b: 2 }] } }))).toEqual(['spec: Invalid value: "object": frozen']);
  });

  it('D-CRD-13 optionalOldSelf evaluates on create with oldSelf as an optional', () => {
    const schema = root({
      type: 'object',
      properties: {
        generation: {
          type: 'integer',
          'x-kubernetes-validations': [
            { rule: '!oldSelf.hasValue() || self >= oldSelf.value()', message: 'cannot decrease', optionalOldSelf: true },
            { rule: 'oldSelf.hasValue()', message: 'set on create', optionalOldSelf: true },
          ],
        },
      },
    });
    expect(bodies(evaluate(schema, { spec: { generation: 1 } }))).toEqual(['spec.generation: Invalid value: "integer": set on create']);
    expect(evaluate(schema, { spec: { generation: 3 } }, { spec: { generation: 2 } })).toEqual([]);
    expect(bodies(evaluate(schema, { spec: { generation: 1 } }, { spec: { generation: 2 } }))).toEqual([
      'spec.generation: Invalid value: "integer": cannot decrease',
    ]);
  });

  const portItems: Schema = {
    type: 'object',
    properties: { name: { type: 'string' }, port: { type: 'integer' } },
    'x-kubernetes-validations': [{ rule: 'self.port == oldSelf.port', message: 'port is immutable' }],
  };

  it('D-CRD-13 list-type=map items correlate with old items by key', () => {
    const schema = root({
      type: 'object',
      properties: { ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: portItems } },
    });
    const old = {
      spec: {
        ports: [
          { name: 'a', port: 1 },
          { name: 'b', port: 2 },
        ],
      },
    };
    const reordered = {
      spec: {
        ports: [
          { name: 'b', port: 2 },
          { name: 'a', port: 3 },
          { name: 'c', port: 9 },
        ],
      },
    };
    expect(bodies(evaluate(schema, reordered, old))).toEqual(['spec.ports[1]: Invalid value: "object": port is immutable']);
    expect(
      evaluate(
        schema,
        {
          spec: {
            ports: [
              { name: 'b', port: 2 },
              { name: 'a', port: 1 },
            ],
          },
        },
        old,
      ),
    ).toEqual([]);
  });

  it('D-CRD-13 atomic and set lists do not correlate items', () => {
    for (const listType of [undefined, 'atomic', 'set']) {
      const schema = root({
        type: 'object',
        properties: { ports: { type: 'array', 'x-kubernetes-list-type': listType, items: portItems } },
      });
      expect(evaluate(schema, { spec: { ports: [{ name: 'a', port: 3 }] } }, { spec: { ports: [{ name: 'a', port: 1 }] } })).toEqual([]);
    }
  });

  it('D-CRD-13 additionalProperties values correlate by key', () => {
    const schema = root({
      type: 'object',
      properties: {
        settings: { type: 'object', additionalProperties: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'fixed' }] } },
      },
    });
    const errors = evaluate(schema, { spec: { settings: { a: 'x', b: 'changed', c: 'new' } } }, { spec: { settings: { a: 'x', b: 'y' } } });
    expect(bodies(errors)).toEqual(['spec.settings[b]: Invalid value: "string": fixed']);
  });
});

describe('nested rules', () => {
  it('D-CRD-13 rules on items and additionalProperties report indexed and keyed paths', () => {
    const schema = root({
      type: 'object',
      properties: {
        replicas: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= 0', message: 'negative' }] } },
        limits: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: { max: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self <= 10', message: 'over 10' }] } },
          },
        },
      },
    });
    const obj = { spec: { replicas: [1, -1, 2, -3], limits: { cpu: { max: 4 }, mem: { max: 11 } } } };
    expect(bodies(evaluate(schema, obj))).toEqual([
      'spec.replicas[1]: Invalid value: "integer": negative',
      'spec.replicas[3]: Invalid value: "integer": negative',
      'spec.limits[mem].max: Invalid value: "integer": over 10',
    ]);
  });

  it('D-CRD-13 rules inside allOf apply to the same node', () => {
    const schema = root({
      type: 'object',
      properties: { size: { type: 'integer' } },
      allOf: [{ 'x-kubernetes-validations': [{ rule: 'self.size % 2 == 0', message: 'odd' }] }],
    });
    expect(bodies(evaluate(schema, { spec: { size: 3 } }))).toEqual(['spec: Invalid value: "object": odd']);
    expect(evaluate(schema, { spec: { size: 4 } })).toEqual([]);
  });

  it('D-CRD-13 property names are escaped as upstream exposes them to CEL', () => {
    const schema = root({
      type: 'object',
      properties: { namespace: { type: 'string' }, 'max-size': { type: 'integer' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
      'x-kubernetes-validations': [
        { rule: 'has(self.__namespace__) && self.__namespace__ == "" ', message: 'namespace' },
        { rule: 'self.max__dash__size < 3', message: 'max-size' },
        { rule: '"a-b" in self.labels', message: 'label' },
      ],
    });
    expect(evaluate(schema, { spec: { namespace: '', 'max-size': 2, labels: { 'a-b': 'x' } } })).toEqual([]);
    expect(bodies(evaluate(schema, { spec: { namespace: 'x', 'max-size': 5, labels: {} } }))).toEqual([
      'spec: Invalid value: "object": namespace',
      'spec: Invalid value: "object": max-size',
      'spec: Invalid value: "object": label',
    ]);
  });

  it('D-CRD-13 root rules report an empty path and evaluation never mutates the inputs', () => {
    const schema: Schema = { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.kind == "Widget"', message: 'kind' }] };
    const obj = Object.freeze({ kind: 'Gadget', spec: Object.freeze({ size: 1 }) });
    expect(evaluate(schema, obj)).toEqual([{ type: 'FieldValueInvalid', field: '', value: 'object', detail: 'kind' }]);
  });
});

describe('real CRD rules', () => {
  // Rules copied verbatim from the gateway-api Gateway and TLSRoute CRDs.
  const HOSTNAME = String.raw`self.type == 'Hostname' ? (!has(self.value) || self.value.matches(r"""^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$""")): true`;
  const LABEL_KEY = String.raw`self.all(key, key.matches(r"""^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$"""))`;
  const gateway = root({
    type: 'object',
    properties: {
      addresses: {
        type: 'array',
        items: {
          type: 'object',
          properties: { type: { type: 'string' }, value: { type: 'string' } },
          'x-kubernetes-validations': [{ message: 'Hostname value must be empty or contain only valid characters', rule: HOSTNAME }],
        },
        'x-kubernetes-validations': [
          {
            message: 'IPAddress values must be unique',
            rule: "self.all(a1, a1.type == 'IPAddress' && has(a1.value) ? self.exists_one(a2, a2.type == a1.type && has(a2.value) && a2.value == a1.value) : true )",
          },
        ],
      },
      infrastructure: {
        type: 'object',
        properties: {
          labels: {
            type: 'object',
            additionalProperties: { type: 'string' },
            'x-kubernetes-validations': [
              {
                message: 'Label keys must be in the form of an optional DNS subdomain prefix followed by a required name segment of up to 63 characters.',
                rule: LABEL_KEY,
              },
              {
                message: "If specified, the label key's prefix must be a DNS subdomain not longer than 253 characters in total.",
                rule: 'self.all(key, key.split("/")[0].size() < 253)',
              },
            ],
          },
        },
      },
      listeners: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            port: { type: 'integer' },
            protocol: { type: 'string' },
            hostname: { type: 'string' },
            tls: {
              type: 'object',
              properties: {
                mode: { type: 'string' },
                certificateRefs: { type: 'array', items: { type: 'object' } },
                options: { type: 'object', additionalProperties: { type: 'string' } },
              },
              'x-kubernetes-validations': [
                {
                  message: 'certificateRefs or options must be specified when mode is Terminate',
                  rule: "self.mode == 'Terminate' ? size(self.certificateRefs) > 0 || size(self.options) > 0 : true",
                },
              ],
            },
          },
        },
        'x-kubernetes-validations': [
          {
            message: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
            rule: "self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)",
          },
          { message: 'Listener name must be unique within the Gateway', rule: 'self.all(l1, self.exists_one(l2, l1.name == l2.name))' },
          {
            message: 'Combination of port, protocol and hostname must be unique for each listener',
            rule: 'self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && (has(l1.hostname) && has(l2.hostname) ? l1.hostname == l2.hostname : !has(l1.hostname) && !has(l2.hostname))))',
          },
        ],
      },
    },
  });

  it('D-CRD-13 gateway-api Gateway rules compile and accept a valid Gateway', () => {
    const compiled = celrules.compileRules(gateway);
    expect(compiled.warnings).toEqual([]);
    expect(compiled.ruleCount).toBe(8);
    const valid = {
      spec: {
        addresses: [
          { type: 'Hostname', value: '*.example.com' },
          { type: 'IPAddress', value: '10.0.0.1' },
        ],
        infrastructure: { labels: { 'example.com/team': 'a', app: 'b' } },
        listeners: [
          { name: 'http', port: 80, protocol: 'HTTP' },
          { name: 'https', port: 443, protocol: 'HTTPS', hostname: 'a.example.com', tls: { mode: 'Terminate', certificateRefs: [{ name: 'c' }] } },
        ],
      },
    };
    expect(celrules.evaluateRules(compiled, valid, undefined)).toEqual([]);
  });

  it('D-CRD-13 gateway-api Gateway rules reject what upstream rejects', () => {
    const invalid = {
      spec: {
        addresses: [
          { type: 'Hostname', value: 'Bad_Host' },
          { type: 'IPAddress', value: '10.0.0.1' },
          { type: 'IPAddress', value: '10.0.0.1' },
        ],
        infrastructure: { labels: { '-bad': 'x' } },
        listeners: [
          { name: 'web', port: 80, protocol: 'HTTP', tls: { mode: 'Terminate', certificateRefs: [] } },
          { name: 'web', port: 80, protocol: 'HTTP' },
        ],
      },
    };
    expect(bodies(evaluate(gateway, invalid))).toEqual([
      'spec.addresses: Invalid value: "array": IPAddress values must be unique',
      'spec.addresses[0]: Invalid value: "object": Hostname value must be empty or contain only valid characters',
      'spec.infrastructure.labels: Invalid value: "object": Label keys must be in the form of an optional DNS subdomain prefix followed by a required name segment of up to 63 characters.',
      "spec.listeners: Invalid value: \"array\": tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
      'spec.listeners: Invalid value: "array": Listener name must be unique within the Gateway',
      'spec.listeners: Invalid value: "array": Combination of port, protocol and hostname must be unique for each listener',
      // `options` is absent, so (as upstream) the rule errors on the missing key rather than failing.
      'spec.listeners[0].tls: Invalid value: "object": no such key: options evaluating rule: certificateRefs or options must be specified when mode is Terminate',
    ]);
    const withOptions = structuredClone(invalid);
    Object.assign(withOptions.spec.listeners[0]!.tls!, { options: {} });
    expect(bodies(evaluate(gateway, withOptions)).at(-1)).toBe(
      'spec.listeners[0].tls: Invalid value: "object": certificateRefs or options must be specified when mode is Terminate',
    );
  });

  it('D-CRD-13 gateway-api TLSRoute rules (isIP, escaped namespace) evaluate', () => {
    const parentRef = {
      type: 'object',
      properties: {
        group: { type: 'string' },
        kind: { type: 'string' },
        name: { type: 'string' },
        namespace: { type: 'string' },
        sectionName: { type: 'string' },
      },
    };
    const tlsroute = root({
      type: 'object',
      properties: {
        hostnames: {
          type: 'array',
          items: { type: 'string' },
          'x-kubernetes-validations': [
            { message: 'Hostnames cannot contain an IP', rule: 'self.all(h, !isIP(h))' },
            {
              message: 'Hostnames must be valid based on RFC-1123',
              rule: "self.all(h, !h.contains('*') ? h.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$') : true)",
            },
          ],
        },
        parentRefs: {
          type: 'array',
          items: parentRef,
          'x-kubernetes-validations': [
            {
              message: 'sectionName must be unique when parentRefs includes 2 or more references to the same parent',
              rule: "self.all(p1, self.exists_one(p2, p1.group == p2.group && p1.kind == p2.kind && p1.name == p2.name && (((!has(p1.__namespace__) || p1.__namespace__ == '') && (!has(p2.__namespace__) || p2.__namespace__ == '')) || (has(p1.__namespace__) && has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__ )) && (((!has(p1.sectionName) || p1.sectionName == '') && (!has(p2.sectionName) || p2.sectionName == '')) || (has(p1.sectionName) && has(p2.sectionName) && p1.sectionName == p2.sectionName))))",
            },
          ],
        },
      },
    });
    expect(celrules.compileRules(tlsroute).warnings).toEqual([]);
    const gw = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' };
    expect(
      evaluate(tlsroute, {
        spec: {
          hostnames: ['a.example.com'],
          parentRefs: [
            { ...gw, namespace: 'x', sectionName: 'a' },
            { ...gw, namespace: 'x', sectionName: 'b' },
          ],
        },
      }),
    ).toEqual([]);
    expect(
      bodies(
        evaluate(tlsroute, {
          spec: {
            hostnames: ['10.0.0.1', 'Upper.example.com'],
            parentRefs: [
              { ...gw, namespace: 'x' },
              { ...gw, namespace: 'x' },
            ],
          },
        }),
      ),
    ).toEqual([
      'spec.hostnames: Invalid value: "array": Hostnames cannot contain an IP',
      'spec.hostnames: Invalid value: "array": Hostnames must be valid based on RFC-1123',
      'spec.parentRefs: Invalid value: "array": sectionName must be unique when parentRefs includes 2 or more references to the same parent',
    ]);
  });

  it('D-CRD-13 istio rules (duration, port range, URL scheme, key checks) evaluate', () => {
    const istio = root({
      type: 'object',
      properties: {
        interval: {
          type: 'string',
          'x-kubernetes-validations': [{ message: 'must be a valid duration greater than 1ms', rule: "duration(self) >= duration('1ms')" }],
        },
        portNumber: {
          type: 'integer',
          maximum: 4294967295,
          minimum: 0,
          'x-kubernetes-validations': [{ message: 'port must be between 1-65535', rule: '0 < self && self <= 65535' }],
        } as Schema,
        url: {
          type: 'string',
          'x-kubernetes-validations': [
            {
              message: 'url must have schema one of [http, https, file, oci]',
              rule: 'isURL(self) ? (url(self).getScheme() in ["", "http", "https", "oci", "file"]) : (isURL("http://" + self) &&\nurl("http://" + self).getScheme() in ["", "http", "https", "oci", "file"])',
            },
          ],
        },
        portLevelMtls: {
          type: 'object',
          additionalProperties: { type: 'object' },
          'x-kubernetes-validations': [{ message: 'port must be between 1-65535', rule: 'self.all(key, 0 < int(key) && int(key) <= 65535)' }],
        },
        selector: { type: 'object', properties: { matchLabels: { type: 'object', additionalProperties: { type: 'string' } } } },
      },
      'x-kubernetes-validations': [
        {
          message: 'portLevelMtls requires selector',
          rule: 'has(self.portLevelMtls) ? (((has(self.selector) && has(self.selector.matchLabels)) ? self.selector.matchLabels : {}).size() > 0) : true',
        },
      ],
    });
    expect(celrules.compileRules(istio).warnings).toEqual([]);
    const good = {
      spec: { interval: '10s', portNumber: 8080, url: 'oci://ghcr.io/x/y:1', portLevelMtls: { '8080': {} }, selector: { matchLabels: { app: 'a' } } },
    };
    expect(evaluate(istio, good)).toEqual([]);
    expect(evaluate(istio, { spec: { url: 'ghcr.io/x/y:1' } })).toEqual([]);
    const bad = { spec: { interval: '500us', portNumber: 70000, url: 'ftp://example.com/x', portLevelMtls: { '0': {} } } };
    expect(bodies(evaluate(istio, bad))).toEqual([
      'spec: Invalid value: "object": portLevelMtls requires selector',
      'spec.interval: Invalid value: "string": must be a valid duration greater than 1ms',
      'spec.portNumber: Invalid value: "integer": port must be between 1-65535',
      'spec.url: Invalid value: "string": url must have schema one of [http, https, file, oci]',
      'spec.portLevelMtls: Invalid value: "object": port must be between 1-65535',
    ]);
  });

  it('D-CRD-13 cloudnative-pg immutability and flux mutual-exclusion rules evaluate', () => {
    const schema = root({
      type: 'object',
      properties: {
        serviceAccountName: { type: 'string', 'x-kubernetes-validations': [{ message: 'serviceAccountName is immutable', rule: 'self == oldSelf' }] },
        chart: { type: 'object' },
        chartRef: { type: 'object' },
      },
      'x-kubernetes-validations': [
        { message: 'either chart or chartRef must be set', rule: '(has(self.chart) && !has(self.chartRef)) || (!has(self.chart) && has(self.chartRef))' },
      ],
    });
    expect(evaluate(schema, { spec: { serviceAccountName: 'a', chart: {} } })).toEqual([]);
    expect(bodies(evaluate(schema, { spec: { serviceAccountName: 'b', chart: {}, chartRef: {} } }, { spec: { serviceAccountName: 'a', chart: {} } }))).toEqual([
      'spec: Invalid value: "object": either chart or chartRef must be set',
      'spec.serviceAccountName: Invalid value: "string": serviceAccountName is immutable',
    ]);
  });
});
