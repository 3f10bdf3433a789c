/**
 * Diff-base storages: the essence of the object as of the last fully handled change.
 *
 * Change detection compares the object's current *essence* (R-ESSENCE-1: the meaningful part of a
 * body — spec and friends, labels, useful annotations, fields that handlers watch) with the stored
 * diff-base; a difference is an update, the diff goes to the handlers (`structs/diffs`). When the
 * change is fully handled, the new essence is stored back (R-STORAGE-2), like `kubectl apply` keeps
 * its last-applied configuration.
 *
 * - `AnnotationsDiffBaseStorage` — the default: `kopf.zalando.org/last-handled-configuration`,
 *   compact JSON plus `\n`, byte-compatible with Kopf;
 * - `StatusDiffBaseStorage` — the same JSON as a string at `status.kopf.last-handled-configuration`;
 * - `MultiDiffBaseStorage` — writes to all, reads from the first that has a value.
 *
 * An essence that would push the object over the API server's limits is stored bounded: its
 * largest values as digests (`bounds`, R-STORAGE-16); if even that does not fit, the diff-base is
 * not written, and the patch carries a note saying so.
 *
 * Secret-like fields (a Secret's `data`, `settings.persistence.secretFields`) are digested by the
 * reactor on both sides, in the built essence and in the fetched diff-base (`secrets`, R-SEC-18):
 * every storage, a custom one too, is given and compares only digests of their values.
 *
 * The progress storage (`progress`, which this module must not import) removes its own traces from
 * both the built essence and the fetched diff-base before they are compared; the reactor chains the
 * two: `progress.clear(diffbase.build(…))` and `progress.clear(diffbase.fetch(…))`.
 */

import * as dicts from '../structs/dicts.js';
import type * as patches from '../structs/patches.js';
import * as bounds from './bounds.js';
import * as conventions from './conventions.js';

/** Where the last handled essence is kept (R-STORAGE-13). */
export interface DiffBaseStorage {
  /** Builds the essence of a body (R-ESSENCE-1/2), minus this storage's own traces. */
  build(args: { body: unknown; extraFields?: Iterable<dicts.FieldSpec> }): dicts.JsonObject;
  /** The stored essence, or `null` if there is none (or it is unreadable). */
  fetch(args: { body: unknown }): dicts.JsonObject | null;
  /** Writes an essence into the patch. */
  store(args: { body: unknown; patch: patches.PatchBase<object>; essence: dicts.JsonObject }): void;
}

/** Options common to all diff-base storages. */
export interface DiffBaseOptions {
  /** Fields removed from every essence (R-STORAGE-3). */
  readonly ignoredFields?: Iterable<dicts.FieldSpec>;
}

/** The top-level fields that are never part of an essence (some come back below: labels, annotations). */
const NOT_ESSENTIAL: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/**
 * Builds the essence of a body exactly as Kopf does (R-ESSENCE-1/2): a deep copy without
 * `apiVersion`, `kind`, `metadata`, `status`; labels and annotations copied back (so `metadata` comes
 * last); Kopf-owned and last-applied annotations removed; `extraFields` copied back from the body;
 * empty stanzas removed; `ignoredFields` removed.
 */
export function buildEssence(body: unknown, extraFields?: Iterable<dicts.FieldSpec>, ignoredFields?: Iterable<dicts.FieldSpec>): dicts.JsonObject {
  // Only what stays is copied: metadata (managed fields and all) and status are often most of a body.
  const essence: Record<string, unknown> = {};
  if (dicts.isObject(body)) {
    for (const key in body) {
      if (!Object.hasOwn(body, key) || NOT_ESSENTIAL.has(key)) continue;
      const value = body[key];
      if (value !== undefined) dicts.setOwn(essence, key, dicts.deepCopy(value));
    }
  }
  dicts.cherrypick(body, essence, ['metadata.labels', 'metadata.annotations']);
  conventions.removeForeignAnnotations(essence);
  removeShardLabels(essence);
  dicts.cherrypick(body, essence, extraFields);
  conventions.removeEmptyStanzas(essence);
  for (const field of ignoredFields ?? []) {
    const path = dicts.parseField(field);
    if (path.length > 0) dicts.remove(essence, path);
  }
  return essence as dicts.JsonObject;
}

/** The prefix of the owner labels of sharded operators (`engines/rings`): which replica works on an object. */
const SHARD_LABEL_PREFIX = 'shard.kopf-gen.dev/';

/**
 * Removes the owner labels of sharded operators (R-SHARD-208): moving an object between replicas
 * is not a change of the object, so it must not look like one to the new owner's diff.
 */
function removeShardLabels(essence: Record<string, unknown>): void {
  const metadata = essence['metadata'];
  if (!dicts.isObject(metadata) || !dicts.isObject(metadata['labels'])) return;
  const labels = metadata['labels'] as Record<string, unknown>;
  for (const key of Object.keys(labels)) if (key.startsWith(SHARD_LABEL_PREFIX)) delete labels[key];
  if (Object.keys(labels).length === 0) delete (metadata as Record<string, unknown>)['labels'];
  if (Object.keys(metadata).length === 0) delete essence['metadata'];
}

/** Serialises an essence as stored: compact JSON, non-ASCII escaped (no trailing newline). */
export function encodeEssence(essence: dicts.JsonObject): string {
  return conventions.dumpJson(essence);
}

/** Parses a stored essence, tolerant of whitespace and a trailing newline; `null` if unreadable. */
export function decodeEssence(encoded: unknown): dicts.JsonObject | null {
  if (typeof encoded !== 'string') return null;
  try {
    const decoded: unknown = JSON.parse(encoded);
    return dicts.isObject(decoded) ? (decoded as dicts.JsonObject) : null;
  } catch {
    return null;
  }
}

/**
 * The encoding of an essence as it fits the object (R-STORAGE-16): as it is when it fits (the
 * usual case, byte-identical to Kopf's), else with its largest values as digests, else `null`
 * (not to be written). Anything but the first is noted on the patch.
 */
function boundedEncoding(essence: dicts.JsonObject, patch: patches.PatchBase<object>, exceeds: (encoded: string) => bounds.Limit | null): string | null {
  const encoded = encodeEssence(essence);
  const limit = exceeds(encoded);
  if (limit === null) return encoded;
  const bounded = bounds.boundEssence(essence, (candidate) => exceeds(encodeEssence(candidate)) === null);
  if (bounded === null) {
    bounds.note(patch, `the diff-base would exceed ${bounds.LIMITS[limit]} even with its values as digests, so it is not stored (kept in memory).`);
    bounds.markUnstored(patch);
    return null;
  }
  const count = bounded.digested.length;
  bounds.note(
    patch,
    `the diff-base would exceed ${bounds.LIMITS[limit]}, so it is stored with ${count === 1 ? '1 value' : `${count} values`} as sha-256 digests (${bounded.digested.join(', ')}).`,
  );
  return encodeEssence(bounded.essence);
}

/** The default diff-base storage: one annotation, `<prefix>/last-handled-configuration` (R-STORAGE-2). */
export class AnnotationsDiffBaseStorage implements DiffBaseStorage {
  readonly prefix: string;
  readonly key: string;
  readonly v1: boolean;
  readonly ignoredFields: readonly dicts.FieldSpec[];

  constructor(
    options?: DiffBaseOptions & {
      /** Annotation prefix; default `kopf.zalando.org`; must not be empty. */
      readonly prefix?: string;
      /** Record key; default `last-handled-configuration`. */
      readonly key?: string;
      /** Also write/read V1 keys; default true. */
      readonly v1?: boolean;
      /** Receives the too-long-prefix warning. */
      readonly warn?: (message: string) => void;
    },
  ) {
    this.prefix = options?.prefix ?? conventions.DEFAULT_PREFIX;
    this.key = options?.key ?? 'last-handled-configuration';
    this.v1 = options?.v1 ?? true;
    this.ignoredFields = [...(options?.ignoredFields ?? [])];
    conventions.checkPrefix(this.prefix, options?.warn);
  }

  /** The annotation keys for this body (V2 first). */
  keys(body: unknown): readonly string[] {
    return conventions.keysForBody(this.prefix, this.key, body, { v1: this.v1 });
  }

  build({ body, extraFields }: { body: unknown; extraFields?: Iterable<dicts.FieldSpec> }): dicts.JsonObject {
    const essence = buildEssence(body, extraFields, this.ignoredFields);
    conventions.removeAnnotations(essence, this.keys(body));
    conventions.removeEmptyStanzas(essence);
    return essence;
  }

  fetch({ body }: { body: unknown }): dicts.JsonObject | null {
    for (const fullKey of this.keys(body)) {
      const essence = decodeEssence(dicts.resolve(body, ['metadata', 'annotations', fullKey]));
      if (essence !== null) return essence;
    }
    return null;
  }

  store({ body, patch, essence }: { body: unknown; patch: patches.PatchBase<object>; essence: dicts.JsonObject }): void {
    const keys = this.keys(body);
    const exceeds = bounds.annotationsRoom(body, patch, keys, conventions.pendingMarker(this.prefix, patch, body));
    const encoded = boundedEncoding(essence, patch, (text) => exceeds(`${text}\n`));
    if (encoded === null) return;
    for (const fullKey of keys) patch.setAt(['metadata', 'annotations', fullKey], `${encoded}\n`);
    conventions.storeMarker(this.prefix, patch, body);
  }
}

/** The diff-base as a JSON string in a status field, `status.kopf.last-handled-configuration` by default. */
export class StatusDiffBaseStorage implements DiffBaseStorage {
  readonly field: dicts.FieldPath;
  readonly ignoredFields: readonly dicts.FieldSpec[];

  constructor(
    options?: DiffBaseOptions & {
      /** Substituted for `{name}` in the field; default `kopf`. */
      readonly name?: string;
      /** Default `status.{name}.last-handled-configuration`. */
      readonly field?: dicts.FieldSpec;
    },
  ) {
    const name = options?.name ?? 'kopf';
    const field = options?.field ?? 'status.{name}.last-handled-configuration';
    this.field = dicts.parseField(typeof field === 'string' ? field.replace(/\{name\}/g, name) : field);
    this.ignoredFields = [...(options?.ignoredFields ?? [])];
  }

  build({ body, extraFields }: { body: unknown; extraFields?: Iterable<dicts.FieldSpec> }): dicts.JsonObject {
    const essence = buildEssence(body, extraFields, this.ignoredFields);
    if (this.field.length > 0) dicts.remove(essence, this.field);
    return essence;
  }

  fetch({ body }: { body: unknown }): dicts.JsonObject | null {
    return decodeEssence(dicts.resolve(body, this.field));
  }

  store({ body, patch, essence }: { body: unknown; patch: patches.PatchBase<object>; essence: dicts.JsonObject }): void {
    const exceeds = bounds.fieldRoom(body, patch, this.field);
    const encoded = boundedEncoding(essence, patch, exceeds);
    if (encoded !== null) patch.setAt(this.field, encoded);
  }
}

/** Several diff-base storages: builds through all, stores to all, fetches from the first with a value. */
export class MultiDiffBaseStorage implements DiffBaseStorage {
  readonly storages: readonly DiffBaseStorage[];
  readonly ignoredFields: readonly dicts.FieldSpec[];

  constructor(storages: Iterable<DiffBaseStorage>, options?: DiffBaseOptions) {
    this.storages = [...storages];
    this.ignoredFields = [...(options?.ignoredFields ?? [])];
  }

  build({ body, extraFields }: { body: unknown; extraFields?: Iterable<dicts.FieldSpec> }): dicts.JsonObject {
    const fields = [...(extraFields ?? [])];
    let essence = buildEssence(body, fields, this.ignoredFields);
    // Each storage also cleans its own traces, treating what is left as the body.
    for (const storage of this.storages) essence = storage.build({ body: essence, extraFields: fields });
    return essence;
  }

  fetch({ body }: { body: unknown }): dicts.JsonObject | null {
    for (const storage of this.storages) {
      const essence = storage.fetch({ body });
      if (essence !== null) return essence;
    }
    return null;
  }

  store(args: { body: unknown; patch: patches.PatchBase<object>; essence: dicts.JsonObject }): void {
    for (const storage of this.storages) storage.store(args);
  }
}
