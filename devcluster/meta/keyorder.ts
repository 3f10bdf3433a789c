/**
 * The order of an object's members as a real API server writes them (D-BI-24). The server encodes
 * built-in objects from Go structs — members in struct field order (`kind`, `apiVersion`,
 * `metadata` with `name`, `generateName`, `namespace`, …, then `spec`, `status`), map keys sorted —
 * and custom resources as unstructured maps, sorted at every level. Clients that compare serialised
 * objects (a "did the status change?" check on the JSON text) see a difference where the order
 * differs, so the devcluster stores every object in the server's order once, when it is written,
 * and everything read from the store (get, list, watch, admission reviews) inherits it.
 *
 * Struct orders come from `upstream/fieldorder.json`. Members a definition does not know follow its
 * known members, sorted. Free-form values (`RawExtension`, `FieldsV1`, JSON in CRD schemas) are kept
 * as written, as the server keeps their raw bytes. Ordering returns the very same object when it is
 * already in order, so re-ordering a stored object costs a walk and no copies.
 *
 * JavaScript objects always enumerate integer-like keys (`"7"`, `"10"`) first and in numeric order,
 * so a map with such keys cannot be given Go's byte order (a known difference).
 */
import * as fieldorder from '../upstream/fieldorder.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** What decides an object's order: built-in kinds by their definition, others sorted. */
export interface Ordering {
  readonly builtin: boolean;
  /** The OpenAPI definition of a built-in kind (`io.k8s.api.core.v1.ConfigMap`). */
  readonly definition?: string | undefined;
}

export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** The object in the order the server writes it (`obj` itself when already so). */
export function arrange(ordering: Ordering, obj: JsonObject): JsonObject {
  if (!ordering.builtin) return sortedObject(obj);
  const members = ordering.definition === undefined ? undefined : fieldorder.membersOf(ordering.definition);
  return members ? struct(obj, members) : obj;
}

/**
 * The object with a member added to its metadata where the order puts it (`metadata` being in
 * order already): one pass, no sorting — how a create makes room for the resourceVersion the store
 * stamps in place.
 */
export function withMetadataMember(ordering: Ordering, obj: JsonObject, key: string, value: unknown): JsonObject {
  const meta = json.isObject(obj['metadata']) ? obj['metadata'] : {};
  const members = ordering.builtin ? fieldorder.membersOf(OBJECT_META) : undefined;
  const rank = (k: string): number => members?.get(k)?.index ?? Number.MAX_SAFE_INTEGER;
  const follows = ordering.builtin ? (k: string) => rank(k) > rank(key) : (k: string) => compareKeys(k, key) > 0;
  const out: JsonObject = {};
  let placed = false;
  for (const k of Object.keys(meta)) {
    if (k === key) continue;
    if (!placed && follows(k)) {
      out[key] = value;
      placed = true;
    }
    put(out, k, meta[k]);
  }
  if (!placed) out[key] = value;
  return { ...obj, metadata: out };
}

/** Any JSON value with every object's keys sorted (`value` itself when already so). */
export function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return items(value, sortedDeep);
  return json.isObject(value) ? sortedObject(value) : value;
}

/** Go's order of map keys: bytes of their UTF-8 form (UTF-16 code units differ only around surrogates). */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    // A surrogate encodes a code point above U+FFFF, whose UTF-8 form sorts after every BMP character.
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Integer-like keys, which JavaScript enumerates first whatever the insertion order. */
function isIndexKey(k: string): boolean {
  const c = k.charCodeAt(0);
  return c >= 48 && c <= 57 && /^(?:0|[1-9]\d{0,9})$/.test(k) && Number(k) < 4294967295;
}

function sortedObject(v: JsonObject): JsonObject {
  return mapObject(v, 0, undefined, true);
}

/** A struct: known members by their index, unknown ones after them sorted. */
function struct(v: JsonObject, members: fieldorder.Members): JsonObject {
  const keys = Object.keys(v);
  let inOrder = true;
  let lastIndex = -1;
  let lastUnknown: string | undefined;
  let values: unknown[] | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const m = members.get(k);
    const child = v[k];
    let next = child;
    if (m) {
      if (m.index < lastIndex || lastUnknown !== undefined) inOrder = false;
      lastIndex = m.index;
      next = member(child, m.maps, m.definition);
    } else {
      if (lastUnknown !== undefined && compareKeys(k, lastUnknown) < 0) inOrder = false;
      lastUnknown = k;
    }
    if (next !== child) {
      values ??= keys.map((key) => v[key]);
      values[i] = next;
    }
  }
  if (inOrder && !values) return v;
  const rank = (k: string): number => members.get(k)?.index ?? Number.MAX_SAFE_INTEGER;
  const order = keys.map((_, i) => i).sort((a, b) => rank(keys[a]!) - rank(keys[b]!) || compareKeys(keys[a]!, keys[b]!));
  const out: JsonObject = {};
  for (const i of order) put(out, keys[i]!, values ? values[i] : v[keys[i]!]);
  return out;
}

/** A member's value: lists are transparent, `maps` levels of maps, then the struct `definition`. */
function member(value: unknown, maps: number, definition: string | undefined): unknown {
  if (Array.isArray(value)) return items(value, (item) => member(item, maps, definition));
  if (!json.isObject(value)) return value;
  if (maps > 0) return mapObject(value, maps - 1, definition, false);
  const members = definition === undefined ? undefined : fieldorder.membersOf(definition);
  return members ? struct(value, members) : value;
}

/** A map (or an unstructured object when `deep`): keys sorted, values ordered by what they are. */
function mapObject(v: JsonObject, maps: number, definition: string | undefined, deep: boolean): JsonObject {
  const keys = Object.keys(v);
  let inOrder = true;
  let last: string | undefined;
  let values: unknown[] | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (!isIndexKey(k)) {
      if (last !== undefined && compareKeys(k, last) < 0) inOrder = false;
      last = k;
    }
    const child = v[k];
    const next = deep ? sortedDeep(child) : member(child, maps, definition);
    if (next !== child) {
      values ??= keys.map((key) => v[key]);
      values[i] = next;
    }
  }
  if (inOrder && !values) return v;
  const order = keys.map((_, i) => i).sort((a, b) => compareKeys(keys[a]!, keys[b]!));
  const out: JsonObject = {};
  for (const i of order) put(out, keys[i]!, values ? values[i] : v[keys[i]!]);
  return out;
}

/** The list with each item mapped (the list itself when no item changed). */
function items(list: unknown[], fn: (item: unknown) => unknown): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const next = fn(list[i]);
    if (next !== list[i]) {
      out ??= list.slice();
      out[i] = next;
    }
  }
  return out ?? list;
}

/** Sets a member as an own data property (`__proto__` included, as JSON.parse makes it). */
function put(out: JsonObject, k: string, value: unknown): void {
  if (k === '__proto__') Object.defineProperty(out, k, { value, writable: true, enumerable: true, configurable: true });
  else out[k] = value;
}
