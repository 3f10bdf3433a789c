/**
 * Handler descriptors: what a registration produced, as a discriminated union on `kind`.
 *
 * `on.ts` (and the sub-handler helpers) turn a user function plus options into one of these values;
 * the registry stores them; the reactor and the engines read them. Building a descriptor is where
 * registration errors happen (the option checks live in `options.ts`), all as `TypeError`s and all
 * at registration time:
 * unknown option keys (R-API-4), anonymous functions without `id` (R-HANDLERS-2), `value` together
 * with `old`/`new` or any of them without `field` (R-FILTERS-5), `null` label/annotation filters
 * (R-FILTERS-2), malformed numbers and admission operations.
 *
 * Handler ids (R-HANDLERS-2) are the explicit `id` or the function's name, plus `/<field>` when a
 * field is given (except for indexers, whose id is the index name). Function names are used as they
 * are (camelCase); give Kopf's snake_case names as `id` to continue a Python operator's in-flight
 * retries.
 */

import type * as dicts from '../../cogs/structs/dicts.js';
import * as resources from '../../cogs/structs/resources.js';
import type * as callbacks from './callbacks.js';
import type * as filters from './filters.js';
import * as parsing from './options.js';
import * as selectors from './selectors.js';

/** How arbitrary errors are treated (R-ERRORS-3); `null` in a descriptor means the kind's default. */
export type ErrorsModeName = parsing.ErrorsModeName;
/** Options as received by the builders. */
export type RawOptions = parsing.RawOptions;

/** A handler function as stored: called with one arguments object (R-API-3). */
export type HandlerFn = { bivarianceHack(args: object): unknown }['bivarianceHack'];
/** A callback of an option (e.g. `initialDelay`), called with the handler's arguments. */
export type OptionCallback<T> = parsing.OptionCallback<T>;

interface HandlerBase {
  readonly id: string;
  readonly fn: HandlerFn;
  readonly param: unknown;
}

/** Retry options of retriable kinds (R-API-4); `null` = not set (defaults apply). */
export type RetryPolicy = parsing.RetryPolicy;

/** Everything a resource handler has: its selector and its filters. */
export interface ResourceHandlerBase extends HandlerBase, filters.FilterSpec {
  /** `null` for sub-handlers (they inherit their parent's object). */
  readonly selector: selectors.Selector | null;
}

/** Create/update/delete/resume/field handlers and sub-handlers. */
export interface ChangingHandler extends ResourceHandlerBase, RetryPolicy {
  readonly kind: 'change';
  /** The reason it is registered for; `null` for field handlers, resume handlers and sub-handlers. */
  readonly reason: callbacks.ChangeReason | null;
  /** Resume handlers: selected only for causes of *initial* objects (R-CAUSE-3). */
  readonly initial: boolean;
  /** Resume handlers: also selected for deletions (`deleted: true`). */
  readonly deleted: boolean;
  /** Non-optional delete handlers require the finalizer (R-FINAL-2). */
  readonly requiresFinalizer: boolean;
}

/** On-event handlers (R-EVENT). */
export interface WatchingHandler extends ResourceHandlerBase {
  readonly kind: 'event';
}

/** Daemons (R-DAEMON-1). Durations in seconds. */
export interface DaemonHandler extends ResourceHandlerBase, RetryPolicy {
  readonly kind: 'daemon';
  readonly initialDelay: number | OptionCallback<number> | null;
  readonly cancellationBackoff: number | null;
  readonly cancellationTimeout: number | null;
  readonly cancellationPolling: number | null;
}

/** Timers (R-TIMER-1). Durations in seconds. */
export interface TimerHandler extends ResourceHandlerBase, RetryPolicy {
  readonly kind: 'timer';
  readonly interval: number | null;
  readonly initialDelay: number | OptionCallback<number> | null;
  readonly sharp: boolean;
  readonly idle: number | null;
}

/** Indexers (R-INDEX-1); the id is the index name. */
export interface IndexingHandler extends ResourceHandlerBase, RetryPolicy {
  readonly kind: 'index';
}

/** Validating and mutating admission handlers (R-ADMISSION-1). */
export interface WebhookHandler extends ResourceHandlerBase {
  readonly kind: 'webhook';
  readonly type: 'validating' | 'mutating';
  /** `null` = all operations. */
  readonly operations: readonly callbacks.WebhookOperation[] | null;
  /** `null` = the main body only; `'*'` = all subresources. */
  readonly subresource: string | null;
  readonly persistent: boolean;
  readonly sideEffects: boolean;
  readonly ignoreFailures: boolean;
}

/** A kind a reconcile handler owns or watches: its descriptor and the selector that serves it. */
export interface ReconcileKind {
  readonly resource: resources.ResourceDescriptor;
  readonly selector: selectors.Selector;
}

/** A watched kind of a reconcile handler, with the map from its objects to reconciled objects. */
export interface ReconcileRelation extends ReconcileKind {
  readonly map: (object: object) => unknown;
}

/**
 * Reconcile handlers (R-RECONCILE-201): level-based, one work queue per (handler, object), outside
 * Kopf's processing cycle. Durations in seconds.
 */
export interface ReconcileHandler extends ResourceHandlerBase {
  readonly kind: 'reconcile';
  readonly selector: selectors.Selector;
  /** Children kinds: a child's change reconciles its controller owner (R-RECONCILE-202). */
  readonly owns: readonly ReconcileKind[];
  /** Related kinds: a change reconciles the objects `map` returns (R-RECONCILE-203). */
  readonly watches: readonly ReconcileRelation[];
  /** Called on deletion; only with it is a finalizer added (R-RECONCILE-207). */
  readonly finalize: HandlerFn | null;
  /** The finalizer's name when `finalize` is given; `null` otherwise. */
  readonly finalizer: string | null;
  /** The exponential back-off of failures: `min(base·2^n, max)` seconds, ±10 % jitter. */
  readonly backoff: { readonly base: number; readonly max: number };
}

/** A converter as stored: one object of one version in, the object in the other version out. */
export type ConverterFn = { bivarianceHack(object: object, context: object): unknown }['bivarianceHack'];

/**
 * A pair of converters between two versions of one kind (R-CONVERT-201): `forward` from `from` to
 * `to`, `backward` the other way. Not a resource handler: it is selected by the conversion engine
 * per version pair, never by a processing cycle.
 */
export interface ConversionHandler {
  readonly kind: 'conversion';
  /** Default `<from.version>-<to.version>`. */
  readonly id: string;
  readonly from: resources.ResourceDescriptor;
  readonly to: resources.ResourceDescriptor;
  readonly forward: ConverterFn;
  readonly backward: ConverterFn;
  /** The `param` option, given to the converters in their context. */
  readonly param: unknown;
}

/** Startup, cleanup, login and probe handlers (R-ACTIVITY, R-AUTH-1). */
export interface ActivityHandler extends HandlerBase, RetryPolicy {
  readonly kind: 'activity';
  readonly activity: callbacks.ActivityName;
}

/** Any resource handler. */
export type ResourceHandler = ChangingHandler | WatchingHandler | DaemonHandler | TimerHandler | IndexingHandler | WebhookHandler | ReconcileHandler;
/** Any handler. */
export type Handler = ResourceHandler | ActivityHandler | ConversionHandler;
/** Daemons and timers: the handlers spawned per object. */
export type SpawningHandler = DaemonHandler | TimerHandler;

/** The default errors mode of a handler kind when none is given (R-ERRORS-3). */
export function defaultErrorsMode(handler: Handler): ErrorsModeName {
  switch (handler.kind) {
    case 'event':
    case 'index':
      return 'IGNORED';
    case 'webhook':
    case 'conversion':
      return 'PERMANENT';
    default:
      return 'TEMPORARY';
  }
}

/**
 * The id of a handler (R-HANDLERS-2): `id` if given, else the function's name; plus `/<field>`.
 * Throws a `TypeError` for anonymous functions without an `id`.
 *
 * @example
 * handlerId(function relabel() {}, undefined, ['metadata', 'labels']) // 'relabel/metadata.labels'
 */
export function handlerId(fn: HandlerFn, id: unknown, field: dicts.FieldPath | null): string {
  if (id !== undefined && id !== null && (typeof id !== 'string' || id === '')) {
    throw new TypeError(`A handler id must be a non-empty string, got ${String(id)}.`);
  }
  const base = (id as string | undefined | null) ?? fn.name;
  if (!base) {
    throw new TypeError('Cannot derive a stable handler id from an anonymous function: name the function or pass the `id` option.');
  }
  return field ? `${base}/${field.join('.')}` : base;
}

function checkFn(fn: unknown, registration: parsing.Registration): HandlerFn {
  if (typeof fn !== 'function') throw new TypeError(`on.${registration}() needs a handler function, got ${String(fn)}.`);
  return fn as HandlerFn;
}

function resolveField(options: RawOptions, positional: unknown): dicts.FieldPath | null {
  if (positional !== undefined && parsing.given(options['field'])) throw new TypeError("The field is given twice: positionally and as the 'field' option.");
  return parsing.parseFieldOption(positional !== undefined ? positional : options['field']);
}

/** How a change registration differs by function (`on.create`, `on.resume`, …). */
export interface ChangingHow {
  readonly registration: 'create' | 'update' | 'delete' | 'resume' | 'field' | 'subhandler';
  readonly selector: selectors.Selector | null;
  /** A positional field (`on.field(ref, 'spec.x', …)`). */
  readonly field?: dicts.FieldSpec;
  /** Sub-handlers: the parent's id, prefixed as `<parent>/<id>` (R-HANDLERS-13). */
  readonly parentId?: string;
  /** Sub-handlers: whether the field must change (Kopf inherits the parent's); default by registration. */
  readonly fieldNeedsChange?: boolean;
}

/** Builds a change handler descriptor (create, update, delete, resume, field, sub-handler). */
export function changingHandler(fn: unknown, options: RawOptions, how: ChangingHow): ChangingHandler {
  const { registration } = how;
  const handlerFn = checkFn(fn, registration);
  parsing.checkOptionKeys(registration, options);
  const field = resolveField(options, how.field);
  if (registration === 'field' && field === null) throw new TypeError('on.field() requires a field.');
  const ownId = handlerId(handlerFn, options['id'], field);
  const reasons: Partial<Record<ChangingHow['registration'], callbacks.ChangeReason>> = { create: 'create', update: 'update', delete: 'delete' };
  return Object.freeze({
    kind: 'change',
    id: how.parentId ? `${how.parentId}/${ownId}` : ownId,
    fn: handlerFn,
    param: options['param'],
    selector: how.selector,
    ...parsing.retryPolicy(options),
    ...parsing.filterSpec(options, field, how.fieldNeedsChange ?? (registration === 'update' || registration === 'field')),
    reason: reasons[registration] ?? null,
    initial: registration === 'resume',
    deleted: registration === 'resume' && parsing.flag(options, 'deleted'),
    requiresFinalizer: registration === 'delete' && !parsing.flag(options, 'optional'),
  });
}

/** Builds an on-event handler descriptor. */
export function watchingHandler(fn: unknown, options: RawOptions, selector: selectors.Selector): WatchingHandler {
  const handlerFn = checkFn(fn, 'event');
  parsing.checkOptionKeys('event', options);
  const field = resolveField(options, undefined);
  return Object.freeze({
    kind: 'event',
    id: handlerId(handlerFn, options['id'], field),
    fn: handlerFn,
    param: options['param'],
    selector,
    ...parsing.filterSpec(options, field, false),
  });
}

/** Builds a daemon handler descriptor. */
export function daemonHandler(fn: unknown, options: RawOptions, selector: selectors.Selector): DaemonHandler {
  const handlerFn = checkFn(fn, 'daemon');
  parsing.checkOptionKeys('daemon', options);
  const field = resolveField(options, undefined);
  return Object.freeze({
    kind: 'daemon',
    id: handlerId(handlerFn, options['id'], field),
    fn: handlerFn,
    param: options['param'],
    selector,
    ...parsing.retryPolicy(options),
    ...parsing.filterSpec(options, field, false),
    initialDelay: parsing.delayOrCallback(options, 'initialDelay'),
    cancellationBackoff: parsing.seconds(options, 'cancellationBackoff'),
    cancellationTimeout: parsing.seconds(options, 'cancellationTimeout'),
    cancellationPolling: parsing.seconds(options, 'cancellationPolling'),
  });
}

/** Builds a timer handler descriptor. */
export function timerHandler(fn: unknown, options: RawOptions, selector: selectors.Selector): TimerHandler {
  const handlerFn = checkFn(fn, 'timer');
  parsing.checkOptionKeys('timer', options);
  const field = resolveField(options, undefined);
  return Object.freeze({
    kind: 'timer',
    id: handlerId(handlerFn, options['id'], field),
    fn: handlerFn,
    param: options['param'],
    selector,
    ...parsing.retryPolicy(options),
    ...parsing.filterSpec(options, field, false),
    interval: parsing.positiveSeconds(options, 'interval'),
    initialDelay: parsing.delayOrCallback(options, 'initialDelay'),
    sharp: parsing.flag(options, 'sharp'),
    idle: parsing.seconds(options, 'idle'),
  });
}

/** Builds an indexer descriptor (no field suffix: the id is the index name). */
export function indexingHandler(fn: unknown, options: RawOptions, selector: selectors.Selector): IndexingHandler {
  const handlerFn = checkFn(fn, 'index');
  parsing.checkOptionKeys('index', options);
  const field = resolveField(options, undefined);
  return Object.freeze({
    kind: 'index',
    id: handlerId(handlerFn, options['id'], null),
    fn: handlerFn,
    param: options['param'],
    selector,
    ...parsing.retryPolicy(options),
    ...parsing.filterSpec(options, field, false),
  });
}

/** The path prefix of conversion webhooks (`convert/<plural>.<group>`), which no admission handler id may take. */
export const CONVERSION_PATH_PREFIX = 'convert/';

/** Builds a validating or mutating admission handler descriptor. */
export function webhookHandler(fn: unknown, options: RawOptions, selector: selectors.Selector, type: 'validating' | 'mutating'): WebhookHandler {
  const registration = type === 'validating' ? 'validate' : 'mutate';
  const handlerFn = checkFn(fn, registration);
  parsing.checkOptionKeys(registration, options);
  const field = resolveField(options, undefined);
  const id = handlerId(handlerFn, options['id'], field);
  if (id.startsWith(CONVERSION_PATH_PREFIX)) {
    throw new TypeError(
      `The admission handler id ${JSON.stringify(id)} starts with "${CONVERSION_PATH_PREFIX}", which is reserved for conversion webhooks (R-CONVERT-210): choose another id.`,
    );
  }
  return Object.freeze({
    kind: 'webhook',
    id,
    fn: handlerFn,
    param: options['param'],
    selector,
    ...parsing.filterSpec(options, field, false),
    type,
    operations: parsing.operations(options),
    subresource: parsing.subresource(options),
    persistent: parsing.flag(options, 'persistent'),
    sideEffects: parsing.flag(options, 'sideEffects'),
    ignoreFailures: parsing.flag(options, 'ignoreFailures'),
  });
}

/** Builds an activity handler descriptor (`startup`, `cleanup`, `login`, `probe`). */
export function activityHandler(fn: unknown, options: RawOptions, registration: 'startup' | 'cleanup' | 'login' | 'probe'): ActivityHandler {
  const handlerFn = checkFn(fn, registration);
  parsing.checkOptionKeys(registration, options);
  return Object.freeze({
    kind: 'activity',
    id: handlerId(handlerFn, options['id'], null),
    fn: handlerFn,
    param: options['param'],
    ...parsing.retryPolicy(options),
    activity: registration === 'login' ? 'authentication' : registration,
  });
}

/**
 * Builds a reconcile handler descriptor (R-RECONCILE-201): `owns` and `watches` entries must be
 * descriptors (a watch is served per kind), `map` a function, `finalizer` a domain-qualified name
 * (only with `finalize`), `backoff` positive seconds.
 */
export function reconcileHandler(fn: unknown, options: RawOptions, selector: selectors.Selector): ReconcileHandler {
  const handlerFn = checkFn(fn, 'reconcile');
  parsing.checkOptionKeys('reconcile', options);
  const finalize = options['finalize'];
  if (finalize !== undefined && finalize !== null && typeof finalize !== 'function') throw new TypeError("The option 'finalize' must be a function.");
  const named = parsing.finalizerName(options);
  if (named !== null && typeof finalize !== 'function')
    throw new TypeError("The option 'finalizer' needs the option 'finalize' (no finalizer is added without it).");
  const kind = (resource: resources.ResourceDescriptor): ReconcileKind => Object.freeze({ resource, selector: selectors.parseSelector(resource) });
  return Object.freeze({
    kind: 'reconcile',
    id: handlerId(handlerFn, options['id'], null),
    fn: handlerFn,
    param: options['param'],
    selector,
    ...parsing.filterSpec(options, null, false),
    owns: Object.freeze(parsing.ownedKinds(options).map(kind)),
    watches: Object.freeze(parsing.watchedRelations(options).map((w) => Object.freeze({ ...kind(w.resource), map: w.map }))),
    finalize: typeof finalize === 'function' ? (finalize as HandlerFn) : null,
    finalizer: typeof finalize === 'function' ? (named ?? parsing.DEFAULT_RECONCILE_FINALIZER) : null,
    backoff: parsing.reconcileBackoff(options),
  });
}

/** `group/plural` of a descriptor, as messages name a kind's resource. */
function crdNameOf(descriptor: resources.ResourceDescriptor): string {
  return descriptor.group ? `${descriptor.plural}.${descriptor.group}` : descriptor.plural;
}

/**
 * Builds a conversion descriptor (R-CONVERT-201/202): `from` and `to` must be descriptors of two
 * versions of one kind (same group, plural and kind, different versions), `forward` and `backward`
 * functions; the id defaults to `<from.version>-<to.version>`.
 */
export function conversionHandler(from: unknown, to: unknown, options: RawOptions): ConversionHandler {
  if (!resources.isDescriptor(from) || !resources.isDescriptor(to)) {
    throw new TypeError('on.convert() needs two resource descriptors (the generated ones of two versions of one kind).');
  }
  parsing.checkOptionKeys('convert', options);
  if (from.group !== to.group || from.plural !== to.plural || from.kind !== to.kind) {
    throw new TypeError(`on.convert() converts between versions of one kind, but got ${from.kind} (${crdNameOf(from)}) and ${to.kind} (${crdNameOf(to)}).`);
  }
  if (from.version === to.version) {
    throw new TypeError(`on.convert() needs two different versions of ${crdNameOf(from)}, got ${from.version} twice.`);
  }
  const forward = options['forward'];
  const backward = options['backward'];
  for (const [name, value] of [
    ['forward', forward],
    ['backward', backward],
  ] as const) {
    if (typeof value !== 'function') {
      throw new TypeError(`on.convert(${from.version} → ${to.version}) of ${crdNameOf(from)} needs the option '${name}' as a function, got ${String(value)}.`);
    }
  }
  const id = options['id'];
  if (id !== undefined && id !== null && (typeof id !== 'string' || id === '')) {
    throw new TypeError(`A conversion id must be a non-empty string, got ${String(id)}.`);
  }
  return Object.freeze({
    kind: 'conversion',
    id: (id as string | undefined | null) ?? `${from.version}-${to.version}`,
    from,
    to,
    forward: forward as ConverterFn,
    backward: backward as ConverterFn,
    param: options['param'],
  });
}
