/**
 * Plain JSON values: the types every patch algorithm works on, and the three primitive operations
 * they all need (narrowing, deep copy, deep equality).
 *
 * The patch modules (`merge`, `jsonpatch`, `strategic`) are pure: they never mutate what the caller
 * passes in and never return structure shared with it. They achieve that by copying with
 * `cloneJson` and building results from fresh containers. Keys are always written with
 * `setMember`, so a key spelled `__proto__` that arrived in a parsed request body stays an ordinary
 * data property instead of replacing an object's prototype.
 */

/** A JSON scalar. */
export type JsonPrimitive = string | number | boolean | null;

/** Any JSON value. */
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;

/** A JSON object (a map from member names to values). */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** True when `v` is a JSON object: a non-null, non-array object. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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
  if (isJsonObject(v)) {
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

/**
 * Deep equality with JSON semantics: objects compare by members regardless of their order, arrays
 * compare item by item, scalars compare strictly (so the string `"5"` differs from the number `5`).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => hasMember(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}
