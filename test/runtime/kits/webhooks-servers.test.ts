/**
 * The built-in webhook server over real TLS on loopback (R-ADMISSION-9, the server side of
 * R-ADMISSION-3/4): generated and given certificates verified against the yielded `caBundle`, the
 * URL and service references, routing by webhook id, headers and client certificates, the HTTP
 * errors, and certificate rotation on a virtual clock.
 */
import * as nodecrypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as certs from '../../../devcluster/auth/certs.js';
import { VirtualClock } from '../../../runtime/cogs/aio/clocks.js';

import {
  WEBHOOK_BODY_LIMIT,
  WebhookCertificateError,
  WebhookDockerDesktopServer,
  WebhookK3dServer,
  WebhookMinikubeServer,
  WebhookOptionsError,
  WebhookServer,
} from '../../../runtime/index.js';
import * as addresses from '../../../runtime/kits/webhooks/addresses.js';
import { RecordingLogger, tempDir } from '../cogs/client/helpers.js';
import { call, FakeFn, refuses, review, sansOf, serve, type Served } from './webhooks-helpers.js';
import { WebhookRequestError } from '../../../runtime/cogs/structs/errors.js';

const running: Served[] = [];

async function start(server: WebhookServer, fn: FakeFn = new FakeFn()): Promise<Served> {
  const served = await serve(server, fn.fn);
  running.push(served);
  return served;
}

afterEach(async () => {
  for (const served of running.splice(0)) {
    served.stop.abort();
    await served.iterator.return?.();
  }
});

function portOf(url: string | undefined): number {
  return Number(new URL(url!).port);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
}

/** A CA and a serving certificate for loopback, as files. */
async function certificateFiles(dir: string, options: { password?: string; hosts?: string[] } = {}) {
  const ca = await certs.createCertificateAuthority({ commonName: 'test-webhook-ca' });
  const serving = await certs.issueServingCertificate(ca, { hosts: options.hosts ?? ['localhost', '127.0.0.1'] });
  const key =
    options.password === undefined
      ? serving.keyPem
      : nodecrypto.createPrivateKey(serving.keyPem).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: options.password }).toString();
  const files = { certfile: path.join(dir, 'tls.crt'), pkeyfile: path.join(dir, 'tls.key'), cafile: path.join(dir, 'ca.crt') };
  fs.writeFileSync(files.certfile, serving.certPem);
  fs.writeFileSync(files.pkeyfile, key);
  fs.writeFileSync(files.cafile, ca.certPem);
  return { ca, serving, files };
}

/** A Kubernetes `Status` of a failure, as the server answers refused requests. */
function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('R-ADMISSION-9 generated certificates', () => {
  it('R-ADMISSION-9 serves HTTPS verified against the yielded caBundle; SANs from host, addr and extraSans; the first name is the CN', async () => {
    const fn = new FakeFn();
    const { first } = await start(
      new WebhookServer({ addr: '127.0.0.1', host: 'localhost', extraSans: ['hooks.example.test', '10.1.2.3', '0.0.0.0', '::'] }),
      fn,
    );
    expect(first.url).toMatch(/^https:\/\/localhost:\d+$/);
    expect(first.caBundle).toBeTypeOf('string');
    expect(Buffer.from(first.caBundle!, 'base64').toString()).toContain('-----BEGIN CERTIFICATE-----');

    const reply = await call(`${first.url}/validate1`, { caBundle: first.caBundle });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(JSON.parse(reply.text)).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'uid-1', allowed: true } });
    expect(reply.peer?.subject.CN).toBe('localhost');
    const sans = sansOf(reply.peer);
    expect(sans).toEqual(expect.arrayContaining(['DNS:localhost', 'DNS:hooks.example.test', 'IP Address:127.0.0.1', 'IP Address:10.1.2.3']));
    expect(sans.join(',')).not.toMatch(/IP Address:0\.0\.0\.0|IP Address:::(,|$)/);

    // Verification is real: without the bundle the self-signed chain is refused.
    await expect(call(`${first.url}/validate1`)).rejects.toThrow(/self.signed|unable to verify|certificate/i);
  });

  it('R-ADMISSION-9 addr 0.0.0.0 is announced as 127.0.0.1 (CN and IP SAN); no addr as localhost', async () => {
    const any = await start(new WebhookServer({ addr: '0.0.0.0' }));
    expect(any.first.url).toBe(`https://127.0.0.1:${portOf(any.first.url)}`);
    const reply = await call(`${any.first.url}/x`, { caBundle: any.first.caBundle });
    expect(reply.status).toBe(200);
    expect(reply.peer?.subject.CN).toBe('127.0.0.1');
    expect(sansOf(reply.peer)).toEqual(['IP Address:127.0.0.1']);

    const none = await start(new WebhookServer({ path: '/hooks/' }));
    expect(none.first.url).toBe(`https://localhost:${portOf(none.first.url)}/hooks`);
    const viaLocalhost = await call(`${none.first.url}/x`, { caBundle: none.first.caBundle, loopback: true });
    expect(viaLocalhost.status).toBe(200);
    expect(viaLocalhost.peer?.subject.CN).toBe('localhost');
  });

  it('R-ADMISSION-9 url rules: the accessible host, the default port omitted, IPv6 in brackets', () => {
    expect(addresses.accessibleHost(undefined)).toBe('localhost');
    expect(addresses.accessibleHost('0.0.0.0')).toBe('127.0.0.1');
    expect(addresses.accessibleHost('::')).toBe('::1');
    expect(addresses.accessibleHost('10.0.0.5')).toBe('10.0.0.5');
    expect(addresses.buildUrl('https', 'example.test', 443, '/a/')).toBe('https://example.test/a');
    expect(addresses.buildUrl('http', 'example.test', 80, '')).toBe('http://example.test');
    expect(addresses.buildUrl('https', 'example.test', 80, '')).toBe('https://example.test:80');
    expect(addresses.buildUrl('https', '::1', 9443, 'hooks')).toBe('https://[::1]:9443/hooks');
  });

  it('R-ADMISSION-9 the variants announce the host of their local cluster, in the URL and the certificate', async () => {
    const k3d = await start(new WebhookK3dServer({ addr: '127.0.0.1' }));
    expect(k3d.first.url).toBe(`https://host.k3d.internal:${portOf(k3d.first.url)}`);
    const reply = await call(`${k3d.first.url}/v`, { caBundle: k3d.first.caBundle, loopback: true });
    expect(reply.status).toBe(200);
    expect(reply.peer?.subject.CN).toBe('host.k3d.internal');

    const minikube = await start(new WebhookMinikubeServer({ addr: '127.0.0.1' }));
    expect(new URL(minikube.first.url!).hostname).toBe('host.minikube.internal');
    const docker = await start(new WebhookDockerDesktopServer({ addr: '127.0.0.1' }));
    expect(new URL(docker.first.url!).hostname).toBe('host.docker.internal');
    const overridden = await start(new WebhookK3dServer({ addr: '127.0.0.1', host: 'elsewhere.test' }));
    expect(new URL(overridden.first.url!).hostname).toBe('elsewhere.test');
  });

  it('R-ADMISSION-9 cadump writes the announced CA', async () => {
    const file = path.join(tempDir(), 'ca.pem');
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1', cadump: file }));
    expect(fs.readFileSync(file, 'utf8')).toBe(Buffer.from(first.caBundle!, 'base64').toString('utf8'));
  });
});

describe('R-ADMISSION-3 requests and replies', () => {
  it('R-ADMISSION-3 the webhook id is the path below the root (several segments, URL-decoded, query ignored); headers are lowercase', async () => {
    const fn = new FakeFn();
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1', path: '/hooks' }), fn);
    const caBundle = first.caBundle;
    await call(`${first.url}/validate2/spec.field?timeout=10s`, { caBundle, headers: { 'X-Custom-Header': 'yes' } });
    await call(`${first.url}/validate2%2Fspec.field`, { caBundle });
    await call(`${first.url}/mutate%20me`, { caBundle });
    await call(`${first.url}`, { caBundle });
    expect(fn.calls.map((c) => c.context?.webhook)).toEqual(['validate2/spec.field', 'validate2/spec.field', 'mutate me', null]);
    expect(fn.calls[0]!.context?.headers?.['x-custom-header']).toBe('yes');
    expect(fn.calls[0]!.context?.headers?.['content-type']).toBe('application/json');
    expect(fn.calls[0]!.body).toEqual(review());
    expect(fn.calls[0]!.context?.sslPeer).toBeUndefined();
  });

  it('R-ADMISSION-3 a body that is not JSON reaches the function as text', async () => {
    const fn = new FakeFn();
    fn.behaviour = () => {
      throw new WebhookRequestError('malformed', 'The request body is not JSON.');
    };
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1' }), fn);
    const reply = await call(`${first.url}/v`, { caBundle: first.caBundle, body: '{not json' });
    expect(fn.calls[0]!.body).toBe('{not json');
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.text)).toEqual(status(400, 'BadRequest', 'The request body is not JSON.'));
  });

  it('R-ADMISSION-4 errors: 404 outside the root or for unknown resources, 405 for other methods, 409, 500 without a stack (logged once)', async () => {
    const fn = new FakeFn();
    const logger = new RecordingLogger();
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1', path: '/hooks', logger }), fn);
    const caBundle = first.caBundle;
    const origin = new URL(first.url!).origin;

    const outside = await call(`${origin}/elsewhere/v`, { caBundle });
    expect(outside.status).toBe(404);
    expect(JSON.parse(outside.text)).toEqual(status(404, 'NotFound', 'No webhooks are served at /elsewhere/v.'));
    const get = await call(`${first.url}/v`, { caBundle, method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers['allow']).toBe('POST');
    expect(fn.calls).toHaveLength(0);

    fn.behaviour = () => {
      throw new WebhookRequestError('unknown-resource', 'No admission handlers serve kopfexamples.v1.kopf.dev.');
    };
    expect((await call(`${first.url}/v`, { caBundle })).status).toBe(404);
    fn.behaviour = () => {
      throw new WebhookRequestError('ambiguous-resource', 'Several resources match.');
    };
    expect((await call(`${first.url}/v`, { caBundle })).status).toBe(409);

    fn.behaviour = () => {
      throw new TypeError('secret internals\n    at somewhere (file.ts:1:1)');
    };
    const failed = await call(`${first.url}/v`, { caBundle });
    expect(failed.status).toBe(500);
    expect(failed.text.trim().split('\n')).toHaveLength(1);
    expect(failed.text).not.toContain('secret internals');
    expect(failed.text).not.toMatch(/\bat\b.*:\d+:\d+/);
    const errors = logger.records.filter((r) => r.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toBe('Webhook request POST /hooks/v failed: secret internals at somewhere (file.ts:1:1)');

    // The server still serves after all of that.
    fn.behaviour = new FakeFn().behaviour;
    expect((await call(`${first.url}/v`, { caBundle })).status).toBe(200);
  });

  it('R-ADMISSION-4 bodies over the limit get 413 without reaching the function, by Content-Length or while streaming', async () => {
    const fn = new FakeFn();
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1', bodyLimit: 1024 }), fn);
    const big = JSON.stringify({ ...review(), padding: 'x'.repeat(4096) });
    const declared = await call(`${first.url}/v`, { caBundle: first.caBundle, body: big });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.text)).toEqual(status(413, 'RequestEntityTooLarge', 'The request body exceeds the limit of 1024 bytes.'));
    const huge = JSON.stringify({ ...review(), padding: 'x'.repeat(2 * 1024 * 1024) });
    const streamed = await call(`${first.url}/v`, { caBundle: first.caBundle, body: huge, chunked: true }).catch((error: Error) => error);
    // Either the 413 arrives, or the server cut the upload short after answering it.
    if (streamed instanceof Error) expect(streamed.message).toMatch(/ECONNRESET|EPIPE|socket hang up/);
    else expect(streamed.status).toBe(413);
    expect(fn.calls).toHaveLength(0);
    expect((await call(`${first.url}/v`, { caBundle: first.caBundle })).status).toBe(200);
    expect(WEBHOOK_BODY_LIMIT).toBe(8 * 1024 * 1024);
  });
});

describe('R-ADMISSION-9 given certificates', () => {
  it('R-ADMISSION-9 certfile/pkeyfile with an encrypted key and its password; the caBundle is the cafile', async () => {
    const { ca, files } = await certificateFiles(tempDir(), { password: 's3cret' });
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1', ...files, password: 's3cret' }));
    expect(first.caBundle).toBe(base64(ca.certPem));
    const reply = await call(`${first.url}/v`, { caBundle: first.caBundle });
    expect(reply.status).toBe(200);
    expect(reply.peer?.issuer.CN).toBe('test-webhook-ca');
  });

  it('R-ADMISSION-9 without cafile or cadata the certificate itself is announced; cadata wins over cafile', async () => {
    const { serving, files } = await certificateFiles(tempDir());
    const own = await start(new WebhookServer({ addr: '127.0.0.1', certfile: files.certfile, pkeyfile: files.pkeyfile }));
    expect(own.first.caBundle).toBe(base64(serving.certPem));
    const data = await start(new WebhookServer({ addr: '127.0.0.1', ...files, cadata: 'PEM-TEXT' }));
    expect(data.first.caBundle).toBe(base64('PEM-TEXT'));
  });

  it('R-ADMISSION-9 a wrong password, a missing file, or half a key pair fail clearly', async () => {
    const { files } = await certificateFiles(tempDir(), { password: 'right' });
    await expect(serve(new WebhookServer({ addr: '127.0.0.1', ...files, password: 'wrong' }), new FakeFn().fn)).rejects.toSatisfy(
      (e: unknown) => e instanceof WebhookCertificateError && e.message.includes(`pkeyfile=${files.pkeyfile}`),
    );
    await expect(serve(new WebhookServer({ addr: '127.0.0.1', certfile: '/nonexistent/tls.crt', pkeyfile: files.pkeyfile }), new FakeFn().fn)).rejects.toThrow(
      "cannot read the webhook server's certificate files",
    );
    expect(() => new WebhookServer({ certfile: files.certfile })).toThrow(WebhookOptionsError);
    expect(() => new WebhookServer({ certfile: files.certfile })).toThrow('certfile and pkeyfile go together');
    expect(() => new WebhookServer({ insecure: true, extraSans: ['x'] })).toThrow(WebhookOptionsError);
    expect(() => new WebhookServer({ port: 70000 })).toThrow('port must be an integer from 0 to 65535');
  });

  it('R-ADMISSION-9 the service reference (in-cluster deployments) with exactly the options of generated projects', async () => {
    const { ca, files } = await certificateFiles(tempDir(), { hosts: ['op.ops.svc', 'localhost', '127.0.0.1'] });
    const port = await freePort();
    const server = new WebhookServer({
      port,
      certfile: files.certfile,
      pkeyfile: files.pkeyfile,
      cafile: files.cafile,
      service: { namespace: 'ops', name: 'op', port: 443 },
    });
    const { first } = await start(server);
    expect(first).toEqual({ service: { namespace: 'ops', name: 'op', port: 443 }, caBundle: base64(ca.certPem) });
    expect((await call(`https://127.0.0.1:${port}/v`, { caBundle: first.caBundle })).status).toBe(200);
  });

  it('R-ADMISSION-9 a generated certificate behind a service carries the service names; the path goes into the reference', async () => {
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1', path: '/hooks', service: { namespace: 'ops', name: 'op' } }));
    expect(first.url).toBeUndefined();
    const port = first.service!.port!;
    expect(first.service).toEqual({ namespace: 'ops', name: 'op', port, path: '/hooks' });
    const reply = await call(`https://op.ops.svc:${port}/hooks/v`, { caBundle: first.caBundle, loopback: true });
    expect(reply.status).toBe(200);
    expect(reply.peer?.subject.CN).toBe('op.ops.svc');
  });

  it('R-ADMISSION-9 insecure serves plain HTTP and announces no CA', async () => {
    const fn = new FakeFn();
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1', insecure: true }), fn);
    expect(first.url).toBe(`http://127.0.0.1:${portOf(first.url)}`);
    expect(first.caBundle).toBeUndefined();
    expect((await call(`${first.url}/v`)).status).toBe(200);
    expect(fn.calls).toHaveLength(1);
  });
});

describe('R-ADMISSION-9 client certificates', () => {
  it('R-ADMISSION-9 a verified client certificate reaches the function as sslPeer; none is fine when optional', async () => {
    const clientCa = await certs.createCertificateAuthority({ commonName: 'clients-ca' });
    const client = await certs.issueClientCertificate(clientCa, { username: 'kube-apiserver', groups: ['system:masters'] });
    const fn = new FakeFn();
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1', verifyCadata: clientCa.certPem }), fn);
    expect((await call(`${first.url}/v`, { caBundle: first.caBundle, cert: client.certPem, key: client.keyPem })).status).toBe(200);
    expect((await call(`${first.url}/v`, { caBundle: first.caBundle })).status).toBe(200);
    const peer = fn.calls[0]!.context?.sslPeer as { subject: Record<string, string>; issuer: Record<string, string>; pem: string };
    expect(peer.subject['CN']).toBe('kube-apiserver');
    expect(peer.subject['O']).toBe('system:masters');
    expect(peer.issuer['CN']).toBe('clients-ca');
    expect(peer.pem).toBe(client.certPem);
    expect(fn.calls[1]!.context?.sslPeer).toBeUndefined();
  });

  it('R-ADMISSION-9 verifyMode required refuses clients without a trusted certificate (verifyCafile, verifyCapath)', async () => {
    const dir = tempDir();
    const clientCa = await certs.createCertificateAuthority({ commonName: 'clients-ca' });
    const strangerCa = await certs.createCertificateAuthority({ commonName: 'stranger-ca' });
    fs.writeFileSync(path.join(dir, 'clients.pem'), clientCa.certPem);
    fs.writeFileSync(path.join(dir, 'README'), 'not a certificate');
    const client = await certs.issueClientCertificate(clientCa, { username: 'trusted' });
    const stranger = await certs.issueClientCertificate(strangerCa, { username: 'stranger' });
    for (const options of [{ verifyCafile: path.join(dir, 'clients.pem') }, { verifyCapath: dir }]) {
      const fn = new FakeFn();
      const { first } = await start(new WebhookServer({ addr: '127.0.0.1', verifyMode: 'required', ...options }), fn);
      expect((await call(`${first.url}/v`, { caBundle: first.caBundle, cert: client.certPem, key: client.keyPem })).status).toBe(200);
      await expect(call(`${first.url}/v`, { caBundle: first.caBundle })).rejects.toThrow();
      await expect(call(`${first.url}/v`, { caBundle: first.caBundle, cert: stranger.certPem, key: stranger.keyPem })).rejects.toThrow();
      expect(fn.calls.map((c) => (c.context?.sslPeer as { subject: Record<string, string> }).subject['CN'])).toEqual(['trusted']);
    }
  });
});

describe('R-ADMISSION-9 rotation and stopping', () => {
  it('R-ADMISSION-9 certificate files are re-read every 60 s of the clock; a change is served and announced', async () => {
    const dir = tempDir();
    const clock = new VirtualClock({ start: 1_000_000 });
    const logger = new RecordingLogger();
    const before = await certificateFiles(dir);
    const server = new WebhookServer({ addr: '127.0.0.1', ...before.files, clock, logger });
    const { first, iterator } = await start(server);
    expect(first.caBundle).toBe(base64(before.ca.certPem));
    const port = portOf(first.url);

    // Unchanged files: a check passes, nothing is announced.
    let settled = false;
    const next = iterator.next().then((result) => {
      settled = true;
      return result;
    });
    await clock.advance(60_000);
    expect(settled).toBe(false);

    // Rotated files (new CA, new certificate): announced at the next check, not before.
    const after = await certificateFiles(dir);
    await clock.advance(59_000);
    expect(settled).toBe(false);
    await clock.advance(1_000);
    const rotated = await next;
    expect(rotated.done).toBe(false);
    expect(rotated.value).toEqual({ url: `https://127.0.0.1:${port}`, caBundle: base64(after.ca.certPem) });
    expect(logger.messages('info')).toContain("The webhook server's certificate files changed; serving the renewed certificate.");

    // The same port now presents the new certificate; the old CA no longer verifies it.
    const reply = await call(`${first.url}/v`, { caBundle: rotated.value!.caBundle });
    expect(reply.status).toBe(200);
    expect(reply.peer?.fingerprint256).toBe(new nodecrypto.X509Certificate(after.serving.certPem).fingerprint256);
    await expect(call(`${first.url}/v`, { caBundle: first.caBundle })).rejects.toThrow();
  });

  it('R-ADMISSION-9 broken files during a rotation keep the previous certificate (one warning)', async () => {
    const dir = tempDir();
    const clock = new VirtualClock({ start: 0 });
    const logger = new RecordingLogger();
    const before = await certificateFiles(dir);
    const { first, iterator } = await start(new WebhookServer({ addr: '127.0.0.1', ...before.files, clock, logger }));
    let settled = false;
    void iterator.next().then(() => {
      settled = true;
    });
    fs.writeFileSync(before.files.pkeyfile, 'garbage');
    await clock.advance(60_000);
    expect(settled).toBe(false);
    expect(logger.messages('warning').filter((m) => m.startsWith("Cannot reload the webhook server's certificate files"))).toHaveLength(1);
    expect((await call(`${first.url}/v`, { caBundle: first.caBundle })).status).toBe(200);
  });

  it('R-ADMISSION-3 the signal stops serving: the iteration ends and the port is closed', async () => {
    const stop = new AbortController();
    const iterator = new WebhookServer({ addr: '127.0.0.1' }).serve(new FakeFn().fn, { signal: stop.signal })[Symbol.asyncIterator]();
    const first = await iterator.next();
    const port = portOf(first.value!.url);
    const next = iterator.next();
    stop.abort();
    expect(await next).toEqual({ done: true, value: undefined });
    expect(await refuses(port)).toBe(true);
  });

  it('R-ADMISSION-3 disposing the server stops serving, also with certificate files watched', async () => {
    const { files } = await certificateFiles(tempDir());
    const server = new WebhookServer({ addr: '127.0.0.1', ...files, clock: new VirtualClock() });
    const iterator = server.serve(new FakeFn().fn, { signal: new AbortController().signal })[Symbol.asyncIterator]();
    const first = await iterator.next();
    const port = portOf(first.value!.url);
    const next = iterator.next();
    await server[Symbol.asyncDispose]();
    expect(await next).toEqual({ done: true, value: undefined });
    expect(await refuses(port)).toBe(true);
  });

  it('R-ADMISSION-9 a port in use fails at start with the address', async () => {
    const { first } = await start(new WebhookServer({ addr: '127.0.0.1' }));
    const port = portOf(first.url);
    await expect(serve(new WebhookServer({ addr: '127.0.0.1', port }), new FakeFn().fn)).rejects.toThrow(
      `The webhook server cannot listen on 127.0.0.1:${port}`,
    );
  });
});
