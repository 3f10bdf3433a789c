/**
 * The HTTP transport: one request to the API server with one set of credentials (R-AUTH-4/6).
 *
 * A `Transport` belongs to one `ConnectionInfo`: it owns a keep-alive agent with that info's TLS
 * material (CA, client certificate and key, `insecure`), builds the `Authorization` header by the
 * rules of R-AUTH-4, sets `User-Agent: kopf-ts/<version>` unless the caller gives one, and applies
 * a connect timeout and a total timeout measured on the injected `Clock`. It knows nothing about
 * retries, credentials selection or JSON: `requests` does that on top, and `watching` reads
 * streamed bodies through `chunks()`.
 *
 * Network failures become `errors.ConnectionError`; timeouts `errors.RequestTimeoutError`; an
 * aborted caller signal rejects with the signal's reason. A client certificate that cannot work —
 * without its key, not matching it, expired — is a `LoginError` naming the credentials' principal
 * when the transport is made (R-SEC-24), not an OpenSSL error on every connection. Proxies (the credentials' `proxyUrl`, or
 * the environment's when `trustEnv`) are chosen by `proxies`.
 */

import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as aborts from '../aio/aborts.js';
import * as versions from '../configs/versions.js';
import type * as clocks from '../aio/clocks.js';
import * as certificates from './certificates.js';
import type * as credentials from './credentials.js';
import * as errors from './errors.js';
import * as proxies from './proxies.js';

/** The default `User-Agent` of every request. */
export const USER_AGENT = `kopf-ts/${versions.VERSION}`;

/** One HTTP request, relative to the credentials' server. */
export interface TransportRequest {
  readonly method: string;
  /** Path and query, e.g. `/api/v1/pods?watch=true`. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Aborts the request (and a streamed body). */
  readonly signal?: AbortSignal;
  /** Limit of the connection phase, ms; `null`/absent = none. */
  readonly connectTimeoutMs?: number | null;
  /** Limit of the whole request including reading the body, ms; `null`/absent = none. */
  readonly totalTimeoutMs?: number | null;
  /**
   * Limit of the TLS handshake of a new connection, from the TCP connection on, ms; `null`/absent =
   * none (R-SEC-25). A server that accepts connections but never answers is named after it.
   */
  readonly handshakeTimeoutMs?: number | null;
}

/** A response whose body is still to be read (once: `text()` or `chunks()`). */
export interface TransportResponse {
  readonly status: number;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The full URL that was requested (for logs). */
  readonly url: string;
  /** Reads the whole body as UTF-8 text. */
  text(): Promise<string>;
  /** The body's chunks as they arrive. */
  chunks(): AsyncIterable<Buffer>;
  /**
   * Reads the body by callbacks (cheaper than `chunks()` for long streams): `data` for every
   * chunk, then `end` once — without an error when the body is complete, with one (the reason of
   * an abort or timeout, a `ConnectionError`) when it broke off.
   */
  listen(listener: BodyListener): void;
  /** Drops the connection (for bodies that are not read to the end). */
  close(): void;
}

/** What `TransportResponse.listen()` calls. */
export interface BodyListener {
  data(chunk: Buffer): void;
  end(error?: unknown): void;
}

/** Decodes PEM given as PEM text or as Base64 of PEM. */
export const pemOf = certificates.pemOf;

function material(path: string | undefined, data: string | Uint8Array | undefined): string | undefined {
  if (path != null) return fs.readFileSync(path, 'utf8');
  if (data != null) return pemOf(data);
  return undefined;
}

/**
 * The PEM of the CA that credentials trust for the API server (`caPath` read from its file, or
 * `caData`), or `undefined` if they name none. Reading a file may throw.
 */
export function certificateAuthorityOf(info: Pick<credentials.ConnectionInfo, 'caPath' | 'caData'>): string | undefined {
  return material(info.caPath, info.caData);
}

/**
 * The `Authorization` header of R-AUTH-4: `<scheme> <token>`, `<scheme>`, `Bearer <token>`, or
 * Basic for a username with a password. A dynamic provider, when it returns a value, wins.
 */
export async function authorizationOf(info: credentials.ConnectionInfo): Promise<string | undefined> {
  const dynamic = info.authorization ? await info.authorization() : undefined;
  return dynamic || staticAuthorizationOf(info);
}

/** The `Authorization` header of the static credentials alone (no dynamic provider asked). */
function staticAuthorizationOf(info: credentials.ConnectionInfo): string | undefined {
  if (info.scheme && info.token) return `${info.scheme} ${info.token}`;
  if (info.scheme) return info.scheme;
  if (info.token) return `Bearer ${info.token}`;
  if (info.username && info.password !== undefined) {
    return `Basic ${Buffer.from(`${info.username}:${info.password}`, 'utf8').toString('base64')}`;
  }
  return undefined;
}

/** HTTP(S) to one server with one set of credentials, over a keep-alive agent. */
export class Transport {
  /** The server's base URL without a trailing slash. */
  readonly server: string;
  /** The proxy in use, if any. */
  readonly proxy: URL | undefined;
  private readonly agent: http.Agent | https.Agent;
  private readonly secure: boolean;
  /** The parts of the server URL every request repeats, parsed once. */
  private readonly target: { readonly protocol: string; readonly hostname: string; readonly port: string | undefined };
  /** The server URL's own path (a server behind a path prefix), without a trailing slash. */
  private readonly basePath: string;
  /** The `Authorization` header of static credentials (a dynamic provider is asked per request). */
  private readonly staticAuthorization: string | undefined;

  /**
   * @param options.trustEnv use proxies from environment variables (also enabled by `info.trustEnv`).
   * @throws errors.InvalidConnectionInfoError for an unusable proxy URL.
   * @throws errors.LoginError for a client certificate that cannot work (see `checkClientCertificate`).
   */
  constructor(
    readonly info: credentials.ConnectionInfo,
    private readonly clock: clocks.Clock,
    options?: { readonly trustEnv?: boolean },
  ) {
    this.server = info.server.replace(/\/+$/, '');
    const target = new URL(this.server);
    this.secure = target.protocol === 'https:';
    // IPv6 literals come bracketed in URLs, but not in request options.
    this.target = { protocol: target.protocol, hostname: target.hostname.replace(/^\[(.*)\]$/, '$1'), port: target.port || undefined };
    this.basePath = target.pathname.replace(/\/+$/, '');
    this.staticAuthorization = staticAuthorizationOf(info);
    try {
      this.proxy = proxies.proxyFor(target, { proxyUrl: info.proxyUrl, trustEnv: info.trustEnv || options?.trustEnv });
    } catch (cause) {
      throw new errors.InvalidConnectionInfoError(`Unusable proxy for ${this.server}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    }
    const cert = material(info.certificatePath, info.certificateData);
    const key = material(info.privateKeyPath, info.privateKeyData);
    if (this.secure) checkClientCertificate(info, cert, key);
    const tlsOptions: https.AgentOptions = {
      keepAlive: true,
      ca: material(info.caPath, info.caData),
      cert,
      key,
      rejectUnauthorized: !info.insecure,
      servername: info.tlsServerName,
    };
    // The agent's options override each request's: unset ones must not hide a per-request certificate.
    for (const key of Object.keys(tlsOptions) as (keyof https.AgentOptions)[]) if (tlsOptions[key] === undefined) delete tlsOptions[key];
    if (this.secure) this.agent = this.proxy ? new proxies.TunnelingAgent(this.proxy, tlsOptions) : new https.Agent(tlsOptions);
    else this.agent = new http.Agent({ keepAlive: true });
  }

  /** Sends a request; resolves once the response headers arrived (any status). */
  async send(request: TransportRequest): Promise<TransportResponse> {
    request.signal?.throwIfAborted();
    const path = request.path.startsWith('/') ? request.path : `/${request.path}`;
    const url = `${this.server}${path}`;
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'application/json' };
    // Static credentials need no await: most requests take this path.
    const authorization = this.info.authorization ? await authorizationOf(this.info) : this.staticAuthorization;
    if (authorization) headers['authorization'] = authorization;
    const certificate = this.secure && this.info.clientCertificate ? await this.info.clientCertificate() : undefined;
    if (request.headers) for (const name in request.headers) headers[name.toLowerCase()] = request.headers[name]!;
    if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));

    // The timers of this request, dropped once it is over.
    const timers: (() => void)[] = [];
    let over = false;
    let timedOut: errors.RequestTimeoutError | undefined;
    // Whether a connection to the server existed when the request failed: before one, nothing was sent.
    let connected = false;
    const reasonOf = (error: unknown): unknown => {
      if (request.signal?.aborted) return request.signal.reason;
      if (timedOut !== undefined) return timedOut;
      const detail = failureOf(error);
      return new errors.ConnectionError(`${request.method} ${url} failed: ${detail}`, { cause: error, detail, unsent: !connected });
    };

    return new Promise<TransportResponse>((resolve, reject) => {
      const req = this.open(request.method, path, url, headers, certificate);
      // Attached through the signal's fan-out: a processing cycle's signal serves all its requests,
      // and an EventTarget listener per request costs more than the rest of the bookkeeping.
      const detach = request.signal
        ? aborts.onAbort(request.signal, () => {
            req.destroy(request.signal!.reason instanceof Error ? request.signal!.reason : new Error('aborted'));
          })
        : undefined;
      const finish = (): void => {
        if (over) return;
        over = true;
        for (const cancel of timers) cancel();
        detach?.();
      };
      const timeOut = (detail: string): void => {
        timedOut ??= new errors.RequestTimeoutError(`${request.method} ${url} ${detail}.`, { detail, unsent: !connected });
        req.destroy(timedOut);
      };
      if (request.totalTimeoutMs != null) {
        const limit = request.totalTimeoutMs;
        timers.push(this.clock.schedule(limit, () => timeOut(`timed out after ${limit} ms`)));
      }
      const handshakeLimit = this.secure ? request.handshakeTimeoutMs : null;
      const connectLimit = request.connectTimeoutMs;
      // One listener for the socket, whatever it watches: a kept-alive connection (nearly every
      // request) needs nothing more.
      req.once('socket', (socket) => {
        if (!socket.connecting) {
          connected = true;
          return;
        }
        socket.once(this.secure ? 'secureConnect' : 'connect', () => {
          connected = true;
        });
        if (over) return;
        if (handshakeLimit != null) {
          const where = `${this.target.hostname}${this.target.port ? `:${this.target.port}` : ''}`;
          socket.once('connect', () => {
            if (over) return;
            const detail = `got no TLS handshake from ${where} within ${handshakeLimit / 1000} s: the server accepts connections but does not answer (settings.networking.tlsHandshakeTimeout)`;
            const cancel = this.clock.schedule(handshakeLimit, () => timeOut(detail));
            timers.push(cancel);
            socket.once('secureConnect', cancel);
            socket.once('close', cancel);
          });
        }
        if (connectLimit != null) {
          const cancel = this.clock.schedule(connectLimit, () => timeOut(`could not connect within ${connectLimit} ms`));
          timers.push(cancel);
          socket.once(this.secure ? 'secureConnect' : 'connect', cancel);
          socket.once('close', cancel);
        }
      });

      req.once('error', (error) => {
        finish();
        reject(reasonOf(error));
      });
      req.once('response', (res) => {
        const responseHeaders: Record<string, string> = {};
        for (const name in res.headers) {
          const value = res.headers[name];
          if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        res.once('end', finish);
        res.once('close', finish);
        async function* chunks(): AsyncGenerator<Buffer> {
          try {
            for await (const chunk of res) yield chunk as Buffer;
            if (!res.complete) throw new Error('the response ended prematurely');
          } catch (error) {
            throw reasonOf(error);
          } finally {
            if (!res.complete) req.destroy();
          }
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: responseHeaders,
          url,
          chunks,
          // Read with events rather than async iteration: one promise per body, not one per chunk.
          text: () =>
            new Promise<string>((resolveText, rejectText) => {
              const parts: Buffer[] = [];
              const fail = (error: unknown): void => {
                if (!res.complete) req.destroy();
                rejectText(reasonOf(error));
              };
              res.on('data', (chunk: Buffer) => parts.push(chunk));
              res.once('error', fail);
              res.once('end', () => {
                if (!res.complete) {
                  fail(new Error('the response ended prematurely'));
                  return;
                }
                resolveText(parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts).toString('utf8'));
              });
              res.once('close', () => {
                if (!res.complete) fail(new Error('the response ended prematurely'));
              });
            }),
          listen(listener: BodyListener): void {
            let ended = false;
            const end = (error?: unknown): void => {
              if (ended) return;
              ended = true;
              if (error !== undefined && !res.complete) req.destroy();
              listener.end(error === undefined ? undefined : reasonOf(error));
            };
            res.on('data', (chunk: Buffer) => {
              if (!ended) listener.data(chunk);
            });
            res.once('error', end);
            res.once('end', () => end(res.complete ? undefined : new Error('the response ended prematurely')));
            res.once('close', () => {
              if (!res.complete) end(new Error('the response ended prematurely'));
            });
          },
          close(): void {
            req.destroy();
            finish();
          },
        });
      });
      req.end(request.body);
    });
  }

  /** Starts the request: through a plain-HTTP proxy in absolute form, or straight to the server. */
  private open(
    method: string,
    path: string,
    url: string,
    headers: Record<string, string>,
    certificate: credentials.ClientCertificate | undefined,
  ): http.ClientRequest {
    if (this.proxy && !this.secure) {
      return http.request({
        host: this.proxy.hostname,
        port: this.proxy.port || 80,
        path: url,
        method,
        agent: this.agent,
        headers: this.proxied(url, headers),
      });
    }
    // Options rather than a URL string: Node would parse the same server URL for every request.
    const options: https.RequestOptions = { ...this.target, path: `${this.basePath}${path}`, method, headers, agent: this.agent };
    if (certificate) {
      // Per-request TLS material: the agent keeps sockets of different certificates apart.
      options.cert = pemOf(certificate.certificateData);
      options.key = pemOf(certificate.privateKeyData);
    }
    return (this.secure ? https : http).request(options);
  }

  /** Headers of a plain-HTTP request sent to a proxy in absolute form. */
  private proxied(url: string, headers: Record<string, string>): Record<string, string> {
    const authorization = this.proxy ? proxies.proxyAuthorization(this.proxy) : undefined;
    return { ...headers, host: new URL(url).host, ...(authorization ? { 'proxy-authorization': authorization } : {}) };
  }

  /** Closes idle connections and stops reusing the agent's sockets. */
  close(): void {
    this.agent.destroy();
  }
}

/**
 * Checks the static client certificate of credentials (R-SEC-24): both parts or none, a key that is
 * the certificate's, within its validity period (by wall time: the server judges it by its own
 * clock, not by the operator's scheduling clock).
 *
 * @throws errors.LoginError naming the principal and the fields, e.g. `The client certificate of
 *   user "dev" of /home/dev/.kube/config (certificatePath /certs/dev.crt) expired on 2030-01-01T00:00:00.000Z.`
 */
export function checkClientCertificate(info: credentials.ConnectionInfo, cert: string | undefined, key: string | undefined): void {
  if (cert === undefined && key === undefined) return;
  const who = info.principal ?? `the credentials for ${info.server}`;
  const certFrom = info.certificatePath !== undefined ? `certificatePath ${info.certificatePath}` : 'certificateData';
  const keyFrom = info.privateKeyPath !== undefined ? `privateKeyPath ${info.privateKeyPath}` : 'privateKeyData';
  if (key === undefined) throw new errors.LoginError(`The client certificate of ${who} (${certFrom}) comes without its private key.`);
  if (cert === undefined) throw new errors.LoginError(`The private key of ${who} (${keyFrom}) comes without its client certificate.`);
  const problem = certificates.certificateProblem(cert, key, Date.now());
  if (problem !== undefined) throw new errors.LoginError(`The client certificate of ${who} (${certFrom}, ${keyFrom}) ${problem}.`);
}

/**
 * The short text of a network failure, e.g. `connect ECONNREFUSED 127.0.0.1:1`. Node reports a
 * failed connection to a name with several addresses as an `AggregateError` without a message.
 */
export function failureOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  if (error instanceof AggregateError && error.errors.length > 0) return [...new Set(error.errors.map(failureOf))].join('; ');
  return (error as NodeJS.ErrnoException).code ?? error.name;
}

/**
 * A cache of transports, one per vault item (so each set of credentials keeps its own agent).
 * `close()` destroys them all.
 */
export class Transports {
  private readonly cache = new WeakMap<object, Transport>();
  private readonly open = new Set<Transport>();

  /** @param trustEnv whether proxies from environment variables are used (read at each new transport). */
  constructor(
    private readonly clock: clocks.Clock,
    private readonly trustEnv: () => boolean = () => false,
  ) {}

  /** The transport for a vault item's credentials (created on first use). */
  for(item: credentials.VaultItem): Transport {
    let transport = this.cache.get(item);
    if (!transport) {
      transport = new Transport(item.info, this.clock, { trustEnv: this.trustEnv() });
      this.cache.set(item, transport);
      this.open.add(transport);
    }
    return transport;
  }

  /** Closes every transport made so far. */
  close(): void {
    for (const transport of this.open) transport.close();
    this.open.clear();
  }
}
