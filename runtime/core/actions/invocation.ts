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
 *   settings, the k8s-event sink and the typed client that handlers get as `client`;
 * - the *handler* context (`execution.runInHandler()`, entered by `execution` around every
 *   invocation, and kept there with the handlers it describes): the handler, the execution scope
 *   of its cause, the sub-handlers it registers and where their ids are collected.
 *
 * Calling a helper outside of its context throws an `Error` saying so (`currentOperator()`,
 * `execution.currentHandler()`).
 */

import { AsyncLocalStorage } from 'node:async_hooks';

import * as clients from '../../cogs/client/clients.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as events from './events.js';

/** The operator a piece of code runs in (R-API-6): what event helpers need. */
export interface OperatorScope {
  /** The operator's settings (posting gating, …). */
  readonly settings: settings.OperatorSettings;
  /** Enqueues a k8s-event for the background poster (`engines/posting`). */
  readonly events: events.EventSink;
  /** The operator's typed client, handed to handlers as `client`. */
  readonly client?: clients.KubeClient;
}

const operators = new AsyncLocalStorage<OperatorScope>();

/** Runs `fn` inside an operator context; everything it starts, at any depth, sees that context. */
export function runInOperator<T>(scope: OperatorScope, fn: () => T): T {
  return operators.run(scope, fn);
}

/** The current operator context, or `undefined` outside of one. */
export function findOperator(): OperatorScope | undefined {
  return operators.getStore();
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

/** Handed out outside of operators: every call says where the client is available. */
const NO_CLIENT = clients.refusingClient(() => new Error('`client` is available to handlers of a running operator only; elsewhere, make one with connect().'));

/**
 * The typed client of the current operator: the `client` of handlers' arguments. Outside of a
 * running operator (e.g. a handler function called directly in a test), a client whose every call
 * rejects, saying so.
 */
export function currentClient(): clients.KubeClient {
  return operators.getStore()?.client ?? NO_CLIENT;
}

/**
 * A kwargs object whose fields are computed on first access, once (R-FILTERS-1): building `diff`
 * or views of the body costs nothing for handlers that do not destructure them. Fields are
 * enumerable (so `{...kwargs}` and destructuring work) and read-only.
 *
 * It is a proxy over the getters with one shared handler, not an object with an accessor per field:
 * thousands of daemons each hold their kwargs for as long as they run, and accessor properties
 * cost a closure and a descriptor each.
 *
 * @example
 * const kwargs = lazyKwargs({ body: () => freeze(raw), diff: () => diffs.diff(old, now) });
 */
export function lazyKwargs<T extends object>(getters: { readonly [K in keyof T]: () => T[K] }): T {
  return new Proxy(getters as unknown as Getters, LAZY) as unknown as T;
}

/**
 * Lazy kwargs from a table of getters shared by all kwargs of a kind, each reading one small
 * per-invocation `source` object — for the long-lived kwargs of daemons and timers, where even a
 * closure per field adds up over thousands of them. `extra` (e.g. indices) is looked up first.
 *
 * @example
 * const TABLE = { name: (s: { body: Body }) => s.body.metadata.name };
 * const kwargs = tableKwargs(TABLE, { body });
 */
export function tableKwargs<S extends object>(
  table: Readonly<Record<string, (source: S) => unknown>>,
  source: S,
  extra?: Readonly<Record<string, unknown>>,
): object {
  const target: TableTarget<S> = { table, source, extra };
  return new Proxy(target as unknown as TableTarget<object>, TABLED);
}

interface TableTarget<S> {
  readonly table: Readonly<Record<string, (source: S) => unknown>>;
  readonly source: S;
  readonly extra: Readonly<Record<string, unknown>> | undefined;
  cache?: Map<string, unknown>;
}

function tabled(target: TableTarget<object>, key: string | symbol): boolean {
  return typeof key === 'string' && (Object.hasOwn(target.table, key) || (target.extra !== undefined && Object.hasOwn(target.extra, key)));
}

function tableValue(target: TableTarget<object>, key: string): unknown {
  if (target.extra !== undefined && Object.hasOwn(target.extra, key)) return target.extra[key];
  const cache = target.cache ?? (target.cache = new Map());
  if (cache.has(key)) return cache.get(key);
  const value = target.table[key]!(target.source);
  cache.set(key, value);
  return value;
}

const TABLED: ProxyHandler<TableTarget<object>> = {
  get: (target, key) => (tabled(target, key) ? tableValue(target, key as string) : undefined),
  has: (target, key) => tabled(target, key),
  ownKeys: (target) => [...new Set([...Object.keys(target.table), ...Object.keys(target.extra ?? {})])],
  getOwnPropertyDescriptor: (target, key) =>
    tabled(target, key) ? { value: tableValue(target, key as string), writable: false, enumerable: true, configurable: true } : undefined,
  set: readOnly,
  defineProperty: readOnly,
  deleteProperty: readOnly,
  setPrototypeOf: readOnly,
};

type Getters = Record<string, () => unknown> & { [CACHE]?: Map<string, unknown> };
const CACHE = Symbol('computed kwargs');

function readOnly(): never {
  throw new TypeError('Handler arguments are read-only.');
}

function computed(target: Getters, key: string): unknown {
  const cache = target[CACHE] ?? (target[CACHE] = new Map());
  if (cache.has(key)) return cache.get(key);
  const value = target[key]!();
  cache.set(key, value);
  return value;
}

const LAZY: ProxyHandler<Getters> = {
  get: (target, key) => (typeof key === 'string' && Object.hasOwn(target, key) ? computed(target, key) : undefined),
  has: (target, key) => typeof key === 'string' && Object.hasOwn(target, key),
  ownKeys: (target) => Object.keys(target),
  getOwnPropertyDescriptor: (target, key) =>
    typeof key === 'string' && Object.hasOwn(target, key) ? { value: computed(target, key), writable: false, enumerable: true, configurable: true } : undefined,
  set: readOnly,
  defineProperty: readOnly,
  deleteProperty: readOnly,
  setPrototypeOf: readOnly,
};

/**
 * Calls a user function with one kwargs object and awaits its result if it is a promise
 * (synchronous functions run on the event loop, D-10). Errors, thrown or rejected, propagate.
 */
export async function invoke(fn: (kwargs: never) => unknown, kwargs: object): Promise<unknown> {
  const result: unknown = (fn as (kwargs: object) => unknown)(kwargs);
  return isPromiseLike(result) ? await result : result;
}

/** Whether a value is a thenable (what a user function returns when it is asynchronous). */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
