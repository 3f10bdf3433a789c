/**
 * Helpers on plain JSON objects: field paths, safe resolution, deep equality, copies and frozen views.
 *
 * Bodies, essences, diff-bases and patches are all plain JSON trees. Every other struct module
 * (`diffs`, `patches`) and the storages in `configs/` walk them by *field paths* — a dotted string
 * (`'spec.items'`) or an array of keys — so the parsing and walking rules live here once.
 * This is the TypeScript counterpart of Kopf's `dicts` module.
 *
 * Resolution is forgiving on purpose: a field under a non-object value (a corrupted status, a field
 * handler on `spec.a.b` when `spec.a` is a string) resolves to "absent", never to an error, so one
 * broken object cannot stop the operator.
 *
 * This module holds the runtime's one deep copy (`deepCopy`) and one deep equality (`deepEqual`),
 * both with JSON's semantics (R-ESSENCE-6): a value is what `JSON.stringify` would write. Maps are
 * their own enumerable string keys — any key, `__proto__` included, is a key like others (as
 * `JSON.parse` makes it), read only if own and written as an own property, so no body can change
 * a prototype or reach `Object.prototype`; a key whose value is `undefined` is absent; key order
 * is kept by copies and ignored by comparisons; arrays are compared element by element, in order.
 * Copies are plain objects and arrays, whatever the input's prototypes.
 */

/** A JSON scalar. */
export type JsonPrimitive = string | number | boolean | null;
/** Any JSON value. */
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
/** A JSON object (a map). */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** A parsed field path: the keys from the root down. `[]` is the root itself. */
export type FieldPath = readonly string[];
/** A field as users write it: `'spec.items'`, `['spec', 'items']`, or null/undefined for the root. */
export type FieldSpec = string | readonly string[] | null | undefined;

/** A deeply read-only view of a type (what handlers receive as `body`, `spec`, …). */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer E)[]
    ? readonly DeepReadonly<E>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** Whether a value is a plain JSON-like object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ROOT: FieldPath = Object.freeze([]);
const parsedFields = new Map<string, FieldPath>();
/** Field specs are few (handlers' fields, storage keys); the bound only guards against an unbounded stream. */
const PARSED_FIELDS_LIMIT = 1000;

/**
 * Parses a field spec into a path.
 *
 * @example
 * parseField('spec.items')        // ['spec', 'items']
 * parseField(['metadata', 'a.b']) // ['metadata', 'a.b'] (dots inside keys survive in array form)
 * parseField(undefined)           // []
 */
export function parseField(field: FieldSpec): FieldPath {
  if (field === null || field === undefined || field === '') return ROOT;
  if (typeof field === 'string') {
    // The same few fields are parsed for every event of every object: parse each once.
    let path = parsedFields.get(field);
    if (path === undefined) {
      path = Object.freeze(field.split('.'));
      if (parsedFields.size >= PARSED_FIELDS_LIMIT) parsedFields.clear();
      parsedFields.set(field, path);
    }
    return path;
  }
  if (Array.isArray(field)) return Object.isFrozen(field) ? (field as FieldPath) : Object.freeze([...field]);
  throw new TypeError(`A field must be a string or an array of strings, got ${String(field)}.`);
}

/**
 * Resolves a nested field of a JSON tree; returns `fallback` (default `undefined`) when any key is
 * absent or any intermediate value is not an object.
 *
 * @example
 * resolve({ spec: { a: 1 } }, ['spec', 'a'])        // 1
 * resolve({ spec: 'x' }, ['spec', 'a'], 'default') // 'default'
 */
export function resolve(obj: unknown, path: FieldSpec, fallback?: unknown): unknown {
  let current: unknown = obj;
  for (const key of Array.isArray(path) ? (path as readonly string[]) : parseField(path)) {
    if (!isObject(current) || !Object.hasOwn(current, key)) return fallback;
    current = current[key];
  }
  return current === undefined ? fallback : current;
}

/** Whether a nested field exists (its value may be `null`). Intermediate non-objects mean "absent". */
export function has(obj: unknown, path: FieldSpec): boolean {
  let current: unknown = obj;
  for (const key of Array.isArray(path) ? (path as readonly string[]) : parseField(path)) {
    if (!isObject(current) || !Object.hasOwn(current, key)) return false;
    current = current[key];
  }
  return current !== undefined;
}

/**
 * Sets a key of a map as `JSON.parse` would: an own, enumerable, writable data property, also for
 * `__proto__` (which plain assignment would take as the object's prototype). **Mutates `obj`.**
 */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** The value of a map's own key; `undefined` if it has none (inherited properties are not keys). */
export function getOwn(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * Sets a nested field, creating missing (or non-object) parents as empty objects.
 * **Mutates `obj`** — it is meant for patches and fresh copies the caller owns.
 */
export function ensure(obj: Record<string, unknown>, path: FieldSpec, value: unknown): void {
  const keys = parseField(path);
  if (keys.length === 0) throw new TypeError('Setting the root of an object is impossible; name a field.');
  let current: Record<string, unknown> = obj;
  for (const key of keys.slice(0, -1)) {
    const next = getOwn(current, key);
    if (isObject(next)) {
      current = next;
    } else {
      const created: Record<string, unknown> = {};
      setOwn(current, key, created);
      current = created;
    }
  }
  setOwn(current, keys[keys.length - 1]!, value);
}

/**
 * Removes a nested field and every parent that became empty because of it (but never the root).
 * Absent fields are fine: the goal of removal is already achieved. **Mutates `obj`.**
 */
export function remove(obj: Record<string, unknown>, path: FieldSpec): void {
  const keys = parseField(path);
  if (keys.length === 0) throw new TypeError('Removing the root of an object is impossible; name a field.');
  const [head, ...rest] = keys as [string, ...string[]];
  if (!Object.hasOwn(obj, head)) return;
  if (rest.length === 0) {
    delete obj[head];
    return;
  }
  const child = obj[head];
  if (!isObject(child)) return;
  remove(child, rest);
  if (Object.keys(child).length === 0) delete obj[head];
}

/**
 * Copies the listed fields from `src` to `dst` (deep copies), skipping fields absent in `src`.
 * **Mutates `dst`.**
 */
export function cherrypick(src: unknown, dst: Record<string, unknown>, fields: Iterable<FieldSpec> | undefined): void {
  for (const field of fields ?? []) {
    const path = parseField(field);
    if (path.length === 0 || !has(src, path)) continue;
    ensure(dst, path, deepCopy(resolve(src, path)));
  }
}

/**
 * Deep equality of JSON values (R-ESSENCE-6): `null` and `undefined` are equal (both mean
 * "absent"), and a key whose value is `undefined` is no key; maps compare by their own keys
 * (`__proto__` included), in any order, and not by prototype; arrays compare element by element in
 * order; scalars with `===`. Consistent with `deepCopy`: a copy is always equal to its original.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => deepEqual(item, b[index]));
  }
  if (isObject(a) && isObject(b)) {
    const aKeys = Object.keys(a).filter((key) => a[key] !== undefined);
    const bKeys = Object.keys(b).filter((key) => b[key] !== undefined);
    if (aKeys.length !== bKeys.length) return false;
    return aKeys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
  }
  return false;
}

/**
 * Deep-copies a JSON tree (R-ESSENCE-6): maps become plain objects with the same own keys in the
 * same order (`__proto__` as an own key, never as the prototype), arrays plain arrays, scalars stay
 * as they are. Keys whose value is `undefined` are dropped, as JSON would drop them.
 */
export function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => deepCopy(item)) as T;
  if (isObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) setOwn(copy, key, deepCopy(item));
    }
    return copy as T;
  }
  return value;
}

/**
 * Deep-freezes a copy of a JSON tree, giving a read-only view that cannot leak writes back into
 * the caller's value (the input itself is not frozen).
 */
export function frozenCopy<T>(value: T): DeepReadonly<T> {
  return deepFreeze(deepCopy(value));
}

/** Deep-freezes a value in place and returns it typed as read-only. **Freezes `value` itself.** */
export function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value as DeepReadonly<T>;
}
