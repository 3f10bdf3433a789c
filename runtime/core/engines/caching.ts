/**
 * The watch cache (R-CACHE): the newest known state of every object of the kinds reconcile
 * handlers read — the reconciled resources and the kinds they own or watch — kept in memory from
 * the operator's own watch-streams and from the responses to its own writes.
 *
 * Level-based handlers read "the object as it is now" and the children of an owner many times per
 * change; asking the API server each time would cost a request per read. The watchers already see
 * every change, so they feed it here (`observe`, `listed`), and the typed client reads from it.
 * Its writes report their responses (`wrote`, `removed`), so that a read never returns an older
 * version than the operator last wrote, even while the watch lags (read-your-writes).
 *
 * Objects are held per resource, keyed by namespace and name, with an index by the uid of their
 * controller owner. Resource versions order the arrivals: a newer version replaces an older one
 * (compared as integers when both are decimal strings, else the later arrival wins); anything not
 * newer is no change. An own delete leaves a tombstone that only a newer event replaces. Each
 * watcher's dimension (resource × namespace, or cluster-wide) is synced after its first listing;
 * every (re-)listing drops the objects of its dimension it did not contain, except those stored
 * after the listing's snapshot. Listeners hear every change that alters what is held, once,
 * synchronously.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as caches from '../../cogs/client/caches.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';

/** One change of what the cache holds. */
export interface CacheChange {
  readonly resource: references.Resource;
  /** `undefined`: it was absent. */
  readonly old: bodies.RawBody | undefined;
  /** `undefined`: it is gone. */
  readonly new: bodies.RawBody | undefined;
  /** Observed from the watch, or one of the operator's own writes. */
  readonly origin: 'watch' | 'write';
}

/** A watch event as the watchers hand it out (`type: null` for listed objects). */
export interface CacheEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | null;
  readonly object: bodies.RawBody;
}

const DIGITS = /^[0-9]+$/;

/**
 * Whether resource version `candidate` is newer than `held`: as integers when both are decimal
 * digit strings, else yes (the later arrival wins). No version held: yes.
 */
export function isNewer(candidate: string | undefined, held: string | undefined): boolean {
  if (held === undefined || candidate === undefined) return true;
  if (!DIGITS.test(candidate) || !DIGITS.test(held)) return true;
  const a = candidate.replace(/^0+(?=.)/, '');
  const b = held.replace(/^0+(?=.)/, '');
  return a.length !== b.length ? a.length > b.length : a > b;
}

/** What one key holds: the object, or a tombstone (no body) with the last version. */
interface Entry {
  readonly body: bodies.RawBody | undefined;
  readonly version: string | undefined;
  readonly owner: string | undefined;
}

/** One watcher's scope and its sync state. */
interface Dimension {
  synced: boolean;
  /** The keys seen by the listing in progress (since its first item), if one is. */
  seen: Set<string> | undefined;
}

interface Waiter {
  /** Whether what it waits for has come. */
  readonly ready: () => boolean;
  readonly resolve: () => void;
}

/** Everything held of one resource. */
class Store {
  readonly entries = new Map<string, Entry>();
  /** Controller owner uid → keys of the objects it controls. */
  readonly owners = new Map<string, Set<string>>();
  /** By namespace (`''`: cluster-wide). */
  readonly dimensions = new Map<string, Dimension>();
  readonly waiters = new Set<Waiter>();

  constructor(readonly resource: references.Resource) {}

  covers(namespace: string | null): boolean {
    return this.dimensions.has('') || (namespace !== null && this.dimensions.has(namespace));
  }

  isSynced(namespace: string | null): boolean {
    if (this.dimensions.get('')?.synced === true) return true;
    return namespace !== null && this.dimensions.get(namespace)?.synced === true;
  }

  /** Whether it has dimensions and every one of them is synced. */
  isSyncedEverywhere(): boolean {
    return this.dimensions.size > 0 && [...this.dimensions.values()].every((dimension) => dimension.synced);
  }

  /** Resolves the waiters whose wait is over. */
  wake(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.ready()) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }
}

const dimensionOf = (namespace: string | null): string => namespace ?? '';
const keyOf = (namespace: string | null | undefined, name: string): string => `${namespace ?? ''}/${name}`;
const namespaceOfKey = (key: string): string => key.slice(0, key.indexOf('/'));

function controllerOf(body: bodies.RawBody): string | undefined {
  const owners = body.metadata?.ownerReferences;
  if (!Array.isArray(owners)) return undefined;
  return owners.find((owner) => owner?.controller === true)?.uid;
}

/** Whether both versions are decimal and `candidate` is the greater: known to be newer, not only assumed. */
function isKnownNewer(candidate: string | undefined, than: string | undefined): boolean {
  return candidate !== undefined && than !== undefined && DIGITS.test(candidate) && DIGITS.test(than) && isNewer(candidate, than);
}

/**
 * The watch cache of one operator (see the module's comment).
 *
 * @example
 * const cache = new WatchCache({ logger });
 * cache.track(jobs);
 * cache.observe(jobs, 'default', { type: null, object: job });
 * cache.listed(jobs, 'default');
 * cache.get(jobs, 'default', 'job-1');
 */
export class WatchCache implements caches.CacheReader {
  readonly #stores = new Map<string, Store>();
  readonly #listeners = new Set<(change: CacheChange) => void>();
  readonly #logger: loggers.Logger | undefined;
  #size = 0;

  constructor(options: { readonly logger?: loggers.Logger } = {}) {
    this.#logger = options.logger;
  }

  /**
   * Declares a resource as cached; done for every reconciled, owned and watched kind before the
   * watchers start. With `namespace` (a watcher's dimension: a namespace, or `null` for
   * cluster-wide), that dimension too is declared, not yet synced (`syncedEverywhere` waits for it).
   */
  track(resource: references.Resource, namespace?: string | null): void {
    const name = references.resourceName(resource);
    let store = this.#stores.get(name);
    if (store === undefined) this.#stores.set(name, (store = new Store(resource)));
    if (namespace !== undefined) this.#dimension(store, namespace);
  }

  isTracked(resource: references.Resource): boolean {
    return this.#stores.has(references.resourceName(resource));
  }

  /** The resources tracked, in the order they were declared. */
  get tracked(): references.Resource[] {
    return [...this.#stores.values()].map((store) => store.resource);
  }

  #store(resource: references.Resource): Store | undefined {
    return this.#stores.get(references.resourceName(resource));
  }

  #dimension(store: Store, namespace: string | null): Dimension {
    const key = dimensionOf(namespace);
    let dimension = store.dimensions.get(key);
    if (dimension === undefined) store.dimensions.set(key, (dimension = { synced: false, seen: undefined }));
    return dimension;
  }

  /** From the watcher: every event, listed objects (`type: null`) included. Untracked resources are ignored. */
  observe(resource: references.Resource, namespace: string | null, event: CacheEvent): void {
    const store = this.#store(resource);
    const name = event.object.metadata?.name;
    if (store === undefined || typeof name !== 'string') return;
    const dimension = this.#dimension(store, namespace);
    const key = keyOf(event.object.metadata?.namespace, name);
    if (event.type === null) (dimension.seen ??= new Set()).add(key);
    const held = store.entries.get(key);
    const version = event.object.metadata?.resourceVersion;
    if (held !== undefined && !isNewer(version, held.version)) return;
    if (event.type === 'DELETED') this.#put(store, key, undefined, 'watch');
    else this.#put(store, key, { body: event.object, version, owner: controllerOf(event.object) }, 'watch');
  }

  /**
   * From the watcher: its (re-)listing is complete. Objects of that dimension it did not contain are
   * gone (a change each) — unless held at a version newer than the listing's `resourceVersion`
   * (stored by an own write after the listing's snapshot: the watch from that version brings their
   * fate). Then the dimension is synced.
   */
  listed(resource: references.Resource, namespace: string | null, resourceVersion?: string): void {
    const store = this.#store(resource);
    if (store === undefined) return;
    const dimension = this.#dimension(store, namespace);
    const seen = dimension.seen ?? new Set<string>();
    dimension.seen = undefined;
    for (const [key, entry] of [...store.entries]) {
      if (seen.has(key) || (namespace !== null && namespaceOfKey(key) !== namespace)) continue;
      if (isKnownNewer(entry.version, resourceVersion)) continue;
      this.#put(store, key, undefined, 'watch');
    }
    dimension.synced = true;
    store.wake();
  }

  /**
   * From the watcher, when it stops for good (its namespace is no longer served): the dimension is
   * no longer synced and its objects are no longer held. No listener hears it: they are not known
   * to be gone, only no longer observed.
   */
  forget(resource: references.Resource, namespace: string | null): void {
    const store = this.#store(resource);
    if (store === undefined || !store.dimensions.delete(dimensionOf(namespace))) return;
    for (const key of [...store.entries.keys()]) {
      const held = namespaceOfKey(key);
      if (!store.covers(held === '' ? null : held)) this.#put(store, key, undefined, 'watch', { silent: true });
    }
    store.wake();
  }

  /**
   * From a sharded replica that handed the object over (R-SHARD-203): no longer held, and no
   * listener hears it — it is not gone, only no longer this replica's.
   */
  drop(resource: references.Resource, namespace: string | null, name: string): void {
    const store = this.#store(resource);
    if (store === undefined) return;
    const key = keyOf(namespace, name);
    if (store.entries.has(key)) this.#put(store, key, undefined, 'watch', { silent: true });
  }

  /** Whether a dimension covering `namespace` (that namespace, or cluster-wide; `null`: only cluster-wide) has listed at least once. */
  isSynced(resource: references.Resource, namespace: string | null): boolean {
    return this.#store(resource)?.isSynced(namespace) === true;
  }

  /**
   * Resolves once `isSynced(resource, namespace)`.
   *
   * Tracks the resource if it is not yet (a waiter may come before the watcher that feeds it).
   *
   * @throws `signal`'s reason when it aborts first.
   */
  synced(resource: references.Resource, namespace: string | null, signal: AbortSignal): Promise<void> {
    this.track(resource);
    const store = this.#store(resource)!;
    return this.#until(store, () => store.isSynced(namespace), signal);
  }

  /**
   * Resolves once the resource has at least one declared dimension (`track` with a namespace, or a
   * watcher's first event) and every one of them has listed: what a reader of all the namespaces
   * the operator serves waits for when no cluster-wide watcher exists (in namespaced mode).
   *
   * @throws `signal`'s reason when it aborts first.
   */
  syncedEverywhere(resource: references.Resource, signal: AbortSignal): Promise<void> {
    this.track(resource);
    const store = this.#store(resource)!;
    return this.#until(store, () => store.isSyncedEverywhere(), signal);
  }

  #until(store: Store, ready: () => boolean, signal: AbortSignal): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        ready,
        resolve: () => {
          detach();
          resolve();
        },
      };
      const detach = aborts.onAbort(signal, () => {
        store.waiters.delete(waiter);
        reject(signal.reason);
      });
      store.waiters.add(waiter);
    });
  }

  get(resource: references.Resource, namespace: string | null, name: string): bodies.RawBody | undefined {
    return this.#store(resource)?.entries.get(keyOf(namespace, name))?.body;
  }

  /** The objects held in `namespace` (`null`: all namespaces). */
  list(resource: references.Resource, namespace: string | null): bodies.RawBody[] {
    const store = this.#store(resource);
    if (store === undefined) return [];
    const objects: bodies.RawBody[] = [];
    const prefix = namespace === null ? undefined : `${namespace}/`;
    for (const [key, entry] of store.entries) {
      if (entry.body !== undefined && (prefix === undefined || key.startsWith(prefix))) objects.push(entry.body);
    }
    return objects;
  }

  /** The objects of `resource` whose controller ownerReference has this uid (an index, not a scan). */
  ownedBy(resource: references.Resource, ownerUid: string): bodies.RawBody[] {
    const store = this.#store(resource);
    const keys = store?.owners.get(ownerUid);
    if (store === undefined || keys === undefined) return [];
    return [...keys].flatMap((key) => {
      const body = store.entries.get(key)?.body;
      return body === undefined ? [] : [body];
    });
  }

  /**
   * The operator's own write (a response body): stored if newer than what is held, so a later,
   * stale watch event cannot roll it back. Ignored for untracked resources and for namespaces no
   * watcher covers (nothing would ever update it there).
   *
   * Returns the response's resource version when the cache holds that state or a newer one —
   * stored now, or already held because the watch's echo of the write came before its response
   * (then the write changed nothing here, and only its caller can tell the version was its own);
   * `undefined` when nothing is held for it (untracked, uncovered, no version).
   */
  wrote(resource: references.Resource, body: bodies.RawBody): string | undefined {
    const store = this.#store(resource);
    const name = body.metadata?.name;
    const namespace = body.metadata?.namespace ?? null;
    if (store === undefined || typeof name !== 'string' || !store.covers(namespace)) return undefined;
    const key = keyOf(namespace, name);
    const held = store.entries.get(key);
    const version = body.metadata?.resourceVersion;
    if (held !== undefined && !isNewer(version, held.version)) return version;
    this.#put(store, key, { body, version, owner: controllerOf(body) }, 'write');
    return version;
  }

  /**
   * The operator's own delete of an object now gone: a tombstone with the last version known (or
   * the given one, if newer), which only a newer event replaces.
   */
  removed(resource: references.Resource, namespace: string | null, name: string, resourceVersion?: string): void {
    const store = this.#store(resource);
    if (store === undefined || !store.covers(namespace)) return;
    const key = keyOf(namespace, name);
    const held = store.entries.get(key);
    const version = held === undefined || isNewer(resourceVersion, held.version) ? (resourceVersion ?? held?.version) : held.version;
    this.#put(store, key, { body: undefined, version, owner: undefined }, 'write');
  }

  /** Listeners are called synchronously, once per change that alters what is held. Returns the unsubscriber. */
  subscribe(listener: (change: CacheChange) => void): () => void {
    const own = (change: CacheChange): void => listener(change);
    this.#listeners.add(own);
    return () => {
      this.#listeners.delete(own);
    };
  }

  /** Cached objects over all resources (tombstones excluded): the census. */
  get size(): number {
    return this.#size;
  }

  /**
   * Stores `entry` under `key` (`undefined`: nothing, not even a tombstone), keeps the owner index
   * and the size, and tells the listeners if what is held changed.
   */
  #put(store: Store, key: string, entry: Entry | undefined, origin: CacheChange['origin'], options: { readonly silent?: boolean } = {}): void {
    const held = store.entries.get(key);
    if (held?.owner !== undefined) {
      const owned = store.owners.get(held.owner);
      owned?.delete(key);
      if (owned?.size === 0) store.owners.delete(held.owner);
    }
    if (entry === undefined) store.entries.delete(key);
    else store.entries.set(key, entry);
    if (entry?.owner !== undefined && entry.body !== undefined) {
      let owned = store.owners.get(entry.owner);
      if (owned === undefined) store.owners.set(entry.owner, (owned = new Set()));
      owned.add(key);
    }
    this.#size += (entry?.body !== undefined ? 1 : 0) - (held?.body !== undefined ? 1 : 0);
    if (options.silent || (held?.body === undefined && entry?.body === undefined)) return;
    const change: CacheChange = { resource: store.resource, old: held?.body, new: entry?.body, origin };
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        this.#logger?.error(`A watch-cache listener has failed for ${references.resourceName(store.resource)} ${key}.`, { error });
      }
    }
  }
}
