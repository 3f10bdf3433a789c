/**
 * The operator's own small HTTP servers: where the kubelet probes its liveness and readiness and a
 * scraper reads its metrics. These callers are not the API server and must never be able to hurt
 * the operator, so this module is deliberately plain: GET and HEAD on exact paths, nothing else.
 *
 * Each endpoint is named by a URL `http://HOST:PORT/PATH` (the host defaults to `localhost`, the
 * port to 80) and answered by an async handler that returns a status, a content type and a body.
 * An endpoint that may be served over TLS (the metrics) also accepts `https://HOST:PORT/PATH`
 * (port default 443) and then brings its certificate (`tls`); what it lets through is its
 * handler's business (`engines/guarding` checks the caller's token). Endpoints whose URLs name the
 * same host and port share one server, so the liveness, readiness and (plain) metrics paths can
 * live on one container port; a plain and a TLS endpoint on one port are a conflict. An unknown
 * path gets 404, any other method than GET/HEAD gets 405; HEAD is answered like GET, without the
 * body.
 *
 * *Guarantees:* a handler that throws or rejects becomes a 500 with a fixed line of text that
 * names the endpoint but not the error (an error's message may hold a URL with a password; it goes
 * to the log, as one ERROR line, and never to the caller); a request never crashes the server.
 * Serving stops when the signal aborts: the listening sockets and all open connections are closed.
 * *Errors:* a malformed URL is an `EndpointUrlError` naming the option it came from; an address that
 * cannot be bound rejects `serveEndpoints` with an `EndpointBindError` naming the endpoints and the
 * address. The engines that answer (probing, health, metrics) provide handlers; the reactor serves
 * them (Kopf: the aiohttp application of `health_reporter`).
 */

import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import type * as loggers from '../../cogs/structs/loggers.js';
import { EndpointBindError, EndpointConflictError, EndpointUrlError } from './errors.js';
import * as hardening from './hardening.js';

/** Kopf's defaults for a URL without host or port. */
export const DEFAULT_HOST = 'localhost';
export const DEFAULT_PORT = 80;
/** The port of an `https://` URL without one. */
export const DEFAULT_TLS_PORT = 443;

/** The schemes an endpoint may be served with: plain HTTP, or HTTPS (the metrics only). */
export type EndpointScheme = 'http' | 'https';

/** A parsed endpoint URL. */
export interface EndpointAddress {
  /** The host to listen on, without IPv6 brackets (e.g. `0.0.0.0`, `::1`, `localhost`). */
  readonly host: string;
  /** The port to listen on; 0 lets the system choose (useful in tests). */
  readonly port: number;
  /** The path, always starting with `/`. */
  readonly path: string;
  /** Served over TLS (an `https://` URL); absent for plain HTTP. */
  readonly secure?: true;
}

/**
 * Parses `http://HOST:PORT/PATH` (R-ACTIVITY-4): only `http` (and `https` where `schemes` allows
 * it: R-SEC-9), host default `localhost`, port default 80 (443 for https), path default `/`; no
 * credentials, query or fragment.
 *
 * @param option how the user gave the URL, for the error message (e.g. `--liveness`).
 * @param schemes the schemes allowed; default `['http']`.
 * @throws EndpointUrlError naming `option` and what is wrong.
 * @example
 * parseEndpointUrl('http://0.0.0.0:8080/healthz', '--liveness') // { host: '0.0.0.0', port: 8080, path: '/healthz' }
 * parseEndpointUrl('https://0.0.0.0:8443/metrics', '--metrics', ['http', 'https']) // { …, secure: true }
 */
export function parseEndpointUrl(url: string, option: string, schemes: readonly EndpointScheme[] = ['http']): EndpointAddress {
  const allowed = schemes.join(' or ');
  const example = schemes.includes('https') ? 'https://0.0.0.0:8443/metrics' : 'http://0.0.0.0:8080/healthz';
  const bad = (why: string): EndpointUrlError =>
    new EndpointUrlError(
      `${option}: ${JSON.stringify(url)} is not a valid endpoint URL: ${why}. Expected ${schemes.includes('https') ? 'http(s)' : 'http'}://HOST:PORT/PATH, e.g. ${example}.`,
    );
  if (typeof url !== 'string' || url.trim() === '') throw bad('it is empty');
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url.trim())) throw bad(`the scheme must be ${allowed}, and it has none`);
  // Kopf accepts an empty host (`http://:8080/healthz`); WHATWG URLs do not, so fill it in.
  const text = url.trim().replace(/^(https?):\/\/(?=[:/]|$)/i, `$1://${DEFAULT_HOST}`);
  const given = /^[a-z]+:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(text)?.[1];
  if (given !== undefined && Number(given) > 65535) throw bad(`the port must be between 0 and 65535, not ${given}`);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw bad('it cannot be parsed as a URL');
  }
  const scheme = parsed.protocol.replace(/:$/, '');
  if (!(schemes as readonly string[]).includes(scheme)) throw bad(`the scheme must be ${allowed}, not ${scheme}`);
  const secure = scheme === 'https';
  if (parsed.username !== '' || parsed.password !== '') throw bad('credentials are not supported');
  if (parsed.search !== '' || url.includes('?')) throw bad('a query is not supported');
  if (parsed.hash !== '' || url.includes('#')) throw bad('a fragment is not supported');
  // `new URL` drops an explicit default port (80, 443): it is the default anyway.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1') || DEFAULT_HOST;
  const port = parsed.port === '' ? (secure ? DEFAULT_TLS_PORT : DEFAULT_PORT) : Number(parsed.port);
  return { host, port, path: parsed.pathname || '/', ...(secure ? { secure: true as const } : {}) };
}

/** The URL of an address, normalised (host and port always given). */
export function formatAddress(address: EndpointAddress): string {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `${address.secure ? 'https' : 'http'}://${host}:${address.port}${address.path}`;
}

/** Whether a host names the loopback interface only (`localhost`, 127.0.0.0/8, `::1`). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare) || /^::ffff:127\.\d+\.\d+\.\d+$/.test(bare);
}

/** A request as a handler sees it. */
export interface EndpointRequest {
  readonly method: 'GET' | 'HEAD';
  /** The path without the query. */
  readonly path: string;
  /** The query parameters (endpoints may ignore them). */
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
  /** The caller's address as the socket sees it (e.g. `127.0.0.1`, `::ffff:10.1.2.3`); absent if unknown. */
  readonly remoteAddress?: string;
  /** Aborts when the caller disconnects or serving stops. */
  readonly signal: AbortSignal;
}

/** What a handler answers. */
export interface EndpointResponse {
  readonly status: number;
  /** E.g. `application/json` or `text/plain; version=0.0.4; charset=utf-8`. */
  readonly contentType: string;
  readonly body: string | Uint8Array;
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Answers the requests of one endpoint. */
export type EndpointHandler = (request: EndpointRequest) => Promise<EndpointResponse> | EndpointResponse;

/** The serving certificate of a TLS endpoint (PEM). */
export interface EndpointTls {
  readonly cert: string;
  readonly key: string;
}

/** One endpoint to serve. */
export interface Endpoint {
  /** A short name for logs and errors, e.g. `liveness`, `readiness`, `metrics`. */
  readonly name: string;
  /** `http://HOST:PORT/PATH`, or `https://…` with `tls`. */
  readonly url: string;
  /** How the user gave the URL, for errors (e.g. `--liveness`); default: the name. */
  readonly option?: string;
  /**
   * The certificate to serve an `https://` URL with, or a function that makes or reads it when the
   * server starts (its errors reject `serveEndpoints`); allows that scheme (R-SEC-9).
   */
  readonly tls?: EndpointTls | (() => EndpointTls);
  readonly handle: EndpointHandler;
}

/** An endpoint being served, with the address actually bound (port 0 resolved). */
export interface ServedEndpoint {
  readonly name: string;
  readonly url: string;
}

/** What `serveEndpoints` needs. */
export interface ServingOptions {
  readonly endpoints: readonly Endpoint[];
  /** One DEBUG line per served endpoint, one ERROR line per failed request. */
  readonly logger: loggers.Logger;
  /** Stops serving; `serveEndpoints` then resolves once the sockets are closed. */
  readonly signal: AbortSignal;
  /** Called once all servers listen, with the normalised URLs (ports resolved). */
  readonly onServing?: (served: readonly ServedEndpoint[]) => void;
}

interface Route {
  readonly endpoint: Endpoint;
  readonly address: EndpointAddress;
}

interface Group {
  readonly host: string;
  readonly port: number;
  /** The certificate of a TLS server; undefined for plain HTTP. */
  readonly tls: Endpoint['tls'];
  readonly routes: Map<string, Route>;
}

/**
 * Groups endpoints by host and port, validating every URL first (nothing is bound on bad input).
 *
 * @throws EndpointUrlError for a malformed URL; EndpointConflictError for a path given twice.
 */
export function planServers(endpoints: readonly Endpoint[]): { readonly host: string; readonly port: number; readonly paths: ReadonlyMap<string, string> }[] {
  return [...groupEndpoints(endpoints).values()].map((group) => ({
    host: group.host,
    port: group.port,
    paths: new Map([...group.routes].map(([path, route]) => [path, route.endpoint.name])),
  }));
}

function groupEndpoints(endpoints: readonly Endpoint[]): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const endpoint of endpoints) {
    const address = parseEndpointUrl(endpoint.url, endpoint.option ?? endpoint.name, endpoint.tls === undefined ? ['http'] : ['http', 'https']);
    const tls = address.secure ? endpoint.tls : undefined;
    // Port 0 means "any free port": such endpoints cannot meet on one server by chance, but the
    // same host with port 0 is still one server, so that tests can put several paths on it; a
    // plain and a TLS endpoint on port 0 get a server each.
    const key = `${address.host}|${address.port}${address.port === 0 && tls !== undefined ? '|tls' : ''}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { host: address.host, port: address.port, tls, routes: new Map() };
      groups.set(key, group);
    } else if (group.tls !== tls) {
      const other = [...group.routes.values()][0]!.endpoint.name;
      throw new EndpointConflictError(
        `The ${endpoint.name} endpoint and the ${other} endpoint both use port ${address.port} of ${address.host}, but ${tls !== undefined && group.tls !== undefined ? 'with different certificates' : 'one over TLS and the other not'}: give them different ports.`,
      );
    }
    const taken = group.routes.get(address.path);
    if (taken !== undefined) {
      throw new EndpointConflictError(
        `The ${endpoint.name} endpoint and the ${taken.endpoint.name} endpoint both use ${formatAddress(address)}: give them different paths.`,
      );
    }
    group.routes.set(address.path, { endpoint, address });
  }
  return groups;
}

const TEXT = 'text/plain; charset=utf-8';

/** The connection discipline of the operator's servers (R-SEC-5), with this server's timeouts. */
const LIMITS: hardening.ServerLimits = {
  maxConnections: 256,
  headersTimeout: 30_000,
  requestTimeout: 60_000,
  keepAliveTimeout: 5_000,
  handshakeTimeout: 10_000,
};

/** An error as one line of at most 500 characters, for the operator's own log. */
function oneLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split('\n')[0]!.slice(0, 500);
}

function send(res: http.ServerResponse, method: string, response: EndpointResponse, extra: Readonly<Record<string, string>> = {}): void {
  const body = typeof response.body === 'string' ? Buffer.from(response.body, 'utf8') : Buffer.from(response.body);
  res.writeHead(response.status, {
    ...response.headers,
    ...extra,
    'content-type': response.contentType,
    'content-length': String(body.length),
    'cache-control': 'no-store',
  });
  if (method === 'HEAD') res.end();
  else res.end(body);
}

async function answer(group: Group, req: http.IncomingMessage, res: http.ServerResponse, logger: loggers.Logger, stopping: AbortSignal): Promise<void> {
  const method = req.method ?? 'GET';
  let path = '/';
  let query = new URLSearchParams();
  try {
    const url = new URL(req.url ?? '/', 'http://endpoint');
    path = url.pathname;
    query = url.searchParams;
  } catch {
    send(res, method, { status: 400, contentType: TEXT, body: 'Bad request: the path cannot be parsed.\n' });
    return;
  }
  const route = group.routes.get(path);
  if (route === undefined) {
    send(res, method, { status: 404, contentType: TEXT, body: `Not found: ${path}\n` });
    return;
  }
  if (method !== 'GET' && method !== 'HEAD') {
    send(res, method, { status: 405, contentType: TEXT, body: `Method not allowed: ${method}; use GET or HEAD.\n` }, { allow: 'GET, HEAD' });
    return;
  }
  const gone = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) gone.abort(new DOMException('The caller has disconnected.', 'AbortError'));
  };
  const onStop = (): void => gone.abort(stopping.reason);
  res.once('close', onClose);
  stopping.addEventListener('abort', onStop, { once: true });
  try {
    const remoteAddress = req.socket.remoteAddress;
    const response = await route.endpoint.handle({
      method,
      path,
      query,
      headers: req.headers,
      ...(remoteAddress !== undefined ? { remoteAddress } : {}),
      signal: gone.signal,
    });
    if (!res.headersSent && !res.destroyed) send(res, method, response);
  } catch (error) {
    logger.error(`The ${route.endpoint.name} endpoint has failed to answer ${method} ${path}: ${oneLine(error)}`);
    // The error's text stays in the log (R-SEC-14): it may name a URL with a password.
    if (!res.headersSent && !res.destroyed)
      send(res, method, { status: 500, contentType: TEXT, body: `Internal error of the ${route.endpoint.name} endpoint; the operator's log tells more.\n` });
  } finally {
    stopping.removeEventListener('abort', onStop);
  }
}

function listen(server: http.Server | https.Server, host: string, port: number): Promise<net.AddressInfo> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error): void => reject(error);
    server.once('error', failed);
    server.listen({ host, port }, () => {
      server.off('error', failed);
      resolve(server.address() as net.AddressInfo);
    });
  });
}

/**
 * Serves the endpoints until `signal` aborts (see the module's comment): one HTTP (or HTTPS)
 * server per distinct host and port, GET/HEAD on the endpoints' paths.
 *
 * @returns a promise that resolves once serving has stopped and all sockets are closed.
 * @throws EndpointUrlError, EndpointConflictError before anything is bound;
 *   EndpointBindError if an address cannot be bound (the servers already bound are closed).
 * @example
 * await serveEndpoints({
 *   endpoints: [{ name: 'liveness', url: 'http://0.0.0.0:8080/healthz', handle: async () => ({ status: 200, contentType: 'application/json', body: '{}' }) }],
 *   logger, signal,
 * });
 */
export async function serveEndpoints(options: ServingOptions): Promise<void> {
  const { logger, signal } = options;
  const groups = [...groupEndpoints(options.endpoints).values()];
  if (signal.aborted || groups.length === 0) {
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    return;
  }
  const servers: hardening.Hardened[] = [];
  const served: ServedEndpoint[] = [];
  try {
    for (const group of groups) {
      const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
        answer(group, req, res, logger, signal).catch((error: unknown) => {
          // Only writing the response itself can fail here (e.g. a socket destroyed mid-write).
          logger.error(`An endpoint server has failed to answer ${req.method ?? ''} ${req.url ?? ''}: ${oneLine(error)}`);
          res.destroy();
        });
      };
      const tls = typeof group.tls === 'function' ? group.tls() : group.tls;
      const server =
        tls === undefined
          ? http.createServer(hardening.serverOptions(LIMITS), listener)
          : https.createServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2', ...hardening.serverOptions(LIMITS) }, listener);
      // The kubelet's and scrapers' connections are short; no request may hold a socket for long.
      servers.push(hardening.harden(server, { limits: LIMITS, logger, title: 'An endpoint server' }));
      let bound: net.AddressInfo;
      try {
        bound = await listen(server, group.host, group.port);
      } catch (error) {
        const names = [...group.routes.values()].map((route) => route.endpoint.name).join(', ');
        const where = formatAddress({ host: group.host, port: group.port, path: '', ...(group.tls ? { secure: true as const } : {}) });
        const reason = (error as NodeJS.ErrnoException).code ?? oneLine(error);
        throw new EndpointBindError(`Cannot serve the ${names} endpoint${group.routes.size > 1 ? 's' : ''} at ${where}: ${reason}${explainBindError(reason)}`, {
          cause: error,
        });
      }
      for (const route of group.routes.values()) {
        const url = formatAddress({ host: group.host, port: bound.port, path: route.address.path, ...(group.tls ? { secure: true as const } : {}) });
        served.push({ name: route.endpoint.name, url });
        logger.debug(`Serving the ${route.endpoint.name} endpoint at ${url}`);
      }
      if (signal.aborted) break;
    }
    if (!signal.aborted) {
      options.onServing?.(served);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
  } finally {
    // Also the connections still in (or never finishing) a TLS handshake, which Node's own close misses.
    await Promise.all(servers.map((server) => server.close()));
  }
}

function explainBindError(code: string): string {
  switch (code) {
    case 'EADDRINUSE':
      return ' (the address is already in use by another process or server).';
    case 'EACCES':
      return ' (permission denied: ports below 1024 need privileges).';
    case 'EADDRNOTAVAIL':
      return ' (no network interface has this address).';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return ' (the host name cannot be resolved).';
    default:
      return '.';
  }
}
