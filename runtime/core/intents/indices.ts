/**
 * What handlers see of an in-memory index (R-INDEX-2): a read-only map from keys to stores of
 * values. Types only — the indexing engine (`engines/indexing.ts`) owns the mutable tables, and the
 * handler argument types (`callbacks.ts`) derive an index's key and value types from the indexer's
 * return type.
 */

/** The values contributed under one key of an index, by all objects (read-only, any order). */
export interface Store<V> extends Iterable<V> {
  /** How many values (one per contributing object). */
  readonly size: number;
  values(): IterableIterator<V>;
}

/**
 * An index: a read-only map from keys to stores (R-INDEX-2). A key exists only while at least one
 * object contributes to it. Composite keys (arrays, objects) are compared by value.
 *
 * @example
 * const owners = widgetsByOwner.get('alice');        // Store<string> | undefined
 * const names = [...(owners ?? [])];
 * podsByName.has(['default', 'web-0']);              // by value
 */
export interface Index<K, V> extends Iterable<[K, Store<V>]> {
  readonly size: number;
  get(key: K): Store<V> | undefined;
  has(key: K): boolean;
  keys(): IterableIterator<K>;
  values(): IterableIterator<Store<V>>;
  entries(): IterableIterator<[K, Store<V>]>;
}
