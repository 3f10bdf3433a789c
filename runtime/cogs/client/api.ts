/**
 * The Kubernetes API as the runtime sees it: small interfaces and their one HTTP implementation.
 *
 * `KubeReader` (discovery, list, get), `KubeWriter` (create, patch), `KubeReplacer` (PUT, for
 * Lease election's optimistic writes) and `KubeWatcher` (one raw watch connection) are separate
 * seams, like controller-runtime's `client.Reader`/`Writer`, so a component asks only for what it
 * uses and tests can wrap one method. `KubeApi` combines them.
 * `HttpKubeApi` implements them over `requests` (credentials, retries) and `transport`; URLs
 * follow R-RES-10 (`references.urlOf`). Listing fills in `kind`/`apiVersion` of items (R-WATCH-1).
 * The list → watch → reconnect logic on top of `KubeWatcher` lives in `watching`.
 */

import * as clocks from '../aio/clocks.js';
import type * as settings from '../configs/settings.js';
import type * as bodies from '../structs/bodies.js';
import type * as instruments from '../structs/instruments.js';
import type * as loggers from '../structs/loggers.js';
import * as references from '../structs/references.js';
import type * as credentials from './credentials.js';
import * as errors from './errors.js';
import * as requests from './requests.js';
import * as scanning from './scanning.js';
import * as transport from './transport.js';

/** Per-call options. */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** A listing: the items (with `kind`/`apiVersion` filled in) and the list's resource version. */
export interface Listing {
  readonly items: bodies.RawBody[];
  readonly resourceVersion: string | undefined;
}

/** One line of a watch-stream as sent by the server. */
export interface WatchLine {
  readonly type: string;
  readonly object: { readonly [key: string]: unknown };
}

/** Options of one watch connection (R-WATCH-2). */
export interface WatchRequestOptions extends CallOptions {
  readonly resourceVersion?: string;
  /** Sent as `timeoutSeconds`. */
  readonly timeoutSeconds?: number | null;
  /** Client-side limit of the whole connection, seconds. */
  readonly clientTimeout?: number | null;
  /** Connect timeout, seconds. */
  readonly connectTimeout?: number | null;
  /** Only objects with these labels (`app=x,tier!=db`). */
  readonly labelSelector?: string;
  /** Only objects with these fields (`metadata.name=x`). */
  readonly fieldSelector?: string;
}

/** Options of a listing. */
export interface ListingOptions extends CallOptions {
  /** Only objects with these labels (`app=x,tier!=db`, `shard notin (a,b)`). */
  readonly labelSelector?: string;
  /** Only objects with these fields (`metadata.name=x`). */
  readonly fieldSelector?: string;
}

/** Reading: discovery, listing and getting. */
export interface KubeReader {
  /** Discovers the served resources of the given groups (`null`: all) (R-RES-7). */
  scanResources(groups: Iterable<string> | null, options?: CallOptions): Promise<references.Resource[]>;
  /** Lists a collection (cluster-wide when `namespace` is null). */
  list(resource: references.Resource, namespace: string | null, options?: ListingOptions): Promise<Listing>;
  /** Reads one object. @throws errors.ApiNotFoundError if absent. */
  get(resource: references.Resource, namespace: string | null, name: string, options?: CallOptions): Promise<bodies.RawBody>;
}

/** Options of a patch. */
export interface PatchOptions extends CallOptions {
  /** E.g. `status`. */
  readonly subresource?: string;
  /** `merge` (RFC 7386, default) or `json` (RFC 6902). */
  readonly type?: 'merge' | 'json';
  /**
   * After an attempt that failed when the server may have stored it (a reset or timeout after
   * sending, a 5xx), called before it is sent again: the body to take as the response when what
   * the patch writes is found stored, `undefined` to send it again (`requests.ApiRequest.verify`).
   */
  readonly verify?: () => Promise<bodies.RawBody | undefined>;
}

/** Writing: creating and patching. */
export interface KubeWriter {
  /** Creates an object; returns the created body. */
  create(resource: references.Resource, namespace: string | null, body: object, options?: CallOptions): Promise<bodies.RawBody>;
  /** Patches an object (or its subresource); returns the response body. */
  patch(resource: references.Resource, namespace: string | null, name: string, body: unknown, options?: PatchOptions): Promise<bodies.RawBody>;
}

/** Replacing a whole object (PUT), guarded by its `metadata.resourceVersion` when it has one. */
export interface KubeReplacer {
  /**
   * Replaces an object; returns the stored body.
   * @throws errors.ApiConflictError if `body.metadata.resourceVersion` is not the stored one.
   */
  replace(resource: references.Resource, namespace: string | null, name: string, body: object, options?: CallOptions): Promise<bodies.RawBody>;
}

/** Deleting one object. */
export interface KubeDeleter {
  /**
   * Deletes an object; returns the server's answer (the object, or a Status).
   * @throws errors.ApiNotFoundError if absent.
   */
  delete(resource: references.Resource, namespace: string | null, name: string, options?: CallOptions): Promise<unknown>;
}

/** Watching: one raw watch connection. */
export interface KubeWatcher {
  /**
   * Opens one watch connection with bookmarks (R-WATCH-2). Resolves once the server has accepted
   * it (rejecting with `ApiError`s for error statuses and `ConnectionError`s when no connection
   * could be made); the iterable then yields the lines until the server closes the stream, and
   * throws a `ConnectionError` if it breaks, or the signal's reason when aborted. Iterate it (or
   * abort the signal): the connection is released when the iteration ends.
   */
  watch(resource: references.Resource, namespace: string | null, options?: WatchRequestOptions): Promise<AsyncIterable<WatchLine>>;
}

/** The whole API. */
export interface KubeApi extends KubeReader, KubeWriter, KubeWatcher {}

/**
 * An API client that can tell when it is saturated: more requests wait for a connection than it
 * sends at once. Callers that can postpone new work (the per-object queues) ask it first.
 */
export interface Saturable {
  /** `undefined` if not saturated; else resolves once the backlog drained (rejects on `signal`). */
  unsaturated(signal?: AbortSignal): Promise<void> | undefined;
}

/** Whether an API client can tell its saturation (the HTTP one can; test doubles need not). */
export function isSaturable(api: object): api is Saturable {
  return typeof (api as Partial<Saturable>).unsaturated === 'function';
}

/** What the HTTP implementation needs. */
export interface HttpKubeApiOptions {
  readonly vault: credentials.Vault;
  readonly settings: settings.OperatorSettings;
  readonly logger: loggers.Logger;
  /** Default: the real clock. */
  readonly clock?: clocks.Clock;
  /** Where requests are reported (an operator's metrics); default: nowhere. */
  readonly instruments?: instruments.ClientInstruments;
}

/** Cuts bytes into non-empty, trimmed lines as they arrive, without a line-length limit. */
export class LineSplitter {
  private pending: Buffer[] = [];

  /** The lines completed by `chunk`. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    let index = chunk.indexOf(10);
    while (index >= 0) {
      const part = chunk.subarray(start, index);
      const line = (this.pending.length ? Buffer.concat([...this.pending, part]) : part).toString('utf8').trim();
      this.pending = [];
      if (line) lines.push(line);
      start = index + 1;
      index = chunk.indexOf(10, start);
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
    return lines;
  }

  /** The last line, if the bytes did not end with a newline. */
  end(): string[] {
    const rest = Buffer.concat(this.pending).toString('utf8').trim();
    this.pending = [];
    return rest ? [rest] : [];
  }
}

/** Splits a byte stream into non-empty lines, without a line-length limit. */
export async function* splitLines(chunks: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const splitter = new LineSplitter();
  for await (const chunk of chunks) yield* splitter.push(chunk);
  yield* splitter.end();
}

/**
 * The parsed lines of a watch response, as an async iterator fed by the response's data events:
 * a watch delivers every event of a resource, so its lines do not go through layers of async
 * generators (each costing promises per line). Lines already received are handed out at once;
 * ending the iteration early (`return()`) drops the connection.
 */
class WatchLines implements AsyncIterableIterator<WatchLine> {
  private readonly ready: WatchLine[] = [];
  private readonly splitter = new LineSplitter();
  private waiter: { resolve: (result: IteratorResult<WatchLine>) => void; reject: (error: unknown) => void } | undefined;
  private finished = false;
  private failure: { readonly error: unknown } | undefined;

  constructor(
    private readonly response: transport.TransportResponse,
    private readonly resource: references.Resource,
  ) {
    response.listen({
      data: (chunk) => this.accept(this.splitter.push(chunk)),
      end: (error) => {
        if (error === undefined) this.accept(this.splitter.end());
        this.finish(error);
      },
    });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<WatchLine>> {
    const line = this.ready.shift();
    if (line !== undefined) return Promise.resolve({ value: line, done: false });
    if (this.failure !== undefined) {
      const { error } = this.failure;
      this.failure = undefined;
      this.finished = true;
      return Promise.reject(error);
    }
    if (this.finished) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<WatchLine>> {
    this.ready.length = 0;
    this.failure = undefined;
    this.finish(undefined);
    return Promise.resolve({ value: undefined, done: true });
  }

  private accept(lines: readonly string[]): void {
    for (const line of lines) {
      if (this.finished || this.failure !== undefined) return;
      let parsed: WatchLine;
      try {
        parsed = JSON.parse(line) as WatchLine;
      } catch (cause) {
        this.finish(new errors.ConnectionError(`Unparsable line in the watch-stream of ${references.resourceName(this.resource)}.`, { cause }));
        return;
      }
      const waiter = this.waiter;
      if (waiter !== undefined) {
        this.waiter = undefined;
        waiter.resolve({ value: parsed, done: false });
      } else {
        this.ready.push(parsed);
      }
    }
  }

  /** Ends the stream (with an error, delivered after the lines received before it) and drops the connection. */
  private finish(error: unknown): void {
    if (this.finished || this.failure !== undefined) return;
    this.response.close();
    const waiter = this.waiter;
    this.waiter = undefined;
    if (error === undefined) this.finished = true;
    else if (waiter === undefined) this.failure = { error };
    if (waiter === undefined) return;
    this.finished = true;
    if (error === undefined) waiter.resolve({ value: undefined, done: true });
    else waiter.reject(error);
  }
}

/** Fills `kind`/`apiVersion` of listed items from the list (R-WATCH-1). */
export function listingOf(response: unknown): Listing {
  const list = (typeof response === 'object' && response !== null ? response : {}) as Record<string, unknown>;
  const listKind = typeof list['kind'] === 'string' ? list['kind'] : undefined;
  const kind = listKind?.endsWith('List') ? listKind.slice(0, -4) : listKind;
  const apiVersion = typeof list['apiVersion'] === 'string' ? list['apiVersion'] : undefined;
  const items = (Array.isArray(list['items']) ? list['items'] : []).map((raw) => {
    const item = { ...(raw as bodies.RawBody) };
    if (item.kind === undefined && kind !== undefined) item.kind = kind;
    if (item.apiVersion === undefined && apiVersion !== undefined) item.apiVersion = apiVersion;
    return item;
  });
  const metadata = (list['metadata'] ?? {}) as { resourceVersion?: unknown };
  return { items, resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined };
}

/**
 * The HTTP implementation of `KubeApi`.
 *
 * @example
 * const vault = new Vault();
 * vault.populate({ kubeconfig: logins.loginWithKubeconfig() });
 * const api = new HttpKubeApi({ vault, settings: new OperatorSettings(), logger });
 * const { items } = await api.list(resource, 'default');
 */
export class HttpKubeApi implements KubeApi, KubeReplacer, KubeDeleter, Saturable {
  private readonly context: requests.RequestContext;

  constructor(options: HttpKubeApiOptions) {
    const clock = options.clock ?? clocks.realClock;
    this.context = {
      vault: options.vault,
      settings: options.settings,
      logger: options.logger,
      clock,
      transports: new transport.Transports(clock, () => options.settings.networking.trustEnv),
      instruments: options.instruments,
    };
  }

  /** The credentials vault the requests take their credentials from (and invalidate on 401). */
  get vault(): credentials.Vault {
    return this.context.vault;
  }

  /** Sends any non-streaming request (with retries and re-authentication); returns the JSON body. */
  request(request: requests.ApiRequest): Promise<unknown> {
    return requests.request(this.context, request);
  }

  scanResources(groups: Iterable<string> | null, options?: CallOptions): Promise<references.Resource[]> {
    return scanning.scanResources((path) => this.request({ method: 'GET', path, signal: options?.signal }), groups);
  }

  async list(resource: references.Resource, namespace: string | null, options?: ListingOptions): Promise<Listing> {
    const query = { labelSelector: options?.labelSelector, fieldSelector: options?.fieldSelector };
    const response = await this.request({ method: 'GET', path: references.urlOf(resource, { namespace }), query, signal: options?.signal });
    return listingOf(response);
  }

  async get(resource: references.Resource, namespace: string | null, name: string, options?: CallOptions): Promise<bodies.RawBody> {
    return (await this.request({ method: 'GET', path: references.urlOf(resource, { namespace, name }), signal: options?.signal })) as bodies.RawBody;
  }

  async create(resource: references.Resource, namespace: string | null, body: object, options?: CallOptions): Promise<bodies.RawBody> {
    return (await this.request({ method: 'POST', path: references.urlOf(resource, { namespace }), body, signal: options?.signal })) as bodies.RawBody;
  }

  async replace(resource: references.Resource, namespace: string | null, name: string, body: object, options?: CallOptions): Promise<bodies.RawBody> {
    return (await this.request({ method: 'PUT', path: references.urlOf(resource, { namespace, name }), body, signal: options?.signal })) as bodies.RawBody;
  }

  async delete(resource: references.Resource, namespace: string | null, name: string, options?: CallOptions): Promise<unknown> {
    return await this.request({ method: 'DELETE', path: references.urlOf(resource, { namespace, name }), signal: options?.signal });
  }

  async patch(resource: references.Resource, namespace: string | null, name: string, body: unknown, options?: PatchOptions): Promise<bodies.RawBody> {
    return (await this.request({
      method: 'PATCH',
      path: references.urlOf(resource, { namespace, name, subresource: options?.subresource }),
      body,
      contentType: options?.type === 'json' ? 'application/json-patch+json' : 'application/merge-patch+json',
      signal: options?.signal,
      verify: options?.verify,
    })) as bodies.RawBody;
  }

  async watch(resource: references.Resource, namespace: string | null, options?: WatchRequestOptions): Promise<AsyncIterable<WatchLine>> {
    const response = await requests.openStream(
      this.context,
      {
        method: 'GET',
        path: references.urlOf(resource, { namespace }),
        query: {
          watch: 'true',
          allowWatchBookmarks: 'true',
          resourceVersion: options?.resourceVersion,
          timeoutSeconds: options?.timeoutSeconds ?? undefined,
          labelSelector: options?.labelSelector,
          fieldSelector: options?.fieldSelector,
        },
        signal: options?.signal,
      },
      { total: options?.clientTimeout ?? null, connect: options?.connectTimeout ?? null },
    );
    return new WatchLines(response, resource);
  }

  unsaturated(signal?: AbortSignal): Promise<void> | undefined {
    return requests.unsaturated(this.context, signal);
  }

  /** Closes all keep-alive connections. */
  close(): void {
    this.context.transports.close();
  }
}
