/**
 * The signatures of sub-handler registration (R-HANDLERS-13), typed by the parent's body. Types only.
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

import type * as execution from '../actions/execution.js';
import type * as lifecycles from '../actions/lifecycles.js';
import type * as callbacks from './callbacks.js';
import type * as filters from './filters.js';
import type * as handlers from './handlers.js';
import type * as registries from './registry.js';

/** What filter callbacks of a sub-handler receive: its arguments without the retry fields. */
type FilterArgsOf<Args> = Omit<Args, keyof callbacks.RetryArgs>;

/** A sub-handler of a parent of body `Body`; `Value` is the type of `old`/`new` (essence or field). */
export type SubhandlerFn<Body extends object = callbacks.UntypedBody, Value = callbacks.EssenceOf<Body>> = (
  args: callbacks.ChangingArgs<Body, Value>,
) => unknown;

/** Options of `subhandler()` (Kopf: `@kopf.subhandler(...)`) without a field. */
export interface SubhandlerOptions<Body extends object = callbacks.UntypedBody, Value = callbacks.EssenceOf<Body>> {
  /** The id under the parent: the full id is `<parent id>/<id>`; default: the function's name. */
  readonly id?: string;
  readonly param?: unknown;
  readonly errors?: handlers.ErrorsModeName;
  readonly timeout?: number;
  readonly retries?: number;
  readonly backoff?: number;
  readonly labels?: filters.MetaFilters<FilterArgsOf<callbacks.ChangingArgs<Body, Value>>>;
  readonly annotations?: filters.MetaFilters<FilterArgsOf<callbacks.ChangingArgs<Body, Value>>>;
  readonly when?: filters.WhenFilter<FilterArgsOf<callbacks.ChangingArgs<Body, Value>>>;
  /** Only for parents that are update or field handlers. */
  readonly old?: filters.ValueFilter<Value, FilterArgsOf<callbacks.ChangingArgs<Body, Value>>>;
  /** Only for parents that are update or field handlers. */
  readonly new?: filters.ValueFilter<Value, FilterArgsOf<callbacks.ChangingArgs<Body, Value>>>;
}

/** Options of `subhandler()` with a field: `old`/`new` of the sub-handler are the field's values. */
export interface FieldSubhandlerOptions<Body extends object, P> extends SubhandlerOptions<Body, callbacks.PathValue<Body, P>> {
  readonly field: P;
  readonly value?: filters.ValueFilter<callbacks.PathValue<Body, P>, FilterArgsOf<callbacks.ChangingArgs<Body, callbacks.PathValue<Body, P>>>>;
}

/** Options of `register()` (Kopf: `kopf.register(fn, ...)`). */
export type RegisterOptions<Body extends object = callbacks.UntypedBody> = Pick<
  SubhandlerOptions<Body>,
  'id' | 'param' | 'errors' | 'timeout' | 'retries' | 'backoff' | 'labels' | 'annotations' | 'when'
>;

/** Options of `execute()`. At most one of `fns`, `handlers`, `registry`. */
export interface ExecuteOptions<Body extends object = callbacks.UntypedBody> {
  /** Functions to run as sub-handlers: by id, or an array (ids from function names). */
  readonly fns?: Readonly<Record<string, SubhandlerFn<Body>>> | readonly SubhandlerFn<Body>[];
  /** Ready handlers (descriptors or `Invocable`s), used with their own ids. */
  readonly handlers?: ReadonlyArray<handlers.ChangingHandler | execution.Invocable>;
  /** A registry whose change handlers are run (with their own ids, selected by the cause). */
  readonly registry?: registries.OperatorRegistry;
  /** The lifecycle; default: the parent's (itself defaulting to `asap`). */
  readonly lifecycle?: lifecycles.Lifecycle;
  /** A cause to select the handlers with, instead of the parent's. */
  readonly cause?: unknown;
}

/** `subhandler(options, fn)` for a parent of body `Body`; returns `fn` unchanged. */
export interface Subhandler<Body extends object> {
  <const P extends callbacks.FieldRef<Body>, F extends SubhandlerFn<Body, callbacks.PathValue<Body, P>>>(options: FieldSubhandlerOptions<Body, P>, fn: F): F;
  <F extends SubhandlerFn<Body>>(options: SubhandlerOptions<Body>, fn: F): F;
}

/** `register(fn, options)` for a parent of body `Body`; returns `fn` unchanged. */
export type Register<Body extends object> = <F extends SubhandlerFn<Body>>(fn: F, options?: RegisterOptions<Body>) => F;

/** `execute(options)` for a parent of body `Body`. */
export type Execute<Body extends object> = (options?: ExecuteOptions<Body>) => Promise<void>;
