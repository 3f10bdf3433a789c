import { describe, expect, it } from 'vitest';
import * as fielderrors from '../../../devcluster/meta/fielderrors.js';
import * as secrets from '../../../devcluster/builtins/secrets.js';
import * as statuses from '../../../devcluster/server/statuses.js';
import { loose, testContext } from './contexts.js';

type Json = { [key: string]: any };
const secret = (extra: Json): Json => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, ...extra });
const rendered = (errors: fielderrors.FieldError[]): string[] => errors.map(fielderrors.renderError);
const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('secrets', () => {
  const s = loose(secrets.secretStrategy);
  const ctx = testContext();

  it('D-BI-6 stringData is encoded into data, overrides the same keys, and is removed', () => {
    const input = secret({ data: { a: b64('old'), b: b64('keep') }, stringData: { a: 'x' } });
    const out = s.prepareForCreate!(input, ctx);
    expect(out['data']).toEqual({ a: 'eA==', b: b64('keep') });
    expect(out).not.toHaveProperty('stringData');
    expect(out['type']).toBe('Opaque');
    expect(input['stringData']).toEqual({ a: 'x' });
    expect(s.prepareForUpdate!(secret({ stringData: { u: 'ü' } }), out, ctx)['data']).toEqual({ u: b64('ü') });
  });

  it('D-BI-6 invalid base64 in data is a 400 decode error', () => {
    let error: unknown;
    try {
      s.prepareForCreate!(secret({ data: { a: '!!' } }), ctx);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(statuses.ApiError);
    expect((error as statuses.ApiError).code).toBe(400);
    expect((error as statuses.ApiError).message).toBe('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0');
  });

  it('D-BI-6 the type is immutable', () => {
    const old = s.prepareForCreate!(secret({ data: {} }), ctx);
    const next = s.prepareForUpdate!(secret({ type: 'example.com/other' }), old, ctx);
    expect(rendered(s.validate!(next, old, ctx))).toEqual(['type: Invalid value: "example.com/other": field is immutable']);
    expect(s.validate!(s.prepareForUpdate!(secret({}), old, ctx), old, ctx)).toEqual([]);
  });

  it.each<[string, Json, string[]]>([
    ['kubernetes.io/tls', {}, ['data[tls.crt]: Required value', 'data[tls.key]: Required value']],
    ['kubernetes.io/tls', { 'tls.crt': b64('c'), 'tls.key': b64('k') }, []],
    ['kubernetes.io/dockerconfigjson', {}, ['data[.dockerconfigjson]: Required value']],
    ['kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('{"auths":{}}') }, []],
    [
      'kubernetes.io/dockercfg',
      { '.dockercfg': b64('not json') },
      [expect.stringMatching(/^data\[\.dockercfg\]: Invalid value: "<secret contents redacted>": /) as unknown as string],
    ],
    ['kubernetes.io/basic-auth', {}, ['data[username]: Required value', 'data[password]: Required value']],
    ['kubernetes.io/basic-auth', { password: '' }, []],
    ['kubernetes.io/ssh-auth', {}, ['data[ssh-privatekey]: Required value']],
    ['kubernetes.io/service-account-token', {}, ['metadata.annotations[kubernetes.io/service-account.name]: Required value']],
    ['example.com/custom', {}, []],
  ])('D-BI-6 type %s with %j → %j', (type, data, expected) => {
    const obj = s.prepareForCreate!(secret({ type, data }), ctx);
    expect(rendered(s.validate!(obj, undefined, ctx))).toEqual(expected);
  });

  it('D-BI-6 key rules, size and immutable apply as for ConfigMaps', () => {
    expect(rendered(s.validate!(secret({ data: { 'a b': '' } }), undefined, ctx))).toEqual([
      expect.stringMatching(/^data\[a b\]: Invalid value: "a b": a valid config key/),
    ]);
    const big = Buffer.alloc(1048577).toString('base64');
    expect(rendered(s.validate!(secret({ data: { a: big } }), undefined, ctx))).toEqual(['data: Too long: must have at most 1048576 bytes']);
    const old = secret({ type: 'Opaque', data: { a: 'eA==' }, immutable: true });
    expect(rendered(s.validate!(secret({ type: 'Opaque', data: { a: 'eQ==' }, immutable: true }), old, ctx))).toEqual([
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('D-BI-1 secrets are selectable by type', () => {
    expect(s.fieldSelectors!['type']!(secret({ type: 'kubernetes.io/tls' }))).toBe('kubernetes.io/tls');
  });
});
