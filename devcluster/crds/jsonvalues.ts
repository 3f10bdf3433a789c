/**
 * Small helpers for plain JSON values, shared by the CRD schema modules.
 *
 * Pruning, defaulting and validation all walk decoded request bodies (`unknown` trees of objects,
 * arrays and scalars). Beside the narrowing and the equality of `../json.ts` (enum, uniqueItems,
 * pruning stability of defaults) they need deep copies (the modules never mutate their inputs) and
 * the JSON type name of a value as upstream prints it in messages.
 */
import * as json from '../json.js';

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
  if (json.isObject(value)) {
    const copy: json.JsonObject = {};
    for (const [key, item] of Object.entries(value)) copy[key] = deepCopy(item);
    return copy as T;
  }
  return value;
}

/** Joins a dotted field path and a property name (`spec` + `size` → `spec.size`). */
export function childPath(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

/** Appends a list index to a field path (`spec.tags` + 0 → `spec.tags[0]`). */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
