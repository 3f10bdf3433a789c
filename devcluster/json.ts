/**
 * Plain JSON values as the devcluster handles them: the one family of JSON types, narrowing to an
 * object, and the one structural equality that every part of the API server uses.
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
 * member order does not matter, arrays compare in order, scalars strictly.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
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
    if (value === undefined) continue;
    members++;
    if (!Object.hasOwn(b, key) || !deepEqual(value, b[key])) return false;
  }
  for (const key of Object.keys(b)) if (b[key] !== undefined) members--;
  return members === 0;
}
