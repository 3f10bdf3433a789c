/**
 * Small helpers over stored objects (plain JSON): metadata access, and the conversion between the
 * stored form and the form served by one resource type.
 */
import type { JsonObject } from '../json.js';
import * as keyorder from '../meta/keyorder.js';
import * as json from '../json.js';
import * as resources from './resources.js';

export function metaOf(obj: JsonObject): JsonObject {
  return json.isObject(obj['metadata']) ? obj['metadata'] : {};
}

/** A string member of `metadata`; values of another type (rejected by validation) read as empty. */
function metaString(obj: JsonObject, key: string): string {
  const v = metaOf(obj)[key];
  return typeof v === 'string' ? v : '';
}

export function nameOf(obj: JsonObject): string {
  return metaString(obj, 'name');
}
export function namespaceOf(obj: JsonObject): string | undefined {
  return metaString(obj, 'namespace') || undefined;
}
export function uidOf(obj: JsonObject): string {
  return metaString(obj, 'uid');
}
export function rvOf(obj: JsonObject): string {
  return metaString(obj, 'resourceVersion');
}
export function labelsOf(obj: JsonObject): Record<string, string> {
  const l = metaOf(obj)['labels'];
  return json.isObject(l) ? (l as Record<string, string>) : {};
}
export function finalizersOf(obj: JsonObject): string[] {
  const f = metaOf(obj)['finalizers'];
  return Array.isArray(f) ? (f as string[]) : [];
}

/** Returns a copy with `metadata` replaced by the result of `fn` on a copy of it. */
export function withMeta(obj: JsonObject, fn: (meta: JsonObject) => void): JsonObject {
  const meta = { ...metaOf(obj) };
  fn(meta);
  return { ...obj, metadata: meta };
}

/** Drops empty optional metadata members, as the API serialises them (D-WIRE-19). */
export function compactMeta(meta: JsonObject): void {
  for (const k of ['labels', 'annotations']) {
    if (json.isObject(meta[k]) && Object.keys(meta[k] as JsonObject).length === 0) delete meta[k];
  }
  for (const k of ['finalizers', 'ownerReferences', 'managedFields']) {
    if (Array.isArray(meta[k]) && (meta[k] as unknown[]).length === 0) delete meta[k];
  }
  for (const k of Object.keys(meta)) if (meta[k] === null || meta[k] === undefined || meta[k] === '') delete meta[k];
}

/**
 * The object as served by `type`: converted, with this version's apiVersion and kind. Stored objects
 * are kept in the order the server writes them (D-BI-24), `kind` and `apiVersion` included, so they
 * are replaced in place; a conversion's result is put in order again.
 */
export function toExternal(type: resources.ResourceType, stored: JsonObject): JsonObject {
  const converted = type.strategy.toExternal ? keyorder.arrange(type, type.strategy.toExternal(stored)) : stored;
  const out: JsonObject = {};
  copyExceptTypeMeta(out, converted, true);
  out['apiVersion'] = resources.apiVersionOf(type);
  out['kind'] = type.kind;
  // Objects stored before they had both members (none are written so) get them in their place.
  return Object.hasOwn(converted, 'apiVersion') && Object.hasOwn(converted, 'kind') ? out : keyorder.arrange(type, out);
}

/** The object as a list item: built-ins omit apiVersion/kind (D-WIRE-19). */
export function toListItem(type: resources.ResourceType, stored: JsonObject): JsonObject {
  if (!type.builtin) return toExternal(type, stored);
  const out: JsonObject = {};
  copyExceptTypeMeta(out, type.strategy.toExternal ? keyorder.arrange(type, type.strategy.toExternal(stored)) : stored, false);
  return out;
}

/**
 * Copies every member (as own data properties, like a spread; a loop, because rest destructuring
 * with excluded keys is slow and this runs per served object), `apiVersion` and `kind` only when
 * `typeMeta` is set.
 */
function copyExceptTypeMeta(out: JsonObject, from: JsonObject, typeMeta: boolean): void {
  for (const k of Object.keys(from)) {
    if (!typeMeta && (k === 'apiVersion' || k === 'kind')) continue;
    json.setMember(out, k, from[k]);
  }
}

let lastSecond = Number.NaN;
let lastFormatted = '';

/** Second-precision RFC 3339 UTC time, as in `creationTimestamp`. */
export function formatTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  // Writes within one second share the text (most requests format the current time).
  if (second !== lastSecond) {
    lastFormatted = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
    lastSecond = second;
  }
  return lastFormatted;
}

/** Reads a dotted path (`.spec.replicas` or `spec.replicas`) in an object. */
export function getPath(obj: unknown, path: string): unknown {
  const parts = path.replace(/^\./, '').split('.').filter(Boolean);
  let cur: unknown = obj;
  for (const p of parts) {
    if (!json.isObject(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

/** Returns a copy of `obj` with the value at a dotted path set (parents created). */
export function setPath(obj: JsonObject, path: string, value: unknown): JsonObject {
  const parts = path.replace(/^\./, '').split('.').filter(Boolean);
  const root = { ...obj };
  let cur: JsonObject = root;
  parts.forEach((p, i) => {
    if (i === parts.length - 1) {
      cur[p] = value;
      return;
    }
    const next = json.isObject(cur[p]) ? { ...(cur[p] as JsonObject) } : {};
    cur[p] = next;
    cur = next;
  });
  return root;
}
