/**
 * The multi-version object store: one global revision counter, like etcd.
 *
 * Every persisted write of every resource goes through `write()`, which takes the next revision,
 * stamps it on the object, appends a change to the history and notifies subscribers (the watch hub)
 * synchronously. Keeping exactly one write path is what makes revisions, history and watch events
 * agree (Appendix A of the devcluster reference).
 *
 * The history keeps, per change, the previous state of the object, so the store can answer reads
 * "at revision R" (paginated snapshots, `resourceVersionMatch=Exact`) by undoing newer changes, and
 * watches from an old revision by replaying changes. Changes at or below the compaction point are
 * forgotten (D-GEN-4, D-WATCH-5, D-FAULT-7).
 */

import type { JsonObject } from '../json.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One persisted write. Objects are never mutated after they were written. */
export interface Change {
  readonly rev: number;
  readonly storage: string;
  readonly key: string;
  readonly type: ChangeType;
  /** New state (ADDED/MODIFIED) or the last state stamped with the deletion's revision (DELETED). */
  readonly object: JsonObject;
  /** State before the change (undefined for ADDED). */
  readonly prev: JsonObject | undefined;
}

export interface StoreOptions {
  /** First revision to assign (D-GEN-8 `startRevision`). */
  startRevision?: number;
  /** Number of most recent revisions retained (D-GEN-8 `historyLimit`). */
  historyLimit?: number;
}

export type ChangeListener = (change: Change) => void;

/** Told when a whole storage is dropped without history (a CRD's instances, D-CRD-17). */
export type DropListener = (storage: string) => void;

/** One stored object, as a state folder keeps it (D-PERSIST-301). */
export interface StoredEntry {
  readonly storage: string;
  readonly key: string;
  readonly object: JsonObject;
}

export class Store {
  private current: number;
  private compactedAt: number;
  private readonly historyLimit: number;
  private readonly tables = new Map<string, Map<string, JsonObject>>();
  /** Key order per storage, built on the first sorted read and kept up to date cheaply. */
  private readonly orders = new Map<string, KeyOrder>();
  /** The retained history is `history[historyHead..]`; the head moves instead of copying the array per write. */
  private history: Change[] = [];
  private historyHead = 0;
  private readonly listeners = new Set<ChangeListener>();
  private readonly dropListeners = new Set<DropListener>();

  constructor(options: StoreOptions = {}) {
    const start = options.startRevision ?? 1;
    this.current = start - 1;
    this.compactedAt = start - 1;
    this.historyLimit = options.historyLimit ?? 10_000;
  }

  /** The revision of the last write (the RV of lists, D-META-2). */
  get revision(): number {
    return this.current;
  }

  /** The compaction point C: revisions ≤ C are forgotten. */
  get compaction(): number {
    return this.compactedAt;
  }

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  subscribeDrops(listener: DropListener): () => void {
    this.dropListeners.add(listener);
    return () => this.dropListeners.delete(listener);
  }

  /**
   * Loads objects kept from an earlier run into an empty store (D-PERSIST-301): they keep their
   * resourceVersions, the counter continues at `revision`, and the compaction point is `revision`,
   * so a watch from an older revision is answered 410 as after an etcd compaction. Listeners are
   * not told; `announce()` does that once they are all subscribed.
   */
  restore(entries: Iterable<StoredEntry>, revision: number): void {
    if (this.tables.size > 0 || this.history.length > this.historyHead) throw new Error('Store.restore needs an empty store');
    for (const e of entries) {
      let table = this.tables.get(e.storage);
      if (!table) {
        table = new Map();
        this.tables.set(e.storage, table);
      }
      table.set(e.key, e.object);
    }
    this.current = revision;
    this.compactedAt = revision;
  }

  /**
   * Tells the listeners about every stored object as if it had just been added, storages in the
   * given order first (an informer's initial list): controllers pick up restored state this way.
   */
  announce(first: readonly string[] = []): void {
    const order = [...first.filter((s) => this.tables.has(s)), ...[...this.tables.keys()].filter((s) => !first.includes(s))];
    for (const storage of order) {
      for (const [key, object] of this.tables.get(storage)!) {
        const rev = Number((object.metadata as JsonObject | undefined)?.resourceVersion ?? this.current);
        const change: Change = { rev, storage, key, type: 'ADDED', object, prev: undefined };
        for (const listener of this.listeners) listener(change);
      }
    }
  }

  /** Every stored object, storage by storage (references: stored objects are never mutated). */
  dump(): StoredEntry[] {
    const out: StoredEntry[] = [];
    for (const [storage, table] of this.tables) for (const [key, object] of table) out.push({ storage, key, object });
    return out;
  }

  get(storage: string, key: string): JsonObject | undefined {
    return this.tables.get(storage)?.get(key);
  }

  /** All objects of a storage whose key starts with `prefix`, sorted by key (D-VERB-5). */
  list(storage: string, prefix = ''): JsonObject[] {
    return this.entries(storage, prefix).map((e) => e.object);
  }

  /** Like `list`, with the storage keys. */
  entries(storage: string, prefix = ''): Entry[] {
    const table = this.tables.get(storage);
    if (!table) return [];
    const keys = this.sortedKeys(storage, table);
    const out: Entry[] = [];
    for (let i = prefix ? lowerBound(keys, prefix) : 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (prefix && !key.startsWith(prefix)) break;
      out.push({ key, object: table.get(key)! });
    }
    return out;
  }

  /**
   * The keys of a storage in byte order. Sorting happens once; later reads merge in the keys
   * created since (sorted among themselves) and drop the deleted ones, which keeps repeated lists
   * of a large storage linear.
   */
  private sortedKeys(storage: string, table: Map<string, JsonObject>): string[] {
    let order = this.orders.get(storage);
    if (!order) {
      order = { sorted: [...table.keys()].sort(compareKeys), added: [], removed: false };
      this.orders.set(storage, order);
      return order.sorted;
    }
    if (!order.added.length && !order.removed) return order.sorted;
    const base = order.removed ? order.sorted.filter((k) => table.has(k)) : order.sorted;
    const extra = order.added.filter((k) => table.has(k)).sort(compareKeys);
    order.sorted = mergeSorted(base, extra);
    order.added = [];
    order.removed = false;
    return order.sorted;
  }

  /** Number of objects in a storage (for controllers and benchmarks). */
  count(storage: string): number {
    return this.tables.get(storage)?.size ?? 0;
  }

  storages(): string[] {
    return [...this.tables.keys()];
  }

  /**
   * The objects of a storage as of revision `rev`, sorted by key; undefined if `rev` is below the
   * compaction point (the caller answers 410).
   */
  listAt(storage: string, rev: number, prefix = ''): Entry[] | undefined {
    if (rev < this.compactedAt) return undefined;
    const table = new Map(this.tables.get(storage) ?? []);
    for (let i = this.history.length - 1; i >= this.historyHead; i--) {
      const change = this.history[i]!;
      if (change.rev <= rev) break;
      if (change.storage !== storage) continue;
      if (change.prev === undefined) table.delete(change.key);
      else table.set(change.key, change.prev);
    }
    return sortedEntries(table, prefix);
  }

  /** Changes of one storage with revision > `after`, in order; undefined if `after` < C (410). */
  changesSince(storage: string | undefined, after: number): Change[] | undefined {
    if (after < this.compactedAt) return undefined;
    const out: Change[] = [];
    // History is sorted by rev: binary-search the first change after `after`.
    let lo = this.historyHead;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.history[mid]!.rev <= after) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.history.length; i++) {
      const change = this.history[i]!;
      if (storage === undefined || change.storage === storage) out.push(change);
    }
    return out;
  }

  /**
   * Persists a new state of an object (or its removal with `next === undefined`), assigning the next
   * revision. `next` must be a fresh object owned by the store from now on; its
   * `metadata.resourceVersion` is overwritten.
   */
  write(storage: string, key: string, next: JsonObject | undefined): Change {
    let table = this.tables.get(storage);
    if (!table) {
      table = new Map();
      this.tables.set(storage, table);
    }
    const prev = table.get(key);
    if (!next && !prev) throw new Error(`Cannot delete a missing object ${storage} ${key}`);
    const rev = ++this.current;
    const order = this.orders.get(storage);
    let change: Change;
    if (next) {
      const stamped = stamp(next, rev);
      table.set(key, stamped);
      if (!prev && order) {
        order.added.push(key);
        // A storage that is written much more than listed: forget the order rather than grow.
        if (order.added.length > 1024 && order.added.length > table.size) this.orders.delete(storage);
      }
      change = { rev, storage, key, type: prev ? 'MODIFIED' : 'ADDED', object: stamped, prev };
    } else {
      table.delete(key);
      if (order) order.removed = true;
      change = { rev, storage, key, type: 'DELETED', object: stamp({ ...prev! }, rev), prev };
    }
    this.history.push(change);
    if (this.history.length - this.historyHead > this.historyLimit) {
      const drop = this.history.length - this.historyHead - this.historyLimit;
      this.compactedAt = this.history[this.historyHead + drop - 1]!.rev;
      this.historyHead += drop;
      // Copy the retained part only once the dropped prefix is as long as it (amortised O(1)).
      if (this.historyHead >= 1024 && this.historyHead * 2 >= this.history.length) {
        this.history = this.history.slice(this.historyHead);
        this.historyHead = 0;
      }
    }
    for (const listener of this.listeners) listener(change);
    return change;
  }

  /** Removes every object of a storage without history (CRD storage is dropped, D-CRD-17). */
  dropStorage(storage: string): void {
    this.tables.delete(storage);
    this.orders.delete(storage);
    for (const listener of this.dropListeners) listener(storage);
  }

  /** Moves the compaction point to `rev` (default: current), forgetting older history (D-FAULT-7). */
  compact(rev: number = this.current): void {
    const target = Math.min(rev, this.current);
    if (target <= this.compactedAt) return;
    this.compactedAt = target;
    this.history = this.history.slice(this.historyHead).filter((c) => c.rev > target);
    this.historyHead = 0;
  }
}

export interface Entry {
  readonly key: string;
  readonly object: JsonObject;
}

interface KeyOrder {
  /** Keys in byte order as of the last sorted read (may hold keys deleted since, see `removed`). */
  sorted: string[];
  /** Keys created since the last sorted read (may repeat or be deleted again). */
  added: string[];
  /** Whether any key was deleted since the last sorted read. */
  removed: boolean;
}

/** The first index whose key is ≥ `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Merges two sorted key lists, dropping duplicates. */
function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  if (!b.length) return a.slice();
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
    if (out.length === 0 || out[out.length - 1] !== next) out.push(next);
  }
  return out;
}

function sortedEntries(table: Map<string, JsonObject>, prefix: string): Entry[] {
  const out: Entry[] = [];
  for (const [key, object] of table) if (key.startsWith(prefix)) out.push({ key, object });
  return out.sort((a, b) => compareKeys(a.key, b.key));
}

function stamp(obj: JsonObject, rev: number): JsonObject {
  const metadata = { ...(obj.metadata as JsonObject | undefined), resourceVersion: String(rev) };
  return { ...obj, metadata };
}

/** Byte order of keys (D-VERB-5): plain code-unit comparison. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The key of an object inside its storage: `ns␀name` (NUL separator, so keys sort by namespace then name, D-VERB-5) for namespaced objects, `name` otherwise. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}\u0000${name}` : name;
}
