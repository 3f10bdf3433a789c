/**
 * Regular expressions over HTTP (D-CRD-18..20): CRDs whose patterns and CEL rules use Go-only RE2
 * syntax install and are enforced on objects; expressions Go rejects are refused with Go's texts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Json } from '../conformance/harness.js';
import { AZURE_RESOURCE_ID, MAINTENANCE_WINDOW } from './regex-samples.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const SCHEMA_PATH = 'spec.versions[0].schema.openAPIV3Schema.properties[spec]';

/** A CRD `<plural>.regex.example.com` whose `spec` has the given properties and rules. */
function crd(plural: string, kind: string, spec: Json): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.regex.example.com` },
    spec: {
      group: 'regex.example.com',
      scope: 'Namespaced',
      names: { plural, kind },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', ...spec } } } } },
      ],
    },
  };
}

describe('regular expressions over HTTP', () => {
  let h: Harness;
  let counter = 0;

  /** Creates the CRD (expecting 201) and waits until it is served. */
  async function install(plural: string, kind: string, spec: Json): Promise<void> {
    const r = await h.post(CRDS, crd(plural, kind, spec));
    expect(r.status, r.text).toBe(201);
    await h.cluster.settle();
  }

  /** Creates an object of `plural` with `spec`; returns the response. */
  function create(plural: string, kind: string, spec: Json): ReturnType<Harness['post']> {
    counter += 1;
    const body = { apiVersion: 'regex.example.com/v1', kind, metadata: { name: `o${counter}` }, spec };
    return h.post(`/apis/regex.example.com/v1/namespaces/default/${plural}`, body);
  }

  const causes = (r: { json: Json }): Json[] => r.json['details']['causes'] as Json[];

  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('D-CRD-18 the Azure Service Operator and Zalando postgres-operator patterns install and are enforced', async () => {
    await install('azures', 'Azure', {
      properties: { owner: { type: 'string', pattern: AZURE_RESOURCE_ID }, window: { type: 'string', pattern: MAINTENANCE_WINDOW } },
    });
    const good = await create('azures', 'Azure', { owner: '/subscriptions/s1/RESOURCEGROUPS/rg1', window: 'Sat:01:00-Sat:03:00' });
    expect(good.status, good.text).toBe(201);

    const bad = await create('azures', 'Azure', { owner: 'subscriptions/s1', window: ' Mon:25:00-01:00' });
    expect(bad.status).toBe(422);
    expect(causes(bad)).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.owner',
        message: `Invalid value: "subscriptions/s1": spec.owner in body should match '${AZURE_RESOURCE_ID}'`,
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.window',
        message: `Invalid value: " Mon:25:00-01:00": spec.window in body should match '${MAINTENANCE_WINDOW}'`,
      },
    ]);
  });

  it('D-CRD-18 (?i), \\pL, \\z and (?s) behave as in Go on objects', async () => {
    await install('letters', 'Letters', {
      properties: { word: { type: 'string', pattern: String.raw`(?i)^[a-zé]\pL*\z` }, text: { type: 'string', pattern: '(?s)^a.b$' } },
    });
    expect((await create('letters', 'Letters', { word: 'Été', text: 'a\nb' })).status).toBe(201);
    const trailingNewline = await create('letters', 'Letters', { word: 'Été\n' });
    expect(trailingNewline.status).toBe(422);
    expect(causes(trailingNewline).map((c) => c['field'])).toEqual(['spec.word']);
    const digit = await create('letters', 'Letters', { word: 'é2' });
    expect(causes(digit).map((c) => c['field'])).toEqual(['spec.word']);
  });

  it('D-CRD-19 a pattern Go rejects makes the CRD invalid, with Go’s error text', async () => {
    const r = await h.post(CRDS, crd('lookaheads', 'Lookahead', { properties: { name: { type: 'string', pattern: '^(?!admin)[a-z]+$' } } }));
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: `${SCHEMA_PATH}.properties[name].pattern`,
        message:
          'Invalid value: "^(?!admin)[a-z]+$": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?!`',
      },
    ]);
    expect((await h.get(`${CRDS}/lookaheads.regex.example.com`)).status).toBe(404);
  });

  it('D-CRD-20 CEL matches and find use RE2 syntax', async () => {
    await install('celwords', 'CelWord', {
      properties: { word: { type: 'string' }, code: { type: 'string' } },
      'x-kubernetes-validations': [
        { rule: String.raw`self.word.matches(r'(?i)^\pL+\z')`, message: 'letters only' },
        { rule: String.raw`self.code.find(r'\d+') == '42'`, message: 'code must hold 42' },
      ],
    });
    expect((await create('celwords', 'CelWord', { word: 'Ünïcode', code: 'x42y' })).status).toBe(201);
    const bad = await create('celwords', 'CelWord', { word: 'abc\n', code: 'x43y' });
    expect(bad.status).toBe(422);
    expect(causes(bad)).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": letters only' },
      { reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": code must hold 42' },
    ]);
  });

  it('D-CRD-20 a literal pattern Go rejects in a CEL rule makes the CRD invalid', async () => {
    const rule = { rule: "self.word.matches('^(?=a)')" };
    const r = await h.post(CRDS, crd('celbads', 'CelBad', { properties: { word: { type: 'string' } }, 'x-kubernetes-validations': [rule] }));
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: `${SCHEMA_PATH}.x-kubernetes-validations[0].rule`,
        message: `Invalid value: ${JSON.stringify(rule)}: program instantiation failed: error parsing regexp: invalid or unsupported Perl syntax: \`(?=\``,
      },
    ]);
  });

  it('D-CRD-20 a computed pattern Go rejects fails the rule when evaluated', async () => {
    await install('celcomputeds', 'CelComputed', {
      properties: { value: { type: 'string' }, regex: { type: 'string' } },
      'x-kubernetes-validations': [{ rule: 'self.value.matches(self.regex)' }, { rule: 'self.value.findAll(self.regex).size() > 0' }],
    });
    expect((await create('celcomputeds', 'CelComputed', { value: 'abc', regex: '(?i)B' })).status).toBe(201);
    const r = await create('celcomputeds', 'CelComputed', { value: 'abc', regex: '(b' });
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec',
        message: 'Invalid value: "object": error parsing regexp: missing closing ): `(b` evaluating rule: self.value.matches(self.regex)',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec',
        message:
          'Invalid value: "object": Illegal regex: error parsing regexp: missing closing ): `(b` evaluating rule: self.value.findAll(self.regex).size() > 0',
      },
    ]);
  });
});
