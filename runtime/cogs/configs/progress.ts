/**
 * Progress storages: where per-handler retry/success state lives between processing cycles.
 *
 * One change (a creation, an update, …) may need several cycles: handlers run one per cycle, fail
 * and retry later, or wait for sub-handlers. Each handler's state is a `ProgressRecord` persisted on
 * the object itself (R-STORAGE-4): by default as one annotation per handler id under
 * `kopf.zalando.org/`, byte-compatible with Kopf so either framework can resume the other's work.
 * When the change is fully handled, the records are purged.
 *
 * Implementations share one interface (`ProgressStorage`, R-STORAGE-13) and one contract suite:
 * - `AnnotationsProgressStorage` — JSON in annotations (key forming in `conventions`);
 * - `StatusProgressStorage` — nested objects at `status.kopf.progress.<id>`;
 * - `MultiProgressStorage` — writes to all, reads from the first that has a record;
 * - `SmartProgressStorage` — the default: annotations, plus the legacy status storage read and
 *   purged but never written (R-STORAGE-1).
 *
 * A record that would push the object over the API server's limits (a long error message next to
 * a large annotation, say) is written with its message truncated to fit, and the patch carries a
 * note saying so (`bounds`, R-STORAGE-16); records that fit are written as they are. The bound
 * counts what is really written: the record at each of its keys (a long handler id has two), and
 * the annotations written beside it (the ownership marker, the touch-dummy of a later patch).
 *
 * Storages only write into the cycle's `Patch`; the reactor sends it. They never do I/O themselves.
 * Record timestamps are formatted and parsed by the neighbouring `timestamps` module (R-STORAGE-5).
 */

import * as dicts from '../structs/dicts.js';
import type * as patches from '../structs/patches.js';
import * as bounds from './bounds.js';
import * as conventions from './conventions.js';
import * as timestamps from './timestamps.js';

/** The persisted state of one handler for the change being handled (R-STORAGE-4). */
export interface ProgressRecord {
  /** When the handler was first invoked for this change (`YYYY-MM-DDTHH:MM:SS.ffffff+00:00`). */
  started?: string | null;
  /** When it finished (success or final failure). */
  stopped?: string | null;
  /** Not to be invoked before this moment. */
  delayed?: string | null;
  /** `create`, `update`, `delete` or `resume`. */
  purpose?: string | null;
  /** Invocations so far. */
  retries?: number | null;
  success?: boolean | null;
  failure?: boolean | null;
  /** Text of the last error. */
  message?: string | null;
  /** Sorted ids of all sub-handlers (any depth). */
  subrefs?: readonly string[] | null;
}

/** The record keys in their persisted order. */
export const RECORD_KEYS = [
  'started',
  'stopped',
  'delayed',
  'purpose',
  'retries',
  'success',
  'failure',
  'message',
  'subrefs',
] as const satisfies readonly (keyof ProgressRecord)[];

type MaybePromise<T> = T | Promise<T>;

/**
 * Where progress records are kept (R-STORAGE-13). Methods write only into `patch`.
 * `fetch`/`store`/`purge`/`flush` may be async in custom storages; callers always `await` them.
 */
export interface ProgressStorage {
  /** The record of a handler id, or `null` if there is none. */
  fetch(args: { key: string; body: unknown }): MaybePromise<ProgressRecord | null>;
  /** Writes a record (only if it differs from the one on the body, R-STORAGE-9). */
  store(args: { key: string; record: ProgressRecord; body: unknown; patch: patches.PatchBase<object> }): MaybePromise<void>;
  /** Removes a record: `null` in the patch if on the body, else dropped from the patch (R-STORAGE-8). */
  purge(args: { key: string; body: unknown; patch: patches.PatchBase<object> }): MaybePromise<void>;
  /** Sets (a string) or clears (`null`) the touch-dummy if it differs from the body's (R-STORAGE-10). */
  touch(args: { body: unknown; patch: patches.PatchBase<object>; value: string | null }): void;
  /** Returns a copy of an essence without this storage's own traces (R-ESSENCE-1). */
  clear(essence: dicts.JsonObject): dicts.JsonObject;
  /** Persists anything batched (no-op for storages that write into the patch). */
  flush(): MaybePromise<void>;
}

/** A record without null/absent fields, keys in the persisted order. */
export function cleanRecord(record: ProgressRecord): ProgressRecord {
  const clean: Record<string, unknown> = {};
  for (const key of RECORD_KEYS) {
    const value = record[key];
    if (value !== null && value !== undefined) clean[key] = key === 'subrefs' ? [...(value as readonly string[])] : value;
  }
  return clean as ProgressRecord;
}

/** The annotation value of a record: compact, ordered, nulls omitted, non-ASCII escaped. */
export function encodeRecord(record: ProgressRecord): string {
  return conventions.dumpJson(cleanRecord(record));
}

/**
 * A record as it fits the object (R-STORAGE-16): as it is when it fits, else with its message
 * truncated (a marker says by how much), else without a message; noted on the patch unless it fits.
 * A record without a message that does not fit is returned as it is: the server will refuse it.
 */
export function boundRecord(
  key: string,
  record: ProgressRecord,
  patch: patches.PatchBase<object>,
  exceeds: (record: ProgressRecord) => bounds.Limit | null,
): ProgressRecord {
  const limit = exceeds(record);
  if (limit === null) return record;
  const message = record.message;
  const what = `the progress record of '${key}' would exceed ${bounds.LIMITS[limit]}`;
  if (typeof message !== 'string' || message === '') {
    bounds.note(patch, `${what}, and has no message to shorten.`);
    return record;
  }
  const chars = [...message];
  const truncated = (length: number): ProgressRecord => ({
    ...record,
    message: `${chars.slice(0, length).join('')}… [truncated from ${bounds.byteLength(message)} bytes]`,
  });
  // The longest prefix of the message that fits (a binary search over its length).
  let low = 0;
  let high = chars.length - 1;
  if (exceeds(truncated(0)) !== null) {
    bounds.note(patch, `${what}, so it is stored without its message.`);
    return cleanRecord({ ...record, message: null });
  }
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (exceeds(truncated(middle)) === null) low = middle;
    else high = middle - 1;
  }
  bounds.note(patch, `${what}, so its message is truncated to ${low} characters.`);
  return cleanRecord(truncated(low));
}

/** Parses an annotation value into a record; `null` for absent or malformed values. */
export function decodeRecord(encoded: unknown): ProgressRecord | null {
  if (typeof encoded !== 'string') return null;
  try {
    const decoded: unknown = JSON.parse(encoded);
    return dicts.isObject(decoded) ? (decoded as ProgressRecord) : null;
  } catch {
    return null;
  }
}

/** A touch-dummy's value as the runtime writes it: a timestamp, always of this length. */
const TOUCH_SAMPLE = timestamps.formatTimestamp(0);

/**
 * Progress in annotations (the default): one compact-JSON annotation per handler id, at the V2 key
 * and (with `v1`) the V1 key (R-STORAGE-4/6/7).
 */
export class AnnotationsProgressStorage implements ProgressStorage {
  readonly prefix: string;
  readonly touchKey: string;
  readonly v1: boolean;

  constructor(options?: {
    /** Annotation prefix; default `kopf.zalando.org`; must not be empty. */
    readonly prefix?: string;
    /** Record key of the touch-dummy; default `touch-dummy`. */
    readonly touchKey?: string;
    /** Also write/read/purge V1 keys; default true. */
    readonly v1?: boolean;
    /** Receives the too-long-prefix warning. */
    readonly warn?: (message: string) => void;
  }) {
    this.prefix = options?.prefix ?? conventions.DEFAULT_PREFIX;
    this.touchKey = options?.touchKey ?? 'touch-dummy';
    this.v1 = options?.v1 ?? true;
    conventions.checkPrefix(this.prefix, options?.warn);
  }

  /** The annotation keys of a record key for this body (V2 first). */
  keys(key: string, body: unknown): readonly string[] {
    return conventions.keysForBody(this.prefix, key, body, { v1: this.v1 });
  }

  /**
   * The annotations written beside a record, which its bound leaves room for (R-STORAGE-16): the
   * ownership marker if still pending, and the touch-dummy at every key form, with a timestamp as
   * long as those it gets when a delayed handler's sleep is over (R-STORAGE-10).
   */
  private alongside(body: unknown, patch: patches.PatchBase<object>): Record<string, string> {
    const touched = this.keys(this.touchKey, body).map((fullKey) => [fullKey, TOUCH_SAMPLE] as const);
    return { ...conventions.pendingMarker(this.prefix, patch, body), ...Object.fromEntries(touched) };
  }

  fetch({ key, body }: { key: string; body: unknown }): ProgressRecord | null {
    for (const fullKey of this.keys(key, body)) {
      const record = decodeRecord(dicts.resolve(body, ['metadata', 'annotations', fullKey]));
      if (record !== null) return record;
    }
    return null;
  }

  store({ key, record, body, patch }: { key: string; record: ProgressRecord; body: unknown; patch: patches.PatchBase<object> }): void {
    const clean = cleanRecord(record);
    const changed: string[] = [];
    for (const fullKey of this.keys(key, body)) {
      const path = ['metadata', 'annotations', fullKey];
      if (dicts.deepEqual(decodeRecord(dicts.resolve(body, path)), clean)) patch.removeAt(path);
      else changed.push(fullKey);
    }
    if (changed.length === 0) return;
    const exceeds = bounds.annotationsRoom(body, patch, changed, this.alongside(body, patch));
    const encoded = conventions.dumpJson(boundRecord(key, clean, patch, (candidate) => exceeds(conventions.dumpJson(candidate))));
    for (const fullKey of changed) patch.setAt(['metadata', 'annotations', fullKey], encoded);
    conventions.storeMarker(this.prefix, patch, body);
  }

  purge({ key, body, patch }: { key: string; body: unknown; patch: patches.PatchBase<object> }): void {
    for (const fullKey of this.keys(key, body)) purgeAt(['metadata', 'annotations', fullKey], body, patch);
  }

  touch({ body, patch, value }: { body: unknown; patch: patches.PatchBase<object>; value: string | null }): void {
    for (const fullKey of this.keys(this.touchKey, body)) {
      const path = ['metadata', 'annotations', fullKey];
      if (dicts.resolve(body, path, null) !== value) {
        patch.setAt(path, value);
        conventions.storeMarker(this.prefix, patch, body);
      }
    }
  }

  clear(essence: dicts.JsonObject): dicts.JsonObject {
    const copy = dicts.deepCopy(essence);
    const annotations = dicts.resolve(copy, ['metadata', 'annotations']);
    if (dicts.isObject(annotations)) {
      conventions.removeAnnotations(
        copy,
        Object.keys(annotations).filter((key) => key.startsWith(`${this.prefix}/`)),
      );
    }
    conventions.removeEmptyStanzas(copy);
    return copy;
  }

  flush(): void {}
}

/** Progress as nested objects under a status field, `status.kopf.progress.<id>` by default. */
export class StatusProgressStorage implements ProgressStorage {
  readonly field: dicts.FieldPath;
  readonly touchField: dicts.FieldPath;

  constructor(options?: {
    /** Substituted for `{name}` in the fields; default `kopf`. */
    readonly name?: string;
    /** Container of the records; default `status.{name}.progress`. */
    readonly field?: dicts.FieldSpec;
    /** The touch-dummy field; default `status.{name}.dummy`. */
    readonly touchField?: dicts.FieldSpec;
  }) {
    const name = options?.name ?? 'kopf';
    const expand = (field: dicts.FieldSpec): dicts.FieldPath => dicts.parseField(typeof field === 'string' ? field.replace(/\{name\}/g, name) : field);
    this.field = expand(options?.field ?? 'status.{name}.progress');
    this.touchField = expand(options?.touchField ?? 'status.{name}.dummy');
  }

  fetch({ key, body }: { key: string; body: unknown }): ProgressRecord | null {
    const record = dicts.resolve(body, [...this.field, key]);
    return dicts.isObject(record) ? (record as ProgressRecord) : null;
  }

  store({ key, record, body, patch }: { key: string; record: ProgressRecord; body: unknown; patch: patches.PatchBase<object> }): void {
    const path = [...this.field, key];
    const clean = cleanRecord(record);
    if (dicts.deepEqual(cleanRecord(this.fetch({ key, body }) ?? {}), clean) && dicts.has(body, path)) {
      patch.removeAt(path);
      return;
    }
    // Merge-patches merge nested maps: send every field, nulls included, so stale ones are dropped.
    const exceeds = bounds.fieldRoom(body, patch, path);
    const bounded = boundRecord(key, clean, patch, exceeds);
    const full: Record<string, unknown> = {};
    for (const name of RECORD_KEYS) full[name] = bounded[name] ?? null;
    patch.setAt(path, full);
  }

  purge({ key, body, patch }: { key: string; body: unknown; patch: patches.PatchBase<object> }): void {
    purgeAt([...this.field, key], body, patch);
  }

  touch({ body, patch, value }: { body: unknown; patch: patches.PatchBase<object>; value: string | null }): void {
    if (dicts.resolve(body, this.touchField, null) !== value) patch.setAt(this.touchField, value);
  }

  clear(essence: dicts.JsonObject): dicts.JsonObject {
    const copy = dicts.deepCopy(essence);
    if (this.field.length > 0) dicts.remove(copy, this.field);
    conventions.removeEmptyStanzas(copy);
    return copy;
  }

  flush(): void {}
}

/** The legacy status storage of the smart storage: read and purged, never written (R-STORAGE-1). */
class ReadOnlyStatusProgressStorage extends StatusProgressStorage {
  override store(): void {}
  override touch(): void {}
}

/** Several storages at once: stores to all, fetches from the first that has a record. */
export class MultiProgressStorage implements ProgressStorage {
  readonly storages: readonly ProgressStorage[];

  constructor(storages: Iterable<ProgressStorage>) {
    this.storages = [...storages];
  }

  async fetch(args: { key: string; body: unknown }): Promise<ProgressRecord | null> {
    for (const storage of this.storages) {
      const record = await storage.fetch(args);
      if (record !== null && record !== undefined) return record;
    }
    return null;
  }

  async store(args: { key: string; record: ProgressRecord; body: unknown; patch: patches.PatchBase<object> }): Promise<void> {
    for (const storage of this.storages) await storage.store(args);
  }

  async purge(args: { key: string; body: unknown; patch: patches.PatchBase<object> }): Promise<void> {
    for (const storage of this.storages) await storage.purge(args);
  }

  touch(args: { body: unknown; patch: patches.PatchBase<object>; value: string | null }): void {
    for (const storage of this.storages) storage.touch(args);
  }

  clear(essence: dicts.JsonObject): dicts.JsonObject {
    return this.storages.reduce((current, storage) => storage.clear(current), essence);
  }

  async flush(): Promise<void> {
    for (const storage of this.storages) await storage.flush();
  }
}

/**
 * The default storage (R-STORAGE-1): annotations (written, read, purged) plus the legacy
 * `status.kopf.progress` (read and purged, never written — objects handled by old Kopf versions).
 */
export class SmartProgressStorage extends MultiProgressStorage {
  constructor(options?: {
    readonly name?: string;
    readonly field?: dicts.FieldSpec;
    readonly touchKey?: string;
    readonly touchField?: dicts.FieldSpec;
    readonly prefix?: string;
    readonly v1?: boolean;
    readonly warn?: (message: string) => void;
  }) {
    super([
      new AnnotationsProgressStorage({
        prefix: options?.prefix,
        touchKey: options?.touchKey,
        v1: options?.v1,
        warn: options?.warn,
      }),
      new ReadOnlyStatusProgressStorage({ name: options?.name, field: options?.field, touchField: options?.touchField }),
    ]);
  }
}

/** R-STORAGE-8: `null` if the body has the field; otherwise drop it from the pending patch. */
function purgeAt(path: dicts.FieldPath, body: unknown, patch: patches.PatchBase<object>): void {
  if (dicts.has(body, path)) patch.setAt(path, null);
  else patch.removeAt(path);
}
