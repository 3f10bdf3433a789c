/**
 * The primitive operations every patch algorithm needs on plain JSON values, beside the types,
 * narrowing and equality of `../json.ts`: member access that is safe for any key, and deep copies.
 *
 * The patch modules (`merge`, `jsonpatch`, `strategic`) are pure: they never mutate what the caller
 * passes in and never return structure shared with it. They achieve that by copying with
 * `cloneJson` and building results from fresh containers. Keys are always written with
 * `setMember`, so a key spelled `__proto__` that arrived in a parsed request body stays an ordinary
 * data property instead of replacing an object's prototype.
 */
import type { JsonObject, JsonPrimitive, JsonValue } from '../json.js';
import * as json from '../json.js';

/** True when `v` is a JSON scalar (string, number, boolean or null). */
export function isJsonPrimitive(v: unknown): v is JsonPrimitive {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** True when `obj` has its own member `key` (never consults the prototype chain). */
export function hasMember(obj: JsonObject, key: string): boolean {
  return Object.hasOwn(obj, key);
}

/** Writes `obj[key] = value` as an own data property, safe for the key `__proto__`. */
export function setMember(obj: JsonObject, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/**
 * Returns a deep copy of `v` that shares nothing with it.
 *
 * Values that JSON cannot carry (`undefined`, functions, symbols) are dropped from objects, as
 * `JSON.stringify` would; in arrays they become `null`.
 */
export function cloneJson(v: unknown): JsonValue {
  if (Array.isArray(v)) return v.map((item) => (isCarried(item) ? cloneJson(item) : null));
  if (json.isObject(v)) {
    const copy: JsonObject = {};
    for (const key of Object.keys(v)) {
      const item = v[key];
      if (isCarried(item)) setMember(copy, key, cloneJson(item));
    }
    return copy;
  }
  return isJsonPrimitive(v) ? v : null;
}

function isCarried(v: unknown): boolean {
  return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
}
