/**
 * Secret-like fields: kept out of the diff-base and out of logs (R-SEC-18..21, beyond Kopf).
 *
 * The diff-base is a copy of an object's essence, and Kopf stores it in an annotation: for a
 * Secret that copies every value of `data` into `metadata.annotations`, where `kubectl describe`
 * prints it, and logging the body at DEBUG (or posting log lines as Kubernetes events) spreads
 * the values further. This module knows which fields of which kinds are secret-like
 * (`settings.persistence.secretFields`, by default a Secret's `data` and `stringData`) and
 * offers the two ways to keep their values out:
 *
 * - `digestSecrets` replaces each value of such a field in an essence by a marker
 *   `kopf-gen/secret:sha256:<hex>` (per key when the field is a map), so the diff still tells
 *   which key changed; applied to a stored diff-base too, it migrates one written with plain
 *   values (by Kopf, or before this) without reporting a change;
 * - `redactSecrets` gives a copy of a body, a patch or a value found at some path of the object
 *   with those values as `<redacted N bytes>` — for log lines and events. Annotations that embed
 *   a configuration (`kubectl.kubernetes.io/last-applied-configuration`, any
 *   `…/last-handled-configuration`) are redacted inside.
 */

import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

import * as dicts from '../structs/dicts.js';
import * as bounds from './bounds.js';

/**
 * Secret-like fields by kind: keys are `Kind` for the core group or `Kind.group` (as kubectl
 * writes a resource with its group), values the field paths whose values are secret.
 */
export type SecretFields = Readonly<Record<string, readonly (string | readonly string[])[]>>;

/** The default: a Secret's `data` and `stringData` (a fresh object for every settings object). */
export function defaultSecretFields(): Record<string, readonly (string | readonly string[])[]> {
  return { Secret: ['data', 'stringData'] };
}

const MARKER_PREFIX = 'kopf-gen/secret:sha256:';
const MARKER_PATTERN = /^kopf-gen\/secret:sha256:[0-9a-f]{64}$/;
const encoder = new TextEncoder();

/** Whether a value is a secret digest marker. */
export function isSecretDigest(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(MARKER_PREFIX) && MARKER_PATTERN.test(value);
}

/**
 * The marker of a secret value: `kopf-gen/secret:sha256:<hex>`, the SHA-256 of the value's JSON
 * with map keys sorted. No length: the length of a password is part of the secret.
 *
 * @example
 * secretDigestOf('cGFzc3dvcmQ=') // 'kopf-gen/secret:sha256:…'
 */
export function secretDigestOf(value: unknown): string {
  return `${MARKER_PREFIX}${bytesToHex(sha256(encoder.encode(bounds.canonicalJson(value))))}`;
}

/** The secret-like field paths of a body's kind (empty for most kinds). */
export function secretPathsOf(fields: SecretFields, body: unknown): readonly dicts.FieldPath[] {
  if (!dicts.isObject(body)) return [];
  const kind = body['kind'];
  const apiVersion = body['apiVersion'];
  if (typeof kind !== 'string' || typeof apiVersion !== 'string') return [];
  const slash = apiVersion.indexOf('/');
  const key = slash < 0 ? kind : `${kind}.${apiVersion.slice(0, slash)}`;
  const specs = Object.hasOwn(fields, key) ? fields[key] : undefined;
  if (specs === undefined) return [];
  return specs.map((spec) => dicts.parseField(spec)).filter((path) => path.length > 0);
}

/** What `digestSecrets` made of an essence. */
export interface DigestedEssence {
  readonly essence: dicts.JsonObject;
  /** Whether any plain value was digested (a stored diff-base with values needs rewriting). */
  readonly changed: boolean;
}

/**
 * The essence with every value of a secret-like field as a marker (per key when the field is a
 * map); markers stay as they are. A copy when anything changes; the essence itself is untouched.
 */
export function digestSecrets(essence: dicts.JsonObject, paths: readonly dicts.FieldPath[]): DigestedEssence {
  let copy: Record<string, unknown> | null = null;
  for (const path of paths) {
    const value = dicts.resolve(copy ?? essence, path);
    if (value === undefined || value === null) continue;
    if (dicts.isObject(value)) {
      const plain = Object.keys(value).filter((key) => value[key] !== undefined && value[key] !== null && !isSecretDigest(value[key]));
      if (plain.length === 0) continue;
      copy ??= dicts.deepCopy(essence) as Record<string, unknown>;
      const target = dicts.resolve(copy, path) as Record<string, unknown>;
      for (const key of plain) dicts.setOwn(target, key, secretDigestOf(target[key]));
    } else if (!isSecretDigest(value)) {
      copy ??= dicts.deepCopy(essence) as Record<string, unknown>;
      dicts.ensure(copy, path, secretDigestOf(value));
    }
  }
  return copy === null ? { essence, changed: false } : { essence: copy as dicts.JsonObject, changed: true };
}

/*
 * Redaction for logs and events.
 */

/** Annotations whose value is a whole configuration of the object, secret fields included. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const LAST_HANDLED = '/last-handled-configuration';
const ANNOTATIONS: dicts.FieldPath = ['metadata', 'annotations'];

/** Whether `prefix` is a prefix of (or equal to) `path`. */
function startsWith(path: dicts.FieldPath, prefix: dicts.FieldPath): boolean {
  if (prefix.length > path.length) return false;
  for (let i = 0; i < prefix.length; i++) if (path[i] !== prefix[i]) return false;
  return true;
}

/** The placeholder of one secret value: `<redacted N bytes>` (N of the value as text; JSON otherwise). */
export function placeholderOf(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return `<redacted ${bounds.byteLength(text)} bytes>`;
}

function isConfigAnnotation(path: dicts.FieldPath): boolean {
  return path.length === 3 && startsWith(path, ANNOTATIONS) && (path[2] === LAST_APPLIED || (path[2] ?? '').endsWith(LAST_HANDLED));
}

/**
 * A copy of `value`, found at path `at` of an object of a kind with these secret paths, with the
 * secret values as placeholders (see the module's doc). `value` itself when nothing is secret.
 */
export function redactSecrets(value: unknown, paths: readonly dicts.FieldPath[], at: dicts.FieldPath = []): unknown {
  if (paths.length === 0) return value;
  return redactTree(value, paths, at);
}

function redactTree(value: unknown, paths: readonly dicts.FieldPath[], at: dicts.FieldPath): unknown {
  for (const path of paths) {
    if (!startsWith(at, path)) continue;
    // At a secret field: a map's values each; below one, the value as a whole.
    if (at.length === path.length && dicts.isObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) dicts.setOwn(out, key, placeholderOf(item));
      return out;
    }
    return placeholderOf(value);
  }
  if (isConfigAnnotation(at)) return redactConfiguration(value, paths);
  if (!dicts.isObject(value)) return value;
  const through = (prefix: dicts.FieldPath): boolean => prefix.length > at.length && startsWith(prefix, at);
  const annotations = startsWith(ANNOTATIONS, at);
  if (!annotations && !paths.some(through)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) dicts.setOwn(out, key, redactTree(item, paths, [...at, key]));
  return out;
}

/** A configuration annotation (JSON of a body or essence) with its secret values redacted. */
function redactConfiguration(value: unknown, paths: readonly dicts.FieldPath[]): unknown {
  if (typeof value !== 'string') return placeholderOf(value);
  try {
    const parsed: unknown = JSON.parse(value);
    if (!dicts.isObject(parsed)) return placeholderOf(value);
    return `${JSON.stringify(redactTree(parsed, paths, []))}${value.endsWith('\n') ? '\n' : ''}`;
  } catch {
    return placeholderOf(value);
  }
}
