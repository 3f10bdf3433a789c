import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as authentication from '../../../devcluster/auth/authentication.js';
import * as certs from '../../../devcluster/auth/certs.js';
import * as tokens from '../../../devcluster/auth/tokens.js';
import * as users from '../../../devcluster/auth/users.js';
import * as statuses from '../../../devcluster/server/statuses.js';
import * as tlsservers from './tlsservers.js';

const NOW = new Date('2025-06-01T12:00:00Z');
const ADMIN = users.adminUser('admin-uid');

function context(overrides: Partial<authentication.AuthenticationContext> = {}): authentication.AuthenticationContext {
  const table = new tokens.TokenTable();
  table.add({ token: 'good', username: 'alice', uid: 'a-1', groups: ['devs'] });
  table.add({ token: 'stale', username: 'old', expiresAt: new Date('2025-05-01T00:00:00Z') });
  return { mode: 'enforced', anonymous: false, tokens: table, now: NOW, adminUser: ADMIN, ...overrides };
}

const validCert: authentication.PeerCertificateInfo = {
  subject: { CN: 'carol', O: ['ops', 'devs'] },
  valid_from: 'May  1 00:00:00 2025 GMT',
  valid_to: 'Jul  1 00:00:00 2025 GMT',
};

describe('authenticate', () => {
  it('D-AUTH-1 mode none runs every request as devcluster-admin, ignoring credentials', () => {
    const ctx = context({ mode: 'none' });
    for (const req of [{}, { authorization: 'Bearer nonsense' }, { peerCertificate: validCert, peerAuthorized: false }]) {
      expect(authentication.authenticate(req, ctx)).toEqual({
        ok: true,
        method: 'none',
        user: { username: 'devcluster-admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] },
      });
    }
  });

  it('D-AUTH-2 a valid bearer token authenticates its user', () => {
    expect(authentication.authenticate({ authorization: 'Bearer good' }, context())).toEqual({
      ok: true,
      method: 'token',
      user: { username: 'alice', uid: 'a-1', groups: ['devs', 'system:authenticated'] },
    });
    expect(authentication.authenticate({ authorization: 'bearer good' }, context())).toMatchObject({ ok: true });
  });

  it('C-115 / D-AUTH-2 unknown and expired tokens are refused even when anonymous access is on', () => {
    for (const anonymous of [false, true]) {
      expect(authentication.authenticate({ authorization: 'Bearer nope' }, context({ anonymous }))).toEqual({ ok: false });
      expect(authentication.authenticate({ authorization: 'Bearer stale' }, context({ anonymous }))).toEqual({ ok: false });
    }
  });

  it('D-AUTH-2 token validity is judged at the injected time, not wall time', () => {
    const ctx = context();
    ctx.tokens.add({ token: 'future', username: 'f', notBefore: new Date('2099-01-01T00:00:00Z') });
    expect(authentication.authenticate({ authorization: 'Bearer future' }, ctx)).toEqual({ ok: false });
    expect(authentication.authenticate({ authorization: 'Bearer future' }, { ...ctx, now: new Date('2099-01-02T00:00:00Z') })).toMatchObject({
      ok: true,
      user: { username: 'f' },
    });
    expect(authentication.authenticate({ authorization: 'Bearer stale' }, { ...ctx, now: new Date('2025-04-01T00:00:00Z') })).toMatchObject({
      ok: true,
      user: { username: 'old' },
    });
  });

  it('C-115 / D-AUTH-4 no credentials → refused by default, anonymous when allowed', () => {
    expect(authentication.authenticate({}, context())).toEqual({ ok: false });
    expect(authentication.authenticate({ peerCertificate: {} }, context())).toEqual({ ok: false });
    expect(authentication.authenticate({}, context({ anonymous: true }))).toEqual({
      ok: true,
      method: 'anonymous',
      user: { username: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] },
    });
  });

  it('D-AUTH-4 a non-bearer or empty Authorization header counts as no credentials', () => {
    expect(authentication.authenticate({ authorization: 'Basic YTpi' }, context({ anonymous: true }))).toMatchObject({ method: 'anonymous' });
    expect(authentication.authenticate({ authorization: 'Bearer ' }, context({ anonymous: true }))).toMatchObject({ method: 'anonymous' });
    expect(authentication.authenticate({ authorization: 'Basic YTpi' }, context())).toEqual({ ok: false });
  });

  it('C-115 / D-AUTH-3 a verified client certificate authenticates CN with its O groups', () => {
    expect(authentication.authenticate({ peerCertificate: validCert, peerAuthorized: true }, context())).toEqual({
      ok: true,
      method: 'certificate',
      user: { username: 'carol', uid: '', groups: ['ops', 'devs', 'system:authenticated'] },
    });
    const single = { ...validCert, subject: { CN: 'dave', O: 'solo' } };
    expect(authentication.authenticate({ peerCertificate: single, peerAuthorized: true }, context())).toMatchObject({
      user: { username: 'dave', groups: ['solo', 'system:authenticated'] },
    });
  });

  it('D-AUTH-3 foreign, expired, not-yet-valid or nameless certificates are refused even with anonymous access', () => {
    const ctx = context({ anonymous: true });
    const cases: authentication.AuthenticationRequest[] = [
      { peerCertificate: validCert, peerAuthorized: false },
      { peerCertificate: validCert },
      { peerCertificate: { ...validCert, valid_to: 'May 31 00:00:00 2025 GMT' }, peerAuthorized: true },
      { peerCertificate: { ...validCert, valid_from: 'Jun  2 00:00:00 2025 GMT' }, peerAuthorized: true },
      { peerCertificate: { ...validCert, subject: { O: 'devs' } }, peerAuthorized: true },
      { peerCertificate: { ...validCert, valid_to: 'garbage' }, peerAuthorized: true },
    ];
    for (const req of cases) expect(authentication.authenticate(req, ctx)).toEqual({ ok: false });
  });

  it('D-AUTH-2/3 either valid credential suffices when both are presented; a verified certificate wins', () => {
    const ctx = context();
    expect(authentication.authenticate({ authorization: 'Bearer good', peerCertificate: validCert, peerAuthorized: false }, ctx)).toMatchObject({
      ok: true,
      method: 'token',
      user: { username: 'alice' },
    });
    expect(authentication.authenticate({ authorization: 'Bearer nope', peerCertificate: validCert, peerAuthorized: true }, ctx)).toMatchObject({
      ok: true,
      method: 'certificate',
      user: { username: 'carol' },
    });
    expect(authentication.authenticate({ authorization: 'Bearer good', peerCertificate: validCert, peerAuthorized: true }, ctx)).toMatchObject({
      method: 'certificate',
    });
    expect(authentication.authenticate({ authorization: 'Bearer nope', peerCertificate: validCert, peerAuthorized: false }, ctx)).toEqual({ ok: false });
  });

  it('parses the validity dates Node reports', () => {
    expect(authentication.parseCertificateTime('Jan  2 03:04:05 2025 GMT')).toBe(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(authentication.parseCertificateTime('Dec 31 23:59:59 2030 GMT')).toBe(Date.UTC(2030, 11, 31, 23, 59, 59));
    expect(authentication.parseCertificateTime('Foo 31 23:59:59 2030 GMT')).toBeUndefined();
    expect(authentication.parseCertificateTime(undefined)).toBeUndefined();
  });
});

describe('authentication over real TLS', () => {
  let ca: certs.CertificateAuthority;
  let otherCa: certs.CertificateAuthority;
  let server: tlsservers.TestServer;
  let now = new Date();
  const table = new tokens.TokenTable();

  beforeAll(async () => {
    ca = await certs.createCertificateAuthority();
    otherCa = await certs.createCertificateAuthority();
    const serving = await certs.issueServingCertificate(ca, { hosts: ['localhost', '127.0.0.1'] });
    server = await tlsservers.startServer({ ...serving, clientCaPem: ca.certPem }, (report) => {
      const result = authentication.authenticate(
        { authorization: report.authorization, peerCertificate: report.peer, peerAuthorized: report.authorized },
        { mode: 'enforced', anonymous: false, tokens: table, now, adminUser: ADMIN },
      );
      if (!result.ok) {
        const status = statuses.unauthorized().toStatus();
        return { status: status.code, body: status };
      }
      return { status: 200, body: result.user };
    });
  });
  afterAll(() => server.close());

  const call = (extra: Partial<tlsservers.ClientOptions> = {}) => tlsservers.get({ port: server.port, caPem: ca.certPem, ...extra });

  it('C-115 no credentials → 401 Unauthorized with the exact Status', async () => {
    expect(await call()).toEqual({
      status: 401,
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 },
    });
  });

  it('C-115 valid token → 200; the same token after its expiry on the injected clock → 401', async () => {
    now = new Date();
    table.add({ token: 'tok', username: 'tina', expiresAt: new Date(now.getTime() + 60_000) });
    const headers = { authorization: 'Bearer tok' };
    expect(await call({ headers })).toMatchObject({ status: 200, body: { username: 'tina' } });
    now = new Date(now.getTime() + 61_000);
    expect((await call({ headers })).status).toBe(401);
  });

  it('C-115 client certificate CN=alice, O=devs → user alice in devs', async () => {
    now = new Date();
    const client = await certs.issueClientCertificate(ca, { username: 'alice', groups: ['devs'] });
    expect(await call({ certPem: client.certPem, keyPem: client.keyPem })).toEqual({
      status: 200,
      body: { username: 'alice', uid: '', groups: ['devs', 'system:authenticated'] },
    });
  });

  it('D-AUTH-3 certificates from another CA, or expired, → 401', async () => {
    now = new Date();
    const foreign = await certs.issueClientCertificate(otherCa, { username: 'alice', groups: ['devs'] });
    expect((await call({ certPem: foreign.certPem, keyPem: foreign.keyPem })).status).toBe(401);
    const expired = await certs.issueClientCertificate(ca, {
      username: 'alice',
      notBefore: new Date(now.getTime() - 3_600_000),
      notAfter: new Date(now.getTime() - 60_000),
    });
    expect((await call({ certPem: expired.certPem, keyPem: expired.keyPem })).status).toBe(401);
  });

  it('D-AUTH-3 a certificate valid in wall time but expired at the injected time → 401', async () => {
    const client = await certs.issueClientCertificate(ca, { username: 'alice', notAfter: new Date(Date.now() + 3_600_000) });
    now = new Date(Date.now() + 7_200_000);
    expect((await call({ certPem: client.certPem, keyPem: client.keyPem })).status).toBe(401);
    now = new Date();
    expect((await call({ certPem: client.certPem, keyPem: client.keyPem })).status).toBe(200);
  });
});
