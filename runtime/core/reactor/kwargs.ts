/**
 * The arguments objects handlers receive (R-KWARGS-1..4): built lazily per invocation (a field is
 * computed only if the handler reads it), over read-only views of the body of the event being
 * processed. Change handlers also get the reason, old/new essences (or field values for field
 * handlers) with the `oldValue`/`newValue` aliases, the diff, and the retry information.
 */
import type * as references from '../../cogs/structs/references.js';
import * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import * as diffs from '../../cogs/structs/diffs.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as patches from '../../cogs/structs/patches.js';
import type * as execution from '../actions/execution.js';
import * as invocation from '../actions/invocation.js';
import type * as causes from '../intents/causes.js';

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

/** A read-only view factory for one body: deep-frozen copy made on first use. */
export function viewOf(body: bodies.RawBody): () => dicts.DeepReadonly<bodies.RawBody> {
  let view: dicts.DeepReadonly<bodies.RawBody> | undefined;
  return () => (view ??= dicts.frozenCopy(body));
}

const EMPTY = Object.freeze({});

function resourceGetters(scope: ResourceScope, param: unknown): Record<string, () => unknown> {
  const meta = (): dicts.DeepReadonly<Record<string, unknown>> => (scope.view()['metadata'] ?? EMPTY) as dicts.DeepReadonly<Record<string, unknown>>;
  const section = (key: string) => (): unknown => {
    const value = scope.view()[key];
    return dicts.isObject(value) ? value : EMPTY;
  };
  return {
    resource: () => scope.resource,
    body: () => scope.view(),
    spec: section('spec'),
    meta,
    status: section('status'),
    uid: () => scope.body.metadata?.uid ?? '',
    name: () => scope.body.metadata?.name ?? '',
    namespace: () => (scope.resource.namespaced ? scope.body.metadata?.namespace ?? null : null),
    labels: () => (meta() as { labels?: unknown }).labels ?? EMPTY,
    annotations: () => (meta() as { annotations?: unknown }).annotations ?? EMPTY,
    patch: () => scope.patch,
    logger: () => scope.logger,
    memo: () => scope.memo,
    param: () => param,
    signal: () => scope.signal,
  };
}

function withIndices(getters: Record<string, () => unknown>, indices: ResourceScope['indices']): Record<string, () => unknown> {
  if (!indices) return getters;
  const out = { ...getters };
  for (const [name, index] of Object.entries(indices)) out[name] = () => index;
  return out;
}

/**
 * Kwargs of a change handler (R-KWARGS-1/2/3). Without `retry` (for filter callbacks, which run
 * before an invocation exists) the retry fields are absent; everything else is the same (R-FILTERS-6).
 */
export function changingKwargs(scope: ResourceScope, cause: causes.ChangingCause, handler: FilterableHandler, retry?: execution.RetryKwargs): object {
  const field = handler.field ?? null;
  const value = (essence: dicts.JsonObject | null): unknown => {
    if (essence === null) return undefined;
    const resolved = field ? dicts.resolve(essence, field) : essence;
    return resolved === undefined || resolved === null ? undefined : dicts.frozenCopy(resolved);
  };
  let old: unknown;
  let now: unknown;
  let oldDone = false;
  let newDone = false;
  const getOld = (): unknown => { if (!oldDone) { old = value(cause.old); oldDone = true; } return old; };
  const getNew = (): unknown => { if (!newDone) { now = value(cause.new); newDone = true; } return now; };
  return invocation.lazyKwargs(withIndices({
    ...resourceGetters(scope, handler.param),
    reason: () => cause.reason,
    old: getOld,
    new: getNew,
    oldValue: getOld,
    newValue: getNew,
    diff: () => (field ? diffs.diffAt(field, cause.old, cause.new) : cause.diff),
    ...(retry ? { retry: () => retry.retry, started: () => retry.started, runtime: () => retry.runtime } : {}),
  }, scope.indices));
}

/** Kwargs of an on-event handler (R-KWARGS-1/4). */
export function watchingKwargs(scope: ResourceScope, event: bodies.RawEvent, handler: FilterableHandler): object {
  return invocation.lazyKwargs(withIndices({
    ...resourceGetters(scope, handler.param),
    event: () => event,
    type: () => event.type,
  }, scope.indices));
}
