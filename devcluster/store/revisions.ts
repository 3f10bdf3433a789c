/**
 * The multi-version object store: one global revision counter, like etcd.
 *
 * Every persisted write of every resource goes through `write()`, which takes the next revision,
 * stamps it on the object, appends a change to the history and notifies subscribers (the watch hub)
 * synchronously. Keeping exactly one write path is what makes revisions, history and watch events
 * agree (Appendix A of the devcluster spec).
 *
 * The history keeps, per change, the previous state of the object, so the store can answer reads
 * "at revision R" (paginated snapshots, `resourceVersionMatch=Exact`) by undoing newer changes, and
 * watches from an old revision by replaying changes. Changes at or below the compaction point are
 * forgotten (D-GEN-4, D-WATCH-5, D-FAULT-7).
 */

export type JsonObject = { [key: string]: unknown };

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

export class Store {
  private current: number;
  private compactedAt: number;
  private readonly historyLimit: number;
  private readonly tables = new Map<string, Map<string, JsonObject>>();
  private history: Change[] = [];
  private readonly listeners = new Set<ChangeListener>();

  constructor(options: StoreOptions = {}) {
    const start = options.startRevision ?? 1;
    this.current = start - 1;
    this.compactedAt = start - 1;
    this.historyLimit = options.historyLimit ?? 10_000;
  }

  /** The revision of the last write (the RV of lists, D-META-2). */
  get revision(): number { return this.current; }

  /** The compaction point C: revisions ≤ C are forgotten. */
  get compaction(): number { return this.compactedAt; }

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
    return sortedEntries(table, prefix);
  }

  /** Number of objects in a storage (for controllers and benchmarks). */
  count(storage: string): number { return this.tables.get(storage)?.size ?? 0; }

  storages(): string[] { return [...this.tables.keys()]; }

  /**
   * The objects of a storage as of revision `rev`, sorted by key; undefined if `rev` is below the
   * compaction point (the caller answers 410).
   */
  listAt(storage: string, rev: number, prefix = ''): Entry[] | undefined {
    if (rev < this.compactedAt) return undefined;
    const table = new Map(this.tables.get(storage) ?? []);
    for (let i = this.history.length - 1; i >= 0; i--) {
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
    let lo = 0;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.history[mid]!.rev <= after) lo = mid + 1; else hi = mid;
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
    if (!table) { table = new Map(); this.tables.set(storage, table); }
    const prev = table.get(key);
    if (!next && !prev) throw new Error(`Cannot delete a missing object ${storage} ${key}`);
    const rev = ++this.current;
    let change: Change;
    if (next) {
      const stamped = stamp(next, rev);
      table.set(key, stamped);
      change = { rev, storage, key, type: prev ? 'MODIFIED' : 'ADDED', object: stamped, prev };
    } else {
      table.delete(key);
      change = { rev, storage, key, type: 'DELETED', object: stamp({ ...prev! }, rev), prev };
    }
    this.history.push(change);
    if (this.history.length > this.historyLimit) {
      const drop = this.history.length - this.historyLimit;
      this.compactedAt = this.history[drop - 1]!.rev;
      this.history = this.history.slice(drop);
    }
    for (const listener of this.listeners) listener(change);
    return change;
  }

  /** Removes every object of a storage without history (CRD storage is dropped, D-CRD-17). */
  dropStorage(storage: string): void {
    this.tables.delete(storage);
  }

  /** Moves the compaction point to `rev` (default: current), forgetting older history (D-FAULT-7). */
  compact(rev: number = this.current): void {
    const target = Math.min(rev, this.current);
    if (target <= this.compactedAt) return;
    this.compactedAt = target;
    this.history = this.history.filter((c) => c.rev > target);
  }
}

export interface Entry { readonly key: string; readonly object: JsonObject }

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
