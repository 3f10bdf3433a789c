/**
 * Registration functions: `on.create(Widgets, fn)`, `on.field(Widgets, 'spec.replicas', fn)`, … —
 * Kopf's `@kopf.on.*` decorators as plain functions (R-API-1/2).
 *
 * Each function parses the resource reference (`core/intents/selectors`), validates the options and
 * builds a handler descriptor (`core/intents/handlers`), stores it in `options.registry` or the
 * default registry (`core/intents/registry`), and returns the function unchanged, so registrations
 * stack: `on.create(W, on.resume(W, fn))`.
 *
 * Types come from the reference: a descriptor (`resource<Widget>(…)`, `builtins.Pods`) types every
 * handler argument (`spec: WidgetSpec`, `patch: Patch<Widget>`, `old`/`new` as essences, or as the
 * field's type for field handlers) with no generics at call sites; strings, tuples, selector objects
 * and predicates give untyped `Record<string, unknown>` bodies. A generated descriptor also carries
 * its kind's patch view, which types `patch` instead of `Patch<Widget>` (`ViewOfRef`), and its scope,
 * which makes `namespace` a `string` for namespaced kinds and `null` for cluster-scoped ones
 * (`NamespaceOfRef`; `string | null` for references whose scope is not known).
 *
 * Admission handlers (`on.validate`, `on.mutate`) run when an admission server is configured in
 * `settings.admission.server` (R-ADMISSION; the operator refuses to start without one). Probes
 * (`on.probe`) are served by the liveness endpoint (`livenessEndpoint`, `--liveness`).
 *
 * Conversions (`on.convert(V1.Widgets, V2.Widgets, { forward, backward })`) are served by the same
 * admission server at `convert/<plural>.<group>` (R-CONVERT-201..): converters are synchronous and
 * pure, typed so that a field of one version left in the other is a compile error (`Exact`).
 *
 * Caveat: handler ids come from function names (R-HANDLERS-2). Inline arrow functions are anonymous,
 * so pass them with an `id`, or use named functions:
 * `on.create(Widgets, { id: 'greet' }, async ({ name }) => …)` or `on.create(Widgets, async function greet(…) {…})`.
 */

import type * as exactness from './cogs/structs/exactness.js';
import type * as patches from './cogs/structs/patches.js';
import type * as resources from './cogs/structs/resources.js';
import * as logging from './core/actions/logging.js';
import type * as callbacks from './core/intents/callbacks.js';
import type * as filters from './core/intents/filters.js';
import * as handlers from './core/intents/handlers.js';
import * as registries from './core/intents/registry.js';
import * as selectors from './core/intents/selectors.js';

/** The body type of a resource reference: the descriptor's body, or an untyped record. */
export type BodyOfRef<R> = R extends resources.ResourceDescriptor<infer B extends resources.KubernetesObject, unknown> ? B : callbacks.UntypedBody;

/** The patch view of a resource reference: the descriptor's, or `unknown` (the generic `Patch<Body>`). */
export type ViewOfRef<R> = resources.ViewOf<R>;

/** What `namespace` is in the handler arguments for a resource reference (R-TYPES-301). */
export type NamespaceOfRef<R> = resources.NamespaceOf<R>;

/** A handler taking `Args` with `namespace` narrowed to the scope `NS` (`callbacks.Scoped`). */
export type ScopedFn<Args, NS extends string | null> = (args: callbacks.Scoped<Args, NS>) => unknown;

/** What `old`/`new` are for a change handler: the essence, or the field's value when `P` is a field. */
export type ValueOf<Body, P> = [P] extends [never] ? callbacks.EssenceOf<Body> : callbacks.PathValue<Body, P>;

/** Options of every registration function (R-API-4). */
export interface CommonOptions {
  /** The handler id; defaults to the function's name (required for anonymous functions). */
  readonly id?: string;
  /** Passed to the handler as `param` (R-HANDLERS-12). */
  readonly param?: unknown;
  /** The registry to register in; defaults to `getDefaultRegistry()`. */
  readonly registry?: registries.OperatorRegistry;
}

/** Retry options of change handlers, daemons, timers, indexers and activities (R-ERRORS). */
export interface RetryOptions {
  /** How arbitrary errors are treated; the default depends on the handler kind. */
  readonly errors?: handlers.ErrorsModeName;
  /** Seconds since the first attempt after which the handler fails (default: none). */
  readonly timeout?: number;
  /** Maximum number of invocations (default: unlimited). */
  readonly retries?: number;
  /** Seconds between retries after arbitrary errors (default: `settings.execution.defaultBackoff`). */
  readonly backoff?: number;
}

/**
 * What filter callbacks receive (R-FILTERS-6): the handler's arguments, minus what exists only
 * during an invocation — the retry fields and a daemon's or timer's stop flag.
 */
export type FilterArgs<Args> = Omit<Args, keyof callbacks.RetryArgs | 'stopped'>;

/** Label, annotation and `when` filters (R-FILTERS-2/6); callbacks get the handler's arguments. */
export interface FilterOptions<Args> {
  readonly labels?: filters.MetaFilters<FilterArgs<Args>>;
  readonly annotations?: filters.MetaFilters<FilterArgs<Args>>;
  readonly when?: filters.WhenFilter<FilterArgs<Args>>;
}

/** A field and a value filter on it (R-FILTERS-3/4); `P` is the field, checked against the body type. */
export interface FieldValueOptions<Body, P, Args> {
  readonly field?: P;
  readonly value?: filters.ValueFilter<callbacks.PathValue<Body, P>, FilterArgs<Args>>;
}

/** `old`/`new` filters of field changes (R-FILTERS-5). */
export interface ChangeFilterOptions<V, Args> {
  readonly old?: filters.ValueFilter<V, FilterArgs<Args>>;
  readonly new?: filters.ValueFilter<V, FilterArgs<Args>>;
}

type ChangeBase<Body extends object, P, View> = CommonOptions &
  RetryOptions &
  FilterOptions<callbacks.ChangingArgs<Body, ValueOf<Body, P>, View>> &
  FieldValueOptions<Body, P, callbacks.ChangingArgs<Body, ValueOf<Body, P>, View>>;

export type CreateOptions<Body extends object, P = never, View = unknown> = ChangeBase<Body, P, View>;
export type UpdateOptions<Body extends object, P = never, View = unknown> = ChangeBase<Body, P, View> &
  ChangeFilterOptions<callbacks.PathValue<Body, P>, callbacks.ChangingArgs<Body, ValueOf<Body, P>, View>>;
export type DeleteOptions<Body extends object, P = never, View = unknown> = ChangeBase<Body, P, View> & {
  /** Optional delete handlers do not require the finalizer (R-HANDLERS-9). */
  readonly optional?: boolean;
};
export type ResumeOptions<Body extends object, P = never, View = unknown> = ChangeBase<Body, P, View> & {
  /** Also resume objects that are being deleted. */
  readonly deleted?: boolean;
};
/** Options of `on.field(ref, field, options, fn)` (the field is positional). */
export type FieldOptions<Body extends object, V, View = unknown> = CommonOptions &
  RetryOptions &
  FilterOptions<callbacks.ChangingArgs<Body, V, View>> & {
    readonly value?: filters.ValueFilter<V, FilterArgs<callbacks.ChangingArgs<Body, V, View>>>;
  } & ChangeFilterOptions<V, callbacks.ChangingArgs<Body, V, View>>;

export type WatchingOptions<Body extends object, P = never, View = unknown> = CommonOptions &
  FilterOptions<callbacks.WatchingArgs<Body, View>> &
  FieldValueOptions<Body, P, callbacks.WatchingArgs<Body, View>>;
export type DaemonOptions<Body extends object, P = never, View = unknown> = CommonOptions &
  RetryOptions &
  FilterOptions<callbacks.DaemonArgs<Body, View>> &
  FieldValueOptions<Body, P, callbacks.DaemonArgs<Body, View>> & {
    /** Seconds before the first invocation, or a callback computing them. */
    readonly initialDelay?: number | ((args: callbacks.DaemonArgs<Body, View>) => number);
    /** Seconds of graceful stopping before the forced stage (R-DAEMON-6). */
    readonly cancellationBackoff?: number;
    /** Seconds of the forced stage before the daemon is abandoned. */
    readonly cancellationTimeout?: number;
    /** Seconds between checks while waiting for a daemon to exit. */
    readonly cancellationPolling?: number;
  };
export type TimerOptions<Body extends object, P = never, View = unknown> = CommonOptions &
  RetryOptions &
  FilterOptions<callbacks.TimerArgs<Body, View>> &
  FieldValueOptions<Body, P, callbacks.TimerArgs<Body, View>> & {
    /** Seconds between invocations. */
    readonly interval?: number;
    /** Seconds before the first invocation, or a callback computing them. */
    readonly initialDelay?: number | ((args: callbacks.TimerArgs<Body, View>) => number);
    /** Keep a fixed grid of invocations regardless of their duration. */
    readonly sharp?: boolean;
    /** Seconds without essential changes before invoking. */
    readonly idle?: number;
  };
export type IndexingOptions<Body extends object, P = never, View = unknown> = CommonOptions &
  RetryOptions &
  FilterOptions<callbacks.IndexingArgs<Body, View>> &
  FieldValueOptions<Body, P, callbacks.IndexingArgs<Body, View>>;
export type WebhookOptions<Body extends object, P = never, View = unknown> = CommonOptions &
  FilterOptions<callbacks.WebhookArgs<Body, View>> &
  FieldValueOptions<Body, P, callbacks.WebhookArgs<Body, View>> & {
    /** Default: all operations. */
    readonly operations?: readonly callbacks.WebhookOperation[];
    /** @deprecated Use `operations`. */
    readonly operation?: callbacks.WebhookOperation;
    /** A subresource, or `'*'` for all; default: the main body only. */
    readonly subresource?: string;
    /** Keep the webhook configured after the operator exits. */
    readonly persistent?: boolean;
    readonly sideEffects?: boolean;
    readonly ignoreFailures?: boolean;
  };
export type ActivityOptions = CommonOptions & RetryOptions;

interface ChangingKinds<Body extends object, P, View> {
  create: CreateOptions<Body, P, View>;
  update: UpdateOptions<Body, P, View>;
  delete: DeleteOptions<Body, P, View>;
  resume: ResumeOptions<Body, P, View>;
}

interface ResourceKinds<Body extends object, P, View, NS extends string | null = string | null> {
  event: { options: WatchingOptions<Body, P, View>; fn: ScopedFn<callbacks.WatchingArgs<Body, View>, NS> };
  daemon: { options: DaemonOptions<Body, P, View>; fn: ScopedFn<callbacks.DaemonArgs<Body, View>, NS> };
  timer: { options: TimerOptions<Body, P, View>; fn: ScopedFn<callbacks.TimerArgs<Body, View>, NS> };
  webhook: { options: WebhookOptions<Body, P, View>; fn: ScopedFn<callbacks.WebhookArgs<Body, View>, NS> };
}

type ChangingFnOf<R, Value = callbacks.EssenceOf<BodyOfRef<R>>> = ScopedFn<callbacks.ChangingArgs<BodyOfRef<R>, Value, ViewOfRef<R>>, NamespaceOfRef<R>>;

/** The shape of `on.create`, `on.update`, `on.delete`, `on.resume`. */
export interface ChangingRegistrar<K extends keyof ChangingKinds<object, never, unknown>> {
  <const R extends selectors.ResourceRef>(ref: R, fn: ChangingFnOf<R>): ChangingFnOf<R>;
  <const R extends selectors.ResourceRef, const P extends callbacks.FieldRef<BodyOfRef<R>> = never>(
    ref: R,
    options: ChangingKinds<BodyOfRef<R>, P, ViewOfRef<R>>[K],
    fn: ChangingFnOf<R, ValueOf<BodyOfRef<R>, P>>,
  ): ChangingFnOf<R, ValueOf<BodyOfRef<R>, P>>;
}

/** The shape of `on.field`: the field positionally (type-checked dotted path) or as an option. */
export interface FieldRegistrar {
  <const R extends selectors.ResourceRef, const P extends callbacks.FieldRef<BodyOfRef<R>>>(
    ref: R,
    field: P,
    fn: ChangingFnOf<R, callbacks.PathValue<BodyOfRef<R>, P>>,
  ): ChangingFnOf<R, callbacks.PathValue<BodyOfRef<R>, P>>;
  <const R extends selectors.ResourceRef, const P extends callbacks.FieldRef<BodyOfRef<R>>>(
    ref: R,
    field: P,
    options: FieldOptions<BodyOfRef<R>, callbacks.PathValue<BodyOfRef<R>, P>, ViewOfRef<R>>,
    fn: ChangingFnOf<R, callbacks.PathValue<BodyOfRef<R>, P>>,
  ): ChangingFnOf<R, callbacks.PathValue<BodyOfRef<R>, P>>;
  <const R extends selectors.ResourceRef, const P extends callbacks.FieldRef<BodyOfRef<R>>>(
    ref: R,
    options: FieldOptions<BodyOfRef<R>, callbacks.PathValue<BodyOfRef<R>, P>, ViewOfRef<R>> & { readonly field: P },
    fn: ChangingFnOf<R, callbacks.PathValue<BodyOfRef<R>, P>>,
  ): ChangingFnOf<R, callbacks.PathValue<BodyOfRef<R>, P>>;
}

/** The shape of `on.event`, `on.daemon`, `on.timer`, `on.index`, `on.validate`, `on.mutate`. */
export interface ResourceRegistrar<K extends keyof ResourceKinds<object, never, unknown>> {
  <const R extends selectors.ResourceRef>(
    ref: R,
    fn: ResourceKinds<BodyOfRef<R>, never, ViewOfRef<R>, NamespaceOfRef<R>>[K]['fn'],
  ): ResourceKinds<BodyOfRef<R>, never, ViewOfRef<R>, NamespaceOfRef<R>>[K]['fn'];
  <const R extends selectors.ResourceRef, const P extends callbacks.FieldRef<BodyOfRef<R>> = never>(
    ref: R,
    options: ResourceKinds<BodyOfRef<R>, P, ViewOfRef<R>>[K]['options'],
    fn: ResourceKinds<BodyOfRef<R>, P, ViewOfRef<R>, NamespaceOfRef<R>>[K]['fn'],
  ): ResourceKinds<BodyOfRef<R>, P, ViewOfRef<R>, NamespaceOfRef<R>>[K]['fn'];
}

/**
 * The shape of `on.index`: like the other resource registrations, but the function's own type is
 * kept (not widened to `IndexingFn`), so that `IndexOf<typeof fn>` knows the index's key and value
 * types from what the function returns.
 */
export interface IndexRegistrar {
  <const R extends selectors.ResourceRef, F extends ScopedFn<callbacks.IndexingArgs<BodyOfRef<R>, ViewOfRef<R>>, NamespaceOfRef<R>>>(ref: R, fn: F): F;
  <
    const R extends selectors.ResourceRef,
    F extends ScopedFn<callbacks.IndexingArgs<BodyOfRef<R>, ViewOfRef<R>>, NamespaceOfRef<R>>,
    const P extends callbacks.FieldRef<BodyOfRef<R>> = never,
  >(
    ref: R,
    options: IndexingOptions<BodyOfRef<R>, P, ViewOfRef<R>>,
    fn: F,
  ): F;
}

/** The owned children of a reconcile handler: one array per `owns` entry, in order (`[Job[]]`). */
export type OwnedOf<Owns extends readonly resources.ResourceDescriptor[]> = { readonly [K in keyof Owns]: readonly resources.BodyOf<Owns[K]>[] };

/** A watched kind of `on.reconcile` and the map from its objects to the reconciled objects' keys. */
export interface WatchEntry<D extends resources.ResourceDescriptor> {
  readonly resource: D;
  /** The reconciled objects a change of `object` concerns (`namespace` defaults to the object's own). */
  readonly map: (object: resources.BodyOf<D>) => callbacks.ObjectRef | readonly callbacks.ObjectRef[] | null | undefined;
}

/**
 * The arguments of a reconcile handler registered for `R` owning `Owns`, `namespace` typed by the
 * scope of `R` (R-TYPES-301).
 */
export type ReconcileArgsOf<R, Owns extends readonly resources.ResourceDescriptor[] = readonly []> = callbacks.Scoped<
  callbacks.ReconcileArgs<BodyOfRef<R>, ViewOfRef<R>, OwnedOf<Owns>>,
  NamespaceOfRef<R>
>;

/** A reconcile handler (or its `finalize`) registered for `R` owning `Owns`. */
export type ReconcileFnOf<R, Owns extends readonly resources.ResourceDescriptor[] = readonly []> = (
  args: ReconcileArgsOf<R, Owns>,
) => callbacks.Awaitable<callbacks.ReconcileResult>;

/**
 * Options of `on.reconcile` (R-RECONCILE): the children it owns, the kinds it watches, finalizing,
 * back-off. `NS` types the `namespace` of `finalize`'s arguments by the resource's scope (R-TYPES-301).
 */
export interface ReconcileOptions<
  Body extends object,
  Owns extends readonly resources.ResourceDescriptor[] = readonly [],
  Watched extends readonly resources.ResourceDescriptor[] = readonly [],
  View = unknown,
  NS extends string | null = string | null,
> extends CommonOptions,
    FilterOptions<callbacks.ReconcileArgs<Body, View, OwnedOf<Owns>>> {
  /** Children kinds: a child's change reconciles its controller owner; typed as `owned` (R-RECONCILE-202). */
  readonly owns?: Owns;
  /** Related kinds and how their objects map to reconciled objects (R-RECONCILE-203). */
  readonly watches?: { readonly [K in keyof Watched]: WatchEntry<Watched[K]> };
  /** Called when the object is being deleted; only with it is a finalizer added (R-RECONCILE-207). */
  readonly finalize?: (args: callbacks.Scoped<callbacks.ReconcileArgs<Body, View, OwnedOf<Owns>>, NS>) => callbacks.Awaitable<callbacks.ReconcileResult>;
  /** The finalizer's name (default `kopf-gen.dev/reconcile`); needs `finalize`. */
  readonly finalizer?: string;
  /** The failures' exponential back-off in seconds: `min(base·2^n, max)`, ±10 % jitter (default 0.005 and 1000). */
  readonly backoff?: { readonly base?: number; readonly max?: number };
}

/** The shape of `on.reconcile`. */
export interface ReconcileRegistrar {
  <const R extends selectors.ResourceRef>(ref: R, fn: ReconcileFnOf<R>): ReconcileFnOf<R>;
  <
    const R extends selectors.ResourceRef,
    const Owns extends readonly resources.ResourceDescriptor[] = readonly [],
    const Watched extends readonly resources.ResourceDescriptor[] = readonly [],
  >(
    ref: R,
    options: ReconcileOptions<BodyOfRef<R>, Owns, Watched, ViewOfRef<R>, NamespaceOfRef<R>>,
    fn: ReconcileFnOf<R, Owns>,
  ): ReconcileFnOf<R, Owns>;
}

/**
 * The converters of `on.convert(From, To, options)`: `forward` from `From`'s version to `To`'s,
 * `backward` the other way (R-CONVERT-201). Each returns the object in its target version, with
 * nothing of the source version the target does not declare (`Exact`: a compile error naming the
 * field otherwise). Converters are synchronous and pure; `context` has the object's logger.
 */
export interface ConvertOptions<From extends resources.ResourceDescriptor, To extends resources.ResourceDescriptor, R1, R2> {
  /** Default `<from version>-<to version>`, e.g. `v1-v2`. */
  readonly id?: string;
  /** The registry to register in; defaults to `getDefaultRegistry()`. */
  readonly registry?: registries.OperatorRegistry;
  /** Any value, given to the converters as `context.param` (as `param` to other handlers). */
  readonly param?: unknown;
  forward(object: resources.BodyOf<From>, context: callbacks.ConversionContext): R1 & exactness.Exact<resources.BodyOf<To>, R1>;
  backward(object: resources.BodyOf<To>, context: callbacks.ConversionContext): R2 & exactness.Exact<resources.BodyOf<From>, R2>;
}

/**
 * What `on.convert` returns: the registered pair, with the user's converters callable directly (in
 * tests), given a default context (a logger of the object, the target's `apiVersion` as desired).
 */
export interface Conversion<From extends resources.ResourceDescriptor, To extends resources.ResourceDescriptor> {
  readonly id: string;
  readonly from: From;
  readonly to: To;
  forward(object: resources.BodyOf<From>): resources.BodyOf<To>;
  backward(object: resources.BodyOf<To>): resources.BodyOf<From>;
}

/** The shape of `on.convert`. */
export type ConvertRegistrar = <
  const From extends resources.ResourceDescriptor,
  const To extends resources.ResourceDescriptor,
  // `const` keeps the literals of an inline converter's result (`apiVersion`), and ReadonlyDeep
  // admits the readonly lists that `const` inference gives array literals (see exactness.ts).
  const R1 extends patches.ReadonlyDeep<resources.BodyOf<To>>,
  const R2 extends patches.ReadonlyDeep<resources.BodyOf<From>>,
>(
  from: From,
  to: To,
  options: ConvertOptions<From, To, R1, R2>,
) => Conversion<From, To>;

/** The shape of `on.startup`, `on.cleanup`, `on.login`, `on.probe`. */
export interface ActivityRegistrar {
  <F extends callbacks.ActivityFn>(fn: F): F;
  <F extends callbacks.ActivityFn>(options: ActivityOptions, fn: F): F;
}

function registryOf(options: handlers.RawOptions): registries.OperatorRegistry {
  const registry = options['registry'];
  if (registry === undefined || registry === null) return registries.getDefaultRegistry();
  if (!(registry instanceof registries.OperatorRegistry)) throw new TypeError("The option 'registry' must be an OperatorRegistry.");
  return registry;
}

function split(a: unknown, b: unknown): [handlers.RawOptions, unknown] {
  return b === undefined ? [{}, a] : [(a ?? {}) as handlers.RawOptions, b];
}

// Every registration function records where it was called from (the frame above itself), so that
// a duplicate handler id can be reported with both places (R-HANDLERS-15).

function changing(registration: 'create' | 'update' | 'delete' | 'resume'): (ref: selectors.ResourceRef, a: unknown, b?: unknown) => unknown {
  const registrar = (ref: selectors.ResourceRef, a: unknown, b?: unknown): unknown => {
    const site = new registries.RegistrationSite(registrar);
    const [options, fn] = split(a, b);
    const handler = handlers.changingHandler(fn, options, { registration, selector: selectors.parseSelector(ref) });
    registryOf(options).register(handler, { site });
    return fn;
  };
  return registrar;
}

function resourceRegistrar(build: (fn: unknown, options: handlers.RawOptions, selector: selectors.Selector) => handlers.ResourceHandler) {
  const registrar = (ref: selectors.ResourceRef, a: unknown, b?: unknown): unknown => {
    const site = new registries.RegistrationSite(registrar);
    const [options, fn] = split(a, b);
    registryOf(options).register(build(fn, options, selectors.parseSelector(ref)), { site });
    return fn;
  };
  return registrar;
}

function activity(registration: 'startup' | 'cleanup' | 'login' | 'probe') {
  const registrar = (a: unknown, b?: unknown): unknown => {
    const site = new registries.RegistrationSite(registrar);
    const [options, fn] = split(a, b);
    registryOf(options).register(handlers.activityHandler(fn, options, registration), { site });
    return fn;
  };
  return registrar;
}

function fieldRegistration(ref: selectors.ResourceRef, a: unknown, b?: unknown, c?: unknown): unknown {
  const site = new registries.RegistrationSite(fieldRegistration);
  const positional = typeof a === 'string' || Array.isArray(a);
  const [options, fn] = positional ? split(b, c) : split(a, b);
  const handler = handlers.changingHandler(fn, options, {
    registration: 'field',
    selector: selectors.parseSelector(ref),
    ...(positional ? { field: a as string | string[] } : {}),
  });
  registryOf(options).register(handler, { site });
  return fn;
}

/** The context of a converter called directly (not by a review): the object's logger, the target version. */
function directContext(object: unknown, desiredApiVersion: string, param: unknown): callbacks.ConversionContext {
  return { logger: logging.objectLogger({ body: object, local: true }), desiredApiVersion, param };
}

function convertRegistration(from: unknown, to: unknown, options: unknown): unknown {
  const raw = (options ?? {}) as handlers.RawOptions;
  const handler = handlers.conversionHandler(from, to, raw);
  registryOf(raw).register(handler);
  return Object.freeze({
    id: handler.id,
    from: handler.from,
    to: handler.to,
    forward: (object: object) => handler.forward(object, directContext(object, handler.to.apiVersion, handler.param)),
    backward: (object: object) => handler.backward(object, directContext(object, handler.from.apiVersion, handler.param)),
  });
}

/** The registration functions. Kopf: `kopf.on`. */
export interface On {
  /** Runs once at operator start, before anything talks to the cluster (R-ACTIVITY-1). */
  readonly startup: ActivityRegistrar;
  /** Runs once at graceful exit (R-ACTIVITY-2). */
  readonly cleanup: ActivityRegistrar;
  /** Returns the credentials to use (R-AUTH-1); replaces the built-in logins. */
  readonly login: ActivityRegistrar;
  /**
   * Contributes its result, under its id, to the liveness endpoint (R-ACTIVITY-4, `--liveness`):
   * evaluated at most every 10 seconds, only while that endpoint is served (docs/health.md).
   */
  readonly probe: ActivityRegistrar;
  /** Objects that existed at operator start (R-HANDLERS-10). */
  readonly resume: ChangingRegistrar<'resume'>;
  readonly create: ChangingRegistrar<'create'>;
  /** Essential changes; with `field`, only changes of that field (R-HANDLERS-11). */
  readonly update: ChangingRegistrar<'update'>;
  /** Deletion (with the finalizer unless `optional`, R-HANDLERS-9). */
  readonly delete: ChangingRegistrar<'delete'>;
  /** Changes of one field, on any reason (R-CAUSE-4). */
  readonly field: FieldRegistrar;
  /** Every watch-event, no retries (R-EVENT). */
  readonly event: ResourceRegistrar<'event'>;
  /** An in-memory index named by the handler id (R-INDEX); see `IndexOf` for typing it. */
  readonly index: IndexRegistrar;
  /** A long-running task per object (R-DAEMON). */
  readonly daemon: ResourceRegistrar<'daemon'>;
  /** A periodic task per object (R-TIMER). */
  readonly timer: ResourceRegistrar<'timer'>;
  /**
   * A validating admission webhook (R-ADMISSION): throw `AdmissionError` to deny, append to
   * `warnings` to warn. Needs `settings.admission.server` (see docs/admission.md).
   */
  readonly validate: ResourceRegistrar<'webhook'>;
  /**
   * A mutating admission webhook (R-ADMISSION): write to `patch` to mutate the object under
   * admission. Needs `settings.admission.server` (see docs/admission.md).
   */
  readonly mutate: ResourceRegistrar<'webhook'>;
  /**
   * A level-based handler (R-RECONCILE): called with the object's newest state whenever it, a child
   * it `owns` or an object it `watches` changes, on start for every object, and when a
   * `requeueAfter` comes due; at most one call in flight per object, bursts coalesced.
   */
  readonly reconcile: ReconcileRegistrar;
  /**
   * Converters between two versions of one kind (R-CONVERT-201), served as the CRD's conversion
   * webhook by `settings.admission.server` at `convert/<plural>.<group>` (see docs/conversion.md).
   * Hub-and-spoke: one call per spoke, with the hub as `to`.
   */
  readonly convert: ConvertRegistrar;
}

/**
 * The registration functions.
 *
 * @example
 * on.create(Widgets, async function greet({ spec, name, patch }) {
 *   patch.status.replicas = spec.replicas;
 *   return { message: `created ${name}` };
 * });
 * on.field(Widgets, 'spec.replicas', { id: 'scale' }, ({ old, new: now }) => { … });
 */
export const on: On = Object.freeze({
  startup: activity('startup') as ActivityRegistrar,
  cleanup: activity('cleanup') as ActivityRegistrar,
  login: activity('login') as ActivityRegistrar,
  probe: activity('probe') as ActivityRegistrar,
  resume: changing('resume') as ChangingRegistrar<'resume'>,
  create: changing('create') as ChangingRegistrar<'create'>,
  update: changing('update') as ChangingRegistrar<'update'>,
  delete: changing('delete') as ChangingRegistrar<'delete'>,
  field: fieldRegistration as FieldRegistrar,
  event: resourceRegistrar(handlers.watchingHandler) as ResourceRegistrar<'event'>,
  index: resourceRegistrar(handlers.indexingHandler) as IndexRegistrar,
  daemon: resourceRegistrar(handlers.daemonHandler) as ResourceRegistrar<'daemon'>,
  timer: resourceRegistrar(handlers.timerHandler) as ResourceRegistrar<'timer'>,
  validate: resourceRegistrar((fn, options, selector) => handlers.webhookHandler(fn, options, selector, 'validating')) as ResourceRegistrar<'webhook'>,
  mutate: resourceRegistrar((fn, options, selector) => handlers.webhookHandler(fn, options, selector, 'mutating')) as ResourceRegistrar<'webhook'>,
  reconcile: resourceRegistrar(handlers.reconcileHandler) as ReconcileRegistrar,
  convert: convertRegistration as ConvertRegistrar,
});

/** Alias of `on.daemon` (Kopf: `kopf.daemon`). */
export const daemon: ResourceRegistrar<'daemon'> = on.daemon;
/** Alias of `on.timer` (Kopf: `kopf.timer`). */
export const timer: ResourceRegistrar<'timer'> = on.timer;
/** Alias of `on.index` (Kopf: `kopf.index`). */
export const index: IndexRegistrar = on.index;
