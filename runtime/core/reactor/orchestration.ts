/**
 * Orchestration: one watcher task per watched resource and served namespace, kept in step with
 * the `Insights` as resources and namespaces come and go.
 *
 * The observers (`observation`) change the insights; `orchestrate` waits until they are ready,
 * then, on every change, computes the wanted dimensions (`dimensionsOf`: namespaced resources ×
 * served namespaces, cluster-scoped resources once with namespace `null`, R-SCOPE-6), spawns the
 * missing watcher tasks through a caller-given `spawn` and aborts (and awaits) the ones no longer
 * wanted. What a watcher does is the caller's business (the reactor passes one that runs the
 * list-watch stream into the per-object queues, with the pause toggle of peering).
 *
 * A companion (the peering tasks of `observation`) can ride along: it is adjusted on every change
 * right before the watchers, and stopped after them.
 *
 * *Guarantees:* never two live tasks for the same dimension — a dimension that comes back while
 * its previous task is still stopping is spawned only after that task has settled.
 * *Errors:* a watcher task that rejects (other than with an abort error after being aborted) is
 * fatal (R-WATCH-3, D-12): all tasks are aborted and awaited, and `orchestrate` rejects with it.
 * Kopf: `kopf._core.reactor.orchestration.ochestrator` (sic) and `adjust_tasks`.
 *
 * The watcher tasks it starts and stops are defined here too, below the orchestrator.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as watching from '../../cogs/client/watching.js';
import * as bodies from '../../cogs/structs/bodies.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';
import * as errors from '../actions/errors.js';
import * as invocation from '../actions/invocation.js';
import type * as inventory from './inventory.js';
import * as observation from './observation.js';
import * as processing from './processing.js';
import * as queueing from './queueing.js';

/** Starts one watcher; it must run until `signal` aborts, then settle. */
export type Spawn = (resource: references.Resource, namespace: string | null, signal: AbortSignal) => Promise<void>;

/** One watcher's scope: a resource in a namespace, or `null` for cluster-wide/cluster-scoped. */
export interface Dimension {
  readonly resource: references.Resource;
  readonly namespace: string | null;
}

/** What `orchestrate` needs. */
export interface OrchestrationOptions {
  readonly insights: observation.Insights;
  readonly spawn: Spawn;
  /** Stops all watchers; `orchestrate` then resolves once they have settled. */
  readonly signal: AbortSignal;
  /** Receives debug lines about started and stopped watchers. */
  readonly logger?: loggers.Logger;
  /** Adjusted on every change before the watchers; stopped after them. */
  readonly companion?: Companion;
}

/** Tasks that follow the insights alongside the watchers (e.g. `peerings.PeeringTasks`). */
export interface Companion {
  /** Brings its tasks in line with the insights; synchronous, so it precedes the watchers' start. */
  adjust(): void;
  /** Stops all its tasks. */
  stop(): Promise<void>;
}

/**
 * The wanted watcher dimensions (pure): every namespaced resource in every served namespace
 * (`null` in the set meaning cluster-wide), every cluster-scoped resource once with `null`.
 *
 * @example
 * dimensionsOf([pods, nodes], new Set(['a', 'b'])) // pods@a, pods@b, nodes@null
 */
export function dimensionsOf(resources: readonly references.Resource[], namespaces: ReadonlySet<string | null>): Dimension[] {
  const dimensions: Dimension[] = [];
  for (const resource of resources) {
    if (!resource.namespaced) dimensions.push({ resource, namespace: null });
    else for (const namespace of namespaces) dimensions.push({ resource, namespace });
  }
  return dimensions;
}

/** The identity of a dimension. */
export function dimensionKey(dimension: Dimension): string {
  return `${observation.resourceKey(dimension.resource)}@${dimension.namespace === null ? '' : `/${dimension.namespace}`}`;
}

interface Task {
  readonly key: string;
  readonly dimension: Dimension;
  readonly controller: AbortController;
  /** Settles (never rejects) when the spawned watcher has settled. */
  readonly done: Promise<void>;
}

function where(dimension: Dimension): string {
  return `${references.resourceName(dimension.resource)}@${dimension.namespace ?? '<cluster>'}`;
}

/**
 * Keeps exactly one watcher task per wanted dimension until `signal` aborts (Kopf: the
 * orchestrator). Waits for `insights.ready` before spawning anything, so that the first watchers
 * start together. Resolves after aborting and awaiting all watchers.
 *
 * A watcher that resolves on its own is considered finished: it is not spawned again unless its
 * dimension goes away and comes back.
 *
 * @throws the first error of a watcher task that failed (after all others were stopped).
 * @example
 * await orchestrate({ insights, signal, spawn: (resource, namespace, signal) => watchResource(…, signal) });
 */
export async function orchestrate(options: OrchestrationOptions): Promise<void> {
  const { spawn, signal, logger } = options;
  const picture = options.insights;
  const running = new Map<string, Task>();
  const stopping = new Set<Task>();
  let failure: { readonly error: unknown } | undefined;
  let wake: () => void = () => undefined;
  const woken = (): Promise<void> =>
    new Promise<void>((resolve) => {
      wake = resolve;
    });

  const start = (key: string, dimension: Dimension): void => {
    const controller = new AbortController();
    const previous = [...stopping].filter((task) => task.key === key).map((task) => task.done);
    const run = async (): Promise<void> => {
      await Promise.all(previous);
      if (controller.signal.aborted) return;
      logger?.debug(`Starting the watcher for ${where(dimension)}.`);
      await spawn(dimension.resource, dimension.namespace, controller.signal);
    };
    const done = run().then(
      () => undefined,
      (error: unknown) => {
        if (controller.signal.aborted && (error === controller.signal.reason || aborts.isAbortError(error))) return;
        failure ??= { error };
        wake();
      },
    );
    running.set(key, { key, dimension, controller, done });
  };

  const stop = (task: Task): void => {
    logger?.debug(`Stopping the watcher for ${where(task.dimension)}.`);
    running.delete(task.key);
    stopping.add(task);
    task.controller.abort();
    void task.done.then(() => stopping.delete(task));
  };

  const adjust = (): void => {
    const wanted = new Map(dimensionsOf(picture.watched, picture.namespaces).map((d) => [dimensionKey(d), d]));
    for (const task of [...running.values()]) if (!wanted.has(task.key)) stop(task);
    for (const [key, dimension] of wanted) if (!running.has(key)) start(key, dimension);
  };

  try {
    await picture.ready.waitFor(true, signal);
    while (!signal.aborted && failure === undefined) {
      const revision = picture.revision;
      options.companion?.adjust();
      adjust();
      const wakeup = woken();
      await Promise.race([picture.waitForChange(revision, signal).catch(() => undefined), wakeup]);
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    for (const task of [...running.values()]) stop(task);
    await Promise.all([...stopping].map((task) => task.done));
    await options.companion?.stop();
  }
  if (failure !== undefined) throw failure.error;
}

/*
 * One watcher: lists and watches one resource in one namespace (or cluster-wide) and feeds every
 * event into the watch cache, when the resource is cached (R-CACHE-106), and into per-object
 * queues whose workers run the processing cycle (R-WATCH, R-QUEUE) — only for resources with
 * handlers the cycle runs: a kind watched only for reconcile handlers has no queue (R-CACHE-107). Runs
 * until its signal aborts; a fatal watch error or a failed worker rejects it, which stops the
 * operator (R-WATCH-3, R-QUEUE-9, D-12). While it runs, its stream reports its listings,
 * connections and lines to the operator's watch health (`engines/health`); with metrics on, the
 * resource's instruments see its listings, connections, queued events and processing cycles.
 */

/** Whether any handler the processing cycle runs selects the resource (change, event, daemon, timer, index). */
function isProcessed(op: inventory.OperatorContext, resource: references.Resource): boolean {
  const registry = op.registry;
  return (
    registry.changingHandlersOf(resource).length > 0 ||
    registry.watchingHandlersOf(resource).length > 0 ||
    registry.spawningHandlersOf(resource).length > 0 ||
    registry.indexingHandlersOf(resource).length > 0
  );
}

/**
 * Whether a sharded operator's watcher of the resource sees only its own objects (R-SHARD-201):
 * kinds the processing cycle handles and the primary kinds of reconcile handlers. Kinds watched
 * only for the cache (owned and watched secondaries) are watched whole.
 */
function shardingOf(op: inventory.OperatorContext, resource: references.Resource): inventory.Sharding | undefined {
  if (op.sharder === undefined) return undefined;
  return isProcessed(op, resource) || op.registry.reconcileHandlersOf(resource).length > 0 ? op.sharder : undefined;
}

/** The stream's observer, also noting each listing's resource version for the cache. */
function notingListings(observer: watching.WatchObserver | undefined, note: (resourceVersion: string | undefined) => void): watching.WatchObserver {
  return {
    listing: () => observer?.listing?.(),
    listed: (resourceVersion) => {
      note(resourceVersion);
      observer?.listed?.(resourceVersion);
    },
    opened: () => observer?.opened?.(),
    line: () => observer?.line?.(),
    closed: () => observer?.closed?.(),
    paused: () => observer?.paused?.(),
    resumed: () => observer?.resumed?.(),
  };
}

export async function runWatcher(op: inventory.OperatorContext, resource: references.Resource, namespace: string | null, signal: AbortSignal): Promise<void> {
  const where = namespace === null ? 'cluster-wide' : namespace;
  let fatal: unknown;
  const failed = new AbortController();
  const saturable = api.isSaturable(op.api) ? op.api : undefined;
  const instruments = op.instruments?.forResource(resource);
  const cache = op.cache?.isTracked(resource) ? op.cache : undefined;
  const queue = !isProcessed(op, resource)
    ? undefined
    : new queueing.Queue((event, stream) => processing.processResourceEvent(op, resource, event, stream, instruments), {
        clock: op.clock,
        logger: op.logger,
        idleTimeout: op.settings.queueing.idleTimeout,
        exitTimeout: op.settings.queueing.exitTimeout,
        workerLimit: op.settings.queueing.workerLimit,
        unsaturated: saturable ? (signal) => saturable.unsaturated(signal) : undefined,
        signal: op.signal,
        onFatal: (error, key) => {
          op.logger.error(`Event processing has failed with an unrecoverable error for ${key}.`, { error });
          fatal ??= new Error(
            'Event processing has failed with an unrecoverable error. This seems to be a framework bug. The operator will stop to prevent damage.',
            { cause: error },
          );
          failed.abort();
        },
      });
  if (queue !== undefined) op.queues?.add(queue, resource);
  // The readiness barrier waits for this watcher's initial listing to be indexed (R-INDEX-7).
  const indexed = op.barrier !== undefined && op.registry.indexingHandlersOf(resource).length > 0;
  const listing = indexed ? op.barrier!.watcherStarted(`${references.resourceName(resource)}@${where}`) : null;
  let listed = false;
  const tracker = op.streams?.track(dimensionKey({ resource, namespace }), `${references.resourceName(resource)} ${watching.whereOf(namespace)}`);
  let listingVersion: string | undefined;
  const observer = cache === undefined ? tracker : notingListings(tracker, (version) => (listingVersion = version));
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  failed.signal.addEventListener('abort', onAbort, { once: true });
  // Sharded (R-SHARD-201..204): only the own objects, the sharder's filter before the cache and the
  // queue, and the claimer of this dimension alongside.
  const sharder = shardingOf(op, resource);
  const feed = (event: bodies.RawEvent): void => {
    cache?.observe(resource, namespace, event);
    if (queue === undefined) return;
    if (listing !== null && !listed && event.type === null) op.barrier!.track(bodies.objectKey(event.object));
    instruments?.queued();
    queue.push(event);
  };
  const detach = sharder?.attach({ resource, namespace, queue, feed });
  let claimer: Promise<void> | undefined;
  try {
    await invocation.runInOperator(op, async () => {
      claimer = sharder?.claim(resource, namespace, stop.signal).catch((error: unknown) => {
        if (stop.signal.aborted) return;
        op.logger.error(`Claimer for ${references.resourceName(resource)}@${where} has failed: ${errors.errorMessage(error)}`, clientErrors.traceExtra(error));
        fatal ??= error;
        failed.abort();
      });
      const stream = watching.infiniteWatch(
        {
          api: op.api,
          settings: op.settings,
          resource,
          namespace,
          labelSelector: sharder?.selector,
          logger: op.logger,
          clock: op.clock,
          instruments,
          observer,
        },
        { paused: op.paused, signal: stop.signal },
      );
      for await (const event of stream) {
        if (watching.isListed(event)) {
          cache?.listed(resource, namespace, listingVersion);
          if (!listed) op.barrier?.listed(listing);
          listed = true;
          continue;
        }
        if (sharder !== undefined && !sharder.admit(event)) continue;
        feed(event);
      }
    });
  } catch (error) {
    if (!stop.signal.aborted) {
      op.logger.error(`Watcher for ${references.resourceName(resource)}@${where} has failed: ${errors.errorMessage(error)}`, clientErrors.traceExtra(error));
      throw error;
    }
  } finally {
    stop.abort();
    detach?.();
    await claimer;
    tracker?.stop();
    op.barrier?.forget(listing); // a watcher stopped before its listing no longer blocks anything
    signal.removeEventListener('abort', onAbort);
    cache?.forget(resource, namespace); // no longer observed: reads of it go to the API again
    if (queue !== undefined) {
      await queue.stop();
      op.queues?.delete(queue);
    }
  }
  if (fatal !== undefined) {
    op.logger.error(`Watcher for ${references.resourceName(resource)}@${where} has failed: ${errors.errorMessage(fatal)}`);
    throw fatal;
  }
}
