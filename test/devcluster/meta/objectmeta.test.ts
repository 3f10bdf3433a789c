import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as objectmeta from '../../../devcluster/meta/objectmeta.js';

const CR = { nameRule: 'subdomain', namespaced: true, creating: true } as const;
const CLUSTER = { nameRule: 'subdomain', namespaced: false, creating: true } as const;
const valid = { name: 'w1', namespace: 'default' };

/** `field: body` texts, the form the Status message shows. */
const texts = (errors: readonly fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);
const validate = (meta: unknown, opts: objectmeta.ObjectMetaOptions = CR): fielderrors.FieldError[] => objectmeta.validateObjectMeta(meta, opts);

describe('validateObjectMeta: names', () => {
  it('accepts a minimal valid metadata', () => {
    expect(validate(valid)).toEqual([]);
    expect(validate({ name: 'cluster-thing' }, CLUSTER)).toEqual([]);
  });

  it('C-19 D-META-8 neither name nor generateName → Required value on metadata.name', () => {
    const errors = validate({ namespace: 'default' });
    expect(errors).toEqual([{ type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' }]);
    expect(fielderrors.renderBody(errors[0]!)).toBe('Required value: name or generateName is required');
    expect(validate({ name: '', generateName: '', namespace: 'default' })).toHaveLength(1);
  });

  it('D-META-9 generateName alone is enough on create, not on update', () => {
    expect(validate({ generateName: 'w-', namespace: 'default' })).toEqual([]);
    expect(texts(validate({ generateName: 'w-', namespace: 'default' }, { ...CR, creating: false }))).toEqual([
      'metadata.name: Required value: name or generateName is required',
    ]);
  });

  it('C-20 D-META-8 an invalid subdomain name → FieldValueInvalid on metadata.name with the upstream text', () => {
    const errors = validate({ name: 'Bad_Name', namespace: 'default' });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: 'FieldValueInvalid', field: 'metadata.name', value: 'Bad_Name' });
    expect(fielderrors.renderBody(errors[0]!)).toBe(
      "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  });

  it('C-20 D-META-8 a Namespace named a.b breaks the label rule; a Service named 1svc breaks DNS-1035', () => {
    const ns = validate({ name: 'a.b' }, { nameRule: 'label', namespaced: false, creating: true });
    expect(ns.map((e) => [e.type, e.field])).toEqual([['FieldValueInvalid', 'metadata.name']]);
    expect(String(ns[0]!.detail)).toContain('RFC 1123 label');
    const svc = validate({ name: '1svc', namespace: 'default' }, { nameRule: 'dns1035', namespaced: true, creating: true });
    expect(svc.map((e) => [e.type, e.field])).toEqual([['FieldValueInvalid', 'metadata.name']]);
    expect(String(svc[0]!.detail)).toContain('DNS-1035 label');
    expect(validate({ name: 'a.b', namespace: 'default' })).toEqual([]);
  });

  it.each([
    ['w-', 'subdomain', []],
    ['Bad_', 'subdomain', ['metadata.generateName']],
    ['a.b-', 'label', ['metadata.generateName']],
    ['1svc-', 'dns1035', ['metadata.generateName']],
    ['svc-', 'dns1035', []],
  ] as const)('D-META-9 generateName %j under %s → errors on %j', (generateName, nameRule, fields) => {
    const errors = validate({ generateName }, { nameRule, namespaced: false, creating: true });
    expect(errors.map((e) => e.field)).toEqual(fields);
  });

  it('D-META-9 with both name and generateName, each is checked by its own rule', () => {
    expect(validate({ name: 'ok', generateName: 'Bad-', namespace: 'default' }).map((e) => e.field)).toEqual(['metadata.generateName']);
  });
});

describe('validateObjectMeta: namespace', () => {
  it('D-META-8 the namespace of a namespaced object must be a DNS-1123 label', () => {
    expect(texts(validate({ name: 'w1' }))).toEqual(['metadata.namespace: Required value']);
    const errors = validate({ name: 'w1', namespace: 'a.b' });
    expect(errors.map((e) => [e.type, e.field, e.value])).toEqual([['FieldValueInvalid', 'metadata.namespace', 'a.b']]);
  });

  it('a cluster-scoped object carrying a namespace is Forbidden (the pipeline clears it first, D-META-10)', () => {
    expect(texts(validate({ name: 'n', namespace: 'x' }, CLUSTER))).toEqual(['metadata.namespace: Forbidden: not allowed on this type']);
  });
});

describe('C-22 D-META-10 resolveNamespace', () => {
  it('a body namespace different from the URL is refused with the exact message', () => {
    const attempt = (): unknown => objectmeta.resolveNamespace('a', 'b', true);
    expect(attempt).toThrow(objectmeta.NamespaceMismatchError);
    expect(attempt).toThrow('the namespace of the provided object does not match the namespace sent on the request');
    try {
      attempt();
    } catch (error) {
      expect((error as objectmeta.NamespaceMismatchError).code).toBe('namespace-mismatch');
    }
  });

  it.each([
    [undefined, 'b', true, 'b'],
    ['', 'b', true, 'b'],
    ['b', 'b', true, 'b'],
    [null, 'b', true, 'b'],
    ['a', undefined, true, 'a'],
    ['x', undefined, false, undefined],
    ['x', 'y', false, undefined],
  ])('body %j, URL %j, namespaced %s → %j', (body, url, namespaced, expected) => {
    expect(objectmeta.resolveNamespace(body, url, namespaced)).toBe(expected);
  });
});

describe('validateObjectMeta: labels (D-META-11)', () => {
  it('C-21 a label key with a space → FieldValueInvalid on metadata.labels valued with the key', () => {
    const errors = validate({ ...valid, labels: { 'bad key': 'x' } });
    expect(errors.map((e) => [e.type, e.field, e.value])).toEqual([['FieldValueInvalid', 'metadata.labels', 'bad key']]);
  });

  it('C-21 a label value of 64 characters → FieldValueInvalid on metadata.labels valued with the value', () => {
    const long = 'v'.repeat(64);
    const errors = validate({ ...valid, labels: { ok: long } });
    expect(texts(errors)).toEqual([`metadata.labels: Invalid value: "${long}": must be no more than 63 characters`]);
    expect(validate({ ...valid, labels: { ok: 'v'.repeat(63) } })).toEqual([]);
  });

  it.each([
    [{ 'example.com/app': 'web', tier: '', 'a_b.c-d': 'X_y.z' }, []],
    [{ '/x': 'v' }, ['/x']],
    [{ 'x/y/z': 'v' }, ['x/y/z']],
    [{ Upper: 'v' }, []],
    [{ 'Example.com/x': 'v' }, ['Example.com/x']],
    [{ k: '-bad' }, ['-bad']],
    [{ k: 'a b', 'bad key': 'ok' }, ['bad key', 'a b']],
  ])('labels %j → offending %j', (labels, offending) => {
    const errors = validate({ ...valid, labels });
    expect(errors.every((e) => e.field === 'metadata.labels' && e.type === 'FieldValueInvalid')).toBe(true);
    expect(errors.map((e) => e.value)).toEqual(offending);
  });
});

describe('validateObjectMeta: annotations (D-META-12)', () => {
  it('keys follow the label-key rule but upper case is allowed everywhere', () => {
    expect(validate({ ...valid, annotations: { 'Example.COM/Some-Key': 'anything at all: ✓', plain: '' } })).toEqual([]);
    const errors = validate({ ...valid, annotations: { 'bad key': 'v' } });
    expect(errors.map((e) => [e.type, e.field, e.value])).toEqual([['FieldValueInvalid', 'metadata.annotations', 'bad key']]);
  });

  it('C-21 annotations totalling 262145 bytes → FieldValueTooLong on metadata.annotations; 262144 is fine', () => {
    const atLimit = { k: 'v'.repeat(262144 - 1) };
    expect(validate({ ...valid, annotations: atLimit })).toEqual([]);
    const over = { k: 'v'.repeat(262144 - 1), j: '' };
    const errors = validate({ ...valid, annotations: over });
    expect(errors.map((e) => [e.type, e.field])).toEqual([['FieldValueTooLong', 'metadata.annotations']]);
    expect(texts(errors)[0]).toMatch(/^metadata\.annotations: Too long: /);
  });

  it('D-META-12 the size counts UTF-8 bytes of keys and values', () => {
    const multiByte = { k: 'é'.repeat(131072) }; // 262144 bytes of value + 1 of key
    expect(validate({ ...valid, annotations: multiByte }).map((e) => e.type)).toEqual(['FieldValueTooLong']);
  });
});

describe('validateObjectMeta: finalizers (D-META-13)', () => {
  it('entries must be qualified names', () => {
    expect(validate({ ...valid, finalizers: ['example.com/f', 'kubernetes', 'orphan'] })).toEqual([]);
    const errors = validate({ ...valid, finalizers: ['ok', 'bad finalizer', 'a/b/c'] });
    expect(errors.map((e) => [e.field, e.value])).toEqual([
      ['metadata.finalizers', 'bad finalizer'],
      ['metadata.finalizers', 'a/b/c'],
    ]);
  });

  it('orphan and foregroundDeletion together → 422 on metadata.finalizers', () => {
    const errors = validate({ ...valid, finalizers: ['orphan', 'foregroundDeletion'] });
    expect(texts(errors)).toEqual([
      'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
    ]);
    expect(validate({ ...valid, finalizers: ['foregroundDeletion'] })).toEqual([]);
  });

  it('finalizerWarnings: a new CR finalizer without / that is not well known gets one warning', () => {
    expect(objectmeta.finalizerWarnings(undefined, ['example.com/f', 'kubernetes', 'orphan', 'foregroundDeletion'])).toEqual([]);
    expect(objectmeta.finalizerWarnings(undefined, ['myfinalizer', 'myfinalizer'])).toEqual([
      'metadata.finalizers: "myfinalizer": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers',
    ]);
    expect(objectmeta.finalizerWarnings(['old'], ['old', 'new'])).toHaveLength(1);
    expect(objectmeta.finalizerWarnings(['old'], ['old', 'new'])[0]).toContain('"new"');
    expect(objectmeta.finalizerWarnings(['old'], ['old'])).toEqual([]);
  });

  it('D-VERB-17 adding a finalizer while deleting → Forbidden with the exact body', () => {
    const error = objectmeta.newFinalizersWhileDeleting(['example.com/f'], ['example.com/f', 'x']);
    expect(error).toMatchObject({ type: 'FieldValueForbidden', field: 'metadata.finalizers' });
    expect(fielderrors.renderBody(error!)).toBe('Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"x"}');
    const two = objectmeta.newFinalizersWhileDeleting(undefined, ['z', 'a']);
    expect(fielderrors.renderBody(two!)).toBe(
      'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a", "z"}',
    );
  });

  it('D-VERB-17 removing or reordering finalizers while deleting is allowed', () => {
    expect(objectmeta.newFinalizersWhileDeleting(['a', 'b'], ['b', 'a'])).toBeUndefined();
    expect(objectmeta.newFinalizersWhileDeleting(['a', 'b'], ['b'])).toBeUndefined();
    expect(objectmeta.newFinalizersWhileDeleting(['a'], undefined)).toBeUndefined();
  });
});

describe('validateObjectMeta: ownerReferences (D-META-14)', () => {
  const ref = (kind: string, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    apiVersion: 'example.com/v1',
    kind,
    name,
    uid: `uid-${name}`,
    ...extra,
  });

  it('C-27 two references with controller: true → 422 on metadata.ownerReferences with the upstream detail', () => {
    const errors = validate({ ...valid, ownerReferences: [ref('K1', 'n1', { controller: true }), ref('K2', 'n2', { controller: true })] });
    expect(errors.map((e) => [e.type, e.field])).toEqual([['FieldValueInvalid', 'metadata.ownerReferences']]);
    expect(errors[0]!.detail).toBe('Only one reference can have Controller set to true. Found "true" in references for K1/n1 and K2/n2');
  });

  it('one controller among several owners is fine', () => {
    expect(
      validate({
        ...valid,
        ownerReferences: [ref('A', 'a', { controller: true, blockOwnerDeletion: true }), ref('B', 'b', { controller: false }), ref('C', 'c')],
      }),
    ).toEqual([]);
  });

  it.each([
    [{ kind: 'K', name: 'n', uid: 'u' }, ['metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty']],
    [{ apiVersion: 'a/b/c', kind: 'K', name: 'n', uid: 'u' }, ['metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty']],
    [
      { apiVersion: 'example.com/', kind: 'K', name: 'n', uid: 'u' },
      ['metadata.ownerReferences.apiVersion: Invalid value: "example.com/": version must not be empty'],
    ],
    [{ apiVersion: 'v1', name: 'n', uid: 'u' }, ['metadata.ownerReferences.kind: Invalid value: "": kind must not be empty']],
    [{ apiVersion: 'v1', kind: 'K', uid: 'u' }, ['metadata.ownerReferences.name: Invalid value: "": name must not be empty']],
    [{ apiVersion: 'v1', kind: 'K', name: 'n', uid: '' }, ['metadata.ownerReferences.uid: Invalid value: "": uid must not be empty']],
  ])('required members: %j → %j', (reference, expected) => {
    expect(texts(validate({ ...valid, ownerReferences: [reference] }))).toEqual(expected);
  });

  it('a core Event cannot be an owner', () => {
    const errors = validate({ ...valid, ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }] });
    expect(errors.map((e) => [e.field, e.detail])).toEqual([['metadata.ownerReferences', '/v1, Kind=Event is disallowed from being an owner']]);
    expect(validate({ ...valid, ownerReferences: [{ apiVersion: 'events.k8s.io/v1', kind: 'Event', name: 'e', uid: 'u' }] })).toEqual([]);
  });
});

describe('validateObjectMeta: malformed field types', () => {
  it.each([
    ['a string metadata', 'x', [['FieldValueTypeInvalid', 'metadata']]],
    ['an array metadata', [], [['FieldValueTypeInvalid', 'metadata']]],
    [
      'a numeric name',
      { name: 5, namespace: 'default' },
      [
        ['FieldValueTypeInvalid', 'metadata.name'],
        ['FieldValueRequired', 'metadata.name'],
      ],
    ],
    ['labels as a string', { ...valid, labels: 'a=b' }, [['FieldValueTypeInvalid', 'metadata.labels']]],
    ['labels as a list', { ...valid, labels: ['a'] }, [['FieldValueTypeInvalid', 'metadata.labels']]],
    ['a numeric label value', { ...valid, labels: { a: 1 } }, [['FieldValueTypeInvalid', 'metadata.labels[a]']]],
    ['an object annotation value', { ...valid, annotations: { a: {} } }, [['FieldValueTypeInvalid', 'metadata.annotations[a]']]],
    ['finalizers as a string', { ...valid, finalizers: 'x' }, [['FieldValueTypeInvalid', 'metadata.finalizers']]],
    ['a numeric finalizer', { ...valid, finalizers: ['ok', 3] }, [['FieldValueTypeInvalid', 'metadata.finalizers[1]']]],
    ['ownerReferences as an object', { ...valid, ownerReferences: {} }, [['FieldValueTypeInvalid', 'metadata.ownerReferences']]],
    ['an owner reference that is a string', { ...valid, ownerReferences: ['x'] }, [['FieldValueTypeInvalid', 'metadata.ownerReferences[0]']]],
    [
      'a string controller flag',
      { ...valid, ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'n', uid: 'u', controller: 'true' }] },
      [['FieldValueTypeInvalid', 'metadata.ownerReferences[0].controller']],
    ],
    ['a fractional generation', { ...valid, generation: 1.5 }, [['FieldValueTypeInvalid', 'metadata.generation']]],
    ['a negative generation', { ...valid, generation: -1 }, [['FieldValueInvalid', 'metadata.generation']]],
    ['a numeric resourceVersion', { ...valid, resourceVersion: 5 }, [['FieldValueTypeInvalid', 'metadata.resourceVersion']]],
    ['managedFields as a string', { ...valid, managedFields: 'x' }, [['FieldValueTypeInvalid', 'metadata.managedFields']]],
  ])('%s', (_title, meta, expected) => {
    expect(validate(meta).map((e) => [e.type, e.field])).toEqual(expected);
  });

  it('null members count as absent and null label values as empty strings', () => {
    expect(validate({ ...valid, labels: { a: null }, annotations: null, finalizers: null, ownerReferences: null, uid: null })).toEqual([]);
  });

  it('does not modify its input', () => {
    const meta = { name: 'Bad', namespace: 'default', labels: { 'bad key': 'v' }, finalizers: ['b', 'a'] };
    const copy = structuredClone(meta);
    validate(meta);
    objectmeta.finalizerWarnings(['a'], meta.finalizers);
    objectmeta.newFinalizersWhileDeleting([], meta.finalizers);
    expect(meta).toEqual(copy);
  });
});
