import { describe, expect, it } from 'vitest';
import * as names from '../../../devcluster/meta/names.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('DNS-1123 subdomains', () => {
  it.each([
    ['example.com', []],
    ['a', []],
    ['w1', []],
    ['a-b.c-d', []],
    ['1abc', []],
    ['Bad_Name', [SUBDOMAIN_MSG]],
    ['-a', [SUBDOMAIN_MSG]],
    ['a-', [SUBDOMAIN_MSG]],
    ['a..b', [SUBDOMAIN_MSG]],
    ['', [SUBDOMAIN_MSG]],
    ['a'.repeat(253), []],
    ['a'.repeat(254), ['must be no more than 253 characters']],
    ['A'.repeat(254), ['must be no more than 253 characters', SUBDOMAIN_MSG]],
  ])('D-META-8 %j → %j', (value, expected) => {
    expect(names.dns1123SubdomainErrors(value)).toEqual(expected);
  });

  it('D-META-8 the message quotes the upstream text pinned in the spec', () => {
    expect(names.dns1123SubdomainErrors('Bad_Name')[0]).toContain(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  });
});

describe('DNS-1123 and DNS-1035 labels', () => {
  it.each([
    ['default', []],
    ['kube-system', []],
    ['1ns', []],
    ['a.b', [LABEL_MSG]],
    ['UP', [LABEL_MSG]],
    ['a'.repeat(63), []],
    ['a'.repeat(64), ['must be no more than 63 characters']],
  ])('D-META-8 label %j → %j', (value, expected) => {
    expect(names.dns1123LabelErrors(value)).toEqual(expected);
  });

  it.each([
    ['svc', []],
    ['my-svc-1', []],
    ['1svc', [DNS1035_MSG]],
    ['a.b', [DNS1035_MSG]],
    ['svc-', [DNS1035_MSG]],
    ['a'.repeat(64), ['must be no more than 63 characters']],
  ])('D-META-8 DNS-1035 %j → %j', (value, expected) => {
    expect(names.dns1035LabelErrors(value)).toEqual(expected);
  });
});

describe('qualified names (label keys)', () => {
  it.each([
    ['app', []],
    ['App.Kubernetes_io-x', []],
    ['example.com/name', []],
    ['app.kubernetes.io/managed-by', []],
    ['bad key', [`name part ${QNAME_MSG}`]],
    ['_x', [`name part ${QNAME_MSG}`]],
    ['', ['name part must be non-empty', `name part ${QNAME_MSG}`]],
    ['example.com/', ['name part must be non-empty', `name part ${QNAME_MSG}`]],
    ['/name', ['prefix part must be non-empty']],
    ['Example.com/name', [`prefix part ${SUBDOMAIN_MSG}`]],
    ['a'.repeat(63), []],
    ['a'.repeat(64), ['name part must be no more than 63 characters']],
    [`${'a'.repeat(254)}/x`, ['prefix part must be no more than 253 characters']],
  ])('D-META-11 key %j → %j', (value, expected) => {
    expect(names.qualifiedNameErrors(value)).toEqual(expected);
  });

  it('D-META-11 a key with two slashes is rejected as a whole', () => {
    const errors = names.qualifiedNameErrors('a/b/c');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^a qualified name must consist of .* with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/);
  });
});

describe('label values', () => {
  it.each([
    ['', []],
    ['prod', []],
    ['My_Value.1', []],
    ['a'.repeat(63), []],
    ['a'.repeat(64), ['must be no more than 63 characters']],
    ['has space', [VALUE_MSG]],
    ['-x', [VALUE_MSG]],
    ['x/y', [VALUE_MSG]],
  ])('D-META-11 value %j → %j', (value, expected) => {
    expect(names.labelValueErrors(value)).toEqual(expected);
  });
});

describe('nameErrors by rule', () => {
  it.each([
    ['Bad_Name', 'subdomain', false, false],
    ['a.b', 'subdomain', false, true],
    ['a.b', 'label', false, false],
    ['1svc', 'dns1035', false, false],
    ['1svc', 'label', false, true],
    ['widgets.example.com', 'crd', false, true],
    ['w-', 'subdomain', true, true],
    ['w-', 'subdomain', false, false],
    ['svc-', 'dns1035', true, true],
    ['W-', 'subdomain', true, false],
    ['w--', 'label', true, true],
    ['-', 'subdomain', true, false],
  ] as const)('D-META-8/9 %j under %s (prefix %s) valid=%s', (value, rule, prefix, valid) => {
    expect(names.nameErrors(value, rule, prefix).length === 0).toBe(valid);
  });

  it('D-META-8 the CRD name must be plural.group', () => {
    expect(names.crdNameErrors('widgets.example.com', 'widgets', 'example.com')).toEqual([]);
    expect(names.crdNameErrors('widget.example.com', 'widgets', 'example.com')).toEqual(['must be spec.names.plural+"."+spec.group']);
  });
});

describe('generated names', () => {
  /** A deterministic source cycling through the given fractions. */
  const sequence = (...values: number[]): (() => number) => {
    let i = 0;
    return () => values[i++ % values.length]!;
  };

  it('D-META-9 the suffix is five characters of the allowed alphabet, picked by the random source', () => {
    expect(names.generateNameSuffix(sequence(0))).toBe('bbbbb');
    expect(names.generateNameSuffix(sequence(0.999999))).toBe('99999');
    expect(names.generateNameSuffix(sequence(0.5 / 27, 1.5 / 27, 2.5 / 27, 26.5 / 27, 13.5 / 27))).toBe('bcd9r');
  });

  it('D-META-9 out-of-range random values are clamped into the alphabet', () => {
    expect(names.generateNameSuffix(sequence(1))).toBe('99999');
    expect(names.generateNameSuffix(sequence(-0.5))).toBe('bbbbb');
  });

  it('C-18 D-META-9 generateName "w-" yields w- plus five allowed characters', () => {
    for (let i = 0; i < 50; i++) {
      expect(names.generateName('w-', Math.random)).toMatch(/^w-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    }
  });

  it('D-META-9 every alphabet character is reachable with a uniform source', () => {
    const seen = new Set<string>();
    for (let k = 0; k < 27; k++) seen.add(names.generateNameSuffix(sequence((k + 0.5) / 27))[0]!);
    expect([...seen].sort().join('')).toBe([...names.GENERATED_SUFFIX_ALPHABET].sort().join(''));
  });

  it('D-META-9 long prefixes are truncated to 58 characters so the name fits 63', () => {
    const prefix = `${'p'.repeat(70)}-`;
    const name = names.generateName(prefix, sequence(0));
    expect(name).toBe(`${'p'.repeat(58)}bbbbb`);
    expect(name).toHaveLength(63);
    expect(names.generateName('short-', sequence(0))).toBe('short-bbbbb');
  });
});
