/**
 * Plain JSON values as the devcluster handles them: the one family of JSON types, narrowing to an
 * object, the one deep copy and the one structural equality that every part of the API server uses.
 *
 * Request bodies, stored objects, patches and CRD schemas are all decoded JSON. Before this module
 * each area had its own types and its own equality, and they disagreed on a member whose value is
 * `undefined` (one ignored it, three counted it as a member). JSON has no `undefined`: serialising
 * drops such a member. So here a member whose value is `undefined` is the same as an absent one,
 * everywhere — an object built in code with `{ a: undefined }` equals `{}`, as it would after a
 * round trip through the wire. Nothing else is loosened: `null` is a value of its own (it differs
 * from an absent member, as merge patches and validation require), scalars compare strictly (the
 * string `"5"` differs from the number `5`), arrays compare item by item in order, and the order of
 * an object's members does not matter.
 *
 * An object's members are its own enumerable string keys, whatever they are spelled: a member
 * named `__proto__` (a Go server stores it like any other key) is read only as an own property and
 * written with `setMember`, as `JSON.parse` makes it, so it never replaces an object's prototype.
 * `deepCopy` gives what a round trip through JSON would: fresh plain objects and arrays sharing
 * nothing with the input, members in the same order, values JSON cannot carry dropped from objects
 * (`null` in arrays); a copy of a JSON value equals its original.
 */

/** A JSON scalar. */
export type JsonPrimitive = string | number | boolean | null;

/** Any JSON value. */
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;

/**
 * A decoded JSON object. Its members are `unknown` on purpose: they come from request bodies and
 * are narrowed where they are read, never trusted by their static type.
 */
export type JsonObject = { [key: string]: unknown };

/** True for a JSON object: not an array, not null. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Structural equality of two JSON values: members whose value is `undefined` count as absent,
 * member order does not matter, arrays compare in order, scalars strictly. Members of the two
 * top-level objects named in `except` are not compared (e.g. the fields a no-op check ignores).
 */
export function deepEqual(a: unknown, b: unknown, except?: readonly string[]): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (!isObject(a) || !isObject(b)) return false;
  let members = 0;
  for (const key of Object.keys(a)) {
    const value = a[key];
    if (value === undefined || except?.includes(key)) continue;
    members++;
    if (!Object.hasOwn(b, key) || !deepEqual(value, b[key])) return false;
  }
  for (const key of Object.keys(b)) if (b[key] !== undefined && !except?.includes(key)) members--;
  return members === 0;
}

/** Writes `obj[key] = value` as an own data property, as `JSON.parse` does: safe for the key `__proto__`. */
export function setMember(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/**
 * A deep copy of a JSON value that shares nothing with it, as a round trip through JSON would give:
 * objects and arrays are copied (members as own properties, in order), scalars returned as they are.
 * Values JSON cannot carry (`undefined`, functions, symbols) are dropped from objects and become
 * `null` in arrays.
 */
export function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => (isCarried(item) ? deepCopy(item) : null)) as T;
  if (isObject(value)) {
    const copy: JsonObject = {};
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (isCarried(item)) setMember(copy, key, deepCopy(item));
    }
    return copy as T;
  }
  return value;
}

function isCarried(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}
