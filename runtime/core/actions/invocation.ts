/**
 * Invoking user functions, and the async contexts that let helpers find "the current handler" and
 * "the current operator" (R-API-3, R-API-6).
 *
 * Every handler, filter and callback is called with exactly one argument, a kwargs object
 * (`lazyKwargs()` builds one whose fields are computed on first access, once). Functions may be
 * synchronous or return a promise; `invoke()` treats both alike and runs them on the event loop.
 *
 * Helpers such as `subhandler()`/`register()`/`execute()` and `event()`/`info()`/`warn()`/
 * `exception()` take no context argument: they find it through `AsyncLocalStorage`, so they work
 * at any depth of async calls made by a handler. Two contexts exist:
 *
 * - the *operator* context (`runInOperator()`, entered by the reactor for the whole operator):
 *   settings and the k8s-event sink;
 * - the *handler* context (`runInHandler()`, entered by `execution` around every invocation): the
 *   handler, the execution scope of its cause, the sub-handlers it registers and where their ids
 *   are collected.
 *
 * Calling a helper outside of its context throws an `Error` saying so (`currentOperator()`,
 * `currentHandler()`).
 */

import { AsyncLocalStorage } from 'node:async_hooks';

import type * as settings from '../../cogs/configs/settings.js';
import type * as events from './events.js';
import type * as execution from './execution.js';

/** The operator a piece of code runs in (R-API-6): what event helpers need. */
export interface OperatorScope {
  /** The operator's settings (posting gating, …). */
  readonly settings: settings.OperatorSettings;
  /** Enqueues a k8s-event for the background poster (`engines/posting`). */
  readonly events: events.EventSink;
}

/** The handler a piece of code runs in (R-API-6): what sub-handler helpers need. */
export interface HandlerContext {
  /** The handler being invoked. */
  readonly handler: execution.Invocable;
  /** The cause's execution scope (settings, clock, kwargs, body and patch of the change, …). */
  readonly scope: execution.ExecutionScope;
  /** Sub-handlers registered so far by this invocation (Kopf: the sub-registry). */
  readonly subhandlers: execution.Invocable[];
  /** Where sub-handler ids go: this invocation's own set and those of all its ancestors. */
  readonly subrefs: ReadonlyArray<Set<string>>;
  /** Whether the sub-handlers were executed (explicitly or implicitly) in this invocation. */
  subexecuted: boolean;
}

const operators = new AsyncLocalStorage<OperatorScope>();
const handlers = new AsyncLocalStorage<HandlerContext>();

/** Runs `fn` inside an operator context; everything it starts, at any depth, sees that context. */
export function runInOperator<T>(scope: OperatorScope, fn: () => T): T {
  return operators.run(scope, fn);
}

/** Runs `fn` inside a handler context. */
export function runInHandler<T>(context: HandlerContext, fn: () => T): T {
  return handlers.run(context, fn);
}

/** The current operator context, or `undefined` outside of one. */
export function findOperator(): OperatorScope | undefined {
  return operators.getStore();
}

/** The current handler context, or `undefined` outside of one. */
export function findHandler(): HandlerContext | undefined {
  return handlers.getStore();
}

/**
 * The current operator context.
 *
 * @throws Error when called outside of an operator (e.g. at module load time).
 */
export function currentOperator(what = 'This function'): OperatorScope {
  const scope = operators.getStore();
  if (scope === undefined) throw new Error(`${what} was called outside of an operator: it must be called from a handler or a task of a running operator.`);
  return scope;
}

/**
 * The current handler context.
 *
 * @throws Error when called outside of a handler.
 */
export function currentHandler(what = 'This function'): HandlerContext {
  const context = handlers.getStore();
  if (context === undefined) throw new Error(`${what} was called outside of a handler: it can only be used while a handler runs.`);
  return context;
}

/** Where a kwargs object keeps its getters and the values computed so far (non-enumerable). */
const LAZY = Symbol('kopf-gen.kwargs');

interface LazyState {
  readonly getters: { readonly [key: string]: () => unknown };
  computed: Map<string, unknown> | undefined;
}

/** One accessor per field name, shared by all kwargs objects (the set of names is small and fixed). */
const accessors = new Map<string, (this: { readonly [LAZY]: LazyState }) => unknown>();

function accessorOf(key: string): (this: { readonly [LAZY]: LazyState }) => unknown {
  let get = accessors.get(key);
  if (get === undefined) {
    get = function (this: { readonly [LAZY]: LazyState }): unknown {
      const state = this[LAZY];
      if (state.computed?.has(key)) return state.computed.get(key);
      const value = state.getters[key]!();
      (state.computed ??= new Map()).set(key, value);
      return value;
    };
    accessors.set(key, get);
  }
  return get;
}

/**
 * A kwargs object whose fields are computed on first access, once (R-FILTERS-1): building `diff`
 * or views of the body costs nothing for handlers that do not destructure them. Fields are
 * enumerable (so `{...kwargs}` and destructuring work) and read-only.
 *
 * Cheap to build and to keep (daemons keep theirs for as long as they run): the accessors are
 * shared per field name, so objects with the same fields share one shape and hold no closures of
 * their own; the getters and the computed values sit in one hidden (non-enumerable) slot.
 *
 * @example
 * const kwargs = lazyKwargs({ body: () => freeze(raw), diff: () => diffs.diff(old, now) });
 */
export function lazyKwargs<T extends object>(getters: { readonly [K in keyof T]: () => T[K] }): T {
  const kwargs = {} as T;
  const state: LazyState = { getters: getters as LazyState['getters'], computed: undefined };
  Object.defineProperty(kwargs, LAZY, { value: state, enumerable: false, configurable: false, writable: false });
  for (const key of Object.keys(getters)) {
    Object.defineProperty(kwargs, key, { enumerable: true, configurable: false, get: accessorOf(key) });
  }
  return Object.freeze(kwargs);
}

/**
 * Calls a user function with one kwargs object and awaits its result if it is a promise
 * (synchronous functions run on the event loop, D-10). Errors, thrown or rejected, propagate.
 */
export async function invoke(fn: (kwargs: never) => unknown, kwargs: object): Promise<unknown> {
  const result: unknown = (fn as (kwargs: object) => unknown)(kwargs);
  return isPromiseLike(result) ? await result : result;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null
    && typeof (value as { then?: unknown }).then === 'function';
}
