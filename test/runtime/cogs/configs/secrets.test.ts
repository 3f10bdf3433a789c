/**
 * Secret-like fields (R-SEC-18..20): digests in essences instead of values, the migration of a
 * diff-base written with values, and redaction of bodies, patches and diffs for logs.
 */
import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import * as diffbase from '../../../../runtime/cogs/configs/diffbase.js';
import * as secrets from '../../../../runtime/cogs/configs/secrets.js';
import * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as diffs from '../../../../runtime/cogs/structs/diffs.js';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const PASSWORD = 'hunter2-very-secret';
const USER = 'admin-user-name';

function secret(data: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'default', uid: 'u-1', annotations: { note: 'kept' } },
    type: 'Opaque',
    data,
    ...extra,
  };
}

const DEFAULT_PATHS = secrets.secretPathsOf(new settings.OperatorSettings().persistence.secretFields, secret({}));

describe('secret-like fields', () => {
  it('R-SEC-18 the defaults: a Secret has data and stringData; other kinds none; configurable by Kind.group', () => {
    expect(DEFAULT_PATHS).toEqual([['data'], ['stringData']]);
    expect(secrets.secretPathsOf(secrets.defaultSecretFields(), { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } })).toEqual([]);
    // A kind named Secret in another group is not the core Secret.
    expect(secrets.secretPathsOf(secrets.defaultSecretFields(), { apiVersion: 'example.com/v1', kind: 'Secret' })).toEqual([]);
    const s = new settings.OperatorSettings();
    s.persistence.secretFields['Database.example.com'] = ['spec.password', ['spec', 'tokens']];
    expect(secrets.secretPathsOf(s.persistence.secretFields, { apiVersion: 'example.com/v1', kind: 'Database' })).toEqual([
      ['spec', 'password'],
      ['spec', 'tokens'],
    ]);
  });

  it('R-SEC-18 the essence of a Secret holds per-key sha-256 digests, never the values', () => {
    const essence = new diffbase.AnnotationsDiffBaseStorage().build({ body: secret({ password: b64(PASSWORD), user: b64(USER) }) });
    const { essence: digested, changed } = secrets.digestSecrets(essence, DEFAULT_PATHS);
    expect(changed).toBe(true);
    const expected = `kopf-gen/secret:sha256:${createHash('sha256')
      .update(JSON.stringify(b64(PASSWORD)))
      .digest('hex')}`;
    expect(digested).toEqual({
      type: 'Opaque',
      data: { password: expected, user: secrets.secretDigestOf(b64(USER)) },
      metadata: { annotations: { note: 'kept' } },
    });
    const encoded = diffbase.encodeEssence(digested);
    expect(encoded).not.toContain(b64(PASSWORD));
    expect(encoded).not.toContain(b64(USER));
    // The essence given is untouched, and digesting again changes nothing.
    expect((essence['data'] as Record<string, string>)['password']).toBe(b64(PASSWORD));
    expect(secrets.digestSecrets(digested, DEFAULT_PATHS)).toEqual({ essence: digested, changed: false });
  });

  it('R-SEC-18 the diff of two digested essences names the key that changed, with digests as old and new', () => {
    const before = secrets.digestSecrets({ data: { password: b64('one'), user: b64(USER) } }, DEFAULT_PATHS).essence;
    const after = secrets.digestSecrets({ data: { password: b64('two'), user: b64(USER) } }, DEFAULT_PATHS).essence;
    expect([...diffs.diff(before, after)].map((item) => [...item])).toEqual([
      ['change', ['data', 'password'], secrets.secretDigestOf(b64('one')), secrets.secretDigestOf(b64('two'))],
    ]);
  });

  it('R-SEC-19 a diff-base stored with plain values (Kopf) digests to the same essence: no change is reported', () => {
    const body = secret({ password: b64(PASSWORD) });
    const storage = new diffbase.AnnotationsDiffBaseStorage();
    const kopfWritten = storage.build({ body }); // what Kopf stores: the values themselves
    const now = secrets.digestSecrets(storage.build({ body }), DEFAULT_PATHS).essence;
    const migrated = secrets.digestSecrets(kopfWritten, DEFAULT_PATHS);
    expect(migrated.changed).toBe(true);
    expect([...diffs.diff(migrated.essence, now)]).toEqual([]);
  });

  it('R-SEC-18 a field that is not a map is digested as a whole', () => {
    const paths = [['spec', 'password']];
    const { essence } = secrets.digestSecrets({ spec: { password: 'p4ss', size: 1 } }, paths);
    expect(essence).toEqual({ spec: { password: secrets.secretDigestOf('p4ss'), size: 1 } });
  });

  it('R-SEC-20 redaction: values of secret fields as <redacted N bytes>, also inside configuration annotations; other kinds untouched', () => {
    const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', stringData: { token: 'plain-token' }, metadata: { name: 'db' } });
    const body = secret(
      { password: b64(PASSWORD) },
      {
        metadata: {
          name: 'db',
          annotations: {
            'kubectl.kubernetes.io/last-applied-configuration': lastApplied,
            'kopf.zalando.org/last-handled-configuration': `{"data":{"password":"${b64(PASSWORD)}"}}\n`,
            'example.com/last-handled-configuration': 'not json',
            note: 'kept',
          },
        },
      },
    );
    const redacted = secrets.redactSecrets(body, DEFAULT_PATHS);
    const text = JSON.stringify(redacted);
    expect(text).not.toContain(b64(PASSWORD));
    expect(text).not.toContain('plain-token');
    expect(text).toContain(`"password":"<redacted ${b64(PASSWORD).length} bytes>"`);
    expect(text).toContain('"note":"kept"');
    expect((redacted as { metadata: { annotations: Record<string, string> } }).metadata.annotations['example.com/last-handled-configuration']).toBe(
      '<redacted 8 bytes>',
    );
    // The body is untouched; a kind without secret fields is returned as it is.
    expect((body['data'] as Record<string, string>)['password']).toBe(b64(PASSWORD));
    const configmap = { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } };
    expect(secrets.redactSecrets(configmap, [])).toBe(configmap);
  });

  it('R-SEC-20 redaction of a value found at a path: below, at and above a secret field', () => {
    expect(secrets.redactSecrets('abc', DEFAULT_PATHS, ['data', 'password'])).toBe('<redacted 3 bytes>');
    expect(secrets.redactSecrets({ a: 'xy', b: null }, DEFAULT_PATHS, ['stringData'])).toEqual({ a: '<redacted 2 bytes>', b: null });
    expect(secrets.redactSecrets({ data: { a: 'xy' }, type: 'Opaque' }, DEFAULT_PATHS, [])).toEqual({ data: { a: '<redacted 2 bytes>' }, type: 'Opaque' });
    expect(secrets.redactSecrets('Opaque', DEFAULT_PATHS, ['type'])).toBe('Opaque');
  });
});
