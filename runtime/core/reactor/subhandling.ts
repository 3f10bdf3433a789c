/**
 * Sub-handlers: handlers registered from inside a change handler while it runs (R-HANDLERS-13/14).
 *
 * A parent handler calls `subhandler(options, fn)` or `register(fn, options)` for each piece of
 * work (e.g. one per item of `spec.items`), and optionally `await execute()`. The helpers find the
 * parent through the handler context of `actions/invocation` (R-API-6), build ordinary change
 * handler descriptors (`intents/handlers`, registration `subhandler`, id `<parent>/<id>`, filters
 * evaluated against the parent's cause with `intents/filters`), and hand them to
 * `actions/execution.executeSubhandlers()`, which runs them with the parent's lifecycle, persists
 * their progress like top-level handlers, collects their ids into the parent's `subrefs` and throws
 * `HandlerChildrenRetryError` while some are unfinished. If the parent does not call `execute()`, the
 * registered sub-handlers are executed implicitly right after it returns.
 *
 * The same three functions come in every change handler's arguments, typed by the handler's body
 * (`intents/callbacks`): `({ subhandler }) => subhandler({ id }, ({ spec }) => …)` types `spec`.
 * The free functions take the body as a type argument and default to untyped bodies.
 *
 * Idempotence contract: a parent is re-invoked in every cycle until all its sub-handlers finish
 * (and after operator restarts), so it must have no side effects besides registering them; finished
 * sub-handlers are never re-invoked within the same change.
 *
 * @example
 * on.create(KopfExamples, async function create_fn({ spec, subhandler }) {
 *   for (const item of spec.items ?? []) {
 *     subhandler({ id: item }, async function handle({ logger }) { logger.info(`=== Handling creation for ${item}. ===`); });
 *   }
 * });
 */

import * as dicts from '../../cogs/structs/dicts.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import * as execution from '../actions/execution.js';
import * as filters from '../intents/filters.js';
import type * as callbacks from '../intents/callbacks.js';
import * as handlers from '../intents/handlers.js';
import * as registries from '../intents/registry.js';

/** A sub-handler function: called with the same kind of arguments as its parent (typed by its body). */
export type SubhandlerFn<Body extends object = callbacks.UntypedBody> = callbacks.SubhandlerFn<Body>;
export type SubhandlerOptions<Body extends object = callbacks.UntypedBody> = callbacks.SubhandlerOptions<Body>;
export type FieldSubhandlerOptions<Body extends object, P> = callbacks.FieldSubhandlerOptions<Body, P>;
export type RegisterOptions<Body extends object = callbacks.UntypedBody> = callbacks.RegisterOptions<Body>;
export type ExecuteOptions<Body extends object = callbacks.UntypedBody> = callbacks.ExecuteOptions<Body>;

const REGISTER_KEYS: readonly string[] = ['id', 'param', 'errors', 'timeout', 'retries', 'backoff', 'labels', 'annotations', 'when'];

interface Parent {
  readonly context: execution.HandlerContext;
  readonly handler: Partial<handlers.ChangingHandler> & execution.Invocable;
}

function parentOf(what: string): Parent {
  const context = execution.currentHandler(what);
  const handler = context.handler as Partial<handlers.ChangingHandler> & execution.Invocable;
  if ((handler.kind !== undefined && handler.kind !== 'change') || context.scope.change === undefined) {
    throw new TypeError('Sub-handlers are only supported for resource-changing handlers.');
  }
  return { context, handler };
}

/** The filter subject of a cause: the reactor's changing cause, or the change's body alone. */
function subjectOf(context: execution.HandlerContext, cause?: unknown): filters.Subject {
  const given = (cause ?? context.scope.cause) as Partial<filters.Subject> | undefined;
  if (given !== undefined && dicts.isObject(given) && dicts.isObject(given.body)) return given as filters.Subject;
  return { resource: undefined as never, body: context.scope.change?.body as bodies.RawBody };
}

/** Makes a descriptor executable: its filters are checked against the cause when it is offered. */
function offered(handler: handlers.ChangingHandler | execution.Invocable, context: execution.HandlerContext, cause?: unknown): execution.Invocable {
  const spec = handler as Partial<filters.FilterSpec>;
  if (!('fieldNeedsChange' in spec)) return handler as execution.Invocable;
  const descriptor = handler as handlers.ChangingHandler;
  return {
    ...descriptor,
    matches: () => {
      const subject = subjectOf(context, cause);
      return filters.matchesFilters(descriptor, subject, () => registries.basicKwargs(descriptor, subject));
    },
  };
}

function build(fn: unknown, options: Readonly<Record<string, unknown>>, parent: Parent): handlers.ChangingHandler {
  if ((options['old'] !== undefined || options['new'] !== undefined) && !acceptsOldNew(parent.handler)) {
    throw new TypeError('Filters old=/new= can only be used in sub-handlers of update or field handlers.');
  }
  return handlers.changingHandler(fn, options, {
    registration: 'subhandler',
    selector: null,
    parentId: parent.handler.id,
    fieldNeedsChange: parent.handler.fieldNeedsChange ?? false,
  });
}

function acceptsOldNew(parent: Partial<handlers.ChangingHandler>): boolean {
  const onUpdate = parent.reason === 'update';
  const onField = parent.reason === null && parent.initial === false && parent.field !== null && parent.field !== undefined;
  return onUpdate || onField;
}

/**
 * Registers a sub-handler of the current change handler (R-HANDLERS-13); returns `fn` unchanged.
 * The arguments are untyped unless the body is given (`subhandler<Widget>(…)`) or the function's
 * parameter is annotated; the `subhandler` in a handler's own arguments is typed by its body.
 *
 * @throws Error outside of a handler; TypeError in handlers other than change handlers, for
 *   invalid options, or for anonymous functions without `id`.
 */
export function subhandler<Body extends object = callbacks.UntypedBody, const P extends callbacks.FieldRef<Body> = never>(
  options: FieldSubhandlerOptions<Body, P>,
  fn: callbacks.SubhandlerFn<Body, callbacks.PathValue<Body, NoInfer<P>>>,
): callbacks.SubhandlerFn<Body, callbacks.PathValue<Body, P>>;
export function subhandler<Body extends object = callbacks.UntypedBody>(options: SubhandlerOptions<NoInfer<Body>>, fn: SubhandlerFn<Body>): SubhandlerFn<Body>;
export function subhandler(options: object, fn: unknown): unknown {
  const parent = parentOf('subhandler()');
  const descriptor = build(fn, options as Readonly<Record<string, unknown>>, parent);
  parent.context.subhandlers.push(offered(descriptor, parent.context));
  return fn;
}

/**
 * Registers a function as a sub-handler of the current change handler (the function-first form of
 * `subhandler()`); returns `fn` unchanged.
 */
export function register<Body extends object = callbacks.UntypedBody>(
  fn: SubhandlerFn<Body>,
  options: RegisterOptions<NoInfer<Body>> = {},
): SubhandlerFn<Body> {
  const parent = parentOf('register()');
  const unknown = Object.keys(options).filter((key) => !REGISTER_KEYS.includes(key));
  if (unknown.length > 0) throw new TypeError(`Unknown options of register(): ${unknown.join(', ')}. Accepted: ${REGISTER_KEYS.join(', ')}.`);
  const descriptor = build(fn, options as Readonly<Record<string, unknown>>, parent);
  parent.context.subhandlers.push(offered(descriptor, parent.context));
  return fn;
}

/**
 * Executes sub-handlers now, inside the current change handler: without options, the ones
 * registered so far (once per invocation; then there is no implicit execution after the handler
 * returns); or the given `fns`, `handlers` or `registry`.
 *
 * @throws HandlerChildrenRetryError (let it propagate) while some sub-handlers are unfinished.
 * @throws Error outside of a handler; TypeError for conflicting options or other handler kinds.
 */
export async function execute<Body extends object = callbacks.UntypedBody>(options: ExecuteOptions<Body> = {}): Promise<void> {
  const parent = parentOf('execute()');
  const { context } = parent;
  const sources = [options.fns, options.handlers, options.registry].filter((source) => source !== undefined);
  if (sources.length > 1) throw new TypeError('Only one of the fns, handlers, registry can be passed. Got more.');

  let list: execution.Invocable[] | undefined;
  if (options.fns !== undefined) {
    const entries: Array<[string | undefined, unknown]> = Array.isArray(options.fns)
      ? (options.fns as readonly unknown[]).map((fn) => [undefined, fn])
      : typeof options.fns === 'object' && options.fns !== null
        ? Object.entries(options.fns)
        : (() => {
            throw new TypeError(`fns must be an object of functions by id or an array of functions, got ${String(options.fns)}.`);
          })();
    list = entries.map(([id, fn]) => offered(build(fn, id === undefined ? {} : { id }, parent), context, options.cause));
  } else if (options.handlers !== undefined) {
    list = options.handlers.map((handler) => offered(handler, context, options.cause));
  } else if (options.registry !== undefined) {
    const cause = subjectOf(context, options.cause);
    if (cause.resource === undefined) throw new TypeError('execute({ registry }) needs a changing cause with a resource.');
    const owned = options.registry.changingHandlersOf(cause.resource);
    const selected = new Set(options.registry.changingHandlers(cause));
    list = owned.map((handler) => ({ ...handler, matches: () => selected.has(handler) }));
  }
  await execution.executeSubhandlers({ handlers: list, lifecycle: options.lifecycle ?? null });
}
