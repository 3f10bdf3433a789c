/**
 * Errors of the API client: what went wrong talking to Kubernetes, as classes with a literal `code`.
 *
 * HTTP failures form a hierarchy by status, as in Kopf's `clients/errors.py`: `ApiError` →
 * `ApiClientError` (4xx) / `ApiServerError` (5xx) → `ApiUnauthorizedError`, `ApiForbiddenError`,
 * `ApiNotFoundError`, `ApiConflictError`, `ApiGoneError`, `ApiUnprocessableError`,
 * `ApiTooManyRequestsError`. Each carries the HTTP `status` and the API's `Status` payload
 * (R-AUTH-5): the parsed object only when the body is a `kind: Status` (other JSON may hold
 * sensitive data and is dropped); non-JSON bodies are kept as text truncated to 256 characters.
 * The message names the request it answered (R-CLIENT-501): the server's own words, then the
 * Kubernetes verb, the resource (group/version/resource, namespace and name) and the URL — without
 * credentials: `the server could not find the requested resource: list kopf.dev/v1/kopfexamples in
 * namespace "default" (GET https://…/apis/kopf.dev/v1/namespaces/default/kopfexamples)`. `detail`
 * keeps the server's words alone, for lines that name the request already.
 *
 * Network-level failures are `ConnectionError` (refused, reset, TLS, premature close) and its
 * `RequestTimeoutError`; credentials problems are `LoginError`; a fatal `ERROR` in a watch-stream
 * is a `WatchingError`. The underlying error is always chained as `cause`.
 *
 * `requests` raises these; `watching` and the reactor branch on `err.code`.
 */

/** How many characters of a non-JSON error body are kept (Kopf's `TEXT_ERROR_MAX_SIZE`). */
export const TEXT_ERROR_MAX_SIZE = 256;

/** One cause inside a `Status`'s details. */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** The `details` of a Kubernetes `Status`. */
export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly retryAfterSeconds?: number;
  readonly causes?: readonly StatusCause[];
}

/** A Kubernetes `Status` object as sent in error responses and watch `ERROR` events. */
export interface StatusPayload {
  readonly kind: 'Status';
  readonly apiVersion?: string;
  readonly status?: string;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: StatusDetails;
  readonly metadata?: { readonly [key: string]: unknown };
}

/** The literal codes of the HTTP error classes. */
export type ApiErrorCode =
  | 'ApiError'
  | 'ApiClientError'
  | 'ApiServerError'
  | 'ApiUnauthorized'
  | 'ApiForbidden'
  | 'ApiNotFound'
  | 'ApiConflict'
  | 'ApiGone'
  | 'ApiUnprocessable'
  | 'ApiTooManyRequests';

/** What a request addressed, as its path says (kube-apiserver's request info). */
export interface RequestTarget {
  /** `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural, e.g. `kopfexamples`. */
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

/** The request an error answered (R-CLIENT-501). */
export interface FailedRequest {
  /** The HTTP method. */
  readonly method: string;
  /** The Kubernetes verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`. */
  readonly verb: string;
  /** The full URL without credentials: no user info, secret-like query parameters redacted. */
  readonly url: string;
  /** What the path addresses; absent for non-resource paths (discovery, `/version`). */
  readonly target?: RequestTarget;
}

/** Where an error happened, for messages and logs. */
export interface ApiErrorOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
  /** The request that failed: named in the message (R-CLIENT-501). */
  readonly request?: FailedRequest;
}

/** Query parameters whose values never appear in messages: none the client sends, but a caller's might. */
const SECRET_PARAMETER = /token|passw|secret|key|auth|credential|signature/i;

/** A URL fit for messages: user info dropped, secret-like query parameters redacted. */
export function safeUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/\?.*$/, '');
  }
  parsed.username = '';
  parsed.password = '';
  for (const key of [...parsed.searchParams.keys()]) if (SECRET_PARAMETER.test(key)) parsed.searchParams.set(key, 'REDACTED');
  return parsed.toString();
}

/** Namespaces' own subresources: `/api/v1/namespaces/<ns>/status` is the namespace's, not a resource in it. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * What a path addresses, by kube-apiserver's rules: `/api/<v>/…` or `/apis/<group>/<v>/…`, then an
 * optional `namespaces/<ns>`, the resource, a name and a subresource. `undefined` for other paths.
 */
export function targetOf(path: string): RequestTarget | undefined {
  const parts = path.replace(/\?.*$/, '').split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) [group, rest] = ['', parts.slice(1)];
  else if (parts[0] === 'apis' && parts.length >= 4) [group, rest] = [parts[1]!, parts.slice(2)];
  else return undefined;
  const [version, ...segments] = rest as [string, ...string[]];
  let namespace: string | undefined;
  let tail = segments;
  if (tail[0] === 'namespaces' && tail.length >= 2) {
    namespace = tail[1];
    if (tail.length >= 3 && !NAMESPACE_SUBRESOURCES.has(tail[2]!)) tail = tail.slice(2);
    else namespace = undefined;
  }
  const [resource, name, ...sub] = tail;
  if (resource === undefined) return undefined;
  return {
    group,
    version,
    resource,
    ...(sub.length > 0 ? { subresource: sub.join('/') } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
  };
}

/** The Kubernetes verb of a request, as kube-apiserver names it in audit logs and RBAC. */
export function verbOf(method: string, target: RequestTarget | undefined, query?: string): string {
  const collection = target !== undefined && target.name === undefined;
  switch (method.toUpperCase()) {
    case 'GET':
      if (query !== undefined && /(?:^|[?&])watch=(?:true|1)(?:&|$)/.test(query)) return 'watch';
      return collection ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return collection ? 'deletecollection' : 'delete';
    default:
      return method.toLowerCase();
  }
}

/**
 * The request for messages, from its method and URL (server, path and query).
 *
 * @example
 * failedRequest('GET', 'https://10.0.0.1/api/v1/namespaces/default/pods/x') // verb get, pods "x" in default
 */
export function failedRequest(method: string, url: string): FailedRequest {
  let path = url;
  let query = '';
  try {
    const parsed = new URL(url);
    [path, query] = [parsed.pathname, parsed.search];
  } catch {
    [path = '', query = ''] = url.split('?', 2);
  }
  const target = targetOf(path);
  return { method: method.toUpperCase(), verb: verbOf(method, target, query), url: safeUrl(url), ...(target ? { target } : {}) };
}

/** `get kopf.dev/v1/kopfexamples "x" in namespace "default" (GET https://…)`, `get /version (GET …)`. */
export function describeRequest(request: FailedRequest): string {
  const target = request.target;
  if (target === undefined) return `${request.verb} ${pathOfUrl(request.url)} (${request.method} ${request.url})`;
  const gvr = `${target.group ? `${target.group}/` : ''}${target.version}/${target.resource}`;
  const name = target.name === undefined ? '' : ` ${JSON.stringify(target.name)}`;
  const sub = target.subresource === undefined ? '' : ` (subresource ${target.subresource})`;
  const where = target.namespace === undefined ? '' : ` in namespace ${JSON.stringify(target.namespace)}`;
  return `${request.verb} ${gvr}${name}${sub}${where} (${request.method} ${request.url})`;
}

function pathOfUrl(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** Whether a value is a Kubernetes `Status` object. */
export function isStatus(value: unknown): value is StatusPayload {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { kind?: unknown }).kind === 'Status';
}

/**
 * An HTTP error response from the API server (Kopf: `APIError`).
 *
 * @example
 * try { await api.get(resource, 'default', 'x'); }
 * catch (err) { if (err instanceof ApiError && err.code === 'ApiNotFound') return null; throw err; }
 */
export class ApiError extends Error {
  readonly code: ApiErrorCode = 'ApiError';
  override readonly name: string = 'ApiError';
  /** The HTTP status of the response. */
  readonly status: number;
  /** The `Status` object (only if the body was `kind: Status`), or the truncated text of a non-JSON body. */
  readonly payload: StatusPayload | string | undefined;
  /** Response headers (lower-cased names). */
  readonly headers: Readonly<Record<string, string>>;
  /** The request this error answered, when known (R-CLIENT-501). */
  readonly request: FailedRequest | undefined;
  /** The server's words alone (the message without the request), for lines that name the request already. */
  readonly detail: string;

  constructor(status: number, payload: StatusPayload | string | undefined, options: ApiErrorOptions = {}) {
    const detail = messageOf(status, payload);
    const message = options.request === undefined ? detail : `${detail}: ${describeRequest(options.request)}`;
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.payload = payload;
    this.headers = Object.freeze({ ...options.headers });
    this.request = options.request;
    this.detail = detail;
  }

  /** The `reason` of the `Status` payload (e.g. `NotFound`, `Expired`). */
  get reason(): string | undefined {
    return typeof this.payload === 'object' ? this.payload.reason : undefined;
  }

  /** The `details` of the `Status` payload. */
  get details(): StatusDetails | undefined {
    return typeof this.payload === 'object' ? this.payload.details : undefined;
  }

  /**
   * The server's advice on when to retry, in seconds: the `Retry-After` header (seconds or an
   * HTTP date, relative to `now` in ms) or else `details.retryAfterSeconds`; `undefined` if none.
   */
  retryAfterSeconds(now: number = Date.now()): number | undefined {
    const header = this.headers['retry-after'];
    if (header !== undefined && header.trim() !== '') {
      const seconds = Number(header);
      if (Number.isFinite(seconds)) return Math.max(0, seconds);
      const date = Date.parse(header);
      if (Number.isFinite(date)) return Math.max(0, (date - now) / 1000);
    }
    const fromDetails = this.details?.retryAfterSeconds;
    return typeof fromDetails === 'number' && Number.isFinite(fromDetails) ? Math.max(0, fromDetails) : undefined;
  }
}

function messageOf(status: number, payload: StatusPayload | string | undefined): string {
  if (typeof payload === 'string') return payload;
  if (payload?.message) return payload.message;
  if (payload?.reason) return `${payload.reason} (HTTP ${status})`;
  return `HTTP ${status}`;
}

/** Any 4xx response. */
export class ApiClientError extends ApiError {
  override readonly code: ApiErrorCode = 'ApiClientError';
  override readonly name: string = 'ApiClientError';
}

/** Any 5xx response. */
export class ApiServerError extends ApiError {
  override readonly code: ApiErrorCode = 'ApiServerError';
  override readonly name: string = 'ApiServerError';
}

/** 401: the credentials were rejected; the vault invalidates them (R-AUTH-3). */
export class ApiUnauthorizedError extends ApiClientError {
  override readonly code = 'ApiUnauthorized' as const;
  override readonly name = 'ApiUnauthorizedError';
}

/**
 * What a 403 says was denied, as the API server's `Status` message spells it (`User "<user>" cannot
 * <verb> resource "<resource>" in API group "<group>" in the namespace "<ns>"`, or `… at the
 * cluster scope`, or `cannot <verb> path "<path>"` for non-resource URLs).
 */
export interface Denial {
  readonly user: string;
  readonly verb: string;
  /** The resource, with its subresource (`kopfexamples/status`); absent for a non-resource path. */
  readonly resource?: string;
  readonly group?: string;
  /** The namespace; `null` at the cluster scope; absent for a non-resource path. */
  readonly namespace?: string | null;
  /** The non-resource path (`/metrics`). */
  readonly path?: string;
}

const RESOURCE_DENIAL = /User "((?:[^"\\]|\\.)*)" cannot (\S+) resource "([^"]*)" in API group "([^"]*)" (?:in the namespace "([^"]*)"|at the cluster scope)/;
const PATH_DENIAL = /User "((?:[^"\\]|\\.)*)" cannot (\S+) path "([^"]*)"/;

/** The denial a 403's message describes, or `undefined` when it is not in the API server's words. */
export function denialOf(message: string): Denial | undefined {
  const resource = RESOURCE_DENIAL.exec(message);
  if (resource !== null) {
    const [, user, verb, plural, group, namespace] = resource;
    return { user: user!, verb: verb!, resource: plural!, group: group!, namespace: namespace ?? null };
  }
  const path = PATH_DENIAL.exec(message);
  if (path !== null) return { user: path[1]!, verb: path[2]!, path: path[3]! };
  return undefined;
}

/**
 * 403: the operator's user may not do this (its RBAC lacks a rule). Permanent: not retried, and
 * reported once per verb, resource and namespace (R-SEC-1).
 */
export class ApiForbiddenError extends ApiClientError {
  override readonly code = 'ApiForbidden' as const;
  override readonly name = 'ApiForbiddenError';

  /** What was denied, from the `Status` message (R-SEC-1); `undefined` if the message is not the API server's. */
  get denial(): Denial | undefined {
    return denialOf(this.detail);
  }
}

/** Whether an error is a 403 (R-SEC-1). */
export function isForbidden(error: unknown): error is ApiForbiddenError {
  return error instanceof ApiForbiddenError;
}

/** 404. */
export class ApiNotFoundError extends ApiClientError {
  override readonly code = 'ApiNotFound' as const;
  override readonly name = 'ApiNotFoundError';
}

/** 409. */
export class ApiConflictError extends ApiClientError {
  override readonly code = 'ApiConflict' as const;
  override readonly name = 'ApiConflictError';
}

/** 410: e.g. a too old resource version (the watcher re-lists: R-WATCH-3). */
export class ApiGoneError extends ApiClientError {
  override readonly code = 'ApiGone' as const;
  override readonly name = 'ApiGoneError';
}

/** 422. */
export class ApiUnprocessableError extends ApiClientError {
  override readonly code = 'ApiUnprocessable' as const;
  override readonly name = 'ApiUnprocessableError';
}

/** 429 (retried honouring `Retry-After`: R-AUTH-5). */
export class ApiTooManyRequestsError extends ApiClientError {
  override readonly code = 'ApiTooManyRequests' as const;
  override readonly name = 'ApiTooManyRequestsError';
}

const CLASSES: Readonly<Record<number, new (status: number, payload: StatusPayload | string | undefined, options?: ApiErrorOptions) => ApiError>> = {
  401: ApiUnauthorizedError,
  403: ApiForbiddenError,
  404: ApiNotFoundError,
  409: ApiConflictError,
  410: ApiGoneError,
  422: ApiUnprocessableError,
  429: ApiTooManyRequestsError,
};

/**
 * Parses an error body as R-AUTH-5 prescribes: a `kind: Status` object is kept, any other JSON is
 * dropped, text is trimmed and truncated to 256 characters (ending in `...` when cut).
 */
export function parseErrorPayload(text: string): StatusPayload | string | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isStatus(value) ? value : undefined;
  } catch {
    const trimmed = text.trim();
    if (trimmed === '') return undefined;
    return trimmed.length >= TEXT_ERROR_MAX_SIZE ? `${trimmed.slice(0, TEXT_ERROR_MAX_SIZE - 3)}...` : trimmed;
  }
}

/** Builds the error of the right class for an HTTP status and its raw body text. */
export function apiErrorFor(status: number, bodyText: string, options: ApiErrorOptions = {}): ApiError {
  const payload = parseErrorPayload(bodyText);
  const cls = CLASSES[status] ?? (status >= 400 && status < 500 ? ApiClientError : status >= 500 && status < 600 ? ApiServerError : ApiError);
  return new cls(status, payload, options);
}

/** The literal codes of network-level errors. */
export type ConnectionErrorCode = 'ConnectionError' | 'RequestTimeout';

/** The connection failed or broke: refused, reset, TLS failure, premature end of a body. */
export class ConnectionError extends Error {
  readonly code: ConnectionErrorCode = 'ConnectionError';
  override readonly name: string = 'ConnectionError';
  /**
   * The failure without the request, e.g. `connect ECONNREFUSED 127.0.0.1:1`: for lines that name
   * the request already (R-AUTH-5's retry lines). Defaults to the message.
   */
  readonly detail: string;
  /**
   * The failure came before any connection to the server existed (refused, unresolvable, the
   * connect timeout): the request cannot have been acted on. Otherwise the server may have stored
   * a write whose response was lost (see `requests.isAmbiguous`).
   */
  readonly unsent: boolean;

  constructor(message: string, options?: ErrorOptions & { readonly detail?: string; readonly unsent?: boolean }) {
    super(message, options);
    this.detail = options?.detail ?? message;
    this.unsent = options?.unsent ?? false;
  }
}

/** The connect or total timeout of a request elapsed (R-AUTH-6, R-WATCH-2). */
export class RequestTimeoutError extends ConnectionError {
  override readonly code = 'RequestTimeout' as const;
  override readonly name = 'RequestTimeoutError';
}

/** No usable credentials: a missing kubeconfig context, or none left after invalidations (R-AUTH-2/3). */
export class LoginError extends Error {
  readonly code: 'LoginError' | 'ExecPluginTimeout' = 'LoginError';
  override readonly name: string = 'LoginError';
}

/** A kubeconfig user's exec plugin ran longer than its timeout and was killed (R-AUTH-7). */
export class ExecPluginTimeoutError extends LoginError {
  override readonly code = 'ExecPluginTimeout' as const;
  override readonly name = 'ExecPluginTimeoutError';
  constructor(
    message: string,
    /** The plugin's command, as in the kubeconfig. */
    readonly command: string,
    /** The timeout, in seconds. */
    readonly timeout: number,
  ) {
    super(message);
  }
}

/** A `ConnectionInfo` that cannot be used as given (e.g. both a path and data for one item: R-AUTH-1). */
export class InvalidConnectionInfoError extends TypeError {
  readonly code = 'InvalidConnectionInfo' as const;
  override readonly name = 'InvalidConnectionInfoError';
}

/** A watch-stream reported an `ERROR` other than 410 (R-WATCH-3): fatal for the watcher. */
export class WatchingError extends Error {
  readonly code = 'WatchingError' as const;
  override readonly name = 'WatchingError';
  /** The `Status` object of the `ERROR` event, if it was one. */
  readonly payload: StatusPayload | undefined;

  constructor(object: unknown) {
    super(`Error in the watch-stream: ${JSON.stringify(object)}`);
    this.payload = isStatus(object) ? object : undefined;
  }
}

/**
 * Whether an error's message says all there is to know: no usable credentials (`LoginError`), or a
 * server that cannot be reached (`ConnectionError`). Their stack traces only point into the client,
 * so the framework logs them as one line.
 */
export function isSelfExplanatory(error: unknown): boolean {
  return error instanceof LoginError || error instanceof ConnectionError;
}

/**
 * The log extra of a failure: `{ error }` (its stack trace follows the message), or nothing for a
 * self-explanatory error, whose message is the whole story. One rule for every place that logs
 * failures of handlers, tasks and watchers.
 */
export function traceExtra(error: unknown): { readonly error: unknown } | undefined {
  return isSelfExplanatory(error) ? undefined : { error };
}

/** Whether an error is a network-level failure (including timeouts). */
export function isConnectionError(error: unknown): error is ConnectionError {
  return error instanceof ConnectionError;
}

/** A wrong use of the client, found before any request (a namespace problem, a missing name, …). */
export class ClientUsageError extends TypeError {
  readonly code = 'ClientUsageError' as const;
  override readonly name = 'ClientUsageError';
}

/** Connection options that contradict each other. */
export class ConnectionOptionsError extends TypeError {
  readonly code = 'ConnectionOptionsError' as const;
  override readonly name = 'ConnectionOptionsError';
}
