/**
 * Small helpers for plain JSON values, shared by the CRD schema modules.
 *
 * Pruning, defaulting and validation all walk decoded request bodies (`unknown` trees of objects,
 * arrays and scalars). They need the same few primitives: narrowing to a JSON object, deep copies
 * (the modules never mutate their inputs), deep equality (enum, uniqueItems, pruning stability of
 * defaults) and the JSON type name of a value as upstream prints it in messages.
 */

/** A decoded JSON object. */
export type JsonObject = { [key: string]: unknown };

/** True for a JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON type name used in validation messages: `null`, `boolean`, `integer`, `number`, `string`, `array`, `object`. */
export function jsonTypeOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** A deep copy of a JSON value (objects and arrays are copied, scalars returned as is). */
export function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => deepCopy(item)) as T;
  if (isObject(value)) {
    const copy: JsonObject = {};
    for (const [key, item] of Object.entries(value)) copy[key] = deepCopy(item);
    return copy as T;
  }
  return value;
}

/** Structural equality of two JSON values (key order of objects does not matter). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
  }
  return false;
}

/** Joins a dotted field path and a property name (`spec` + `size` → `spec.size`). */
export function childPath(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

/** Appends a list index to a field path (`spec.tags` + 0 → `spec.tags[0]`). */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
