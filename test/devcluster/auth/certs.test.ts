import * as childprocess from 'node:child_process';
import * as nodecrypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as certs from '../../../devcluster/auth/certs.js';
import { requireKubectl } from '../../support/kubectl.js';
import * as tlsservers from './tlsservers.js';

// Imported after certs.js, which installs what @peculiar/x509 needs before it loads.
import * as x509 from '@peculiar/x509';

let ca: certs.CertificateAuthority;
let otherCa: certs.CertificateAuthority;
let serving: certs.KeyPairPem;

beforeAll(async () => {
  ca = await certs.createCertificateAuthority({ commonName: 'test-ca' });
  otherCa = await certs.createCertificateAuthority({ commonName: 'other-ca' });
  serving = await certs.issueServingCertificate(ca, {
    hosts: ['localhost', '127.0.0.1', '::1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
  });
});

function sanOf(pem: string): string {
  return new nodecrypto.X509Certificate(pem).subjectAltName ?? '';
}

describe('certificate authority', () => {
  it('D-GEN-2 the CA is a self-signed CA:true certificate for keyCertSign and cRLSign, with a key identifier', async () => {
    const cert = new x509.X509Certificate(ca.certPem);
    expect(cert.subject).toBe('CN=test-ca');
    expect(cert.issuer).toBe('CN=test-ca');
    const basic = cert.getExtension(x509.BasicConstraintsExtension);
    expect(basic?.ca).toBe(true);
    expect(basic?.critical).toBe(true);
    const usage = cert.getExtension(x509.KeyUsagesExtension);
    expect(usage?.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId).toBe(ca.subjectKeyId);
    expect(new nodecrypto.X509Certificate(ca.certPem).ca).toBe(true);
    expect(await cert.verify({ publicKey: cert.publicKey, signatureOnly: true })).toBe(true);
  });

  it('the CA key is PKCS#8 PEM of an EC P-256 key; PEM texts end with one newline', () => {
    expect(ca.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PRIVATE KEY-----\n$/);
    expect(ca.certPem).toMatch(/^-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+\n-----END CERTIFICATE-----\n$/);
    const key = nodecrypto.createPrivateKey(ca.keyPem);
    expect(key.asymmetricKeyType).toBe('ec');
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });

  it('validity follows the injected now and validDays', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const early = await certs.createCertificateAuthority({ now, validDays: 10 });
    const cert = new nodecrypto.X509Certificate(early.certPem);
    expect(new Date(cert.validFrom).getTime()).toBeLessThanOrEqual(now.getTime());
    expect(new Date(cert.validTo).toISOString()).toBe('2030-01-11T00:00:00.000Z');
  });

  it('a CA reloaded from its PEM texts issues certificates that chain to the original', async () => {
    const reloaded = await certs.loadCertificateAuthority(ca.certPem, ca.keyPem);
    expect(reloaded.subjectKeyId).toBe(ca.subjectKeyId);
    const leaf = await certs.issueClientCertificate(reloaded, { username: 'bob' });
    const parsed = new nodecrypto.X509Certificate(leaf.certPem);
    expect(parsed.checkIssued(new nodecrypto.X509Certificate(ca.certPem))).toBe(true);
    expect(parsed.verify(new nodecrypto.X509Certificate(ca.certPem).publicKey)).toBe(true);
  });
});

describe('issued certificates', () => {
  it('D-GEN-2 the serving certificate carries DNS and IP SANs split from the host list', () => {
    const san = sanOf(serving.certPem);
    for (const dns of ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc']) expect(san).toContain(`DNS:${dns}`);
    expect(san).toContain('IP Address:127.0.0.1');
    expect(san).toContain('IP Address:0:0:0:0:0:0:0:1');
    expect(san).not.toContain('DNS:127.0.0.1');
    expect(certs.splitHosts(['a.svc', '10.0.0.1', '[::1]'])).toEqual({ dnsNames: ['a.svc'], ipAddresses: ['10.0.0.1', '::1'] });
  });

  it('leaf certificates have serverAuth/clientAuth usages, digitalSignature, CA:false and key identifiers', async () => {
    const both = await certs.issueCertificate(ca, { commonName: 'both', usage: 'both', dnsNames: ['x.example'] });
    const table: Array<[string, string[]]> = [
      [serving.certPem, [x509.ExtendedKeyUsage.serverAuth]],
      [(await certs.issueClientCertificate(ca, { username: 'u' })).certPem, [x509.ExtendedKeyUsage.clientAuth]],
      [both.certPem, [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]],
    ];
    for (const [pem, usages] of table) {
      const cert = new x509.X509Certificate(pem);
      expect(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual(usages);
      expect(cert.getExtension(x509.KeyUsagesExtension)?.usages).toBe(x509.KeyUsageFlags.digitalSignature);
      expect(cert.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(false);
      expect(cert.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId).toBe(ca.subjectKeyId);
      expect(cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId).toMatch(/^[0-9a-f]{40}$/);
      expect(cert.issuer).toBe('CN=test-ca');
    }
  });

  it('serial numbers are random and positive', async () => {
    const serials = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const cert = new nodecrypto.X509Certificate((await certs.issueClientCertificate(ca, { username: `u${i}` })).certPem);
      expect(Number.parseInt(cert.serialNumber.slice(0, 2), 16)).toBeLessThan(0x80);
      expect(BigInt(`0x${cert.serialNumber}`) > 0n).toBe(true);
      serials.add(cert.serialNumber);
    }
    expect(serials.size).toBe(8);
  });

  it('D-AUTH-3 client certificates carry CN = username and one O per group', async () => {
    const client = await certs.issueClientCertificate(ca, { username: 'alice', groups: ['devs', 'system:masters'] });
    const cert = new x509.X509Certificate(client.certPem);
    expect(cert.subjectName.getField('CN')).toEqual(['alice']);
    expect(cert.subjectName.getField('O')).toEqual(['devs', 'system:masters']);
  });

  it('explicit notBefore and notAfter are honoured; reversed ones are refused', async () => {
    const notBefore = new Date('2020-01-01T00:00:00Z');
    const notAfter = new Date('2020-01-02T00:00:00Z');
    const client = await certs.issueClientCertificate(ca, { username: 'old', notBefore, notAfter });
    const cert = new nodecrypto.X509Certificate(client.certPem);
    expect(new Date(cert.validFrom).toISOString()).toBe(notBefore.toISOString());
    expect(new Date(cert.validTo).toISOString()).toBe(notAfter.toISOString());
    await expect(certs.issueClientCertificate(ca, { username: 'x', notBefore: notAfter, notAfter: notBefore })).rejects.toMatchObject({
      code: 'CertificateOptions',
    });
    await expect(certs.issueCertificate(ca, { commonName: 'x', ipAddresses: ['not-an-ip'], usage: 'server' })).rejects.toMatchObject({
      code: 'CertificateOptions',
    });
  });

  it('default leaf validity never outlasts the CA', async () => {
    const shortCa = await certs.createCertificateAuthority({ validDays: 2 });
    const leaf = new nodecrypto.X509Certificate((await certs.issueClientCertificate(shortCa, { username: 'u' })).certPem);
    expect(new Date(leaf.validTo).getTime()).toBeLessThanOrEqual(new Date(new nodecrypto.X509Certificate(shortCa.certPem).validTo).getTime());
  });
});

describe('TLS with Node clients and servers', () => {
  let server: tlsservers.TestServer;
  beforeAll(async () => {
    server = await tlsservers.startServer({ ...serving, clientCaPem: ca.certPem }, (report) => ({
      status: 200,
      body: { authorized: report.authorized, subject: 'subject' in report.peer ? report.peer.subject : null },
    }));
  });
  afterAll(() => server.close());

  it('D-GEN-2 a client trusting only the CA accepts the server at 127.0.0.1', async () => {
    const res = await tlsservers.get({ port: server.port, caPem: ca.certPem });
    expect(res.status).toBe(200);
  });

  it('D-GEN-2 a client trusting only the CA accepts the server as localhost', async () => {
    const res = await tlsservers.get({ port: server.port, caPem: ca.certPem, servername: 'localhost' });
    expect(res.status).toBe(200);
  });

  it('a client trusting another CA, or asking for a name not in the SANs, refuses the server', async () => {
    await expect(tlsservers.get({ port: server.port, caPem: otherCa.certPem })).rejects.toMatchObject({
      code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_|SIGNATURE/),
    });
    await expect(tlsservers.get({ port: server.port, caPem: ca.certPem, servername: 'elsewhere.example' })).rejects.toMatchObject({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('D-AUTH-3 a client certificate from the CA is authorized and visible to the server', async () => {
    const client = await certs.issueClientCertificate(ca, { username: 'alice', groups: ['devs'] });
    const res = await tlsservers.get({ port: server.port, caPem: ca.certPem, certPem: client.certPem, keyPem: client.keyPem });
    expect(res.body).toEqual({ authorized: true, subject: { CN: 'alice', O: 'devs' } });
  });

  it('D-AUTH-3 several groups appear as a list of O values', async () => {
    const client = await certs.issueClientCertificate(ca, { username: 'bob', groups: ['a', 'b'] });
    const res = await tlsservers.get({ port: server.port, caPem: ca.certPem, certPem: client.certPem, keyPem: client.keyPem });
    expect(res.body).toEqual({ authorized: true, subject: { CN: 'bob', O: ['a', 'b'] } });
  });

  it('D-AUTH-3 a client certificate from another CA is presented but not authorized', async () => {
    const foreign = await certs.issueClientCertificate(otherCa, { username: 'mallory' });
    const res = await tlsservers.get({ port: server.port, caPem: ca.certPem, certPem: foreign.certPem, keyPem: foreign.keyPem });
    expect(res.body).toEqual({ authorized: false, subject: { CN: 'mallory' } });
  });

  it('D-ADM-11 a webhook serving certificate for <name>.<namespace>.svc is accepted under that server name', async () => {
    const hook = await certs.issueServingCertificate(ca, { hosts: ['hook.default.svc', 'localhost', '127.0.0.1'] });
    const hookServer = await tlsservers.startServer({ ...hook, clientCaPem: ca.certPem }, () => ({ status: 200, body: {} }));
    try {
      expect((await tlsservers.get({ port: hookServer.port, caPem: ca.certPem, servername: 'hook.default.svc' })).status).toBe(200);
      expect((await tlsservers.get({ port: hookServer.port, caPem: ca.certPem })).status).toBe(200);
    } finally {
      await hookServer.close();
    }
  });
});

describe('openssl agrees', () => {
  const openssl = childprocess.spawnSync('openssl', ['version'], { encoding: 'utf8' });
  const available = openssl.status === 0;

  function verify(dir: string, caPem: string, leafPem: string, purpose: string): { ok: boolean; output: string } {
    const caFile = path.join(dir, `ca-${nodecrypto.randomUUID()}.pem`);
    const leafFile = path.join(dir, `leaf-${nodecrypto.randomUUID()}.pem`);
    fs.writeFileSync(caFile, caPem);
    fs.writeFileSync(leafFile, leafPem);
    const run = childprocess.spawnSync('openssl', ['verify', '-CAfile', caFile, '-purpose', purpose, leafFile], { encoding: 'utf8' });
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  }

  it('D-GEN-2 openssl verify accepts issued certificates for their purpose and rejects a foreign CA', async (ctx) => {
    if (!available) ctx.skip('the openssl binary is not installed; the openssl cross-check cannot run');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-certs-'));
    try {
      const client = await certs.issueClientCertificate(ca, { username: 'alice', groups: ['devs'] });
      expect(verify(dir, ca.certPem, serving.certPem, 'sslserver')).toMatchObject({ ok: true, output: expect.stringContaining(': OK') });
      expect(verify(dir, ca.certPem, client.certPem, 'sslclient')).toMatchObject({ ok: true });
      expect(verify(dir, ca.certPem, client.certPem, 'sslserver').ok).toBe(false);
      expect(verify(dir, otherCa.certPem, serving.certPem, 'sslserver').ok).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a Go client agrees', () => {
  it('D-GEN-2 / D-AUTH-3 kubectl trusts the serving certificate by CA and presents an ECDSA client certificate', async () => {
    const kubectl = requireKubectl();
    const seen: Array<{ authorized: boolean; cn: unknown }> = [];
    const server = await tlsservers.startServer({ ...serving, clientCaPem: ca.certPem }, (report) => {
      seen.push({ authorized: report.authorized, cn: 'subject' in report.peer ? report.peer.subject.CN : undefined });
      return { status: 200, body: { major: '1', minor: '31', gitVersion: 'v1.31.0' } };
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-kubectl-'));
    try {
      const client = await certs.issueClientCertificate(ca, { username: 'alice', groups: ['devs'] });
      const b64 = (text: string): string => Buffer.from(text).toString('base64');
      for (const host of ['127.0.0.1', 'localhost']) {
        const kubeconfig = path.join(dir, `config-${host}`);
        fs.writeFileSync(
          kubeconfig,
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'Config',
            'current-context': 'c',
            clusters: [{ name: 'c', cluster: { server: `https://${host}:${server.port}`, 'certificate-authority-data': b64(ca.certPem) } }],
            users: [{ name: 'u', user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) } }],
            contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
          }),
        );
        const out = await new Promise<string>((resolve, reject) => {
          childprocess.execFile(
            kubectl,
            ['--kubeconfig', kubeconfig, '--cache-dir', path.join(dir, 'cache'), 'get', '--raw', '/version'],
            { encoding: 'utf8', timeout: 20_000 },
            (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
          );
        });
        expect(JSON.parse(out)).toMatchObject({ gitVersion: 'v1.31.0' });
      }
      expect(seen.length).toBeGreaterThanOrEqual(2);
      for (const s of seen) expect(s).toEqual({ authorized: true, cn: 'alice' });
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
