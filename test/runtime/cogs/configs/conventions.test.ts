import { describe, expect, it } from 'vitest';

import * as conventions from '../../../../runtime/cogs/configs/conventions.js';
import * as patches from '../../../../runtime/cogs/structs/patches.js';
import * as configErrors from '../../../../runtime/cogs/configs/errors.js';

const OP = 'my-operator.example.com';
const KZ = 'kopf.zalando.org';
const LONG = 'create_fn/spec.items.very-long-sub-handler-identifier-for-testing';

describe('annotation key forming', () => {
  it.each([
    [OP, 'a_b.c-d/e', `${OP}/a_b.c-d.e`, `${OP}/a_b.c-d.e`],
    [OP, 'x'.repeat(40), `${OP}/${'x'.repeat(32)}-tEokcg`, `${OP}/${'x'.repeat(40)}`],
    [OP, 'x'.repeat(64), `${OP}/${'x'.repeat(32)}-SItAqA`, `${OP}/${'x'.repeat(56)}-SItAqA`],
    [OP, 'fn'.repeat(323), `${OP}/${'fn'.repeat(16)}-Az-r.g`, `${OP}/${'fn'.repeat(28)}-Az-r.g`],
    [KZ, 'update_fn/spec.field', `${KZ}/update_fn.spec.field`, `${KZ}/update_fn.spec.field`],
    [KZ, 'a'.repeat(50), `${KZ}/${'a'.repeat(39)}-koaVtw`, `${KZ}/${'a'.repeat(50)}`],
    [KZ, LONG, `${KZ}/create_fn.spec.items.very-long-sub-hand-zlF-7g`, `${KZ}/create_fn.spec.items.very-long-sub-handler-identifier-fo-1Zgo2w`],
  ])('R-STORAGE-6 vector: prefix %s, key %s', (prefix, key, v1, v2) => {
    expect(conventions.v1Key(prefix, key)).toBe(v1);
    expect(conventions.v2Key(prefix, key)).toBe(v2);
  });

  it('R-STORAGE-6 the vector "x"×64 hashes in V1 too, and the long id has 65 characters', () => {
    expect(LONG).toHaveLength(65);
    expect(conventions.v1Key(OP, 'x'.repeat(64))).toMatch(/^my-operator\.example\.com\/x+-[A-Za-z0-9.-]+$/);
    expect(conventions.v1Key(OP, 'x'.repeat(64)).length).toBeLessThanOrEqual(63);
  });

  it('R-STORAGE-6 the safe form replaces /, < and >', () => {
    expect(conventions.safeKey('a/b<c>d/e')).toBe('a.b_c_d.e');
  });

  it('R-STORAGE-6 hash suffixes are BLAKE2b-4 in the -/. alphabet with trailing -, . and = stripped', () => {
    expect(conventions.hashSuffix('x'.repeat(64))).toBe('-SItAqA');
    for (const text of ['a', 'b', 'c', 'handler', 'x'.repeat(100), 'ünïcödé']) {
      expect(conventions.hashSuffix(text)).toMatch(/^-[A-Za-z0-9.-]*[A-Za-z0-9]$/);
    }
  });

  it('R-STORAGE-6 keys never exceed 63 characters in the name part (V2) or in total (V1)', () => {
    for (const length of [1, 62, 63, 64, 65, 200]) {
      const key = 'k'.repeat(length);
      expect(conventions.v2Key(KZ, key).length - KZ.length - 1).toBeLessThanOrEqual(63);
      expect(conventions.v1Key(KZ, key).length).toBeLessThanOrEqual(63);
    }
  });

  it('R-STORAGE-7 keysFor gives the V2 key first and the V1 key only if enabled and different', () => {
    expect(conventions.keysFor(KZ, 'update_fn/spec.field', { v1: true })).toEqual([`${KZ}/update_fn.spec.field`]);
    expect(conventions.keysFor(KZ, 'a'.repeat(50), { v1: true })).toEqual([`${KZ}/${'a'.repeat(50)}`, `${KZ}/${'a'.repeat(39)}-koaVtw`]);
    expect(conventions.keysFor(KZ, 'a'.repeat(50), { v1: false })).toEqual([`${KZ}/${'a'.repeat(50)}`]);
  });

  it('R-STORAGE-7 an empty prefix is rejected and a too-long one warned about', () => {
    expect(() => conventions.checkPrefix('')).toThrow(configErrors.StorageConfigError);
    const warnings: string[] = [];
    conventions.checkPrefix('p'.repeat(190), (message) => warnings.push(message));
    conventions.checkPrefix('p'.repeat(189), (message) => warnings.push(message));
    expect(warnings).toHaveLength(1);
  });
});

describe('ReplicaSets of Deployments', () => {
  const replicaSet = (ownerKind: string): unknown => ({
    kind: 'ReplicaSet',
    metadata: { ownerReferences: [{ kind: ownerKind, name: 'd', uid: 'u', apiVersion: 'apps/v1' }] },
  });

  it('R-STORAGE-12 record keys get -ofDRS for ReplicaSets owned by a Deployment', () => {
    expect(conventions.markKey('create_fn', replicaSet('Deployment'))).toBe('create_fn-ofDRS');
    expect(conventions.keysForBody(KZ, 'create_fn', replicaSet('Deployment'), { v1: true })).toEqual([`${KZ}/create_fn-ofDRS`]);
  });

  it.each([
    ['a ReplicaSet owned by something else', replicaSet('Other')],
    ['a Deployment', { kind: 'Deployment', metadata: { ownerReferences: [{ kind: 'Deployment' }] } }],
    ['a ReplicaSet without owners', { kind: 'ReplicaSet', metadata: {} }],
  ])('R-STORAGE-12 no suffix for %s', (_title, body) => {
    expect(conventions.markKey('create_fn', body)).toBe('create_fn');
  });
});

describe('Kopf ownership', () => {
  it('R-STORAGE-11 prefixes with a kopf-managed marker, kopf.zalando.org and its subdomains are Kopf-owned', () => {
    const owned = conventions.detectMarkedPrefixes([
      'custom.example.com/kopf-managed',
      'custom.example.com/create_fn',
      'kopf.zalando.org/x',
      'op.kopf.zalando.org/y',
      'xkopf.zalando.org/z',
      'unrelated.example.com/a',
      'no-prefix',
    ]);
    expect([...owned].sort()).toEqual(['custom.example.com', 'kopf.zalando.org', 'op.kopf.zalando.org']);
  });

  it('R-STORAGE-11 the marker is written once for custom prefixes, never for kopf.* ones', () => {
    const patch = new patches.Patch();
    conventions.storeMarker('custom.example.com', patch, {});
    conventions.storeMarker('custom.example.com', patch, {});
    conventions.storeMarker('kopf.example.com', patch, {});
    expect(patch.toMergePatch()).toEqual({ metadata: { annotations: { 'custom.example.com/kopf-managed': 'yes' } } });
    const present = new patches.Patch();
    conventions.storeMarker('custom.example.com', present, { metadata: { annotations: { 'custom.example.com/kopf-managed': 'yes' } } });
    expect(present.isEmpty()).toBe(true);
  });
});

describe('JSON encoding', () => {
  it('R-STORAGE-15 compact JSON with non-ASCII escaped as lower-case \\uXXXX', () => {
    expect(conventions.dumpJson({ a: 'ü', b: [1, 'x'], c: '😀', d: '\u007f' })).toBe('{"a":"\\u00fc","b":[1,"x"],"c":"\\ud83d\\ude00","d":"\\u007f"}');
    expect(JSON.parse(conventions.dumpJson({ text: 'naïve ✓' }))).toEqual({ text: 'naïve ✓' });
  });
});
