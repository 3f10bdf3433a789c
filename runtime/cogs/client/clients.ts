/**
 * The typed client: what handlers and scripts use to read and write other objects of the cluster.
 *
 * Operators create and own children (ConfigMaps, Deployments, custom resources); this gives them
 * the Kubernetes verbs typed by the same resource descriptors the generator emits and by
 * `builtins.*`: the descriptor comes first, the body type follows from it, and a wrong field is a
 * type error at the call site. It is a thin layer: every call is one request through the
 * operator's own `HttpKubeApi` (its credentials and re-login on 401, its retries with back-off and
 * `Retry-After`, its concurrency cap, its keep-alive connections and its metrics), so a handler's
 * writes behave exactly like the framework's own. Failures are the runtime's `ApiError` classes
 * with the API's `Status` (`ApiNotFoundError`, `ApiConflictError`, `ApiUnprocessableError`, …).
 *
 * What the API server would refuse for a wrong address — a namespace for a cluster-scoped
 * resource, none for a namespaced one, two different ones — is refused before any request with a
 * `ClientUsageError` naming the resource. `connecting` builds a client for scripts with a vault of
 * its own; the reactor hands the operator's client to every handler as `client`.
 *
 * The operator's client has a cache reader (`caches.CacheReader`, the operator's watch cache): a
 * `get()` or a whole `list()` of a kind the operator watches for its reconcile handlers answers
 * from memory once that kind has synced (R-CACHE-111), and every write's response goes to the cache
 * so that reads return at least what the operator last wrote (R-CACHE-112). `{ cache: false }`
 * forces a request.
 */

import type * as bodies from '../structs/bodies.js';
import * as patches from '../structs/patches.js';
import * as references from '../structs/references.js';
import type * as resources from '../structs/resources.js';
import * as api from './api.js';
import * as caches from './caches.js';
import type * as credentials from './credentials.js';
import * as errors from './errors.js';
import type * as requests from './requests.js';

/** What the client sends its requests through: the operator's (or a script's) HTTP API client. */
export interface ClientTransport {
  request(request: requests.ApiRequest): Promise<unknown>;
  watch(resource: references.Resource, namespace: string | null, options?: api.WatchRequestOptions): Promise<AsyncIterable<api.WatchLine>>;
  /** Where its credentials come from, if it has a vault (the HTTP client has). */
  readonly vault?: credentials.Vault;
}

/** The vaults of the clients that have one: other clients of the same credentials (client-node's) read them live. */
const vaults = new WeakMap<KubeClient, credentials.Vault>();

/**
 * The credentials vault of a client — the operator's for the handlers' `client`, a script's own
 * for `connect()` — or `undefined` for a client without one (outside an operator, a test double).
 */
export function vaultOf(client: KubeClient): credentials.Vault | undefined {
  return vaults.get(client);
}

/** Labels or fields to select by: a selector string (`app=web,tier!=db`) or `{ key: value }` pairs (all must match). */
export type SelectorSpec = string | Readonly<Record<string, string>>;

/** Options every call takes. */
export interface CallOptions {
  /** Cancels the request (and its retries). */
  readonly signal?: AbortSignal;
}

/** Where an object is: its namespace, for namespaced resources only. */
export interface AddressOptions extends CallOptions {
  readonly namespace?: string;
}

/** Options of a read of one object. */
export interface GetOptions extends AddressOptions {
  /** `false`: ask the API server even if the operator's watch cache holds the kind (default: use it when it can). */
  readonly cache?: boolean;
}

/** Options of the writing verbs. */
export interface WriteOptions extends AddressOptions {
  /** The field manager recorded in `managedFields`. */
  readonly fieldManager?: string;
  /** Validate and answer as if written, but write nothing (`dryRun=All`). */
  readonly dryRun?: boolean;
}

/** Options of a list. */
export interface ListOptions extends CallOptions {
  /** Namespaced resources: the namespace to list; absent: all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: SelectorSpec;
  readonly fieldSelector?: SelectorSpec;
  /** At most this many items per page; continue with the page's `continue` token. */
  readonly limit?: number;
  /** The `continue` token of the previous page. */
  readonly continue?: string;
  /** `false`: ask the API server even if the operator's watch cache holds the kind (default: use it when it can). */
  readonly cache?: boolean;
}

/** One page of a list. */
export interface ObjectList<Body> {
  /** The items, with `apiVersion` and `kind` filled in. */
  readonly items: Body[];
  /** The list's resource version (to watch from); `undefined` for a list answered from the watch cache. */
  readonly resourceVersion: string | undefined;
  /** The token of the next page; `undefined` on the last page. */
  readonly continue: string | undefined;
  /** How many items the following pages hold, when the server says. */
  readonly remainingItemCount: number | undefined;
}

/** One RFC 6902 JSON-Patch operation. */
export type JsonPatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string }
  | { readonly op: 'move' | 'copy'; readonly from: string; readonly path: string };

/** Options of a patch. */
export interface PatchOptions extends WriteOptions {
  /** `merge` (RFC 7386, the default for objects and `Patch`es) or `json` (RFC 6902, the default for arrays). */
  readonly type?: 'merge' | 'json';
  /** E.g. `status`: patch the subresource. */
  readonly subresource?: string;
}

/** Options of a replacement (PUT). */
export interface ReplaceOptions extends WriteOptions {
  /** E.g. `status`: replace the subresource. */
  readonly subresource?: string;
}

/** Options of a server-side apply. */
export interface ApplyOptions extends AddressOptions {
  /** Required: who owns the applied fields. */
  readonly fieldManager: string;
  /** Take over fields owned by other managers instead of failing with a conflict (409). */
  readonly force?: boolean;
  readonly dryRun?: boolean;
  /** E.g. `status`: apply to the subresource. */
  readonly subresource?: string;
}

/** Options of a deletion. */
export interface DeleteOptions extends AddressOptions {
  /** What happens to dependents: `Orphan`, `Background` or `Foreground`. */
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** Delete only if the object still has this uid / resource version (else 409). */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
}

/** Options of a watch. */
export interface WatchOptions extends CallOptions {
  /** Namespaced resources: the namespace to watch; absent: all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: SelectorSpec;
  readonly fieldSelector?: SelectorSpec;
  /** Start after this resource version (e.g. a list's); absent: the current state first, as ADDED events. */
  readonly resourceVersion?: string;
  /** Ask the server to end the watch after this many seconds. */
  readonly timeoutSeconds?: number;
}

/** One change seen by a watch. */
export interface WatchEvent<Body> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: Body;
}

/**
 * A merge-patch of a body: a `Patch` accumulator, plain data in the body's shape (`null` deletes),
 * or the merge-patch data of the input type (`MergePatch<Input>`, what generated `<Kind>Patch`
 * types are: list items as written, `null` only where the server can remove).
 */
export type MergePatchOf<Body extends object, Input = resources.InputOf<Body>> =
  | patches.PatchBase<Body>
  | patches.PatchInput<Body>
  | resources.MergePatch<Input>;

type Descriptor<Body extends resources.KubernetesObject, Input> = resources.ResourceDescriptor<Body, Input>;

/** A descriptor as the HTTP layer addresses it. */
function resourceOf(descriptor: resources.ResourceInfo): references.Resource {
  if (typeof descriptor !== 'object' || descriptor === null || typeof descriptor.plural !== 'string') {
    throw new errors.ClientUsageError(`The client needs a resource descriptor (e.g. builtins.ConfigMaps), got ${describe(descriptor)}.`);
  }
  return references.makeResource({
    group: descriptor.group,
    version: descriptor.version,
    plural: descriptor.plural,
    kind: descriptor.kind,
    namespaced: descriptor.namespaced,
    subresources: descriptor.statusSubresource ? ['status'] : [],
  });
}

function describe(value: unknown): string {
  return value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
}

function nameOf(resource: references.Resource): string {
  return references.resourceName(resource);
}

/**
 * The namespace of one object: the given one, else the body's. A cluster-scoped resource takes
 * none; a namespaced one needs one, and two different ones are a contradiction.
 */
function namespaceOf(resource: references.Resource, given: string | undefined, inBody: string | undefined): string | null {
  if (!resource.namespaced) {
    const extra = given ?? inBody;
    if (extra !== undefined) throw new errors.ClientUsageError(`${nameOf(resource)} is cluster-scoped: it takes no namespace, got ${JSON.stringify(extra)}.`);
    return null;
  }
  if (given !== undefined && inBody !== undefined && given !== inBody) {
    throw new errors.ClientUsageError(
      `${nameOf(resource)}: the namespace option ${JSON.stringify(given)} differs from the body's metadata.namespace ${JSON.stringify(inBody)}.`,
    );
  }
  const namespace = given ?? inBody;
  if (namespace === undefined || namespace === '') {
    throw new errors.ClientUsageError(`${nameOf(resource)} is namespaced: give a namespace (the namespace option or metadata.namespace).`);
  }
  return namespace;
}

/** The namespace of a collection (list, watch): none for all namespaces. */
function collectionNamespaceOf(resource: references.Resource, given: string | undefined): string | null {
  if (!resource.namespaced && given !== undefined) {
    throw new errors.ClientUsageError(`${nameOf(resource)} is cluster-scoped: it takes no namespace, got ${JSON.stringify(given)}.`);
  }
  return given ?? null;
}

function requireName(resource: references.Resource, name: unknown, where: string): string {
  if (typeof name !== 'string' || name === '')
    throw new errors.ClientUsageError(`${nameOf(resource)}: ${where} needs a non-empty object name, got ${describe(name)}.`);
  return name;
}

function selectorText(selector: SelectorSpec | undefined): string | undefined {
  if (selector === undefined || typeof selector === 'string') return selector;
  return Object.entries(selector)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

function metadataOf(body: unknown): { name?: string; namespace?: string } {
  const metadata = typeof body === 'object' && body !== null ? (body as { metadata?: unknown }).metadata : undefined;
  return typeof metadata === 'object' && metadata !== null ? (metadata as { name?: string; namespace?: string }) : {};
}

/** The body with `apiVersion`/`kind` of the descriptor where absent. */
function enveloped(descriptor: Pick<resources.ResourceDescriptor, 'plural' | 'kind' | 'apiVersion'>, body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new errors.ClientUsageError(`${descriptor.plural}: the body must be an object, got ${describe(body)}.`);
  }
  return { apiVersion: descriptor.apiVersion, kind: descriptor.kind, ...(body as Record<string, unknown>) };
}

function writeQuery(options: { readonly fieldManager?: string; readonly dryRun?: boolean } | undefined): requests.ApiRequest['query'] {
  return { fieldManager: options?.fieldManager, dryRun: options?.dryRun ? 'All' : undefined };
}

/** The body of a patch and its content type. */
function patchBody(resource: references.Resource, patch: unknown, type: PatchOptions['type']): { body: unknown; contentType: string } {
  if (Array.isArray(patch)) {
    if (type === 'merge')
      throw new errors.ClientUsageError(`${nameOf(resource)}: a merge-patch is an object, not an array (JSON-Patch operations need type 'json').`);
    return { body: patch, contentType: 'application/json-patch+json' };
  }
  if (type === 'json') throw new errors.ClientUsageError(`${nameOf(resource)}: a JSON-Patch (type 'json') is an array of operations, got ${describe(patch)}.`);
  if (patch instanceof patches.PatchBase) {
    if (patch.fns.length > 0) {
      throw new errors.ClientUsageError(
        `${nameOf(resource)}: a Patch with transformation functions cannot be sent as a merge-patch; send JSON-Patch operations instead.`,
      );
    }
    return { body: patch.toMergePatch(), contentType: 'application/merge-patch+json' };
  }
  if (typeof patch !== 'object' || patch === null)
    throw new errors.ClientUsageError(`${nameOf(resource)}: a merge-patch must be an object, got ${describe(patch)}.`);
  return { body: patch, contentType: 'application/merge-patch+json' };
}

/**
 * The typed client. Handlers get the operator's as `client`; scripts make one with `connect()`.
 *
 * @example
 * const cm = await client.create(builtins.ConfigMaps, { metadata: { name: 'x', namespace: 'default' }, data: { a: '1' } });
 * await client.patch(builtins.ConfigMaps, 'x', { data: { a: '2' } }, { namespace: 'default' });
 * await client.delete(builtins.ConfigMaps, 'x', { namespace: 'default' });
 */
export class KubeClient {
  readonly #transport: ClientTransport;
  readonly #close: (() => Promise<void>) | undefined;
  readonly #cache: caches.CacheReader | undefined;
  #closed = false;

  /**
   * @param transport where requests go (e.g. an `HttpKubeApi`).
   * @param options.close what `close()` does; without it the client is borrowed (the operator's)
   *   and `close()` refuses, as the operator closes its own connections when it stops.
   * @param options.cache the operator's watch cache: reads of the kinds it holds answer from it,
   *   writes report their responses to it.
   */
  constructor(transport: ClientTransport, options?: { readonly close?: () => Promise<void>; readonly cache?: caches.CacheReader }) {
    this.#transport = transport;
    this.#close = options?.close;
    this.#cache = options?.cache;
    if (transport.vault !== undefined) vaults.set(this, transport.vault);
  }

  /** The cache to read `resource` in `namespace` from, if it holds it synced and the call allows it. */
  private cacheFor(resource: references.Resource, namespace: string | null, allowed: boolean | undefined): caches.CacheReader | undefined {
    const cache = this.#cache;
    if (cache === undefined || allowed === false || this.#closed) return undefined;
    return cache.isTracked(resource) && cache.isSynced(resource, namespace) ? cache : undefined;
  }

  /** Tells the cache about a write's response (not for dry runs, nor for subresources other than status). */
  private wrote<Body>(resource: references.Resource, response: Body, options: { readonly dryRun?: boolean; readonly subresource?: string } | undefined): Body {
    const subresource = options?.subresource;
    if (this.#cache === undefined || options?.dryRun || (subresource !== undefined && subresource !== 'status')) return response;
    if (typeof response === 'object' && response !== null && !errors.isStatus(response)) this.#cache.wrote(resource, response as bodies.RawBody);
    return response;
  }

  private send(request: requests.ApiRequest): Promise<unknown> {
    if (this.#closed) return Promise.reject(new errors.ClientUsageError('The client is closed.'));
    return this.#transport.request(request);
  }

  /**
   * Reads one object — from the operator's watch cache when it holds the kind (R-CACHE-111).
   *
   * @throws ApiNotFoundError if it does not exist.
   */
  async get<Body extends resources.KubernetesObject, Input>(descriptor: Descriptor<Body, Input>, name: string, options?: GetOptions): Promise<Body> {
    const resource = resourceOf(descriptor);
    const namespace = namespaceOf(resource, options?.namespace, undefined);
    const path = references.urlOf(resource, { namespace, name: requireName(resource, name, 'get()') });
    const cache = this.cacheFor(resource, namespace, options?.cache);
    if (cache !== undefined) {
      const body = cache.get(resource, namespace, name);
      if (body === undefined) throw caches.notFound(resource, name, path);
      return enveloped(descriptor, structuredClone(body)) as unknown as Body;
    }
    return (await this.send({ method: 'GET', path, signal: options?.signal })) as Body;
  }

  /**
   * Lists one page of objects (all of them without `limit`). Without `limit`/`continue`, a kind the
   * operator's watch cache holds is listed from it (R-CACHE-111): label selectors are evaluated in
   * memory, field selectors too when they select by `metadata.name`/`metadata.namespace` only.
   */
  async list<Body extends resources.KubernetesObject, Input>(descriptor: Descriptor<Body, Input>, options?: ListOptions): Promise<ObjectList<Body>> {
    const resource = resourceOf(descriptor);
    const namespace = collectionNamespaceOf(resource, options?.namespace);
    const paged = options?.limit !== undefined || options?.continue !== undefined;
    const cache = paged ? undefined : this.cacheFor(resource, namespace, options?.cache);
    const selectors = { labels: selectorText(options?.labelSelector), fields: selectorText(options?.fieldSelector) };
    const cached = cache === undefined ? undefined : caches.cachedList(cache, resource, namespace, selectors);
    if (cached !== undefined) {
      const items = cached.map((body) => enveloped(descriptor, structuredClone(body)) as unknown as Body);
      return { items, resourceVersion: undefined, continue: undefined, remainingItemCount: undefined };
    }
    const response = await this.send({
      method: 'GET',
      path: references.urlOf(resource, { namespace }),
      signal: options?.signal,
      query: {
        labelSelector: selectors.labels,
        fieldSelector: selectors.fields,
        limit: options?.limit,
        continue: options?.continue,
      },
    });
    const listing = api.listingOf(response);
    const metadata = ((response as { metadata?: unknown } | null)?.metadata ?? {}) as { continue?: unknown; remainingItemCount?: unknown };
    return {
      items: listing.items as unknown as Body[],
      resourceVersion: listing.resourceVersion,
      continue: typeof metadata.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined,
      remainingItemCount: typeof metadata.remainingItemCount === 'number' ? metadata.remainingItemCount : undefined,
    };
  }

  /** Lists page by page (`limit` items each, default 500) until the last page. */
  async *pages<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    options?: Omit<ListOptions, 'continue'>,
  ): AsyncGenerator<ObjectList<Body>, void, undefined> {
    let token: string | undefined;
    do {
      const page = await this.list(descriptor, { limit: 500, ...options, continue: token });
      yield page;
      token = page.continue;
    } while (token !== undefined);
  }

  /** Every object of every page, one by one (see `pages()`). */
  async *iterate<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    options?: Omit<ListOptions, 'continue'>,
  ): AsyncGenerator<Body, void, undefined> {
    for await (const page of this.pages(descriptor, options)) yield* page.items;
  }

  /**
   * Creates an object. The namespace is the option's or the body's `metadata.namespace`;
   * `apiVersion` and `kind` default to the descriptor's.
   *
   * @throws ApiConflictError if it exists; ApiUnprocessableError (with the API's `Status`) if invalid.
   */
  async create<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    body: NoInfer<Input>,
    options?: WriteOptions,
  ): Promise<Body> {
    const resource = resourceOf(descriptor);
    const payload = enveloped(descriptor, body);
    const namespace = namespaceOf(resource, options?.namespace, metadataOf(payload).namespace);
    const path = references.urlOf(resource, { namespace });
    return this.wrote(
      resource,
      (await this.send({ method: 'POST', path, body: payload, query: writeQuery(options), signal: options?.signal })) as Body,
      options,
    );
  }

  /**
   * Replaces an object (PUT) with a whole new body, e.g. one read with `get()` and changed. With
   * `metadata.resourceVersion` in the body, it fails with a conflict if the object changed since.
   *
   * @throws ApiConflictError on a stale `resourceVersion`; ApiNotFoundError if absent.
   */
  async replace<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    body: NoInfer<Body | Input>,
    options?: ReplaceOptions,
  ): Promise<Body> {
    const resource = resourceOf(descriptor);
    const payload = enveloped(descriptor, body);
    const metadata = metadataOf(payload);
    const namespace = namespaceOf(resource, options?.namespace, metadata.namespace);
    const name = requireName(resource, metadata.name, 'replace() (metadata.name)');
    const path = references.urlOf(resource, { namespace, name, subresource: options?.subresource });
    return this.wrote(
      resource,
      (await this.send({ method: 'PUT', path, body: payload, query: writeQuery(options), signal: options?.signal })) as Body,
      options,
    );
  }

  /**
   * Patches an object (or a subresource: `{ subresource: 'status' }`): a merge-patch (a `Patch`,
   * or plain data in the body's shape, `null` deleting a field) or JSON-Patch operations.
   *
   * @throws ApiNotFoundError if absent; ApiUnprocessableError if the result is invalid.
   */
  patch<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    name: string,
    patch: readonly JsonPatchOperation[],
    options?: PatchOptions,
  ): Promise<Body>;
  patch<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    name: string,
    patch: NoInfer<MergePatchOf<Body, Input>>,
    options?: PatchOptions,
  ): Promise<Body>;
  async patch<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    name: string,
    patch: MergePatchOf<Body, Input> | readonly JsonPatchOperation[],
    options?: PatchOptions,
  ): Promise<Body> {
    const resource = resourceOf(descriptor);
    const namespace = namespaceOf(resource, options?.namespace, undefined);
    const path = references.urlOf(resource, { namespace, name: requireName(resource, name, 'patch()'), subresource: options?.subresource });
    const { body, contentType } = patchBody(resource, patch, options?.type);
    const response = await this.send({ method: 'PATCH', path, body, contentType, query: writeQuery(options), signal: options?.signal });
    return this.wrote(resource, response as Body, options);
  }

  /**
   * Server-side apply: makes `fieldManager` the owner of exactly the fields given (creating the
   * object if absent). The namespace is the option's or `metadata.namespace`.
   *
   * @throws ApiConflictError when another manager owns a field with a different value (unless `force`).
   */
  async apply<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    partial: NoInfer<resources.ApplyOf<Input>>,
    options: ApplyOptions,
  ): Promise<Body> {
    const resource = resourceOf(descriptor);
    if (typeof options?.fieldManager !== 'string' || options.fieldManager === '') {
      throw new errors.ClientUsageError(`${nameOf(resource)}: apply() needs a fieldManager (who owns the applied fields).`);
    }
    const payload = enveloped(descriptor, partial);
    const metadata = metadataOf(payload);
    const namespace = namespaceOf(resource, options.namespace, metadata.namespace);
    const name = requireName(resource, metadata.name, 'apply() (metadata.name)');
    const response = await this.send({
      method: 'PATCH',
      path: references.urlOf(resource, { namespace, name, subresource: options.subresource }),
      body: payload,
      contentType: 'application/apply-patch+yaml',
      signal: options.signal,
      query: { fieldManager: options.fieldManager, force: options.force ? 'true' : undefined, dryRun: options.dryRun ? 'All' : undefined },
    });
    return this.wrote(resource, response as Body, options);
  }

  /**
   * Deletes an object. Resolves with the object when the API returns it (still there while its
   * finalizers run, or its last state), or `undefined` when the API answers with a `Status`.
   *
   * @throws ApiNotFoundError if absent; ApiConflictError if a precondition fails.
   */
  async delete<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    name: string,
    options?: DeleteOptions,
  ): Promise<Body | undefined> {
    const resource = resourceOf(descriptor);
    const namespace = namespaceOf(resource, options?.namespace, undefined);
    const path = references.urlOf(resource, { namespace, name: requireName(resource, name, 'delete()') });
    const hasBody = options?.propagationPolicy !== undefined || options?.preconditions !== undefined || options?.gracePeriodSeconds !== undefined;
    const body = hasBody
      ? {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          ...(options?.propagationPolicy !== undefined ? { propagationPolicy: options.propagationPolicy } : {}),
          ...(options?.preconditions !== undefined ? { preconditions: options.preconditions } : {}),
          ...(options?.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
        }
      : undefined;
    const response = await this.send({
      method: 'DELETE',
      path,
      body,
      query: { dryRun: options?.dryRun ? 'All' : undefined },
      signal: options?.signal,
    });
    if (this.#cache !== undefined && !options?.dryRun) caches.reportDeletion(this.#cache, resource, namespace, name, response);
    return errors.isStatus(response) ? undefined : (response as Body);
  }

  /**
   * Watches changes, as one watch connection: yields events until the server ends the stream
   * (`timeoutSeconds`, or its own limit) or `signal` aborts (the iteration then throws its
   * reason); breaking out of the loop closes the connection too. Bookmarks are not yielded.
   *
   * @throws ApiGoneError when `resourceVersion` is too old (list again); WatchingError for other
   *   errors reported in the stream.
   */
  async *watch<Body extends resources.KubernetesObject, Input>(
    descriptor: Descriptor<Body, Input>,
    options?: WatchOptions,
  ): AsyncGenerator<WatchEvent<Body>, void, undefined> {
    if (this.#closed) throw new errors.ClientUsageError('The client is closed.');
    const resource = resourceOf(descriptor);
    const namespace = collectionNamespaceOf(resource, options?.namespace);
    const lines = await this.#transport.watch(resource, namespace, {
      signal: options?.signal,
      resourceVersion: options?.resourceVersion,
      timeoutSeconds: options?.timeoutSeconds,
      labelSelector: selectorText(options?.labelSelector),
      fieldSelector: selectorText(options?.fieldSelector),
    });
    for await (const line of lines) {
      if (line.type === 'BOOKMARK') continue;
      if (line.type === 'ERROR') {
        const status = line.object;
        if (errors.isStatus(status) && status.code === 410) {
          // Named as the watch it ended (R-CLIENT-501); the stream's lines know no server.
          const request = errors.failedRequest('GET', `${references.urlOf(resource, { namespace })}?watch=true`);
          throw new errors.ApiGoneError(410, status, { request });
        }
        throw new errors.WatchingError(status);
      }
      if (line.type === 'ADDED' || line.type === 'MODIFIED' || line.type === 'DELETED') {
        const object = line.object as bodies.RawBody;
        yield { type: line.type, object: { apiVersion: descriptor.apiVersion, kind: descriptor.kind, ...object } as unknown as Body };
      }
    }
  }

  /**
   * Closes the connections of a client made with `connect()`.
   *
   * @throws errors.ClientUsageError for the operator's client (`client` of handlers): the operator closes it.
   */
  async close(): Promise<void> {
    if (this.#close === undefined) {
      throw new errors.ClientUsageError("This client is the operator's: it is closed when the operator stops, not by close().");
    }
    if (this.#closed) return;
    this.#closed = true;
    await this.#close();
  }

  /** `await using client = await connect()`: closes it at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/**
 * A client that cannot be used where it is handed out (before the operator has credentials,
 * outside of an operator): reading it is harmless — kwargs may be spread — but every call
 * rejects with `error()`, saying why.
 */
export function refusingClient(error: () => Error): KubeClient {
  return new KubeClient({ request: () => Promise.reject(error()), watch: () => Promise.reject(error()) });
}
