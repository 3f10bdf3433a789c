/**
 * Size bounds of the state the operator keeps on objects (R-STORAGE-16, R-STORAGE-17).
 *
 * The API server refuses a write that leaves an object with more than 256 KiB of annotations (the
 * byte lengths of all keys and values added up), and etcd refuses objects over 1.5 MiB. The
 * diff-base is a copy of the object's essence, annotations included: an object that carries a
 * large annotation of its own is pushed over the first limit by its own diff-base, every write
 * carrying it is refused, and a deletion waits for the finalizer's release forever. So before a
 * storage writes a record, it asks this module how much room the object has left for it — the
 * body with the cycle's pending patch applied, without the record's own keys — and falls back to a
 * bounded form when the record would not fit:
 *
 * - an essence has its largest values replaced, one by one, by digest markers
 *   (`kopf-gen/digest:<bytes>:sha256:<hex>`, the SHA-256 of the value's JSON with sorted keys)
 *   until it fits; the runtime aligns the new essence with the markers of the stored one before
 *   comparing them (`alignDigests`), so an unchanged large value compares equal and a changed one
 *   shows as a changed digest;
 * - a progress record has its message truncated (in the progress storages).
 *
 * Records that fit are written exactly as before, in Kopf's formats. What was bounded is noted on
 * the cycle's patch (`note`, `takeNotes`), for the runtime to log once per object.
 */

import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

import * as dicts from '../structs/dicts.js';
import type * as patches from '../structs/patches.js';

/** The API server's limit on all annotations of one object: key and value lengths in bytes, summed. */
export const ANNOTATIONS_LIMIT = 262_144;
/**
 * How large this runtime lets an object grow with its own records (the JSON of the whole object):
 * a quarter MiB under etcd's 1.5 MiB, for the stored encoding's overhead and the managed fields.
 */
export const OBJECT_LIMIT = 1_310_720;

/** The limits as named in notes and logs. */
export const LIMITS = {
  annotations: `the API server's limit of ${ANNOTATIONS_LIMIT} bytes for all annotations of an object`,
  object: `the runtime's bound of ${OBJECT_LIMIT} bytes for a whole object (etcd stores at most 1.5 MiB)`,
} as const;

/** Which limit a record would exceed. */
export type Limit = keyof typeof LIMITS;

const encoder = new TextEncoder();

/** The length of a text in UTF-8 bytes, as the API server counts it. */
export function byteLength(text: string): number {
  // ASCII (nearly every annotation) needs no encoding to be measured.
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return encoder.encode(text).length;
  return text.length;
}

const bodySizes = new WeakMap<object, number>();

/** The JSON size of a body (bodies are never mutated: measured once each). */
function bodySize(body: unknown): number {
  if (!dicts.isObject(body)) return 0;
  let size = bodySizes.get(body);
  if (size === undefined) {
    size = JSON.stringify(body).length;
    bodySizes.set(body, size);
  }
  return size;
}

/** An upper estimate of the object's JSON size once the patch is applied (the patch counts in full). */
function projectedSize(body: unknown, patch: patches.PatchBase<object>): number {
  return bodySize(body) + JSON.stringify(patch).length;
}

/** The annotations the object will have once the patch is applied, without the keys left out. */
function projectedAnnotationsSize(body: unknown, patch: patches.PatchBase<object>, without: ReadonlySet<string>): number {
  const current = dicts.resolve(body, ['metadata', 'annotations']);
  const pending = patch.getAt(['metadata', 'annotations']);
  const changes = dicts.isObject(pending) ? pending : {};
  let size = 0;
  if (dicts.isObject(current)) {
    for (const [key, value] of Object.entries(current)) {
      if (without.has(key) || Object.hasOwn(changes, key) || typeof value !== 'string') continue;
      size += byteLength(key) + byteLength(value);
    }
  }
  for (const [key, value] of Object.entries(changes)) {
    if (without.has(key) || typeof value !== 'string') continue;
    size += byteLength(key) + byteLength(value);
  }
  return size;
}

/**
 * The room for one value written to some annotation keys of an object: `exceeds(value)` names the
 * limit the object would exceed with the value at every key, or returns `null` if it fits.
 *
 * Every key counts with its own copy of the value: a record key longer than Kopf's V1 form allows
 * is written under two keys (V2 and V1, `conventions.keysFor`), and both are stored. `alongside`
 * are the annotations a storage writes next to the value, in this patch or a later one while the
 * value stays (its ownership marker, the touch-dummy that wakes a delayed handler): they count at
 * their given values, whatever the object has at those keys now, so that writing them later never
 * pushes the object over the limit the value was bounded by.
 */
export function annotationsRoom(
  body: unknown,
  patch: patches.PatchBase<object>,
  keys: readonly string[],
  alongside: Readonly<Record<string, string>> = {},
): (value: string) => Limit | null {
  const extra = Object.entries(alongside).filter(([key]) => !keys.includes(key));
  const others = projectedAnnotationsSize(body, patch, new Set([...keys, ...extra.map(([key]) => key)]));
  const extraBytes = extra.reduce((sum, [key, value]) => sum + byteLength(key) + byteLength(value), 0);
  let present = 0;
  for (const key of keys) {
    const value = dicts.resolve(body, ['metadata', 'annotations', key]);
    if (typeof value === 'string') present += key.length + JSON.stringify(value).length;
  }
  const used = projectedSize(body, patch) - present + extra.reduce((sum, [key, value]) => sum + key.length + JSON.stringify(value).length + 4, 0);
  const keyBytes = keys.reduce((sum, key) => sum + byteLength(key), 0);
  return (value) => {
    if (others + extraBytes + keyBytes + keys.length * byteLength(value) > ANNOTATIONS_LIMIT) return 'annotations';
    if (used + keys.reduce((sum, key) => sum + key.length + 4, 0) + keys.length * JSON.stringify(value).length > OBJECT_LIMIT) return 'object';
    return null;
  };
}

/** The room for a value written to one field of an object (e.g. in `status`); see `annotationsRoom`. */
export function fieldRoom(body: unknown, patch: patches.PatchBase<object>, path: dicts.FieldPath): (value: unknown) => Limit | null {
  const present = dicts.resolve(body, path);
  const used = projectedSize(body, patch) - (present === undefined ? 0 : JSON.stringify(present).length);
  const overhead = path.reduce((sum, key) => sum + key.length + 4, 0);
  return (value) => (used + overhead + (JSON.stringify(value)?.length ?? 0) > OBJECT_LIMIT ? 'object' : null);
}

/*
 * Digest markers in essences.
 */

const DIGEST_PREFIX = 'kopf-gen/digest:';
const DIGEST_PATTERN = /^kopf-gen\/digest:\d+:sha256:[0-9a-f]{64}$/;
/** The length of a marker of a value up to 10 MB: values not larger than that are never digested. */
const DIGEST_LENGTH = DIGEST_PREFIX.length + 8 + ':sha256:'.length + 64;

/** Whether a value is a digest marker. */
export function isDigest(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(DIGEST_PREFIX) && DIGEST_PATTERN.test(value);
}

/** JSON with the keys of every map sorted: the same value gives the same text whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (dicts.isObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The digest marker of a value: `kopf-gen/digest:<bytes>:sha256:<hex>`, where `<bytes>` is the
 * length of the value's canonical JSON (keys sorted) and `<hex>` its SHA-256.
 *
 * @example
 * digestOf('x'.repeat(1000)) // 'kopf-gen/digest:1002:sha256:…'
 */
export function digestOf(value: unknown): string {
  const json = canonicalJson(value);
  const bytes = encoder.encode(json);
  return `${DIGEST_PREFIX}${bytes.length}:sha256:${bytesToHex(sha256(bytes))}`;
}

/**
 * The path of the value to digest next: the largest value of the essence, or within it, a value
 * that holds at least half of it (so one large annotation is digested, not all annotations).
 * `null` if no value is larger than its marker would be.
 */
function largestValue(essence: Record<string, unknown>): string[] | null {
  const largestChild = (node: Record<string, unknown>): [string, number] | null => {
    let best: [string, number] | null = null;
    for (const [key, value] of Object.entries(node)) {
      if (value === undefined || isDigest(value)) continue;
      const size = JSON.stringify(value).length;
      if (best === null || size > best[1]) best = [key, size];
    }
    return best;
  };
  const top = largestChild(essence);
  if (top === null || top[1] <= DIGEST_LENGTH + 2) return null;
  const path = [top[0]];
  let node = essence[top[0]];
  let size = top[1];
  while (dicts.isObject(node)) {
    const child = largestChild(node);
    if (child === null || child[1] * 2 < size || child[1] <= DIGEST_LENGTH + 2) break;
    path.push(child[0]);
    node = node[child[0]];
    size = child[1];
  }
  return path;
}

/** What `boundEssence` made of an essence. */
export interface BoundedEssence {
  readonly essence: dicts.JsonObject;
  /** The dotted paths of the values replaced by digests, in the order they were replaced. */
  readonly digested: readonly string[];
}

/**
 * Replaces the largest values of an essence by their digests until `fits` accepts it; `null` if
 * it does not fit even with every value that a digest would shrink digested. The essence itself
 * is not modified.
 */
export function boundEssence(essence: dicts.JsonObject, fits: (essence: dicts.JsonObject) => boolean): BoundedEssence | null {
  const bounded = dicts.deepCopy(essence) as Record<string, unknown>;
  const digested: string[] = [];
  while (!fits(bounded as dicts.JsonObject)) {
    const path = largestValue(bounded);
    if (path === null) return null;
    dicts.ensure(bounded, path, digestOf(dicts.resolve(bounded, path)));
    digested.push(path.join('.'));
  }
  return { essence: bounded as dicts.JsonObject, digested };
}

/**
 * The essence with the values digested in the stored essence digested alike (R-STORAGE-16), so
 * that the two compare equal where the values did not change. A copy if anything is replaced.
 */
export function alignDigests(essence: dicts.JsonObject, stored: dicts.JsonObject | null): dicts.JsonObject {
  if (stored === null) return essence;
  const paths: string[][] = [];
  const walk = (node: Record<string, unknown>, path: string[]): void => {
    for (const [key, value] of Object.entries(node)) {
      if (isDigest(value)) paths.push([...path, key]);
      else if (dicts.isObject(value)) walk(value, [...path, key]);
    }
  };
  walk(stored, []);
  if (paths.length === 0) return essence;
  const aligned = dicts.deepCopy(essence) as Record<string, unknown>;
  for (const path of paths) {
    const value = dicts.resolve(aligned, path);
    if (value !== undefined && !isDigest(value)) dicts.ensure(aligned, path, digestOf(value));
  }
  return aligned as dicts.JsonObject;
}

/*
 * Notes of what was bounded, kept with the patch that carries the bounded records.
 */

const notes = new WeakMap<object, string[]>();

/** Notes that a record in this patch was bounded (or left out); the runtime logs the notes. */
export function note(patch: patches.PatchBase<object>, text: string): void {
  const list = notes.get(patch);
  if (list === undefined) notes.set(patch, [text]);
  else if (!list.includes(text)) list.push(text);
}

/** Patches into which a diff-base could not be stored at all (not even with digests). */
const unstored = new WeakSet<patches.PatchBase<object>>();

/** Marks that the diff-base of this patch's cycle could not be stored at all. */
export function markUnstored(patch: patches.PatchBase<object>): void {
  unstored.add(patch);
}

/**
 * Whether the diff-base of this patch's cycle could not be stored at all: the runtime then keeps
 * it in memory, so that the object's next events (its own writes' among them) do not look like
 * an unhandled creation again and again.
 */
export function isUnstored(patch: patches.PatchBase<object>): boolean {
  return unstored.has(patch);
}

/** The notes of a patch, forgotten once taken. */
export function takeNotes(patch: patches.PatchBase<object>): readonly string[] {
  const list = notes.get(patch) ?? [];
  notes.delete(patch);
  return list;
}
