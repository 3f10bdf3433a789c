/**
 * JSON values: the generator's one deep copy and one deep equality.
 *
 * CRD documents reach the generator as JSON data (loading.ts); a few stages need a copy of a part
 * of one (a sample object takes a field's `default`, and must not share it with the schema) or to
 * compare two values (an `enum` that must hold a default, list items that must be distinct).
 * Both follow JSON's data model, not JavaScript's objects:
 * - `copyJson` copies arrays and plain objects to any depth and returns scalars as they are; every
 *   own enumerable key is copied as an own data property — `__proto__` included, which an
 *   assignment would turn into a prototype change — in the same order;
 * - `sameJson` is true for equal scalars (`===`), arrays of equal items in the same order, and
 *   objects with the same keys and equal values, whatever the order of their keys (as JSON
 *   objects are unordered).
 * Where key order matters — emitting.types shares the declarations of versions whose schemas
 * serialize identically, because property order is the order of the emitted interfaces — the
 * serialized text is the key of a memo, not an equality of values.
 */
import * as schemas from './schemas.js';

/** A deep copy of JSON data (see the module's header). */
export function copyJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => copyJson(item)) as T;
  if (!schemas.isRecord(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(copy, key, { value: copyJson(value[key]), enumerable: true, writable: true, configurable: true });
  }
  return copy as T;
}

/** Whether two JSON values are equal (key order does not matter). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  if (schemas.isRecord(a) && schemas.isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
  }
  return false;
}
