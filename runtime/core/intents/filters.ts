/**
 * Handler filters (R-FILTERS-1..8): labels, annotations, field values, field changes and `when`.
 *
 * Handlers declare filters at registration (`handlers.ts` validates them); the registry
 * (`registry.ts`) evaluates them here for each watch-event, in Kopf's order — resource, labels,
 * annotations, field value, field change, `when` — short-circuiting on the first mismatch. The
 * kwargs object that callbacks receive is built lazily, once per handler check, by a factory that
 * the caller passes in (the reactor builds the same object it will give to the handler).
 *
 * Also here: the `PRESENT`/`ABSENT` markers and the combinators `notFn`/`allFn`/`anyFn`/`noneFn`
 * (Kopf's `kopf.not_`/`all_`/`any_`/`none_`; renamed because `not`, `all`… read badly or clash in
 * JavaScript).
 */

import * as dicts from '../../cogs/structs/dicts.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as references from '../../cogs/structs/references.js';

/** Filter marker: the label/annotation/field must exist (any value). Kopf: `kopf.PRESENT`. */
export const PRESENT: unique symbol = Symbol.for('kopf.PRESENT');
/** Filter marker: the label/annotation/field must not exist. Kopf: `kopf.ABSENT`. */
export const ABSENT: unique symbol = Symbol.for('kopf.ABSENT');
export type Present = typeof PRESENT;
export type Absent = typeof ABSENT;
export type Marker = Present | Absent;

/** A label/annotation value callback: called with the value, or `null` if the key is absent. */
export type MetaCallback<Args = never> = (value: string | null, kwargs: Args) => boolean;
/** A label/annotation filter: an exact value, a marker, or a callback (R-FILTERS-2). */
export type MetaFilter<Args = never> = string | Marker | MetaCallback<Args>;
/** Label or annotation filters by key. */
export type MetaFilters<Args = never> = Readonly<Record<string, MetaFilter<Args>>>;

/** Any JSON-like literal (the value filter form for untyped fields). */
export type JsonLiteral = string | number | boolean | null | readonly unknown[] | { readonly [key: string]: unknown };
/** A field value callback: called with the value, or `undefined` if the field is absent. */
export type ValueCallback<V = unknown, Args = never> = (value: V | undefined, kwargs: Args) => boolean;
/** A field value filter: a literal (deep equality), a marker, or a callback (R-FILTERS-3/4/5). */
export type ValueFilter<V = unknown, Args = never> = (unknown extends V ? JsonLiteral : V) | Marker | ValueCallback<V, Args>;
/** A whole-object filter: receives the same kwargs as the handler would (R-FILTERS-6). */
export type WhenFilter<Args = never> = (kwargs: Args) => boolean;

/** Callbacks as stored at run time: called with whatever kwargs the reactor builds. */
type StoredCallback = { bivarianceHack(...args: never[]): boolean }['bivarianceHack'];
/** A stored label/annotation filter. */
export type StoredMetaFilter = string | Marker | StoredCallback;
/** A stored value filter: a literal, a marker, or a callback. */
export type StoredValueFilter = unknown;

/**
 * The filter part of a resource handler, as stored in its descriptor (`handlers.ts`).
 * `null` means "no such filter".
 */
export interface FilterSpec {
  readonly labels: Readonly<Record<string, StoredMetaFilter>> | null;
  readonly annotations: Readonly<Record<string, StoredMetaFilter>> | null;
  /** The field of `field`/`value`/`old`/`new` (parsed), or `null`. */
  readonly field: dicts.FieldPath | null;
  /** `undefined` when not given (then the field must merely be present). */
  readonly value: StoredValueFilter;
  readonly old: StoredValueFilter;
  readonly new: StoredValueFilter;
  readonly when: StoredCallback | null;
  /** Change handlers only: the field's value must differ between old and new (`on.update`/`on.field`). */
  readonly fieldNeedsChange: boolean;
}

/** What the filters look at: the object, and for change causes the old and new essences. */
export interface Subject {
  readonly resource: references.Resource;
  readonly body: bodies.RawBody;
  /** Change causes: the diff-base (`null` when there is none). Absent for other causes. */
  readonly old?: dicts.JsonObject | null;
  /** Change causes: the current essence. Absent for other causes. */
  readonly new?: dicts.JsonObject | null;
}

/** Builds the kwargs of one handler check; called at most once per check, only if a callback needs it. */
export type KwargsFactory = () => object;

function callValue(filter: unknown, value: unknown, kwargs: () => object): boolean {
  return !!(filter as (v: unknown, k: object) => unknown)(value, kwargs());
}

/**
 * Checks label or annotation filters against the actual map (R-FILTERS-2).
 *
 * @example
 * matchesMeta({ app: PRESENT, tier: 'web' }, { app: 'x', tier: 'web' }, () => ({})) // true
 */
export function matchesMeta(
  filters: Readonly<Record<string, StoredMetaFilter>> | null,
  actual: Readonly<Record<string, string>> | undefined,
  kwargs: KwargsFactory,
): boolean {
  if (!filters) return true;
  const values = actual ?? {};
  for (const [key, filter] of Object.entries(filters)) {
    const present = Object.hasOwn(values, key);
    if (filter === PRESENT) {
      if (!present) return false;
      continue;
    }
    if (filter === ABSENT) {
      if (present) return false;
      continue;
    }
    if (typeof filter === 'function') {
      if (!callValue(filter, present ? values[key] : null, kwargs)) return false;
      continue;
    }
    if (!present || values[key] !== filter) return false;
  }
  return true;
}

/** Checks one value against a value filter; `present` distinguishes absence from a `null` literal. */
export function matchesValue(filter: StoredValueFilter, value: unknown, present: boolean, kwargs: KwargsFactory): boolean {
  if (filter === undefined) return true;
  if (filter === PRESENT) return present;
  if (filter === ABSENT) return !present;
  if (typeof filter === 'function') return callValue(filter, present ? value : undefined, kwargs);
  return present && dicts.deepEqual(filter, value);
}

interface Resolved {
  readonly present: boolean;
  readonly value: unknown;
}

function resolveAt(obj: unknown, field: dicts.FieldPath): Resolved {
  const value = dicts.resolve(obj, field);
  const present = value !== undefined && value !== null;
  return { present, value: present ? value : undefined };
}

function isChange(subject: Subject): boolean {
  return subject.old !== undefined || subject.new !== undefined;
}

/**
 * The field-value filter (R-FILTERS-3/4): for change causes the value must be satisfied by the old
 * or the new essence; for other causes by the current body. Without `value`, the field must be present.
 */
export function matchesFieldValue(spec: FilterSpec, subject: Subject, kwargs: KwargsFactory): boolean {
  if (!spec.field) return true;
  const field = spec.field;
  const candidates = isChange(subject) ? [resolveAt(subject.new, field), resolveAt(subject.old, field)] : [resolveAt(subject.body, field)];
  if (spec.value === undefined) return candidates.some((c) => c.present);
  return candidates.some((c) => matchesValue(spec.value, c.value, c.present, kwargs));
}

/**
 * The field-change filter (R-FILTERS-5), for change causes only: the value must differ (if the handler
 * needs a change), and the `old`/`new` filters must pass on their own sides.
 */
export function matchesFieldChange(spec: FilterSpec, subject: Subject, kwargs: KwargsFactory): boolean {
  if (!spec.field || !isChange(subject)) return true;
  const old = resolveAt(subject.old, spec.field);
  const now = resolveAt(subject.new, spec.field);
  if (spec.fieldNeedsChange && dicts.deepEqual(old.value, now.value)) return false;
  return matchesValue(spec.old, old.value, old.present, kwargs) && matchesValue(spec.new, now.value, now.present, kwargs);
}

/** The `when` filter (R-FILTERS-6). */
export function matchesWhen(spec: FilterSpec, kwargs: KwargsFactory): boolean {
  return spec.when === null || Boolean((spec.when as (kwargs: object) => unknown)(kwargs()));
}

function memoize(factory: KwargsFactory): KwargsFactory {
  let built: object | undefined;
  return () => (built ??= factory());
}

function metadataOf(body: bodies.RawBody): { labels?: Record<string, string>; annotations?: Record<string, string> } {
  return dicts.isObject(body.metadata) ? body.metadata : {};
}

/**
 * All filters except the resource (R-FILTERS-1), in Kopf's order. `kwargs` is called at most once.
 * With `prematch`, the field-change check is skipped (R-FILTERS-8).
 */
export function matchesFilters(spec: FilterSpec, subject: Subject, kwargs: KwargsFactory, options?: { readonly prematch?: boolean }): boolean {
  const lazy = memoize(kwargs);
  const meta = metadataOf(subject.body);
  return (
    matchesMeta(spec.labels, meta.labels, lazy) &&
    matchesMeta(spec.annotations, meta.annotations, lazy) &&
    matchesFieldValue(spec, subject, lazy) &&
    (options?.prematch === true || matchesFieldChange(spec, subject, lazy)) &&
    matchesWhen(spec, lazy)
  );
}

// Combinators (R-FILTERS-7): they keep the callback's own signature, so they work for `when`
// callbacks and for per-value callbacks alike.

/** Negates a filter callback. Kopf: `kopf.not_`. */
export function notFn<A extends unknown[]>(fn: (...args: A) => boolean): (...args: A) => boolean {
  return (...args) => !fn(...args);
}

/** True if all callbacks are true (short-circuits; true for none). Kopf: `kopf.all_`. */
export function allFn<A extends unknown[]>(fns: ReadonlyArray<(...args: A) => boolean>): (...args: A) => boolean {
  return (...args) => fns.every((fn) => fn(...args));
}

/** True if any callback is true (short-circuits; false for none). Kopf: `kopf.any_`. */
export function anyFn<A extends unknown[]>(fns: ReadonlyArray<(...args: A) => boolean>): (...args: A) => boolean {
  return (...args) => fns.some((fn) => fn(...args));
}

/** True if no callback is true (short-circuits; true for none). Kopf: `kopf.none_`. */
export function noneFn<A extends unknown[]>(fns: ReadonlyArray<(...args: A) => boolean>): (...args: A) => boolean {
  return (...args) => !fns.some((fn) => fn(...args));
}
