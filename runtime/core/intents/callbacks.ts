/**
 * Handler signatures: one arguments interface per handler kind, generic over the body type, so
 * that a handler's arguments are typed by the resource it is registered for — what TypeScript adds
 * to Kopf's untyped keyword arguments (R-KWARGS). Types only.
 *
 * Kopf passes keyword arguments; kopf-gen passes one object that handlers destructure
 * (`({ spec, patch, logger }) => …`). `Body` comes from the resource descriptor the handler is
 * registered for, so `spec`, `status`, `patch`, `old`/`new` are typed without generics at call sites;
 * string and tuple references give untyped `Record<string, unknown>` bodies. A generated descriptor
 * also carries its kind's patch view (`<Kind>PatchView`), threaded here as `View` next to `Body`
 * (default `unknown`: the generic `Patch<Body>`), so that `patch` follows merge-patch rules.
 *
 * Conventions of the typed layer:
 * - `body` is read-only; `patch` is the only thing handlers write to;
 * - absent values (`old` on creation, a field that is not there) are `undefined`
 *   (Kopf: `None`); `namespace` is `null` for cluster-scoped objects, as in the runtime reference,
 *   and the registration functions narrow it by the descriptor's scope (`Scoped`, `NamespaceOf`);
 * - `memo` is typed by augmenting the empty `OperatorMemo` interface, indices by augmenting
 *   `OperatorIndices` (declaration merging):
 *
 * @example
 * declare module 'kopf-gen/runtime' {
 *   interface OperatorMemo { counter: number }
 *   interface OperatorIndices { widgetsByOwner: ReadonlyMap<string, readonly string[]> }
 * }
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as clients from '../../cogs/client/clients.js';
import type * as diffs from '../../cogs/structs/diffs.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as patches from '../../cogs/structs/patches.js';
import type * as references from '../../cogs/structs/references.js';
import type * as resources from '../../cogs/structs/resources.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as errors from '../actions/errors.js';
import type * as execution from '../actions/execution.js';
import type * as lifecycles from '../actions/lifecycles.js';
import type * as filters from './filters.js';
import type * as indexing from './indices.js';
import type * as stoppers from './stoppers.js';

/** Augment to type `memo` (declaration merging). Empty by default. */
// biome-ignore lint/suspicious/noEmptyInterface: an interface, so that users can augment it by declaration merging
export interface OperatorMemo {}

/** Augment to type the indices injected into every handler's arguments (R-INDEX-8). */
// biome-ignore lint/suspicious/noEmptyInterface: an interface, so that users can augment it by declaration merging
export interface OperatorIndices {}

/** The memo as handlers see it: the augmented `OperatorMemo` plus free-form entries (R-MEMO-1). */
export type HandlerMemo = OperatorMemo & { [key: string]: unknown };

/** The reason of a change as a handler sees it (never an internal one). */
export type ChangeReason = 'create' | 'update' | 'delete' | 'resume';
/** What an activity handler runs for (R-KWARGS-7). */
export type ActivityName = 'startup' | 'cleanup' | 'authentication' | 'probe';
/** An admission request's operation. */
export type WebhookOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The `userInfo` of an admission request. */
export interface UserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The body type of untyped references (strings, tuples, selectors, predicates). */
export type UntypedBody = bodies.RawBody;

type Open<T> = unknown extends T ? Record<string, unknown> : T;

/** The type of `spec` for a body: the declared spec, or an open record (untyped bodies, no spec). */
export type SpecOf<Body> = string extends keyof Body
  ? Record<string, unknown>
  : 'spec' extends keyof Body
    ? Open<NonNullable<Body['spec' & keyof Body]>>
    : Record<string, unknown>;

/** The type of `status` for a body: the declared status (`| undefined` if optional), or an open record. */
export type StatusOf<Body> = string extends keyof Body
  ? Record<string, unknown>
  : 'status' extends keyof Body
    ? unknown extends Body['status' & keyof Body]
      ? Record<string, unknown>
      : Body['status' & keyof Body]
    : Record<string, unknown>;

/**
 * The essence of a body (R-ESSENCE-1): what change detection compares — the body without
 * `apiVersion`, `kind`, `status` and most of `metadata` (labels and annotations stay).
 */
export type EssenceOf<Body> = string extends keyof Body
  ? Record<string, unknown>
  : Omit<Body, 'apiVersion' | 'kind' | 'metadata' | 'status'> & {
      metadata?: Pick<resources.ObjectMeta, 'labels' | 'annotations'>;
    };

type Depth = [never, 0, 1, 2, 3, 4, 5, 6, 7, 8];

/**
 * The dotted field paths of a type, e.g. `'spec' | 'spec.replicas' | 'metadata.labels.${string}'`.
 * Arrays are leaves (Kopf compares them as whole values). Untyped bodies give `string`.
 */
export type FieldPathOf<T, D extends number = 8> = [D] extends [never]
  ? never
  : T extends readonly unknown[]
    ? never
    : T extends object
      ? { [K in keyof T & string]-?: K | Nested<NonNullable<T[K]>, K, Depth[D]> }[keyof T & string]
      : never;

type Nested<V, K extends string, D extends number> = V extends readonly unknown[] ? never : V extends object ? `${K}.${FieldPathOf<V, D>}` : never;

/** The type at a dotted path (without `undefined`/`null`); `unknown` for unknown paths or array forms. */
export type PathValue<T, P> = P extends `${infer Head}.${infer Rest}`
  ? Head extends keyof NonNullable<T>
    ? PathValue<NonNullable<T>[Head], Rest>
    : unknown
  : P extends keyof NonNullable<T>
    ? Open2<NonNullable<NonNullable<T>[P]>>
    : unknown;

type Open2<T> = unknown extends T ? unknown : T;

/** A field reference of a body: a dotted path (type-checked for typed bodies) or an array of keys. */
export type FieldRef<Body> = FieldPathOf<Body> | readonly string[];

/** Retry information (R-KWARGS-2): change handlers, daemons, timers, indexers, activities. */
export interface RetryArgs {
  /** 0 on the first attempt. */
  readonly retry: number;
  /** The first attempt of this handler for this change (persisted across restarts). */
  readonly started: Date;
  /** Seconds since `started`. */
  readonly runtime: number;
}

/**
 * Handler arguments `Args` with `namespace` narrowed to the resource's scope, `Namespace` (from
 * `NamespaceOf<Ref>`): `string` for namespaced kinds, `null` for cluster-scoped ones, unchanged
 * (`Args` itself) when the scope is unknown (R-TYPES-301). An intersection, so that a function
 * written for the unscoped arguments (`(args: ChangingArgs<Widget>) => …`) is still accepted.
 *
 * @example
 * type Args = Scoped<ChangingArgs<Widget>, NamespaceOf<typeof Widgets>>; // namespace: string
 */
export type Scoped<Args, Namespace extends string | null> = [string | null] extends [Namespace] ? Args : Args & { readonly namespace: Namespace };

/** What every resource handler receives (R-KWARGS-1). */
export interface ResourceArgs<Body extends object, View = unknown> extends OperatorIndices {
  /** The discovered resource of the object. */
  readonly resource: references.Resource;
  /** The whole object (read-only; write through `patch`). */
  readonly body: Readonly<Body>;
  readonly spec: SpecOf<Body>;
  readonly meta: Readonly<resources.ObjectMeta>;
  readonly status: StatusOf<Body>;
  readonly uid: string;
  readonly name: string;
  /** `null` for cluster-scoped objects; narrowed to `string`/`null` by a descriptor's scope (`Scoped`). */
  readonly namespace: string | null;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** The only way to change the object: a typed, auto-vivifying merge-patch (R-PATCH-1). */
  readonly patch: patches.PatchWithView<Body, View>;
  readonly logger: loggers.Logger;
  readonly memo: HandlerMemo;
  /** The `param` option of the registration (R-HANDLERS-12). */
  readonly param: unknown;
  /** Aborted when the handler is cancelled (operator exit, forced daemon stop). */
  readonly signal: AbortSignal;
  /** The operator's typed client: other objects of the cluster, over the operator's own connection. */
  readonly client: clients.KubeClient;
}

/**
 * Change handlers (create/update/delete/resume/field, R-KWARGS-3). `Value` is the type of `old` and
 * `new`: the essence for whole-object handlers, the field's type for field handlers.
 */
export interface ChangingArgs<Body extends object, Value = EssenceOf<Body>, View = unknown> extends ResourceArgs<Body, View>, RetryArgs {
  readonly reason: ChangeReason;
  /** `undefined` on creation (no diff-base) or when the field is absent. */
  readonly old: Value | undefined;
  readonly new: Value | undefined;
  /** Alias of `old`. */
  readonly oldValue: Value | undefined;
  /** Alias of `new` (which cannot be destructured as a variable name). */
  readonly newValue: Value | undefined;
  readonly diff: diffs.Diff;
  /**
   * Registers a sub-handler of this handler, typed for this body (R-HANDLERS-13): the same as the
   * exported `subhandler()`, typed.
   */
  readonly subhandler: Subhandler<Body, View>;
  /** Registers a function as a sub-handler of this handler (the function-first form), typed for this body. */
  readonly register: Register<Body, View>;
  /** Executes sub-handlers now (the exported `execute()`, typed for this body). */
  readonly execute: Execute<Body, View>;
}

/** On-event handlers (R-KWARGS-4). */
export interface WatchingArgs<Body extends object, View = unknown> extends ResourceArgs<Body, View> {
  readonly event: bodies.RawEvent<Body>;
  /** `null` for events of the initial listing. */
  readonly type: bodies.RawEventType;
}

/** Daemons (R-KWARGS-5); `body`, `spec`… are live views of the newest body (R-KWARGS-8). */
export interface DaemonArgs<Body extends object, View = unknown> extends ResourceArgs<Body, View>, RetryArgs {
  readonly stopped: stoppers.DaemonStopped;
}

/** Timers: as daemons; `stopped` is set when the timer is asked to stop (R-TIMER-1). */
export interface TimerArgs<Body extends object, View = unknown> extends ResourceArgs<Body, View>, RetryArgs {
  readonly stopped: stoppers.DaemonStopped;
}

/** Index handlers. */
export interface IndexingArgs<Body extends object, View = unknown> extends ResourceArgs<Body, View>, RetryArgs {}

/** Admission handlers (R-KWARGS-6): `patch` collects mutations; `warnings` is appendable. */
export interface WebhookArgs<Body extends object, View = unknown> extends ResourceArgs<Body, View> {
  readonly dryRun: boolean;
  readonly warnings: string[];
  readonly userInfo: UserInfo;
  readonly headers: Readonly<Record<string, string>>;
  readonly sslPeer: Readonly<Record<string, unknown>>;
  readonly operation: WebhookOperation | null;
  /** Never `'*'`; `null` for the main body. */
  readonly subresource: string | null;
  /** The request's `oldObject`, if any. */
  readonly old: Readonly<Body> | undefined;
  /** The request's `object`, if any. */
  readonly new: Readonly<Body> | undefined;
  readonly oldValue: Readonly<Body> | undefined;
  readonly newValue: Readonly<Body> | undefined;
  readonly diff: diffs.Diff;
}

/** Activity handlers: startup, cleanup, login, probe (R-KWARGS-7). No resource arguments. */
export interface ActivityArgs extends OperatorIndices, RetryArgs {
  readonly activity: ActivityName;
  readonly logger: loggers.Logger;
  readonly memo: HandlerMemo;
  /** Startup handlers may modify the settings (R-ACTIVITY-1). */
  readonly settings: settings.OperatorSettings;
  readonly param: unknown;
  readonly signal: AbortSignal;
  /**
   * The operator's typed client, in cleanup handlers and probes. Not in startup and login handlers,
   * which run before the operator has credentials: every call there fails the handler permanently.
   */
  readonly client: clients.KubeClient;
}

/**
 * A reference to an object of the reconciled resource, as a `watches` map returns it (R-RECONCILE-203):
 * `namespace` defaults to the watched object's own namespace.
 */
export interface ObjectRef {
  readonly name: string;
  readonly namespace?: string | null;
}

/**
 * What a reconcile handler returns (R-RECONCILE-204): nothing (done until the next change), or
 * `{ requeueAfter: seconds }` (called again after that long, or earlier on a change).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers that return nothing are typed `void`
export type ReconcileResult = void | undefined | { readonly requeueAfter?: number };

/**
 * Reconcile handlers (R-RECONCILE-201): the resource fields of every handler, the newest state from
 * the watch cache, the owned children (one array per `owns` entry, in order), the operator's clock.
 */
export interface ReconcileArgs<Body extends object, View = unknown, Owned extends readonly unknown[] = readonly []> extends ResourceArgs<Body, View> {
  /** The children whose controller owner is this object: one array per `owns` entry, in order. */
  readonly owned: Owned;
  /** The operator's clock (virtual in tests); milliseconds. */
  readonly clock: clocks.Clock;
  /** `clock.now()` when the call started. */
  readonly now: Date;
  /** Consecutive failures before this call (0 on a first try or after a success). */
  readonly retry: number;
}

/** A reconcile handler (or its `finalize`). */
export type ReconcileFn<Body extends object, View = unknown, Owned extends readonly unknown[] = readonly []> = (
  args: ReconcileArgs<Body, View, Owned>,
) => Awaitable<ReconcileResult>;

/** A value that may be awaited. */
export type Awaitable<T> = T | Promise<T>;

/** A change handler; its (awaited) result goes to `status.<id>` unless null/undefined. */
export type ChangingFn<Body extends object, Value = EssenceOf<Body>, View = unknown> = (args: ChangingArgs<Body, Value, View>) => unknown;
export type WatchingFn<Body extends object, View = unknown> = (args: WatchingArgs<Body, View>) => unknown;
export type DaemonFn<Body extends object, View = unknown> = (args: DaemonArgs<Body, View>) => unknown;
export type TimerFn<Body extends object, View = unknown> = (args: TimerArgs<Body, View>) => unknown;
/** An indexer: returns `{key: value}`, a `Map`, a single value (key `null`), or null to keep (R-INDEX-3). */
export type IndexingFn<Body extends object, View = unknown> = (args: IndexingArgs<Body, View>) => unknown;

// biome-ignore lint/suspicious/noConfusingVoidType: indexers that return nothing are typed `void`, and contribute nothing
type Contributed<R> = Exclude<Awaited<R>, null | undefined | void>;

/**
 * The index an indexer's result builds (R-INDEX-3): a `Map<K, V>` gives `Index<K, V>`, a plain
 * object `{[key: string]: V}` gives `Index<string, V>`, any other value `R` gives `Index<null, R>`.
 * `null`/`undefined` results (keep the previous values) do not count.
 */
export type IndexOfResult<R> = [Contributed<R>] extends [never]
  ? indexing.Index<never, never>
  : [Contributed<R>] extends [ReadonlyMap<infer K, infer V>]
    ? indexing.Index<K, V>
    : [Contributed<R>] extends [readonly unknown[]]
      ? indexing.Index<null, Contributed<R>>
      : [Contributed<R>] extends [Record<string, infer V>]
        ? indexing.Index<string, V>
        : indexing.Index<null, Contributed<R>>;

/**
 * The index an indexer function builds, for typing its injection by name (R-INDEX-8).
 *
 * @example
 * async function widgetsByOwner({ spec, name }: IndexingArgs<Widget>) {
 *   return { [spec.owner]: name };
 * }
 * on.index(Widgets, widgetsByOwner);
 * declare module 'kopf-gen/runtime' {
 *   interface OperatorIndices { widgetsByOwner: IndexOf<typeof widgetsByOwner> } // Index<string, string>
 * }
 */
export type IndexOf<F> = F extends (...args: never[]) => infer R ? IndexOfResult<R> : never;
/** An admission handler: throw `AdmissionError` to deny; write to `patch` to mutate. */
export type WebhookFn<Body extends object, View = unknown> = (args: WebhookArgs<Body, View>) => unknown;
export type ActivityFn = (args: ActivityArgs) => unknown;

/*
 * The signatures of sub-handler registration (R-HANDLERS-13), typed by the parent's body.
 *
 * A sub-handler runs for the same object and the same change as its parent, so its arguments are
 * the parent's kind of arguments for the parent's body: `spec`, `status` and `patch` of a
 * `Widget` parent are a `Widget`'s. They are not exactly the parent's own: `old`/`new` of a
 * sub-handler are the whole essence, or the value of its own `field` — never its parent's field.
 *
 * Every change handler gets `subhandler`, `register` and `execute` in its arguments, typed this way
 * (`on.create(Widgets, ({ subhandler }) => subhandler({ id: 'x' }, ({ spec }) => …))`); the free
 * functions of the same names (`core/reactor/subhandling`) take the body as an optional type
 * argument and default to untyped bodies.
 */

/** What filter callbacks of a sub-handler receive: its arguments without the retry fields. */
type FilterArgsOf<Args> = Omit<Args, keyof RetryArgs>;

/** A sub-handler of a parent of body `Body`; `Value` is the type of `old`/`new` (essence or field). */
export type SubhandlerFn<Body extends object = UntypedBody, Value = EssenceOf<Body>, View = unknown> = (args: ChangingArgs<Body, Value, View>) => unknown;

/** Options of `subhandler()` (Kopf: `@kopf.subhandler(...)`) without a field. */
export interface SubhandlerOptions<Body extends object = UntypedBody, Value = EssenceOf<Body>, View = unknown> {
  /** The id under the parent: the full id is `<parent id>/<id>`; default: the function's name. */
  readonly id?: string;
  readonly param?: unknown;
  readonly errors?: errors.ErrorsMode;
  readonly timeout?: number;
  readonly retries?: number;
  readonly backoff?: number;
  readonly labels?: filters.MetaFilters<FilterArgsOf<ChangingArgs<Body, Value, View>>>;
  readonly annotations?: filters.MetaFilters<FilterArgsOf<ChangingArgs<Body, Value, View>>>;
  readonly when?: filters.WhenFilter<FilterArgsOf<ChangingArgs<Body, Value, View>>>;
  /** Only for parents that are update or field handlers. */
  readonly old?: filters.ValueFilter<Value, FilterArgsOf<ChangingArgs<Body, Value, View>>>;
  /** Only for parents that are update or field handlers. */
  readonly new?: filters.ValueFilter<Value, FilterArgsOf<ChangingArgs<Body, Value, View>>>;
}

/** Options of `subhandler()` with a field: `old`/`new` of the sub-handler are the field's values. */
export interface FieldSubhandlerOptions<Body extends object, P, View = unknown> extends SubhandlerOptions<Body, PathValue<Body, P>, View> {
  readonly field: P;
  readonly value?: filters.ValueFilter<PathValue<Body, P>, FilterArgsOf<ChangingArgs<Body, PathValue<Body, P>, View>>>;
}

/** Options of `register()` (Kopf: `kopf.register(fn, ...)`). */
export type RegisterOptions<Body extends object = UntypedBody, View = unknown> = Pick<
  SubhandlerOptions<Body, EssenceOf<Body>, View>,
  'id' | 'param' | 'errors' | 'timeout' | 'retries' | 'backoff' | 'labels' | 'annotations' | 'when'
>;

/**
 * What `execute({ registry })` needs of a registry (an `OperatorRegistry` is one): its change
 * handlers of a resource, and those of them that a cause selects.
 */
export interface SubhandlerRegistry {
  changingHandlersOf(resource: references.Resource): readonly execution.Invocable[];
  changingHandlers(cause: filters.Subject): readonly execution.Invocable[];
}

/** Options of `execute()`. At most one of `fns`, `handlers`, `registry`. */
export interface ExecuteOptions<Body extends object = UntypedBody, View = unknown> {
  /** Functions to run as sub-handlers: by id, or an array (ids from function names). */
  readonly fns?: Readonly<Record<string, SubhandlerFn<Body, EssenceOf<Body>, View>>> | readonly SubhandlerFn<Body, EssenceOf<Body>, View>[];
  /** Ready handlers (change handler descriptors or `Invocable`s), used with their own ids. */
  readonly handlers?: ReadonlyArray<execution.Invocable>;
  /** A registry whose change handlers are run (with their own ids, selected by the cause). */
  readonly registry?: SubhandlerRegistry;
  /** The lifecycle; default: the parent's (itself defaulting to `asap`). */
  readonly lifecycle?: lifecycles.Lifecycle;
  /** A cause to select the handlers with, instead of the parent's. */
  readonly cause?: unknown;
}

/** `subhandler(options, fn)` for a parent of body `Body`; returns `fn` unchanged. */
export interface Subhandler<Body extends object, View = unknown> {
  <const P extends FieldRef<Body>, F extends SubhandlerFn<Body, PathValue<Body, P>, View>>(options: FieldSubhandlerOptions<Body, P, View>, fn: F): F;
  <F extends SubhandlerFn<Body, EssenceOf<Body>, View>>(options: SubhandlerOptions<Body, EssenceOf<Body>, View>, fn: F): F;
}

/** `register(fn, options)` for a parent of body `Body`; returns `fn` unchanged. */
export type Register<Body extends object, View = unknown> = <F extends SubhandlerFn<Body, EssenceOf<Body>, View>>(
  fn: F,
  options?: RegisterOptions<Body, View>,
) => F;

/** `execute(options)` for a parent of body `Body`. */
export type Execute<Body extends object, View = unknown> = (options?: ExecuteOptions<Body, View>) => Promise<void>;

/** What a converter gets beside the object (R-CONVERT-201). */
export interface ConversionContext {
  /** A logger of the object being converted (its namespace and name prefix the lines; no k8s-events). */
  readonly logger: loggers.Logger;
  /** The version the review asks for in the end (`group/version`), which may be beyond this step's target. */
  readonly desiredApiVersion: string;
  /** The registration's `param` option (`undefined` without one), as other handlers get it. */
  readonly param: unknown;
}
