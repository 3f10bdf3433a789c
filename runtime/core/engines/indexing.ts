/**
 * In-memory indices (R-INDEX): what every indexer returned for every object, kept per index name
 * and injected into all handlers' arguments, plus the barrier that holds all handlers back until
 * the initial listings are indexed.
 *
 * An index maps keys to *stores*: the values all objects contributed under that key. Each object
 * replaces its own contributions on every event and loses them on deletion or filter mismatch; a
 * reverse map from the object to its keys keeps that O(keys of the object), whatever the number of
 * objects. Keys are compared by value — `[namespace, name]` tuples included — through a canonical
 * JSON encoding, so lookups need the same shape, not the same instance.
 *
 * Indexers are retried by nothing: an error in the default `IGNORED` mode keeps the object's
 * previous values; `TEMPORARY` (or a `TemporaryError`) drops them and skips the object until its
 * first event after the delay; `PERMANENT` (or a `PermanentError`, or exhausted `retries`/`timeout`)
 * drops them and excludes the object until the operator restarts. A success clears the error state.
 * Messages go to a terse logger: INFO only in verbose mode, DEBUG only in debug mode, no k8s-events.
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import * as toggles from '../../cogs/aio/toggles.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as dicts from '../../cogs/structs/dicts.js';
import * as errors from '../actions/errors.js';
import * as execution from '../actions/execution.js';
import * as lifecycles from '../actions/lifecycles.js';
import * as logging from '../actions/logging.js';
import * as progression from '../actions/progression.js';
import type * as handlers from '../intents/handlers.js';
import type * as indices from '../intents/indices.js';
import { IndexKeyError } from './errors.js';

/** The public shapes of indices (R-INDEX-2). */
export type Store<V> = indices.Store<V>;
export type Index<K, V> = indices.Index<K, V>;

/**
 * A plain object (`{…}`, or one without a prototype) — not an array, `Map`, `Date` or other class
 * instance, whose own enumerable properties say nothing about its identity (all `Map`s would
 * look like `{}`).
 */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function canonical(value: unknown, seen: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new IndexKeyError(`Index keys must be JSON-encodable, got the number ${value}.`);
    return value;
  }
  if (typeof value !== 'object') throw new IndexKeyError(`Index keys must be JSON-encodable, got a ${typeof value}.`);
  if (seen.has(value)) throw new IndexKeyError('Index keys must be JSON-encodable, got a circular structure.');
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => canonical(item, seen));
    if (!isPlainObject(value)) throw new IndexKeyError(`Index keys must be JSON-encodable, got a ${value.constructor?.name ?? 'non-plain object'}.`);
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) dicts.setOwn(sorted, key, canonical(value[key], seen));
    return sorted;
  } finally {
    seen.delete(value);
  }
}

/**
 * The canonical encoding of a key: equal for structurally equal keys (object keys sorted).
 *
 * @throws IndexKeyError for keys that are not JSON-encodable (functions, symbols, bigints,
 *   `undefined`, non-finite numbers, class instances, circular structures).
 */
export function encodeKey(key: unknown): string {
  // Strings, numbers, `[namespace, name]` tuples…: already canonical. Every lookup encodes its key.
  if (isScalar(key) || (Array.isArray(key) && key.every(isScalar))) return JSON.stringify(key);
  return JSON.stringify(canonical(key, new Set()));
}

/** A key part that is its own canonical form (no object keys to sort, nothing to refuse). */
function isScalar(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

class MutableStore<V> implements Store<V> {
  /** Values by the contributing object. */
  readonly byObject = new Map<string, V>();

  get size(): number {
    return this.byObject.size;
  }

  values(): IterableIterator<V> {
    return this.byObject.values();
  }

  [Symbol.iterator](): IterableIterator<V> {
    return this.byObject.values();
  }
}

interface Slot<K, V> {
  readonly key: K;
  readonly store: MutableStore<V>;
}

/** The mutable side of an index, owned by the indexing engine. */
export class IndexTable<K = unknown, V = unknown> implements Index<K, V> {
  private readonly slots = new Map<string, Slot<K, V>>();
  /** Object → the encoded keys it contributes to (the reverse index). */
  private readonly reverse = new Map<string, Set<string>>();

  constructor(readonly name: string) {}

  get size(): number {
    return this.slots.size;
  }

  get(key: K): Store<V> | undefined {
    const encoded = tryEncode(key);
    return encoded === undefined ? undefined : this.slots.get(encoded)?.store;
  }

  has(key: K): boolean {
    const encoded = tryEncode(key);
    return encoded !== undefined && this.slots.has(encoded);
  }

  *keys(): IterableIterator<K> {
    for (const slot of this.slots.values()) yield slot.key;
  }

  *values(): IterableIterator<Store<V>> {
    for (const slot of this.slots.values()) yield slot.store;
  }

  *entries(): IterableIterator<[K, Store<V>]> {
    for (const slot of this.slots.values()) yield [slot.key, slot.store];
  }

  [Symbol.iterator](): IterableIterator<[K, Store<V>]> {
    return this.entries();
  }

  /** How many objects contribute to the index. */
  get objects(): number {
    return this.reverse.size;
  }

  /** Replaces everything an object contributes with `entries` (already encoded). */
  replace(object: string, entries: ReadonlyMap<string, { readonly key: K; readonly value: V }>): void {
    const previous = this.reverse.get(object);
    if (previous) {
      for (const encoded of previous) if (!entries.has(encoded)) this.drop(object, encoded);
    }
    for (const [encoded, { key, value }] of entries) {
      let slot = this.slots.get(encoded);
      if (!slot) {
        slot = { key, store: new MutableStore<V>() };
        this.slots.set(encoded, slot);
      }
      slot.store.byObject.set(object, value);
    }
    if (entries.size > 0) this.reverse.set(object, new Set(entries.keys()));
    else this.reverse.delete(object);
  }

  /** Removes everything an object contributes. */
  remove(object: string): void {
    const previous = this.reverse.get(object);
    if (!previous) return;
    for (const encoded of previous) this.drop(object, encoded);
    this.reverse.delete(object);
  }

  private drop(object: string, encoded: string): void {
    const slot = this.slots.get(encoded);
    if (!slot) return;
    slot.store.byObject.delete(object);
    if (slot.store.size === 0) this.slots.delete(encoded);
  }
}

function tryEncode(key: unknown): string | undefined {
  try {
    return encodeKey(key);
  } catch {
    return undefined;
  }
}

/**
 * Interprets an indexer's result (R-INDEX-3): a plain object or `Map` gives its entries; any other
 * non-null value goes under the key `null`; `null`/`undefined` means "keep the previous values".
 *
 * @throws IndexKeyError for keys that are not JSON-encodable.
 */
export function interpretResult(result: unknown): Map<string, { key: unknown; value: unknown }> | null {
  if (result === null || result === undefined) return null;
  const entries = new Map<string, { key: unknown; value: unknown }>();
  const put = (key: unknown, value: unknown): void => {
    entries.set(encodeKey(key), { key, value });
  };
  if (result instanceof Map) for (const [key, value] of result) put(key, value);
  else if (isPlainObject(result)) for (const [key, value] of Object.entries(result)) put(key, value);
  else put(null, result);
  return entries;
}

/** Indexing errors of one object (kept in its memory; absent while all is well). */
export class IndexingMemory {
  /** In-memory retry states of failed indexers (their sleeping delays, retries, start times). */
  state = progression.State.fromScratch();
  /** Indexers that failed for good for this object: never called again in this process. */
  readonly excluded = new Set<string>();
}

/** What indexing one object needs. */
export interface IndexingScope {
  readonly settings: settings.OperatorSettings;
  readonly clock: clocks.Clock;
  /** The object's terse logger (see `logging.objectLogger({ terse: true })`). */
  readonly logger: loggers.Logger;
  readonly signal?: AbortSignal;
  /** The kwargs of an indexer invocation. */
  readonly kwargs: (handler: handlers.IndexingHandler, retry: execution.RetryKwargs) => object;
  /** The object being indexed (the default owner of the hierarchy helpers), if known. */
  readonly body?: () => unknown;
  /** Where indexer invocations are reported (the operator's metrics), if anywhere. */
  readonly instruments?: instruments.HandlerInstruments;
}

interface Indexer extends execution.Invocable {
  readonly handler: handlers.IndexingHandler;
}

/**
 * The indices of one operator (Kopf: `OperatorIndexers`), pre-created empty for every indexer
 * name at start (R-INDEX-1).
 */
export class OperatorIndexers {
  private readonly tables = new Map<string, IndexTable>();
  private readonly indexers = new WeakMap<handlers.IndexingHandler, Indexer>();
  /** The indices by name, as injected into handlers' arguments (R-INDEX-8). */
  readonly byName: Readonly<Record<string, Index<unknown, unknown>>>;

  constructor(names: Iterable<string>) {
    const byName: Record<string, Index<unknown, unknown>> = {};
    for (const name of names) {
      const table = new IndexTable(name);
      this.tables.set(name, table);
      byName[name] = table;
    }
    this.byName = Object.freeze(byName);
  }

  /** How many object entries all indices hold together (an object in two indices counts twice). */
  get objects(): number {
    let count = 0;
    for (const table of this.tables.values()) count += table.objects;
    return count;
  }

  /** The index of a name, if registered. */
  table(name: string): IndexTable | undefined {
    return this.tables.get(name);
  }

  /** Removes an object from every index (R-INDEX-4: deleted). */
  forget(object: string): void {
    for (const table of this.tables.values()) table.remove(object);
  }

  private indexerOf(handler: handlers.IndexingHandler): Indexer {
    let indexer = this.indexers.get(handler);
    if (!indexer) {
      // The result is interpreted inside the invocation, so that a bad key is the indexer's error.
      indexer = {
        handler,
        id: handler.id,
        param: handler.param,
        errors: handler.errors,
        timeout: handler.timeout,
        retries: handler.retries,
        backoff: handler.backoff,
        fn: async (kwargs: Record<string, unknown>) => interpretResult(await (handler.fn as (args: object) => unknown)(kwargs)),
      };
      this.indexers.set(handler, indexer);
    }
    return indexer;
  }

  /**
   * Indexes one object for one event (R-INDEX-3..5): each of the resource's indexers that matches
   * the object runs once (unless sleeping after a temporary error, or excluded after a permanent
   * one); the others, or all on deletion, lose the object's values.
   *
   * @returns the object's new indexing memory (undefined while there are no errors to remember).
   */
  async indexObject(options: {
    readonly object: string;
    /** All indexers of the resource. */
    readonly all: readonly handlers.IndexingHandler[];
    /** The indexers whose filters match the object now (ignored when deleted). */
    readonly matching: readonly handlers.IndexingHandler[];
    /** The object is gone or being deleted for good (a `DELETED` event). */
    readonly deleted: boolean;
    readonly memory: IndexingMemory | undefined;
    readonly scope: IndexingScope;
  }): Promise<IndexingMemory | undefined> {
    const { object, all, matching, deleted, scope } = options;
    let memory = options.memory;
    const active = deleted ? [] : matching.filter((handler) => !memory?.excluded.has(handler.id));
    const activeIds = new Set(active.map((handler) => handler.id));
    for (const handler of all) if (!activeIds.has(handler.id)) this.tables.get(handler.id)?.remove(object);
    if (deleted || active.length === 0) return memory;

    const now = scope.clock.now();
    const state = (memory?.state ?? progression.State.fromScratch()).withHandlers(
      active.map((handler) => handler.id),
      now,
    );
    const results = await execution.executeHandlersOnce({
      handlers: active.map((handler) => this.indexerOf(handler)),
      state,
      scope: {
        settings: scope.settings,
        clock: scope.clock,
        signal: scope.signal,
        logger: logging.titledLogger(scope.logger, 'Indexer'),
        lifecycle: lifecycles.allAtOnce,
        defaultErrors: errors.ErrorsMode.IGNORED,
        kwargs: (indexer, retry) => scope.kwargs((indexer as Indexer).handler, retry),
        ...(scope.body ? { body: scope.body } : {}),
        instruments: scope.instruments,
      },
    });
    const after = state.withOutcomes(results, scope.clock.now());
    for (const [id, outcome] of results) {
      const table = this.tables.get(id);
      if (!outcome.final) {
        table?.remove(object); // temporary: skipped until the delay is over
        continue;
      }
      if (outcome.error !== undefined) {
        table?.remove(object); // permanent: excluded until the operator restarts
        (memory ??= new IndexingMemory()).excluded.add(id);
      } else if (outcome.result instanceof Map) {
        table?.replace(object, outcome.result as Map<string, { key: unknown; value: unknown }>);
      }
    }
    // Successes and final failures start from scratch next time; unfinished ones keep their state.
    const keep = after.entries().filter(([id]) => activeIds.has(id) && !(results.get(id)?.final ?? false));
    if (keep.length > 0) (memory ??= new IndexingMemory()).state = progression.State.of(keep);
    else if (memory) memory.state = progression.State.fromScratch();
    return memory;
  }
}

/**
 * The readiness barrier of R-INDEX-7: off while, for some watcher of an indexed resource, the
 * initial listing is not complete or not every object of it has been indexed. Once open after the
 * first watchers, it stays open for the operator's lifetime (later watchers and objects block
 * nothing). Watchers register themselves before their first request, so no handler of another
 * resource slips through before the indexed resources are listed.
 */
export class IndexingBarrier {
  private readonly set = new toggles.ToggleSet('all');
  private readonly objects = new Map<string, toggles.Toggle>();
  private latched = false;

  constructor() {
    this.set.subscribe(() => this.check());
  }

  /** How many listed objects are still tracked (not yet indexed, or their release not yet seen). */
  get tracked(): number {
    return this.objects.size;
  }

  private check(): void {
    if (this.latched || this.set.size === 0 || !this.set.isOn()) return;
    this.latched = true;
    this.objects.clear();
  }

  /** Whether all handlers may run. */
  get ready(): boolean {
    return this.latched || this.set.isOn();
  }

  /**
   * A watcher of an indexed resource starts: its listing blocks the barrier until `listed()`.
   * Returns `null` once the barrier has opened for good (nothing to block).
   */
  watcherStarted(name: string): toggles.Toggle | null {
    return this.latched ? null : this.set.makeToggle(false, name);
  }

  /** The watcher's initial listing is over (all its objects are tracked by now). */
  listed(toggle: toggles.Toggle | null): void {
    toggle?.turnOn();
  }

  /** A watcher has stopped: its listing no longer blocks the barrier (whether it completed or not). */
  forget(toggle: toggles.Toggle | null): void {
    if (toggle !== null) this.set.drop(toggle);
  }

  /** An object of an initial listing: the barrier waits for it to be indexed. */
  track(object: string): void {
    if (this.latched || this.objects.has(object)) return;
    this.objects.set(object, this.set.makeToggle(false, object));
  }

  /** The object has been indexed (or will never be): it no longer blocks. */
  release(object: string): void {
    const toggle = this.objects.get(object);
    if (!toggle) return;
    this.objects.delete(object);
    this.set.drop(toggle);
  }

  /** Waits until the barrier is open. */
  async wait(signal?: AbortSignal): Promise<void> {
    if (this.ready) return;
    await new Promise<void>((resolve, reject) => {
      const done = (): void => {
        unsubscribe();
        signal?.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = (): void => {
        unsubscribe();
        reject(signal!.reason);
      };
      const unsubscribe = this.set.subscribe(() => {
        if (this.ready) done();
      });
      if (signal?.aborted) {
        aborted();
        return;
      }
      signal?.addEventListener('abort', aborted, { once: true });
      if (this.ready) done();
    });
  }
}
