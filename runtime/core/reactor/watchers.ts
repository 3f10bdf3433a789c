/**
 * One watcher: lists and watches one resource in one namespace (or cluster-wide) and feeds every
 * event into per-object queues whose workers run the processing cycle (R-WATCH, R-QUEUE). Runs
 * until its signal aborts; a fatal watch error or a failed worker rejects it, which stops the
 * operator (R-WATCH-3, R-QUEUE-9, D-12). While it runs, its stream reports its listings,
 * connections and lines to the operator's watch health (`engines/health`); with metrics on, the
 * resource's instruments see its listings, connections, queued events and processing cycles.
 */
import * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as watching from '../../cogs/client/watching.js';
import * as bodies from '../../cogs/structs/bodies.js';
import * as references from '../../cogs/structs/references.js';
import * as errors from '../actions/errors.js';
import * as invocation from '../actions/invocation.js';
import type * as context from './context.js';
import * as orchestration from './orchestration.js';
import * as processing from './processing.js';
import * as queueing from './queueing.js';

export async function runWatcher(op: context.OperatorContext, resource: references.Resource, namespace: string | null, signal: AbortSignal): Promise<void> {
  const where = namespace === null ? 'cluster-wide' : namespace;
  let fatal: unknown;
  const failed = new AbortController();
  const saturable = api.isSaturable(op.api) ? op.api : undefined;
  const instruments = op.instruments?.forResource(resource);
  const queue = new queueing.Queue((event, stream) => processing.processResourceEvent(op, resource, event, stream, instruments), {
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
  op.queues?.add(queue, resource);
  // The readiness barrier waits for this watcher's initial listing to be indexed (R-INDEX-7).
  const indexed = op.barrier !== undefined && op.registry.indexingHandlersOf(resource).length > 0;
  const listing = indexed ? op.barrier!.watcherStarted(`${references.resourceName(resource)}@${where}`) : null;
  let listed = false;
  const tracker = op.streams?.track(orchestration.dimensionKey({ resource, namespace }), `${references.resourceName(resource)} ${watching.whereOf(namespace)}`);
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  failed.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await invocation.runInOperator(op, async () => {
      const stream = watching.infiniteWatch(
        { api: op.api, settings: op.settings, resource, namespace, logger: op.logger, clock: op.clock, instruments, observer: tracker },
        { paused: op.paused, signal: stop.signal },
      );
      for await (const event of stream) {
        if (watching.isListed(event)) {
          if (!listed) op.barrier?.listed(listing);
          listed = true;
          continue;
        }
        if (listing !== null && !listed && event.type === null) op.barrier!.track(bodies.objectKey(event.object));
        instruments?.queued();
        queue.push(event);
      }
    });
  } catch (error) {
    if (!stop.signal.aborted) {
      op.logger.error(`Watcher for ${references.resourceName(resource)}@${where} has failed: ${errors.errorMessage(error)}`, clientErrors.traceExtra(error));
      throw error;
    }
  } finally {
    tracker?.stop();
    op.barrier?.forget(listing); // a watcher stopped before its listing no longer blocks anything
    signal.removeEventListener('abort', onAbort);
    await queue.stop();
    op.queues?.delete(queue);
  }
  if (fatal !== undefined) {
    op.logger.error(`Watcher for ${references.resourceName(resource)}@${where} has failed: ${errors.errorMessage(fatal)}`);
    throw fatal;
  }
}
