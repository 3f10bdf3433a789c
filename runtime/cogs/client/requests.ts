/**
 * API requests with credentials from the vault and the retries of R-AUTH-5.
 *
 * `request()` sends one non-streaming request and returns the parsed JSON body. Each attempt takes
 * credentials from the vault; an HTTP 401 invalidates them and the request starts over with the
 * next ones (waiting for a re-login if the vault ran empty). Connection errors, timeouts, HTTP 5xx
 * and 429 are retried after the back-offs of `settings.networking.errorBackoffs` (seconds);
 * for 429 a longer `Retry-After` wins (or any, with `enforceRetryAfter`). Every failed attempt
 * logs one line at ERROR, `Request attempt #<i>/<n> failed; will retry: <METHOD> <url> -> <error>`
 * or `... failed; escalating: ...` when giving up, where `<error>` is the error's class and a short
 * text (`ConnectionError: connect ECONNREFUSED 127.0.0.1:1`), without a stack trace: the failures
 * are the server's or the network's, not the code's. Other 4xx responses fail at once; a 403
 * (the operator's RBAC lacks a rule: no retry fixes it) is reported by `denials` — one ERROR line
 * per verb, resource and namespace, for requests and streams alike (R-SEC-1).
 *
 * `openStream()` is the streaming variant used by watches: the same credentials handling, no
 * retries, the response body left to the caller. Both sit on `transport`; `api` builds on them.
 *
 * Every attempt, and every opened stream, is reported to the context's instruments (if any) with
 * its status — or none, for a connection error or a timeout — and its duration: the metrics'
 * requests by verb and code.
 */

import * as aborts from '../aio/aborts.js';
import type * as clocks from '../aio/clocks.js';
import type * as settings from '../configs/settings.js';
import type * as instruments from '../structs/instruments.js';
import type * as loggers from '../structs/loggers.js';
import type * as credentials from './credentials.js';
import * as denials from './denials.js';
import * as errors from './errors.js';
import type * as transport from './transport.js';

/** What requests need: where credentials come from, the settings, time, and a logger. */
export interface RequestContext {
  readonly vault: credentials.Vault;
  readonly transports: transport.Transports;
  readonly settings: settings.OperatorSettings;
  readonly clock: clocks.Clock;
  readonly logger: loggers.Logger;
  /** Where every attempt and every opened stream is reported (the operator's metrics), if anywhere. */
  readonly instruments?: instruments.ClientInstruments;
}

/** One API call. */
export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path relative to the server, e.g. `/api/v1/namespaces/default/pods`. */
  readonly path: string;
  /** Query parameters, appended in order. */
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** A JSON body. */
  readonly body?: unknown;
  /** The body's content type (default `application/json` when there is a body). */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  /**
   * For writes: after an attempt failed ambiguously (see `isAmbiguous`), called before the write is
   * sent again or the failure escalated. Resolves with the body to take as the response when what
   * the write was to store is found stored, or `undefined` when it is not (the request is then
   * retried or fails as usual). Errors it throws (e.g. `ApiNotFoundError`: the object is gone) end
   * the request.
   */
  readonly verify?: () => Promise<unknown>;
}

/** Appends the query to a path. */
export function pathWithQuery(path: string, query?: ApiRequest['query']): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) params.append(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * The back-off schedule of `errorBackoffs`: a single number means one retry, an empty list none;
 * any iterable works (even an infinite generator function's result is consumed lazily).
 * `count` is the number of attempts when known.
 */
export function backoffsOf(setting: number | Iterable<number>): { readonly delays: Iterable<number>; readonly count: number | undefined } {
  if (typeof setting === 'number') return { delays: [setting], count: 2 };
  if (Array.isArray(setting)) return { delays: setting as readonly number[], count: setting.length + 1 };
  return { delays: setting, count: undefined };
}

/** Whether an error is worth retrying (R-AUTH-5); never a 403, which is permanent (R-SEC-1). */
export function isRetriable(error: unknown): boolean {
  if (error instanceof errors.ConnectionError) return true;
  if (error instanceof errors.ApiServerError) return true;
  return error instanceof errors.ApiError && (error.status === 429 || (error.status >= 500 && error.status < 600));
}

/** Builds the error of an HTTP error response, reporting a 403 (R-SEC-1). */
function failureOf(
  ctx: RequestContext,
  item: credentials.VaultItem,
  request: ApiRequest,
  response: transport.TransportResponse,
  text: string,
): errors.ApiError {
  const url = `${item.info.server.replace(/\/+$/, '')}${pathWithQuery(request.path, request.query)}`;
  // The message names the verb, the resource and the URL (R-CLIENT-501).
  const failed = errors.failedRequest(request.method, url);
  const error = errors.apiErrorFor(response.status, text, { headers: response.headers, request: failed });
  if (errors.isForbidden(error)) denials.reportDenial(ctx, ctx.logger, error, { method: request.method, url: failed.url });
  return error;
}

/**
 * Whether the server may have acted on a request that failed: the connection broke or timed out
 * after it existed, or the server answered 5xx (an error after the write, or a proxy's). Refused
 * connections and 4xx answers (429 included) are not: the request was not acted on.
 */
export function isAmbiguous(error: unknown): boolean {
  if (error instanceof errors.ConnectionError) return !error.unsent;
  return error instanceof errors.ApiError && error.status >= 500;
}

/** The `<error>` of the retry lines: the class and a short text (the request is named already). */
function describe(error: unknown): string {
  if (error instanceof errors.ConnectionError || error instanceof errors.ApiError) return `${error.name}: ${error.detail}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function bodyOf(request: ApiRequest): { body?: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { ...request.headers };
  if (request.body === undefined) return { headers };
  headers['content-type'] = request.contentType ?? 'application/json';
  return { body: JSON.stringify(request.body), headers };
}

/**
 * Reports a request that ended without a response (a connection error, a timeout), unless its
 * caller cancelled it: that is no outcome of the server's.
 */
function reportFailure(ctx: RequestContext, item: credentials.VaultItem, request: ApiRequest, since: number): void {
  if (!request.signal?.aborted) ctx.instruments?.requested(item.info.server, request.method, null, since);
}

/**
 * The TLS handshake limit of new connections, ms (R-SEC-25). Only for non-streaming requests: the
 * first of an operator's are these (discovery, the scan), and watches have `watching.connectTimeout`.
 */
function handshakeOf(ctx: RequestContext): number | null {
  const limit = ctx.settings.networking.tlsHandshakeTimeout;
  return limit == null ? null : limit * 1000;
}

/** One attempt with given credentials: the parsed JSON body, or an ApiError/ConnectionError. */
async function attempt(ctx: RequestContext, item: credentials.VaultItem, request: ApiRequest): Promise<unknown> {
  const { body, headers } = bodyOf(request);
  const timeout = ctx.settings.networking.requestTimeout;
  const connect = ctx.settings.networking.connectTimeout;
  const since = ctx.instruments?.now() ?? 0;
  let response: transport.TransportResponse;
  let text: string;
  try {
    response = await ctx.transports.for(item).send({
      method: request.method,
      path: pathWithQuery(request.path, request.query),
      headers,
      body,
      signal: request.signal,
      totalTimeoutMs: timeout == null ? null : timeout * 1000,
      connectTimeoutMs: connect == null ? null : connect * 1000,
      handshakeTimeoutMs: handshakeOf(ctx),
    });
    text = await response.text();
  } catch (error) {
    if (ctx.instruments !== undefined) reportFailure(ctx, item, request, since);
    throw error;
  }
  ctx.instruments?.requested(item.info.server, request.method, response.status, since);
  if (response.status !== 401) ctx.vault.accepted(item);
  if (response.status >= 400) throw failureOf(ctx, item, request, response, text);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new errors.ConnectionError(`${request.method} ${response.url} returned a non-JSON body.`, { cause });
  }
}

/**
 * Sends a non-streaming request with retries and re-authentication; returns the JSON body.
 *
 * @throws errors.ApiError for non-retried statuses or after the last retry; errors.ConnectionError
 *   after the last retry; errors.LoginError when no credentials are left; the signal's reason on abort.
 * @example
 * const pod = await requests.request(ctx, { method: 'GET', path: '/api/v1/namespaces/default/pods/x' });
 */
export async function request(ctx: RequestContext, request: ApiRequest): Promise<unknown> {
  for (;;) {
    // Credentials are nearly always at hand: no waiting (and no promise) for them then.
    const item = ctx.vault.selectNow() ?? (await ctx.vault.select(request.signal));
    try {
      return await withRetries(ctx, item, request);
    } catch (error) {
      if (!(error instanceof errors.ApiUnauthorizedError)) throw error;
      ctx.vault.invalidate(item);
    }
  }
}

/**
 * One attempt in its turn (see `MAX_CONCURRENT_REQUESTS`). Each attempt is real I/O that a virtual
 * clock waits for before moving time on (not the sleeps between attempts, which run on that clock).
 */
function attemptInTurn(ctx: RequestContext, item: credentials.VaultItem, request: ApiRequest): Promise<unknown> {
  return limiterOf(ctx).run(request.signal, ctx, item, request);
}

/** What the retry lines name: `<METHOD> <url>` (built only when logged). */
function nameOf(item: credentials.VaultItem, request: ApiRequest): string {
  return `${request.method} ${item.info.server.replace(/\/+$/, '')}${pathWithQuery(request.path, request.query)}`;
}

/**
 * At most this many non-streaming requests of one client are in flight at once; the rest wait
 * their turn. Without a cap, thousands of objects handled at once open thousands of connections,
 * and the API server's header timeouts start failing requests. Watch streams are not counted.
 */
export const MAX_CONCURRENT_REQUESTS = 64;

/**
 * Above this many requests waiting for a slot, the client is *saturated*: whoever can hold work
 * back (the per-object queues, for objects not yet being processed) waits until the backlog is
 * down to `MAX_CONCURRENT_REQUESTS` again. Work started meanwhile would only wait in the backlog,
 * holding its whole state (a processing cycle's body, patch, loggers and suspended calls) for as
 * long as it waits: thousands of objects arriving at once would otherwise each hold one.
 */
export const SATURATION_BACKLOG = 2 * MAX_CONCURRENT_REQUESTS;

class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** Callers of `unsaturated()` waiting for the backlog to drain, in arrival order. */
  private readonly held: (() => void)[] = [];
  private saturated = false;

  /** Runs one attempt once a slot is free (no closure per request: the attempt's inputs are passed on). */
  async run(signal: AbortSignal | undefined, ctx: RequestContext, item: credentials.VaultItem, request: ApiRequest): Promise<unknown> {
    signal?.throwIfAborted();
    while (this.active >= MAX_CONCURRENT_REQUESTS) {
      if (this.waiting.length >= SATURATION_BACKLOG) this.saturated = true;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      if (signal?.aborted) {
        this.next(); // pass the freed slot on
        signal.throwIfAborted();
      }
    }
    this.active += 1;
    try {
      return await (ctx.clock.busy ? ctx.clock.busy(attempt(ctx, item, request)) : attempt(ctx, item, request));
    } finally {
      this.active -= 1;
      this.next();
    }
  }

  /** `undefined` while not saturated (no waiting at all); else resolves once the backlog drained. */
  unsaturated(signal: AbortSignal | undefined): Promise<void> | undefined {
    if (!this.saturated) return undefined;
    return new Promise<void>((resolve, reject) => {
      let release = (): void => undefined;
      const wake = (): void => {
        release();
        resolve();
      };
      this.held.push(wake);
      release = aborts.onAbort(signal ?? NEVER, () => {
        const index = this.held.indexOf(wake);
        if (index >= 0) this.held.splice(index, 1);
        reject(signal!.reason);
      });
    });
  }

  private next(): void {
    this.waiting.shift()?.();
    if (this.saturated && this.waiting.length <= MAX_CONCURRENT_REQUESTS) {
      // Let in as many as the slots can take without saturating again; the rest keep waiting.
      let room = SATURATION_BACKLOG - this.waiting.length;
      this.saturated = this.held.length > room;
      while (room-- > 0 && this.held.length) this.held.shift()!();
    }
  }
}

const NEVER = new AbortController().signal;

const limiters = new WeakMap<RequestContext, Limiter>();

function limiterOf(ctx: RequestContext): Limiter {
  let limiter = limiters.get(ctx);
  if (!limiter) {
    limiter = new Limiter();
    limiters.set(ctx, limiter);
  }
  return limiter;
}

/**
 * `undefined` when the client of `ctx` is not saturated (see `SATURATION_BACKLOG`); otherwise a
 * promise that resolves once its backlog has drained, or rejects with `signal`'s reason.
 */
export function unsaturated(ctx: RequestContext, signal?: AbortSignal): Promise<void> | undefined {
  return limiterOf(ctx).unsaturated(signal);
}

async function withRetries(ctx: RequestContext, item: credentials.VaultItem, request: ApiRequest): Promise<unknown> {
  const { signal, verify } = request;
  // The first attempt (nearly always the only one) builds nothing for the retries.
  try {
    return await attemptInTurn(ctx, item, request);
  } catch (error) {
    if (signal?.aborted || !isRetriable(error)) throw error;
    return await retried(ctx, item, request, error, verify);
  }
}

/** The retries after a failed first attempt (R-AUTH-5): back-offs, verification of ambiguous writes, the logs. */
async function retried(ctx: RequestContext, item: credentials.VaultItem, request: ApiRequest, first: unknown, verify: ApiRequest['verify']): Promise<unknown> {
  const { signal } = request;
  const networking = ctx.settings.networking;
  const what = (): string => nameOf(item, request);
  const { delays, count } = backoffsOf(networking.errorBackoffs);
  const iterator = delays[Symbol.iterator]();
  let error = first;
  for (let index = 1; ; index += 1) {
    const idx = `#${index}${count === undefined ? '' : `/${count}`}`;
    if (index > 1) {
      try {
        ctx.logger.debug(`Request attempt ${idx}: ${what()}`);
        const result = await attemptInTurn(ctx, item, request);
        ctx.logger.debug(`Request attempt ${idx} succeeded: ${what()}`);
        return result;
      } catch (failure) {
        if (signal?.aborted || !isRetriable(failure)) throw failure;
        error = failure;
      }
    }
    // A write that may have been stored is not sent again blindly: what is stored decides.
    if (verify !== undefined && isAmbiguous(error)) {
      ctx.logger.debug(`Request attempt ${idx} may have been acted on; checking what is stored: ${what()} -> ${describe(error)}`);
      const stored = await verify();
      if (stored !== undefined) {
        ctx.logger.warning(`Request attempt ${idx} failed, but what it writes is stored; not sending it again: ${what()} -> ${describe(error)}`);
        return stored;
      }
    }
    const next = iterator.next();
    if (next.done) {
      ctx.logger.error(`Request attempt ${idx} failed; escalating: ${what()} -> ${describe(error)}`);
      throw error;
    }
    let delay = next.value;
    if (error instanceof errors.ApiTooManyRequestsError) {
      const advised = error.retryAfterSeconds(ctx.clock.now());
      if (advised !== undefined && (networking.enforceRetryAfter || advised > delay)) delay = advised;
    }
    ctx.logger.error(`Request attempt ${idx} failed; will retry: ${what()} -> ${describe(error)}`);
    await ctx.clock.sleep(delay * 1000, signal);
  }
}

/** Timeouts of a streaming request, seconds (`null` = none). */
export interface StreamTimeouts {
  readonly total: number | null;
  readonly connect: number | null;
}

/**
 * Opens a streaming request (a watch): credentials from the vault, 401 re-authentication, no
 * retries. Resolves with a 2xx response whose body the caller reads; other statuses throw.
 */
export async function openStream(ctx: RequestContext, request: ApiRequest, timeouts: StreamTimeouts): Promise<transport.TransportResponse> {
  for (;;) {
    const item = await ctx.vault.select(request.signal);
    const { body, headers } = bodyOf(request);
    const since = ctx.instruments?.now() ?? 0;
    let response: transport.TransportResponse;
    try {
      response = await ctx.transports.for(item).send({
        method: request.method,
        path: pathWithQuery(request.path, request.query),
        headers,
        body,
        signal: request.signal,
        totalTimeoutMs: timeouts.total == null ? null : timeouts.total * 1000,
        connectTimeoutMs: timeouts.connect == null ? null : timeouts.connect * 1000,
      });
    } catch (error) {
      if (ctx.instruments !== undefined) reportFailure(ctx, item, request, since);
      throw error;
    }
    // A stream is reported when its response arrives: its duration is the time to the headers.
    ctx.instruments?.requested(item.info.server, request.method, response.status, since);
    if (response.status !== 401) ctx.vault.accepted(item);
    if (response.status < 400) return response;
    const error = failureOf(ctx, item, request, response, await response.text().catch(() => ''));
    if (!(error instanceof errors.ApiUnauthorizedError)) throw error;
    ctx.vault.invalidate(item);
  }
}
