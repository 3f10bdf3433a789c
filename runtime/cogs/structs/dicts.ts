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
 * Sets a nested field, creating missing (or non-object) parents as empty objects.
 * **Mutates `obj`** — it is meant for patches and fresh copies the caller owns.
 */
export function ensure(obj: Record<string, unknown>, path: FieldSpec, value: unknown): void {
  const keys = parseField(path);
  if (keys.length === 0) throw new TypeError('Setting the root of an object is impossible; name a field.');
  let current: Record<string, unknown> = obj;
  for (const key of keys.slice(0, -1)) {
    const next = current[key];
    if (isObject(next)) {
      current = next;
    } else {
      const created: Record<string, unknown> = {};
      current[key] = created;
      current = created;
    }
  }
  current[keys[keys.length - 1]!] = value;
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
 * Deep equality of JSON values. `null` and `undefined` are equal (both mean "absent"); object key
 * order does not matter; arrays compare element by element in order.
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
 * Deep-copies a JSON tree (objects and arrays; scalars as they are). Keys whose value is
 * `undefined` are dropped, as JSON would drop them. Key order is preserved.
 */
export function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => deepCopy(item)) as T;
  if (isObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) copy[key] = deepCopy(item);
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
