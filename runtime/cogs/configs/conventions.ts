/**
 * Naming conventions of the state the operator keeps on objects — compatibility-critical.
 *
 * The progress and diff-base storages (`progress`, `diffbase`) write annotations whose names must
 * be byte-identical to Kopf's, so either framework can take over the other's objects (R-STORAGE-6,
 * 7, 11, 12). This module holds those rules, shared by both storages (which must not import each
 * other):
 *
 * - key forming: the safe form, the BLAKE2b hash suffix, V1 and V2 keys, and which to use;
 * - the `-ofDRS` suffix for ReplicaSets of Deployments (their annotations are copied from the owner);
 * - Kopf ownership: which annotation prefixes belong to Kopf-based operators (excluded from essences)
 *   and the `<prefix>/kopf-managed` marker that makes a custom prefix recognisable;
 * - the JSON encoding of annotation values (compact, non-ASCII escaped as `\uXXXX`, R-STORAGE-15);
 * - cleaning essences of annotations and empty stanzas.
 */

import { blake2b } from '@noble/hashes/blake2.js';

import * as dicts from '../structs/dicts.js';
import type * as patches from '../structs/patches.js';
import { StorageConfigError } from './errors.js';

/** The maximum length of the name part of an annotation key. */
const NAME_LIMIT = 63;
/** Kubernetes' limit on a whole annotation key: a longer prefix can make keys invalid. */
export const MAX_PREFIX_LENGTH = 253 - NAME_LIMIT - 1;
/** The default prefix of Kopf's annotations. */
export const DEFAULT_PREFIX = 'kopf.zalando.org';
/** The ownership marker's name (R-STORAGE-11). */
export const MARKER_NAME = 'kopf-managed';
/** The ownership marker's value. */
const MARKER_VALUE = 'yes';
const KNOWN_PREFIXES: readonly string[] = [DEFAULT_PREFIX];
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Length in code points (as Python counts string lengths). */
function length(text: string): number {
  return [...text].length;
}

/** Python-style `text[0:end]` over code points (a negative `end` counts from the end). */
function head(text: string, end: number): string {
  return [...text].slice(0, end).join('');
}

/** The safe form `S(K)`: `/` → `.`, `<` and `>` → `_`. */
export function safeKey(key: string): string {
  return key.replace(/\//g, '.').replace(/[<>]/g, '_');
}

/**
 * The hash suffix `H(x)`: BLAKE2b with a 4-byte digest over UTF-8, Base64 with `-` and `.` as the
 * alternative characters, prefixed with `-`, trailing `=`, `-`, `.` stripped.
 *
 * @example
 * hashSuffix('x'.repeat(64)) // '-SItAqA'
 */
export function hashSuffix(text: string): string {
  const digest = blake2b(new TextEncoder().encode(text), { dkLen: 4 });
  const base64 = Buffer.from(digest).toString('base64').replace(/\+/g, '-').replace(/\//g, '.');
  return `-${base64}`.replace(/[=\-.]+$/, '');
}

function prefixed(prefix: string): string {
  return prefix ? `${prefix}/` : '';
}

/** The V2 key: the name alone is limited to 63 characters; the hash is over the original key. */
export function v2Key(prefix: string, key: string): string {
  const suffix = length(key) > NAME_LIMIT ? hashSuffix(key) : '';
  const limit = Math.max(0, NAME_LIMIT - length(suffix));
  return `${prefixed(prefix)}${head(safeKey(key), limit)}${suffix}`;
}

/** The V1 key: the whole key, prefix included, is limited to 63; the hash is over the safe form. */
export function v1Key(prefix: string, key: string): string {
  const safe = safeKey(key);
  const start = prefixed(prefix);
  const suffix = length(safe) <= NAME_LIMIT - length(start) ? '' : hashSuffix(safe);
  return `${start}${head(safe, NAME_LIMIT - length(start) - length(suffix))}${suffix}`;
}

/**
 * The annotation keys of a record key: the V2 key first, then the V1 key if enabled and different
 * (R-STORAGE-7: writes go to all, reads try them in order, purges null all).
 */
export function keysFor(prefix: string, key: string, options: { readonly v1: boolean }): readonly string[] {
  // Every cycle of every object asks for the keys of the same few handler ids: form each once.
  const id = `${options.v1 ? 1 : 2}\n${prefix}\n${key}`;
  let keys = formedKeys.get(id);
  if (keys === undefined) {
    const v2 = v2Key(prefix, key);
    const v1 = options.v1 ? v1Key(prefix, key) : v2;
    keys = Object.freeze(v1 === v2 ? [v2] : [v2, v1]);
    if (formedKeys.size >= FORMED_KEYS_LIMIT) formedKeys.clear();
    formedKeys.set(id, keys);
  }
  return keys;
}

const formedKeys = new Map<string, readonly string[]>();
/** Record keys are handler ids (and their sub-handlers'): few; the bound only guards against dynamic ids. */
const FORMED_KEYS_LIMIT = 10_000;

/**
 * The record key as marked for this body: `-ofDRS` is appended for ReplicaSets owned by a
 * Deployment (R-STORAGE-12), before any key forming.
 */
export function markKey(key: string, body: unknown): string {
  if (dicts.resolve(body, ['kind']) !== 'ReplicaSet') return key;
  const owners = dicts.resolve(body, ['metadata', 'ownerReferences'], []);
  const ownedByDeployment = Array.isArray(owners) && owners.some((owner) => dicts.resolve(owner, ['kind']) === 'Deployment');
  return ownedByDeployment ? `${key}-ofDRS` : key;
}

/** `keysFor()` of the marked key of a body. */
export function keysForBody(prefix: string, key: string, body: unknown, options: { readonly v1: boolean }): readonly string[] {
  return keysFor(prefix, markKey(key, body), options);
}

/**
 * Validates a storage prefix: empty prefixes are rejected; a prefix longer than 189 characters is
 * reported through `warn` (keys could exceed Kubernetes' 253-character limit).
 */
export function checkPrefix(prefix: string, warn?: (message: string) => void): void {
  if (!prefix) throw new StorageConfigError('Annotations storages must be prefixed.');
  if (prefix.length > MAX_PREFIX_LENGTH) warn?.('The annotations prefix is too long. It can cause errors when PATCHing.');
}

/**
 * The prefixes of annotation keys that belong to Kopf-based operators (R-STORAGE-11): any prefix
 * with a `<prefix>/kopf-managed` key, `kopf.zalando.org`, and any `*.kopf.zalando.org`.
 */
export function detectMarkedPrefixes(keys: Iterable<string>): ReadonlySet<string> {
  const prefixes = new Set<string>();
  for (const key of keys) {
    const slash = key.indexOf('/');
    if (slash < 0) continue;
    const prefix = key.slice(0, slash);
    const name = key.slice(slash + 1);
    if (name === MARKER_NAME || isKopfPrefix(prefix)) prefixes.add(prefix);
  }
  return prefixes;
}

/** Whether a prefix is Kopf's by name alone (`kopf.zalando.org` or a subdomain of it). */
export function isKopfPrefix(prefix: string): boolean {
  return KNOWN_PREFIXES.some((known) => prefix === known || prefix.endsWith(`.${known}`));
}

/**
 * The ownership marker a storage of this prefix must still write with its next record, as
 * `{ key: 'yes' }`, or `{}`: only when the prefix does not start with `kopf.` and neither the body
 * nor the patch has the marker yet (R-STORAGE-11).
 */
export function pendingMarker(prefix: string, patch: patches.PatchBase<object>, body: unknown): Readonly<Record<string, string>> {
  if (!prefix || prefix.startsWith('kopf.')) return {};
  const marker = `${prefix}/${MARKER_NAME}`;
  const path = ['metadata', 'annotations', marker];
  if (dicts.has(body, path) || patch.hasAt(path)) return {};
  return { [marker]: MARKER_VALUE };
}

/** Writes the ownership marker into the patch if it is still pending (`pendingMarker`, R-STORAGE-11). */
export function storeMarker(prefix: string, patch: patches.PatchBase<object>, body: unknown): void {
  for (const [key, value] of Object.entries(pendingMarker(prefix, patch, body))) patch.setAt(['metadata', 'annotations', key], value);
}

/**
 * Removes the annotations of Kopf-owned prefixes and `kubectl.kubernetes.io/last-applied-configuration`
 * from an essence's annotations. **Mutates the essence** (used on fresh copies while building it).
 */
export function removeForeignAnnotations(essence: Record<string, unknown>): void {
  const annotations = dicts.resolve(essence, ['metadata', 'annotations']);
  if (!dicts.isObject(annotations)) return;
  const owned = detectMarkedPrefixes(Object.keys(annotations));
  for (const key of Object.keys(annotations)) {
    const slash = key.indexOf('/');
    if ((slash >= 0 && owned.has(key.slice(0, slash))) || key === LAST_APPLIED) delete annotations[key];
  }
}

/** Removes the given annotation keys from an essence. **Mutates the essence.** */
export function removeAnnotations(essence: Record<string, unknown>, keys: Iterable<string>): void {
  const annotations = dicts.resolve(essence, ['metadata', 'annotations']);
  if (!dicts.isObject(annotations)) return;
  for (const key of keys) delete annotations[key];
}

/**
 * Removes empty `metadata.annotations`, `metadata.labels`, `metadata` and `status` maps.
 * **Mutates the essence.**
 */
export function removeEmptyStanzas(essence: Record<string, unknown>): void {
  const isEmpty = (value: unknown): boolean =>
    value === null ||
    value === undefined ||
    value === '' ||
    value === false ||
    value === 0 ||
    (Array.isArray(value) && value.length === 0) ||
    (dicts.isObject(value) && Object.keys(value).length === 0);
  const metadata = essence['metadata'];
  if (dicts.isObject(metadata)) {
    if ('annotations' in metadata && isEmpty(metadata['annotations'])) delete metadata['annotations'];
    if ('labels' in metadata && isEmpty(metadata['labels'])) delete metadata['labels'];
  }
  if ('metadata' in essence && isEmpty(essence['metadata'])) delete essence['metadata'];
  if ('status' in essence && isEmpty(essence['status'])) delete essence['status'];
}

/**
 * Serialises a value as Kopf does for annotations: compact JSON (no spaces after `,` and `:`) with
 * every non-ASCII character (and DEL) escaped as a lower-case `\uXXXX` (R-STORAGE-15).
 */
export function dumpJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
