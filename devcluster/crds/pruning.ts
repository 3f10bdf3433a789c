/**
 * Pruning of custom objects by a structural schema (D-CRD-7, D-CRD-8).
 *
 * Every CR body that enters the devcluster (create, update, patch) and every object read back from
 * storage passes through here before defaulting (`defaulting`) and validation (`validation`). The
 * walk follows upstream's algorithm: under `properties` only declared keys survive, under
 * `additionalProperties` every key survives with its value pruned by that schema, and below
 * `x-kubernetes-preserve-unknown-fields: true` undeclared keys survive while declared ones are still
 * pruned. `apiVersion`, `kind` and `metadata` are kept at the resource root and inside embedded
 * resources, and their `metadata` is reduced to the standard ObjectMeta fields. Finally map entries
 * that are `null` while their schema is neither nullable nor defaulted are dropped.
 *
 * The removed paths are returned as unknown fields, which the request pipeline turns into
 * warnings or a strict-decoding error (D-CRD-9).
 */

import * as jsonvalues from './jsonvalues.js';
import * as schemas from './schemas.js';
import * as json from '../json.js';

/** The keys that are kept at a resource root and inside embedded resources, whatever the schema says. */
const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** The standard ObjectMeta fields; anything else under a resource's `metadata` is unknown. */
export const OBJECT_META_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

export interface PruneOptions {
  /** Treat `obj` as a resource root (keep `apiVersion`, `kind`, `metadata`). Default `true`. */
  readonly root?: boolean;
}

export interface PruneResult {
  /** The pruned copy of the input. */
  readonly value: unknown;
  /** Paths of removed fields, dotted with `[i]` for list indices (`spec.bogus`, `spec.items[0].x`). */
  readonly unknownFields: string[];
}

/**
 * Prunes `obj` by `schema` without touching the input.
 *
 * @example
 * pruneObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1, bogus: 1 } }, widgetSchema)
 * // → { value: { apiVersion: …, kind: …, metadata: { name: 'w' }, spec: { size: 1 } }, unknownFields: ['spec.bogus'] }
 */
export function pruneObject(obj: unknown, schema: schemas.JSONSchemaProps | undefined, opts: PruneOptions = {}): PruneResult {
  const root = opts.root ?? true;
  const unknownFields: string[] = [];
  let effective = schema;
  if (root) effective = { ...(schema ?? {}), 'x-kubernetes-embedded-resource': true };
  const pruned = prune(json.deepCopy(obj), effective, '', unknownFields);
  return { value: dropNonNullableNulls(pruned, schema), unknownFields };
}

/** Prunes a copied value in place (the copy is private to `pruneObject`) and returns it. */
function prune(x: unknown, s: schemas.JSONSchemaProps | undefined, path: string, unknown: string[]): unknown {
  if (s?.['x-kubernetes-preserve-unknown-fields'] === true) {
    skipPrune(x, s, path, unknown);
    return x;
  }
  if (Array.isArray(x)) {
    x.forEach((item, i) => prune(item, s?.items, jsonvalues.indexPath(path, i), unknown));
    return x;
  }
  if (!json.isObject(x)) return x;
  const embedded = s?.['x-kubernetes-embedded-resource'] === true;
  for (const key of Object.keys(x)) {
    const keyPath = jsonvalues.childPath(path, key);
    if (embedded && META_FIELDS.has(key)) {
      if (key === 'metadata') pruneObjectMeta(x[key], keyPath, unknown);
      continue;
    }
    const declared = s?.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    if (declared) {
      prune(x[key], declared, keyPath, unknown);
    } else if (s && s.additionalProperties !== undefined && s.additionalProperties !== false) {
      // `additionalProperties: true` keeps the key but gives its value no schema (nested maps are emptied).
      prune(x[key], typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined, keyPath, unknown);
    } else {
      unknown.push(keyPath);
      delete x[key];
    }
  }
  return x;
}

/** The walk below `x-kubernetes-preserve-unknown-fields`: undeclared keys stay, declared ones are pruned. */
function skipPrune(x: unknown, s: schemas.JSONSchemaProps | undefined, path: string, unknown: string[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    x.forEach((item, i) => skipPrune(item, s.items, jsonvalues.indexPath(path, i), unknown));
    return;
  }
  if (!json.isObject(x)) return;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  for (const key of Object.keys(x)) {
    const keyPath = jsonvalues.childPath(path, key);
    if (embedded && META_FIELDS.has(key)) {
      if (key === 'metadata') pruneObjectMeta(x[key], keyPath, unknown);
      continue;
    }
    const declared = s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    if (declared) prune(x[key], declared, keyPath, unknown);
    else if (typeof s.additionalProperties === 'object') prune(x[key], s.additionalProperties, keyPath, unknown);
  }
}

/** Drops non-ObjectMeta keys from a resource's `metadata` (malformed values are left for validation). */
function pruneObjectMeta(meta: unknown, path: string, unknown: string[]): void {
  if (!json.isObject(meta)) return;
  for (const key of Object.keys(meta)) {
    if (OBJECT_META_FIELDS.has(key)) continue;
    unknown.push(jsonvalues.childPath(path, key));
    delete meta[key];
  }
}

/** Removes map entries that are `null` while their schema is not nullable and has no default (in place). */
function dropNonNullableNulls(x: unknown, s: schemas.JSONSchemaProps | undefined): unknown {
  if (!s) return x;
  if (Array.isArray(x)) {
    for (const item of x) dropNonNullableNulls(item, s.items);
    return x;
  }
  if (!json.isObject(x)) return x;
  for (const key of Object.keys(x)) {
    const child = schemas.propertySchema(s, key);
    if (!child) continue;
    if (x[key] === null && child.nullable !== true && !schemas.hasDefault(child)) delete x[key];
    else dropNonNullableNulls(x[key], child);
  }
  return x;
}
