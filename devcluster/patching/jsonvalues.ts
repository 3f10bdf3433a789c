/**
 * The primitive operations every patch algorithm needs on plain JSON values, beside the types,
 * narrowing, deep copy and equality of `../json.ts`: scalar narrowing and member access that is
 * safe for any key.
 *
 * The patch modules (`merge`, `jsonpatch`, `strategic`) are pure: they never mutate what the caller
 * passes in and never return structure shared with it. They achieve that by copying with
 * `json.deepCopy` and building results from fresh containers. Keys are always written with
 * `json.setMember`, so a key spelled `__proto__` that arrived in a parsed request body stays an
 * ordinary data property instead of replacing an object's prototype.
 */
import type { JsonObject, JsonPrimitive } from '../json.js';

/** True when `v` is a JSON scalar (string, number, boolean or null). */
export function isJsonPrimitive(v: unknown): v is JsonPrimitive {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** True when `obj` has its own member `key` (never consults the prototype chain). */
export function hasMember(obj: JsonObject, key: string): boolean {
  return Object.hasOwn(obj, key);
}
