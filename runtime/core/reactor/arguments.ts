/**
 * The arguments objects handlers receive (R-KWARGS-1..5, R-KWARGS-8), built here and nowhere else:
 * the processing cycle passes them to every handler it invokes and to every filter callback it
 * checks, and daemons and timers get theirs through the launcher the cycle gives them.
 *
 * Arguments are built lazily per invocation — a field is computed only if the handler reads it —
 * from shared tables of getters, one per kind of handler, over read-only views of the body of the
 * event being processed (`cogs/structs/views`). Change handlers also get the reason, old/new
 * essences (or field values for field handlers) with the `oldValue`/`newValue` aliases, the diff,
 * and the retry information. Every handler also gets the operator's typed `client` (from the
 * operator's async context), and the indices by name.
 *
 * Daemons and timers run for long, so their `body`, `spec`, `meta`, `status`, `labels` and
 * `annotations` are *live* views (R-KWARGS-8): read-only proxies that resolve every property read
 * against the newest body the object's memory holds, so `spec.field` read in a loop sees the
 * latest value. Writing to them throws; changes go through `patch`.
 *
 * Kopf builds its kwargs outside `processing` too: the cause objects provide them
 * (`kopf._core.intents.causes`, as `Kwargable`s of `kopf._core.actions.invocation`).
 */

import type * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import * as diffs from '../../cogs/structs/diffs.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as patches from '../../cogs/structs/patches.js';
import type * as references from '../../cogs/structs/references.js';
import * as views from '../../cogs/structs/views.js';
import type * as execution from '../actions/execution.js';
import * as invocation from '../actions/invocation.js';
import type * as spawningEngine from '../engines/spawning.js';
import type * as causes from '../intents/causes.js';
import type * as handlers from '../intents/handlers.js';
import type * as stoppers from '../intents/stoppers.js';
import * as subhandling from './subhandling.js';

/** What the kwargs builders read of a handler: its `param` and, for field handlers, its `field`. */
export type FilterableHandler = Pick<execution.Invocable, 'param'> & { readonly field?: readonly string[] | null };

/** What every resource handler of one cycle shares. */
export interface ResourceScope {
  readonly resource: references.Resource;
  readonly body: bodies.RawBody;
  /** The read-only view of the body, built once per cycle. */
  readonly view: () => dicts.DeepReadonly<bodies.RawBody>;
  readonly patch: patches.PatchBase<object>;
  readonly logger: loggers.Logger;
  readonly memo: object;
  readonly signal: AbortSignal;
  /** Index names → indices (injected last, overriding built-in names, R-INDEX-8). */
  readonly indices?: Readonly<Record<string, unknown>>;
}

const EMPTY = Object.freeze({});

/**
 * What the kwargs of one resource handler read. The getters are shared tables (one per kind of
 * handler, below), so building kwargs costs one small object, not a closure per field: kwargs are
 * built for every invocation and every filter check of every event.
 */
interface ResourceSource {
  readonly scope: ResourceScope;
  readonly param: unknown;
}

interface ChangingSource extends ResourceSource {
  readonly cause: causes.ChangingCause;
  readonly field: readonly string[] | null;
  readonly retry?: execution.RetryKwargs;
  /** `old`/`oldValue` and `new`/`newValue` are one value each (computed once, same identity). */
  old?: { readonly value: unknown };
  new?: { readonly value: unknown };
}

interface WatchingSource extends ResourceSource {
  readonly event: bodies.RawEvent;
}

interface IndexingSource extends ResourceSource {
  readonly retry?: execution.RetryKwargs;
}

type Table<S> = Readonly<Record<string, (source: S) => unknown>>;

function metaOf(s: ResourceSource): Readonly<Record<string, unknown>> {
  return (s.scope.view()['metadata'] ?? EMPTY) as Readonly<Record<string, unknown>>;
}

function sectionOf(s: ResourceSource, key: string): unknown {
  const value = s.scope.view()[key];
  return dicts.isObject(value) ? value : EMPTY;
}

/** The resource fields of R-KWARGS-1, over the cycle's read-only view of the body. */
const RESOURCE: Table<ResourceSource> = Object.freeze({
  resource: (s) => s.scope.resource,
  body: (s) => s.scope.view(),
  spec: (s) => sectionOf(s, 'spec'),
  meta: (s) => metaOf(s),
  status: (s) => sectionOf(s, 'status'),
  uid: (s) => s.scope.body.metadata?.uid ?? '',
  name: (s) => s.scope.body.metadata?.name ?? '',
  namespace: (s) => (s.scope.resource.namespaced ? (s.scope.body.metadata?.namespace ?? null) : null),
  labels: (s) => metaOf(s)['labels'] ?? EMPTY,
  annotations: (s) => metaOf(s)['annotations'] ?? EMPTY,
  patch: (s) => s.scope.patch,
  logger: (s) => s.scope.logger,
  memo: (s) => s.scope.memo,
  param: (s) => s.param,
  signal: (s) => s.scope.signal,
  client: () => invocation.currentClient(),
});

const RETRY: Table<{ readonly retry?: execution.RetryKwargs }> = Object.freeze({
  retry: (s) => s.retry!.retry,
  started: (s) => s.retry!.started,
  runtime: (s) => s.retry!.runtime,
});

/** A frozen copy of the essence's value at the handler's field (or the whole essence). */
function valueAt(essence: dicts.JsonObject | null, field: readonly string[] | null): unknown {
  if (essence === null) return undefined;
  const resolved = field ? dicts.resolve(essence, field) : essence;
  return resolved === undefined || resolved === null ? undefined : dicts.frozenCopy(resolved);
}

function oldOf(s: ChangingSource): unknown {
  return (s.old ??= { value: valueAt(s.cause.old, s.field) }).value;
}

function newOf(s: ChangingSource): unknown {
  return (s.new ??= { value: valueAt(s.cause.new, s.field) }).value;
}

const CHANGING_FIELDS: Table<ChangingSource> = {
  reason: (s) => s.cause.reason,
  old: oldOf,
  new: newOf,
  oldValue: oldOf,
  newValue: newOf,
  diff: (s) => (s.field ? diffs.diffAt(s.field, s.cause.old, s.cause.new) : s.cause.diff),
  // The sub-handler helpers, typed by the handler's body in `ChangingArgs` (R-HANDLERS-13).
  subhandler: () => subhandling.subhandler,
  register: () => subhandling.register,
  execute: () => subhandling.execute,
};
const CHANGING: Table<ChangingSource> = Object.freeze({ ...RESOURCE, ...CHANGING_FIELDS });
const CHANGING_RETRY: Table<ChangingSource> = Object.freeze({ ...RESOURCE, ...CHANGING_FIELDS, ...RETRY });

const WATCHING: Table<WatchingSource> = Object.freeze({
  ...RESOURCE,
  event: (s) => s.event,
  type: (s) => s.event.type,
});

const INDEXING_RETRY: Table<IndexingSource> = Object.freeze({ ...RESOURCE, ...RETRY });

/**
 * Kwargs of a change handler (R-KWARGS-1/2/3). Without `retry` (for filter callbacks, which run
 * before an invocation exists) the retry fields are absent; everything else is the same (R-FILTERS-6).
 */
export function changingKwargs(scope: ResourceScope, cause: causes.ChangingCause, handler: FilterableHandler, retry?: execution.RetryKwargs): object {
  const source: ChangingSource = { scope, param: handler.param, cause, field: handler.field ?? null, retry };
  return invocation.tableKwargs(retry ? CHANGING_RETRY : CHANGING, source, scope.indices);
}

/** Kwargs of an on-event handler (R-KWARGS-1/4). */
export function watchingKwargs(scope: ResourceScope, event: bodies.RawEvent, handler: FilterableHandler): object {
  const source: WatchingSource = { scope, param: handler.param, event };
  return invocation.tableKwargs(WATCHING, source, scope.indices);
}

/** Kwargs of an indexer (R-KWARGS-1/2): the resource fields of the event's body, retry fields. */
export function indexingKwargs(scope: ResourceScope, handler: FilterableHandler, retry?: execution.RetryKwargs): object {
  const source: IndexingSource = { scope, param: handler.param, retry };
  return invocation.tableKwargs(retry ? INDEXING_RETRY : RESOURCE, source, scope.indices);
}

/**
 * The read-only side of a stop flag: what a daemon may do with it (R-DAEMON-5). A daemon keeps it
 * for as long as it runs, so it is small: the methods are closures (they work detached, e.g.
 * `const { wait } = stopped`), the two accessors live on the prototype.
 */
class StopperView implements stoppers.DaemonStopped {
  readonly isSet: () => boolean;
  readonly wait: (timeout?: number) => Promise<boolean>;
  readonly #stopper: stoppers.DaemonStopper;

  constructor(stopper: stoppers.DaemonStopper) {
    this.#stopper = stopper;
    this.isSet = () => stopper.isSet();
    this.wait = (timeout?: number) => stopper.wait(timeout);
    Object.freeze(this);
  }

  get reason(): stoppers.DaemonStoppingReason | null {
    return this.#stopper.reason;
  }

  get signal(): AbortSignal {
    return this.#stopper.signal;
  }
}

/** What the kwargs of a daemon or timer read: the resource, the object's live memory, the rest. */
export interface SpawningScope {
  readonly resource: references.Resource;
  readonly memory: spawningEngine.DaemonsMemory;
  readonly logger: loggers.Logger;
  readonly memo: object;
  readonly indices?: Readonly<Record<string, unknown>>;
}

interface SpawningSource {
  readonly scope: SpawningScope;
  readonly handler: handlers.SpawningHandler;
  readonly stopper: stoppers.DaemonStopper;
  readonly patch: () => patches.PatchBase<object>;
  readonly retry: execution.RetryKwargs;
}

function liveSection(source: SpawningSource, key: string): object {
  return views.liveView(() => {
    const value = views.frozenBody(source.scope.memory.body)[key];
    return dicts.isObject(value) ? value : EMPTY;
  });
}

function liveMeta(source: SpawningSource, key: string): object {
  return views.liveView(() => {
    const meta = views.frozenBody(source.scope.memory.body)['metadata'];
    const value = dicts.isObject(meta) ? (meta as Readonly<Record<string, unknown>>)[key] : undefined;
    return dicts.isObject(value) ? value : EMPTY;
  });
}

/** The kwargs of daemons and timers, computed from their source on first access. */
const SPAWNING: Readonly<Record<string, (source: SpawningSource) => unknown>> = Object.freeze({
  resource: (s) => s.scope.resource,
  body: (s) => views.liveView(() => views.frozenBody(s.scope.memory.body)),
  spec: (s) => liveSection(s, 'spec'),
  meta: (s) => liveSection(s, 'metadata'),
  status: (s) => liveSection(s, 'status'),
  labels: (s) => liveMeta(s, 'labels'),
  annotations: (s) => liveMeta(s, 'annotations'),
  uid: (s) => s.scope.memory.body.metadata?.uid ?? '',
  name: (s) => s.scope.memory.body.metadata?.name ?? '',
  namespace: (s) => (s.scope.resource.namespaced ? (s.scope.memory.body.metadata?.namespace ?? null) : null),
  patch: (s) => s.patch(),
  logger: (s) => s.scope.logger,
  memo: (s) => s.scope.memo,
  param: (s) => s.handler.param,
  signal: (s) => s.stopper.signal,
  client: () => invocation.currentClient(),
  stopped: (s) => new StopperView(s.stopper),
  retry: (s) => s.retry.retry,
  started: (s) => s.retry.started,
  runtime: (s) => s.retry.runtime,
});

/** Kwargs of a daemon or timer (R-KWARGS-1/2/5/8): live views, `stopped`, `signal`, retry fields. */
export function spawningKwargs(
  scope: SpawningScope,
  handler: handlers.SpawningHandler,
  stopper: stoppers.DaemonStopper,
  patch: () => patches.PatchBase<object>,
  retry: execution.RetryKwargs,
): object {
  return invocation.tableKwargs(SPAWNING, { scope, handler, stopper, patch, retry }, scope.indices);
}

interface ReconcileSource extends ResourceSource {
  readonly owned: readonly (readonly bodies.RawBody[])[];
  readonly clock: unknown;
  readonly now: Date;
  readonly retry: number;
}

/** The kwargs of reconcile handlers: the resource fields over the cached body, and their own. */
const RECONCILE: Table<ReconcileSource> = Object.freeze({
  ...RESOURCE,
  owned: (s) => s.owned,
  clock: (s) => s.clock,
  now: (s) => s.now,
  retry: (s) => s.retry,
});

/** Kwargs of a reconcile handler (R-RECONCILE-201). */
export function reconcileKwargs(
  scope: ResourceScope,
  handler: FilterableHandler,
  extras: { readonly owned: readonly (readonly bodies.RawBody[])[]; readonly clock: unknown; readonly now: Date; readonly retry: number },
): object {
  return invocation.tableKwargs(RECONCILE, { scope, param: handler.param, ...extras }, scope.indices);
}
