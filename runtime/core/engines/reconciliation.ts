/**
 * One reconcile call (R-RECONCILE-201, -204, -205, -207, -208, -211): what the work queue runs for
 * a (handler, object) when it is its turn, and the verdict it hands back.
 *
 * The object is read from the watch cache, so the call sees its newest state. An object gone, or
 * being deleted without the handler's finalizer, is not reconciled; one being deleted with it gets
 * `finalize`, and the finalizer is removed when that succeeds; otherwise, a handler with `finalize`
 * adds its finalizer first (a JSON patch that tests the list it extends). Then the function runs
 * with the arguments the reactor builds, its patch is applied (merge patches, status through its
 * subresource — `actions/application`, no Kopf bookkeeping), and every response goes to the cache.
 *
 * Everything a call writes happens inside `calling` (an AsyncLocalStorage of the current call),
 * which the cache's listener reads synchronously: the object's own changes made from inside its
 * call are no trigger for it (R-RECONCILE-211).
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type * as api from '../../cogs/client/api.js';
import type * as caches from '../../cogs/client/caches.js';
import * as apiErrors from '../../cogs/client/errors.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import * as jsonpatches from '../../cogs/structs/jsonpatches.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as patches from '../../cogs/structs/patches.js';
import * as references from '../../cogs/structs/references.js';
import * as application from '../actions/application.js';
import * as errors from '../actions/errors.js';
import * as invocation from '../actions/invocation.js';
import type * as caching from './caching.js';
import type * as reconciling from './reconciling.js';

/** A call in progress: its target, and the resource versions of the object its own writes made. */
export interface Calling {
  readonly target: reconciling.Target;
  readonly written: Set<string>;
}

/** The call in progress in this async context, if any (read by the cache's listener). */
export const calling = new AsyncLocalStorage<Calling>();

/** Whether `body` (of `resource`) is the call's own object. */
function isOwn(target: reconciling.Target, resource: references.Resource, body: bodies.RawBody): boolean {
  return (
    references.resourceName(resource) === references.resourceName(target.resource) &&
    body.metadata?.name === target.name &&
    (body.metadata?.namespace ?? null) === target.namespace
  );
}

/**
 * The cache as the operator's client sees it: every write goes to the cache as always, and a
 * write of a call's own object made inside that call records the resource version the cache
 * reports (R-RECONCILE-211) — also when the watch's echo came first, so that the write changed
 * nothing in the cache and no listener heard of it: the echo the queue noted is then known to be
 * the call's own, not a change to call again for.
 */
export function recordingWrites(cache: caching.WatchCache): caches.CacheReader {
  return {
    isTracked: (resource) => cache.isTracked(resource),
    isSynced: (resource, namespace) => cache.isSynced(resource, namespace),
    get: (resource, namespace, name) => cache.get(resource, namespace, name),
    list: (resource, namespace) => cache.list(resource, namespace),
    removed: (resource, namespace, name, version) => cache.removed(resource, namespace, name, version),
    wrote: (resource, body) => {
      const version = cache.wrote(resource, body);
      const current = calling.getStore();
      if (version !== undefined && current !== undefined && isOwn(current.target, resource, body)) current.written.add(version);
      return version;
    },
  };
}

/** What a call gets besides its handler's own arguments. */
export interface CallExtras {
  readonly patch: patches.PatchBase<object>;
  /** One array per `owns` entry. */
  readonly owned: readonly (readonly bodies.RawBody[])[];
  readonly now: Date;
  readonly retry: number;
  readonly signal: AbortSignal;
}

/** What one call needs of the operator (the reactor provides it). */
export interface CallScope {
  readonly cache: caching.WatchCache;
  readonly api: Pick<api.KubeReader, 'get'> & api.KubeWriter;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  /** The per-object logger. */
  readonly logger: (target: reconciling.Target, body: bodies.RawBody) => loggers.Logger;
  /** The handler's arguments over `body` (R-RECONCILE-201). */
  readonly kwargs: (target: reconciling.Target, body: bodies.RawBody, extras: CallExtras) => object;
  /** The cached children of the object, one array per `owns` entry. */
  readonly owned: (target: reconciling.Target, body: bodies.RawBody) => readonly (readonly bodies.RawBody[])[];
  /** Whether the handler's filters select the object. */
  readonly matches: (target: reconciling.Target, body: bodies.RawBody) => boolean;
}

function finalizersOf(body: bodies.RawBody): readonly string[] {
  const finalizers = body.metadata?.finalizers;
  return Array.isArray(finalizers) ? finalizers : [];
}

/** The JSON patch that adds `finalizer` to the list as seen (or creates the list). */
function addition(body: bodies.RawBody, finalizer: string): object[] {
  const finalizers = body.metadata?.finalizers;
  if (!Array.isArray(finalizers)) return [jsonpatches.resourceVersionTest(body), { op: 'add', path: '/metadata/finalizers', value: [finalizer] }];
  return [
    { op: 'test', path: '/metadata/finalizers', value: finalizers },
    { op: 'add', path: '/metadata/finalizers/-', value: finalizer },
  ];
}

/** The JSON patch that removes `finalizer` from the list as seen. */
function removal(body: bodies.RawBody, finalizer: string): object[] {
  const index = finalizersOf(body).indexOf(finalizer);
  return [
    { op: 'test', path: `/metadata/finalizers/${index}`, value: finalizer },
    { op: 'remove', path: `/metadata/finalizers/${index}` },
  ];
}

type Outcome = { readonly kind: 'returned'; readonly value: unknown } | { readonly kind: 'thrown'; readonly error: unknown };

/** What a handler's outcome means for the queue, logged as R-RECONCILE-205 says. */
function verdictOf(outcome: Outcome, title: string, logger: loggers.Logger): reconciling.Verdict {
  if (outcome.kind === 'returned') {
    const value = outcome.value;
    if (value === undefined) {
      logger.debug(`${title} succeeded.`);
      return { kind: 'done' };
    }
    const after = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { requeueAfter?: unknown }).requeueAfter : null;
    const keys = typeof value === 'object' && value !== null ? Object.keys(value) : [];
    if (keys.every((key) => key === 'requeueAfter') && (after === undefined || (typeof after === 'number' && Number.isFinite(after) && after >= 0))) {
      if (after === undefined) {
        logger.debug(`${title} succeeded.`);
        return { kind: 'done' };
      }
      logger.debug(`${title} succeeded; requeued in ${after} seconds.`);
      return { kind: 'requeue', after };
    }
    logger.error(`${title} returned ${String(JSON.stringify(value))}: a reconcile handler returns nothing or { requeueAfter: seconds }. Will retry.`);
    return { kind: 'retry', after: null };
  }
  const error = outcome.error;
  if (error instanceof errors.TemporaryError) {
    logger.warning(`${title} failed temporarily: ${errors.errorMessage(error)}`);
    return { kind: 'retry', after: error.delay ?? null };
  }
  if (error instanceof errors.PermanentError) {
    logger.error(`${title} failed permanently: ${errors.errorMessage(error)}`);
    return { kind: 'permanent' };
  }
  logger.error(`${title} failed with an exception. Will retry.`, { error });
  return { kind: 'retry', after: null };
}

/** Runs one call of `target` (see the module's comment). Never rejects: failures are verdicts. */
export async function reconcileOnce(
  scope: CallScope,
  target: reconciling.Target,
  retry: number,
  signal: AbortSignal,
): Promise<{ readonly verdict: reconciling.Verdict; readonly written: ReadonlySet<string> }> {
  const written = new Set<string>();
  return { verdict: await callOnce(scope, target, retry, signal, written), written };
}

async function callOnce(scope: CallScope, target: reconciling.Target, retry: number, signal: AbortSignal, written: Set<string>): Promise<reconciling.Verdict> {
  const { handler, resource, namespace, name } = target;
  const seen = scope.cache.get(resource, namespace, name);
  if (seen === undefined) return { kind: 'gone' };
  let body: bodies.RawBody = seen;
  const logger = scope.logger(target, body);
  const { finalizer } = handler;
  const holds = finalizer !== null && finalizersOf(body).includes(finalizer);
  const deleting = typeof body.metadata?.deletionTimestamp === 'string';
  if (deleting && !holds) return { kind: 'gone' };
  if (!deleting && !scope.matches(target, body)) return { kind: 'gone' };
  const fn = deleting ? handler.finalize! : handler.fn;
  const title = `${deleting ? 'Finalizing' : 'Reconcile handler'} '${handler.id}'`;

  // The object's own writes, by resource version: their echoes from the watch are no trigger, even
  // when an echo arrives before the response (the queue compares what it noted meanwhile).
  const api: CallScope['api'] = {
    get: (...a) => scope.api.get(...a),
    create: (...a) => scope.api.create(...a),
    patch: async (...a) => {
      const response = await scope.api.patch(...a);
      const version = response.metadata?.resourceVersion;
      if (typeof version === 'string') written.add(version);
      return response;
    },
  };
  return calling.run({ target, written }, async () => {
    try {
      const write = async (patch: object[]): Promise<bodies.RawBody> => {
        const response = await api.patch(resource, namespace, name, patch, { type: 'json', signal });
        scope.cache.wrote(resource, response);
        return response;
      };
      if (!deleting && finalizer !== null && !holds) body = await write(addition(body, finalizer));
      const patch = new patches.Patch<object>();
      const extras: CallExtras = { patch, owned: scope.owned(target, body), now: new Date(scope.now()), retry, signal };
      let outcome: Outcome;
      try {
        outcome = { kind: 'returned', value: await invocation.invoke(fn, scope.kwargs(target, body, extras)) };
      } catch (error) {
        outcome = { kind: 'thrown', error };
      }
      if (!patch.isEmpty()) {
        const applied = await application.applyPatch({ api, resource, body, patch, logger, signal });
        if (applied.gone) return { kind: 'gone' };
        if (applied.sent) {
          scope.cache.wrote(resource, applied.body);
          body = applied.body;
        }
      }
      const verdict = verdictOf(outcome, title, logger);
      if (deleting && verdict.kind === 'done') {
        const current = scope.cache.get(resource, namespace, name) ?? body;
        if (finalizersOf(current).includes(finalizer!)) await write(removal(current, finalizer!));
        return { kind: 'gone' };
      }
      return verdict;
    } catch (error) {
      if (error instanceof apiErrors.ApiNotFoundError) return { kind: 'gone' };
      if (signal.aborted) return { kind: 'done' };
      logger.error(`${title} could not write its changes. Will retry.`, { error });
      return { kind: 'retry', after: null };
    }
  });
}
