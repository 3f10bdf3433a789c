/**
 * Registration options: which keys each registration function accepts and how their values are
 * checked and normalised (R-API-4, R-FILTERS-2/5). `handlers.ts` builds descriptors from the results.
 *
 * Every check throws a `TypeError` at registration time, so misconfigured operators fail on start
 * instead of misbehaving on the first event.
 */

import * as dicts from '../../cogs/structs/dicts.js';
import * as resources from '../../cogs/structs/resources.js';
import * as errors from '../actions/errors.js';
import type * as callbacks from './callbacks.js';
import * as filters from './filters.js';

/**
 * How arbitrary errors are treated (R-ERRORS-3): `ErrorsMode.IGNORED`/`TEMPORARY`/`PERMANENT` of
 * `actions/errors`; `null` in a descriptor means the kind's default.
 */
export type ErrorsModeName = errors.ErrorsMode;
const ERRORS_MODES: readonly string[] = Object.values(errors.ErrorsMode);
const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** A callback of an option (e.g. `initialDelay`), called with the handler's arguments. */
export type OptionCallback<T> = { bivarianceHack(args: object): T }['bivarianceHack'];

/** Retry options of retriable kinds (R-API-4); `null` = not set (defaults apply). */
export interface RetryPolicy {
  readonly errors: ErrorsModeName | null;
  /** Seconds. */
  readonly timeout: number | null;
  readonly retries: number | null;
  /** Seconds. */
  readonly backoff: number | null;
}

const COMMON = ['id', 'param', 'registry'];
const RETRY = ['errors', 'timeout', 'retries', 'backoff'];
const FILTERS = ['labels', 'annotations', 'when', 'field', 'value'];
const CHANGES = ['old', 'new'];

/** The option keys each registration function accepts (R-API-4 and the kinds' areas). */
export const ALLOWED_OPTIONS = Object.freeze({
  create: [...COMMON, ...RETRY, ...FILTERS],
  update: [...COMMON, ...RETRY, ...FILTERS, ...CHANGES],
  delete: [...COMMON, ...RETRY, ...FILTERS, 'optional'],
  resume: [...COMMON, ...RETRY, ...FILTERS, 'deleted'],
  field: [...COMMON, ...RETRY, ...FILTERS, ...CHANGES],
  subhandler: ['id', 'param', ...RETRY, ...FILTERS, ...CHANGES],
  event: [...COMMON, ...FILTERS],
  daemon: [...COMMON, ...RETRY, ...FILTERS, 'initialDelay', 'cancellationBackoff', 'cancellationTimeout', 'cancellationPolling'],
  timer: [...COMMON, ...RETRY, ...FILTERS, 'interval', 'initialDelay', 'sharp', 'idle'],
  index: [...COMMON, ...RETRY, ...FILTERS],
  validate: [...COMMON, ...FILTERS, 'operations', 'operation', 'subresource', 'persistent', 'sideEffects', 'ignoreFailures'],
  mutate: [...COMMON, ...FILTERS, 'operations', 'operation', 'subresource', 'persistent', 'sideEffects', 'ignoreFailures'],
  startup: [...COMMON, ...RETRY],
  cleanup: [...COMMON, ...RETRY],
  login: [...COMMON, ...RETRY],
  probe: [...COMMON, ...RETRY],
  reconcile: [...COMMON, 'labels', 'annotations', 'when', 'owns', 'watches', 'finalize', 'finalizer', 'backoff'],
  convert: ['id', 'param', 'registry', 'forward', 'backward'],
} satisfies Record<string, readonly string[]>);

/** The name of a registration function, as in `on.<name>()`. */
export type Registration = keyof typeof ALLOWED_OPTIONS;

/** Options as received (already checked by the type system at typed call sites, not at run time). */
export type RawOptions = Readonly<Record<string, unknown>>;

/** Throws a `TypeError` for option keys that `registration` does not accept (R-API-4). */
export function checkOptionKeys(registration: Registration, options: RawOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`The options of on.${registration}() must be an object.`);
  }
  const allowed: readonly string[] = ALLOWED_OPTIONS[registration];
  const unknown = Object.keys(options).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new TypeError(`Unknown options of on.${registration}(): ${unknown.join(', ')}. Accepted: ${allowed.join(', ')}.`);
  }
}

/** Whether an option is given (`undefined` means not given). */
export const given = (value: unknown): boolean => value !== undefined;

export function seconds(options: RawOptions, key: string): number | null {
  const value = options[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`The option '${key}' must be a non-negative number (seconds), got ${String(value)}.`);
  }
  return value;
}

/** Seconds that must be more than zero (e.g. a timer's `interval`, which would otherwise spin). */
export function positiveSeconds(options: RawOptions, key: string): number | null {
  const value = seconds(options, key);
  if (value === 0) throw new TypeError(`The option '${key}' must be more than 0 seconds, got 0.`);
  return value;
}

export function count(options: RawOptions, key: string): number | null {
  const value = seconds(options, key);
  if (value !== null && !Number.isInteger(value)) throw new TypeError(`The option '${key}' must be an integer, got ${value}.`);
  return value;
}

export function flag(options: RawOptions, key: string): boolean {
  const value = options[key];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new TypeError(`The option '${key}' must be a boolean, got ${String(value)}.`);
  return value;
}

export function delayOrCallback(options: RawOptions, key: string): number | OptionCallback<number> | null {
  const value = options[key];
  return typeof value === 'function' ? (value as OptionCallback<number>) : seconds(options, key);
}

export function retryPolicy(options: RawOptions): RetryPolicy {
  const errors = options['errors'];
  if (errors !== undefined && errors !== null && !ERRORS_MODES.includes(errors as string)) {
    throw new TypeError(`The option 'errors' must be one of ${ERRORS_MODES.join(', ')}, got ${String(errors)}.`);
  }
  return {
    errors: (errors ?? null) as ErrorsModeName | null,
    timeout: seconds(options, 'timeout'),
    retries: count(options, 'retries'),
    backoff: seconds(options, 'backoff'),
  };
}

export function metaFilters(options: RawOptions, key: 'labels' | 'annotations'): Readonly<Record<string, filters.StoredMetaFilter>> | null {
  const value = options[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`The option '${key}' must be an object of filters by key.`);
  const what = key === 'labels' ? 'label' : 'annotation';
  for (const [name, filter] of Object.entries(value)) {
    if (filter === null || filter === undefined) {
      throw new TypeError(`The ${what} filter '${name}' is ${String(filter)}; use PRESENT or ABSENT to check for the ${what}'s presence or absence.`);
    }
    if (typeof filter !== 'string' && typeof filter !== 'function' && filter !== filters.PRESENT && filter !== filters.ABSENT) {
      throw new TypeError(`The ${what} filter '${name}' must be a string, PRESENT, ABSENT or a callback, got ${String(filter)}.`);
    }
  }
  return Object.freeze({ ...(value as Record<string, filters.StoredMetaFilter>) });
}

/** Parses a field option (dotted string or array of keys); `null` if not given or empty. */
export function parseFieldOption(field: unknown): dicts.FieldPath | null {
  if (field === undefined || field === null) return null;
  if (typeof field !== 'string' && !(Array.isArray(field) && field.every((key) => typeof key === 'string'))) {
    throw new TypeError(`A field must be a dotted string or an array of strings, got ${String(field)}.`);
  }
  const path = dicts.parseField(field as dicts.FieldSpec);
  return path.length > 0 ? path : null;
}

export function filterSpec(options: RawOptions, field: dicts.FieldPath | null, fieldNeedsChange: boolean): filters.FilterSpec {
  const when = options['when'];
  if (when !== undefined && when !== null && typeof when !== 'function') throw new TypeError("The option 'when' must be a function.");
  const hasValue = given(options['value']);
  const hasOldNew = given(options['old']) || given(options['new']);
  if (hasValue && hasOldNew) throw new TypeError("The options 'value' and 'old'/'new' are mutually exclusive.");
  if ((hasValue || hasOldNew) && field === null) throw new TypeError("The options 'value', 'old' and 'new' require a 'field'.");
  return {
    labels: metaFilters(options, 'labels'),
    annotations: metaFilters(options, 'annotations'),
    field,
    value: options['value'],
    old: options['old'],
    new: options['new'],
    when: (when ?? null) as filters.FilterSpec['when'],
    fieldNeedsChange,
  };
}

/** Admission operations (R-ADMISSION-1): `operations`, or the deprecated single `operation`; `null` = all. */
export function operations(options: RawOptions): readonly callbacks.WebhookOperation[] | null {
  if (given(options['operations']) && given(options['operation'])) throw new TypeError("Use either 'operations' or the deprecated 'operation', not both.");
  const raw = options['operations'] ?? (given(options['operation']) ? [options['operation']] : null);
  if (raw === null) return null;
  if (!Array.isArray(raw) || raw.length === 0 || !raw.every((op) => OPERATIONS.includes(op as string))) {
    throw new TypeError(`The option 'operations' must be a non-empty list of ${OPERATIONS.join(', ')}.`);
  }
  return Object.freeze([...(raw as callbacks.WebhookOperation[])]);
}

/** The admission subresource: a name, `'*'` for all, or `null` for the main body only. */
export function subresource(options: RawOptions): string | null {
  const value = options['subresource'];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value === '') throw new TypeError("The option 'subresource' must be a non-empty string or '*'.");
  return value;
}

/** The finalizer of reconcile handlers with `finalize` when none is named (R-RECONCILE-207). */
export const DEFAULT_RECONCILE_FINALIZER = 'kopf-gen.dev/reconcile';

/** controller-runtime's per-item exponential failure rate limiter: 5 ms doubling up to 1000 s. */
export const DEFAULT_RECONCILE_BACKOFF = Object.freeze({ base: 0.005, max: 1000 });

/** A watched kind of a reconcile handler and how its objects map to reconciled objects. */
export interface WatchedRelation {
  readonly resource: resources.ResourceDescriptor;
  readonly map: (object: object) => unknown;
}

function descriptorAt(value: unknown, where: string): resources.ResourceDescriptor {
  if (!resources.isDescriptor(value)) {
    throw new TypeError(`${where} must be a resource descriptor (e.g. builtins.Jobs or a generated one), got ${String(value)}.`);
  }
  return value;
}

/** The `owns` option: a list of descriptors (R-RECONCILE-202). */
export function ownedKinds(options: RawOptions): readonly resources.ResourceDescriptor[] {
  const value = options['owns'];
  if (value === undefined || value === null) return Object.freeze([]);
  if (!Array.isArray(value)) throw new TypeError("The option 'owns' must be a list of resource descriptors.");
  return Object.freeze(value.map((entry, i) => descriptorAt(entry, `The entry ${i} of 'owns'`)));
}

/** The `watches` option: a list of `{ resource, map }` (R-RECONCILE-203). */
export function watchedRelations(options: RawOptions): readonly WatchedRelation[] {
  const value = options['watches'];
  if (value === undefined || value === null) return Object.freeze([]);
  if (!Array.isArray(value)) throw new TypeError("The option 'watches' must be a list of { resource, map }.");
  return Object.freeze(
    value.map((entry: unknown, i) => {
      if (typeof entry !== 'object' || entry === null) throw new TypeError(`The entry ${i} of 'watches' must be an object { resource, map }.`);
      const { resource, map, ...rest } = entry as Record<string, unknown>;
      const extra = Object.keys(rest);
      if (extra.length > 0) throw new TypeError(`Unknown keys of the entry ${i} of 'watches': ${extra.join(', ')}. Accepted: resource, map.`);
      const descriptor = descriptorAt(resource, `The resource of the entry ${i} of 'watches'`);
      if (typeof map !== 'function') throw new TypeError(`The map of the entry ${i} of 'watches' must be a function.`);
      return Object.freeze({ resource: descriptor, map: map as WatchedRelation['map'] });
    }),
  );
}

// A qualified name as the API server validates finalizers: an optional DNS-subdomain prefix, a
// slash, and a name of at most 63 alphanumerics, '-', '_', '.'; kopf-gen requires the prefix
// (the API server warns about finalizers that are not domain-qualified).
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)\/([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;

/** The `finalizer` option: a domain-qualified name; `null` when not given. */
export function finalizerName(options: RawOptions): string | null {
  const value = options['finalizer'];
  if (value === undefined || value === null) return null;
  const match = typeof value === 'string' ? QUALIFIED_NAME.exec(value) : null;
  if (match === null || match[1]!.length > 253 || match[5]!.length > 63) {
    throw new TypeError(`The option 'finalizer' must be a domain-qualified name such as 'example.com/cleanup', got ${String(value)}.`);
  }
  return value as string;
}

/** The `backoff` option of reconcile handlers: `{ base?, max? }` in seconds, with the defaults. */
export function reconcileBackoff(options: RawOptions): { readonly base: number; readonly max: number } {
  const value = options['backoff'];
  if (value === undefined || value === null) return DEFAULT_RECONCILE_BACKOFF;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new TypeError("The option 'backoff' of on.reconcile() must be an object { base?, max? } (seconds).");
  const unknown = Object.keys(value).filter((key) => key !== 'base' && key !== 'max');
  if (unknown.length > 0) throw new TypeError(`Unknown keys of the option 'backoff': ${unknown.join(', ')}. Accepted: base, max.`);
  const raw = value as RawOptions;
  const base = positiveSeconds(raw, 'base') ?? DEFAULT_RECONCILE_BACKOFF.base;
  const max = positiveSeconds(raw, 'max') ?? DEFAULT_RECONCILE_BACKOFF.max;
  if (max < base) throw new TypeError(`The option 'backoff': max (${max}) must not be less than base (${base}).`);
  return Object.freeze({ base, max });
}
