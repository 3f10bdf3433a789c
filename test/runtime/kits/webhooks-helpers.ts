/**
 * Shared helpers of the webhook server tests: a fake `WebhookFn` that records what it is called
 * with, a client that calls a served URL over real HTTP(S) from loopback (verifying against the
 * yielded `caBundle`, optionally with a client certificate, optionally resolving any host name to
 * loopback), and a way to hold a server's iteration open while a test talks to it.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import type * as tls from 'node:tls';
import * as certs from '../../../devcluster/auth/certs.js';
import type * as webhooks from '../../../runtime/cogs/structs/webhooks.js';

/** One call of the fake function. */
export interface Call {
  readonly body: unknown;
  readonly context: webhooks.WebhookRequestContext | undefined;
}

/** A `WebhookFn` answering an allowing review; `behaviour` may replace the answer or throw. */
export class FakeFn {
  readonly calls: Call[] = [];
  behaviour: (body: unknown) => webhooks.AdmissionReviewResponse | Promise<webhooks.AdmissionReviewResponse> = (body) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: uidOf(body), allowed: true },
  });

  readonly fn: webhooks.WebhookFn = async (body, context) => {
    this.calls.push({ body, context });
    return this.behaviour(body);
  };
}

export function uidOf(body: unknown): string {
  const request = (body as { request?: { uid?: unknown } } | null)?.request;
  return typeof request?.uid === 'string' ? request.uid : '';
}

/** A minimal review for `uid`. */
export function review(uid = 'uid-1'): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      resource: { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' },
      operation: 'CREATE',
      userInfo: { username: 'u' },
      object: { metadata: { name: 'x' } },
    },
  };
}

/** What a call returned. */
export interface Reply {
  readonly status: number;
  readonly text: string;
  readonly headers: http.IncomingHttpHeaders;
  /** The server certificate presented (HTTPS only). */
  readonly peer?: tls.DetailedPeerCertificate;
}

export interface CallOptions {
  readonly method?: string;
  readonly body?: string | Buffer;
  readonly headers?: Record<string, string>;
  /** The CA to verify against: Base64 (as in `caBundle`) of the PEM. */
  readonly caBundle?: string;
  /** A client certificate and key (PEM). */
  readonly cert?: string;
  readonly key?: string;
  /** Resolve every host name to 127.0.0.1 (for the variants' host names). */
  readonly loopback?: boolean;
  /** Send the body in pieces without a Content-Length. */
  readonly chunked?: boolean;
}

const loopbackLookup: net.LookupFunction = (_hostname, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

/** Calls `url` (a served URL plus the webhook path) and collects the reply. */
export function call(url: string, options: CallOptions = {}): Promise<Reply> {
  const target = new URL(url);
  const body = options.body ?? JSON.stringify(review());
  const secure = target.protocol === 'https:';
  const requestOptions: https.RequestOptions = {
    method: options.method ?? 'POST',
    headers: {
      'content-type': 'application/json',
      ...(options.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(Buffer.byteLength(body)) }),
      ...options.headers,
    },
    agent: false,
    ...(secure
      ? {
          ca: options.caBundle !== undefined ? Buffer.from(options.caBundle, 'base64').toString('utf8') : undefined,
          cert: options.cert,
          key: options.key,
        }
      : {}),
    ...(options.loopback ? { lookup: loopbackLookup } : {}),
  };
  return new Promise<Reply>((resolve, reject) => {
    const request = (secure ? https : http).request(target, requestOptions, (response) => {
      const socket = response.socket as tls.TLSSocket;
      const peer = secure ? socket.getPeerCertificate(true) : undefined;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: response.headers, peer }));
      response.on('error', reject);
    });
    request.on('error', reject);
    if (options.method === 'GET') {
      request.end();
    } else if (options.chunked) {
      const data = Buffer.from(body);
      const piece = 64 * 1024;
      for (let offset = 0; offset < data.length; offset += piece) request.write(data.subarray(offset, offset + piece));
      request.end();
    } else {
      request.end(body);
    }
  });
}

/** A server's iteration held open: the configurations so far, and how to stop. */
export interface Served {
  readonly iterator: AsyncIterator<webhooks.WebhookClientConfig>;
  readonly first: webhooks.WebhookClientConfig;
  readonly stop: AbortController;
}

/** Starts `server` with `fn` and waits for its first client configuration. */
export async function serve(
  server: webhooks.WebhookServerObject,
  fn: webhooks.WebhookFn,
  environment: Partial<webhooks.WebhookServerEnvironment> = {},
): Promise<Served> {
  const stop = new AbortController();
  const iterator = server.serve(fn, { signal: stop.signal, ...environment })[Symbol.asyncIterator]();
  const result = await iterator.next();
  if (result.done) throw new Error('the server yielded no configuration');
  return { iterator, first: result.value, stop };
}

/** The SANs of a peer certificate as `DNS:a`, `IP Address:1.2.3.4` entries. */
export function sansOf(peer: tls.PeerCertificate | undefined): string[] {
  return (peer?.subjectaltname ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Whether a TCP port refuses connections on loopback. */
export function refuses(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const request = http.request({ host, port, method: 'GET', path: '/', agent: false, timeout: 2000 }, (response) => {
      response.resume();
      resolve(false);
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
    request.on('timeout', () => {
      request.destroy();
      resolve(false);
    });
    request.end();
  });
}

/** A stand-in for an API server, for recognising the cluster by its certificate or version. */
export interface FakeApiServer {
  readonly url: string;
  close(): Promise<void>;
}

/** An HTTPS server with a certificate issued as `shape` says, answering `/version`. */
export async function fakeApiServer(shape: {
  readonly caName: string;
  readonly commonName: string;
  readonly organizations?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly gitVersion?: string;
}): Promise<FakeApiServer> {
  const ca = await certs.createCertificateAuthority({ commonName: shape.caName });
  const serving = await certs.issueCertificate(ca, {
    commonName: shape.commonName,
    organizations: shape.organizations,
    dnsNames: shape.dnsNames ?? ['kubernetes'],
    ipAddresses: ['127.0.0.1'],
    usage: 'server',
  });
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    if (req.url === '/version') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ major: '1', minor: '30', gitVersion: shape.gitVersion ?? 'v1.30.4' }));
    } else {
      res.statusCode = 403;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
