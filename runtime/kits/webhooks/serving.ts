/**
 * One admission request, from the socket to the operator's `WebhookFn` and back.
 *
 * The server routes `POST <root>/<webhook id…>` (the id may span several path segments and is
 * URL-decoded; the query, such as the API server's `?timeout=10s`, is ignored), reads the body up
 * to a limit, hands it with the headers and the verified client certificate to the function, and
 * replies with the review as JSON. Everything else is an HTTP error with a Kubernetes `Status` as
 * JSON (`{"kind":"Status","status":"Failure","message":…,"reason":…,"code":…}`): 404 for paths
 * outside the root, 405 for other methods, 413 for bodies over the limit (refused from the
 * `Content-Length` alone when present, else as soon as the stream passes the limit, without
 * buffering the rest), 400 for bodies nested too deep or with too many items (R-SEC-7: seen by a
 * scan of each chunk as it arrives, before anything parses them), the `WebhookRequestError`'s
 * status for requests the function refuses (an unknown webhook id among them: 404, R-SEC-6), and
 * 500 for anything else.
 *
 * Logging (R-SEC-8): a request the server refuses is logged once, in one WARNING line without a
 * stack trace; one the function refuses only at DEBUG (the operator has logged it already); the
 * unexpected failures (500) once at ERROR with their trace, which never reaches the caller. Paths
 * are logged with control characters escaped. A request handler never throws into the HTTP
 * server. Bodies are parsed one per turn of the event loop, so that several large ones arriving
 * together do not hold up the answers to everything else for the time of all their parses.
 */
import type * as http from 'node:http';
import type * as tls from 'node:tls';

import type * as loggers from '../../cogs/structs/loggers.js';
import * as printables from '../../cogs/structs/printables.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as errors from './errors.js';
import * as scanning from './scanning.js';
import type * as structErrors from '../../cogs/structs/errors.js';

/**
 * The default limit of request bodies: 8 MiB. An UPDATE review carries the object and its old
 * version, each up to the 1.5 MiB that etcd stores by default, plus the request's envelope; the API
 * server's own limit of 3 MiB per request applies to one object, so a review can legitimately be
 * larger than that. 8 MiB leaves room for both objects and JSON escaping while still refusing
 * bodies no API server sends.
 */
export const DEFAULT_BODY_LIMIT = 8 * 1024 * 1024;

/**
 * The default limit of the nesting of a body's objects and arrays: 1,000 levels (R-SEC-7).
 * Kubernetes objects nest a few dozen levels at most (a CRD's schema in a review, the deepest
 * common case, stays under a hundred). The API server decodes JSON up to 10,000 levels, but what
 * walks a body recursively afterwards — the operator's copies and diffs, and the handlers' own
 * code — needs a stack for every level: 1,000 keeps all of it far from Node's stack limit.
 */
export const DEFAULT_DEPTH_LIMIT = 1000;

/**
 * The default limit of a body's items (objects, arrays, and each further member or item): one
 * million (R-SEC-7). Parsing costs far more per item than per byte; an API server's review of two
 * 1.5 MiB objects has at most a few hundred thousand, while a hostile 6 MB body of empty arrays has
 * three million and takes seconds to parse.
 */
export const DEFAULT_ITEM_LIMIT = 1_000_000;

/** How requests are handled. */
export interface HandlingOptions {
  /** The root path (`''` or `/a/b`), see `addresses.rootPath`. */
  readonly root: string;
  /** The largest accepted body, in bytes. */
  readonly bodyLimit: number;
  /** The deepest accepted nesting of objects and arrays; default `DEFAULT_DEPTH_LIMIT`. */
  readonly depthLimit?: number;
  /** The most accepted items of a body; default `DEFAULT_ITEM_LIMIT`. */
  readonly itemLimit?: number;
  readonly logger: loggers.Logger;
}

/** Where a request goes: the webhook id below the root, or why it goes nowhere. */
export type Route =
  | { readonly kind: 'webhook'; readonly webhook: string | null }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'malformed'; readonly message: string };

/**
 * Routes a request target (`/root/validate2/spec.field?timeout=10s`) under `root`.
 *
 * @example
 * route('/hooks', '/hooks/validate2%2Fspec.field?timeout=10s') // { kind: 'webhook', webhook: 'validate2/spec.field' }
 */
export function route(root: string, target: string): Route {
  const pathname = pathOf(target);
  let rest: string;
  if (pathname === root) rest = '';
  else if (pathname.startsWith(`${root}/`)) rest = pathname.slice(root.length + 1);
  else return { kind: 'not-found' };
  try {
    const webhook = decodeURIComponent(rest);
    return { kind: 'webhook', webhook: webhook === '' ? null : webhook };
  } catch {
    return { kind: 'malformed', message: `The webhook id in the path is not properly URL-encoded: ${rest}` };
  }
}

/** The parses of one server, one per turn of the event loop (see the module's comment). */
class ParseTurns {
  private last: Promise<unknown> = Promise.resolve();

  /** Parses `data` once the parses before it are done and the event loop has turned since. */
  parse(data: Buffer): Promise<unknown> {
    const parsed = this.last.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(() => parseOrText(data));
    this.last = parsed.catch(() => undefined);
    return parsed;
  }
}

/** The body as JSON, or as text when it is not JSON (the contract: the function decides). */
function parseOrText(data: Buffer): unknown {
  const text = data.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A request listener for `http(s).createServer` that serves `fn`.
 *
 * @example
 * https.createServer(tlsOptions, handleRequests(fn, { root: '', bodyLimit: DEFAULT_BODY_LIMIT, logger }));
 */
export function handleRequests(fn: webhooks.WebhookFn, options: HandlingOptions): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const turns = new ParseTurns();
  return (req, res) => {
    serveOne(fn, options, turns, req, res).catch((error: unknown) => {
      // Only a bug gets here; still: log it, answer if possible, never crash the server.
      options.logger.error(`Webhook request failed unexpectedly: ${errors.oneLine(error)}`, { error });
      reply(res, 500, 'Internal Server Error');
    });
  };
}

async function serveOne(
  fn: webhooks.WebhookFn,
  options: HandlingOptions,
  turns: ParseTurns,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const { logger } = options;
  const target = req.url ?? '/';
  res.on('error', () => undefined); // a client gone mid-reply is not our failure
  const where = route(options.root, target);
  if (where.kind !== 'webhook') {
    const status = where.kind === 'not-found' ? 404 : 400;
    const message = where.kind === 'not-found' ? `No webhooks are served at ${pathOf(target)}.` : where.message;
    refuse(req, res, logger, status, message);
    return;
  }
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    refuse(req, res, logger, 405, `Method ${req.method ?? '(none)'} is not allowed: webhooks accept only POST.`);
    return;
  }

  const limits = { depth: options.depthLimit ?? DEFAULT_DEPTH_LIMIT, items: options.itemLimit ?? DEFAULT_ITEM_LIMIT };
  const body = await readBody(req, options.bodyLimit, limits);
  if (body.kind === 'refused') {
    res.setHeader('Connection', 'close');
    const [status, message] =
      body.problem === 'too-large'
        ? [413, `The request body exceeds the limit of ${options.bodyLimit} bytes.`]
        : body.problem === 'too-deep'
          ? [400, `The request body nests objects and arrays deeper than the limit of ${limits.depth} levels.`]
          : [400, `The request body has more objects, arrays, members and items than the limit of ${limits.items}.`];
    refuse(req, res, logger, status, message);
    return;
  }
  if (body.kind === 'broken') {
    logger.debug(`Webhook request broke off while reading its body: ${body.message}`);
    return;
  }

  const parsed = await turns.parse(body.data);
  const context: webhooks.WebhookRequestContext = {
    webhook: where.webhook,
    headers: headersOf(req),
    ...peerOf(req.socket),
  };

  let json: string;
  try {
    const review = await fn(parsed, context);
    json = JSON.stringify(review);
  } catch (error) {
    if (isRequestError(error)) {
      // The operator has logged it (one WARNING line); the server only notes its reply.
      logger.debug(`Webhook request ${describe(req)} is answered with HTTP ${error.status}.`);
      reply(res, error.status, errors.oneLine(error));
    } else {
      logger.error(`Webhook request ${describe(req)} failed: ${errors.oneLine(error)}`, { error });
      reply(res, 500, 'Internal Server Error: the webhook failed to process the request; see the operator log.');
    }
    return;
  }
  if (res.destroyed || res.writableEnded) return;
  const data = Buffer.from(json, 'utf8');
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': data.length });
  endInPieces(res, data);
}

/**
 * Ends `res` with `data` in pieces of at most half the socket's high-water mark, each written once
 * the one before is flushed, so the socket never holds more than its high-water mark. Node's HTTP
 * server pauses a connection whose socket still has to drain when the client's next keep-alive
 * request arrives; over TLS the request's bytes may still reach the paused parser, which fails
 * with `HPE_PAUSED` and drops the connection (the client sees ECONNRESET). Answers of tens of kB
 * (a ConversionReview of 100 objects) written at once lost a few connections in a hundred under
 * concurrent keep-alive callers; small answers are written at once as before.
 */
function endInPieces(res: http.ServerResponse, data: Buffer): void {
  const step = Math.max(1024, Math.floor((res.socket?.writableHighWaterMark ?? 16 * 1024) / 2));
  let at = 0;
  const next = (error?: Error | null): void => {
    if (error || res.destroyed) return;
    const piece = data.subarray(at, at + step);
    at += piece.length;
    if (at >= data.length) res.end(piece);
    else res.write(piece, next);
  };
  next();
}

function pathOf(target: string): string {
  const end = target.search(/[?#]/);
  return end < 0 ? target : target.slice(0, end);
}

/** `POST /path`, safe for a log line (the path is the client's). */
function describe(req: http.IncomingMessage): string {
  return `${printables.printable(req.method ?? '?')} ${printables.printable(pathOf(req.url ?? '/'))}`;
}

/** Whether the function refused the request with an HTTP status (by shape: any copy of the class). */
function isRequestError(error: unknown): error is Error & { status: number } {
  if (!(error instanceof Error)) return false;
  const candidate = error as Partial<structErrors.WebhookRequestError>;
  return candidate.code === 'WebhookRequestError' && typeof candidate.status === 'number' && candidate.status >= 400 && candidate.status < 600;
}

function refuse(req: http.IncomingMessage, res: http.ServerResponse, logger: loggers.Logger, status: number, message: string): void {
  logger.warning(`Webhook request ${describe(req)} refused with HTTP ${status}: ${printables.printable(message)}`);
  reply(res, status, message);
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  413: 'RequestEntityTooLarge',
  500: 'InternalError',
};

/** A Kubernetes `Status` of a failure, as the API server's own errors look. */
export function failureStatus(status: number, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: REASONS[status] ?? 'Unknown', code: status };
}

function reply(res: http.ServerResponse, status: number, message: string): void {
  if (res.destroyed || res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const text = `${JSON.stringify(failureStatus(status, message))}\n`;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

type Body =
  | { readonly kind: 'ok'; readonly data: Buffer }
  | { readonly kind: 'refused'; readonly problem: 'too-large' | scanning.ShapeProblem }
  | { readonly kind: 'broken'; readonly message: string };

/**
 * Reads the body unless it is, or turns out to be, over `limit` bytes or past the shape's limits
 * (then stops reading).
 */
function readBody(req: http.IncomingMessage, limit: number, shape: scanning.ShapeLimits): Promise<Body> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: 'refused', problem: 'too-large' });
  const scanner = new scanning.ShapeScanner(shape);
  return new Promise<Body>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (body: Body): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      resolve(body);
    };
    const stop = (body: Body): void => {
      chunks.length = 0;
      req.pause();
      finish(body);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        stop({ kind: 'refused', problem: 'too-large' });
        return;
      }
      const problem = scanner.feed(chunk);
      if (problem !== null) stop({ kind: 'refused', problem });
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish({ kind: 'ok', data: Buffer.concat(chunks) });
    const onError = (error: Error): void => finish({ kind: 'broken', message: errors.oneLine(error) });
    const onClose = (): void => finish({ kind: 'broken', message: 'the client closed the connection' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** The request headers, lowercase, repeated ones joined with `, `. */
function headersOf(req: http.IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/**
 * The verified client certificate as `sslPeer` (only when TLS verified it): subject and issuer as
 * `{CN, O, …}`, the SANs as Node reports them (`DNS:a, IP Address:1.2.3.4`), validity, serial number,
 * SHA-256 fingerprint and the PEM text (for parsing it further).
 */
export function peerOf(socket: http.IncomingMessage['socket']): { sslPeer?: Readonly<Record<string, unknown>> } {
  const secure = socket as Partial<tls.TLSSocket>;
  if (typeof secure.getPeerCertificate !== 'function' || secure.authorized !== true) return {};
  const cert = secure.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return {};
  const raw = cert.raw as Buffer | undefined;
  return {
    sslPeer: {
      subject: { ...cert.subject },
      issuer: { ...cert.issuer },
      ...(cert.subjectaltname !== undefined ? { subjectAltName: cert.subjectaltname } : {}),
      notBefore: cert.valid_from,
      notAfter: cert.valid_to,
      serialNumber: cert.serialNumber,
      fingerprint256: cert.fingerprint256,
      ...(raw !== undefined ? { pem: toPem(raw) } : {}),
    },
  };
}

function toPem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
