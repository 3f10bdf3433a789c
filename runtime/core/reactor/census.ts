/**
 * A count of what an operator holds per object, read off its own structures.
 *
 * Memory that grows with the objects an operator has *seen*, rather than with those that exist, is
 * the leak that kills long-running operators; RSS is too coarse to see it early (V8 keeps freed
 * pages for a while). So the runtime counts its per-object structures directly: object memories,
 * queue streams with their workers, running daemons and timers, index entries, objects the
 * readiness barrier still tracks, and followers of the operator's stop signal (each in-flight
 * processing cycle and each running daemon has one). Once every object is deleted and idle workers
 * have expired, every count is back to zero — the tests of per-object state assert exactly that.
 * The same counts, per resource, are the queue gauges of the operator's metrics.
 */
import * as aborts from '../../cogs/aio/aborts.js';
import type * as references from '../../cogs/structs/references.js';
import type * as context from './context.js';
import type * as queueing from './queueing.js';

/** The per-object structures an operator holds right now. */
export interface Census {
  /** Object memories (memos, throttling, consistency expectations): one per object seen and not deleted. */
  readonly memories: number;
  /** Objects with a queue stream: a worker processing or idling, or events waiting for one. */
  readonly streams: number;
  /** Events received and not yet processed, over all streams. */
  readonly queuedEvents: number;
  /** Running daemons and timers (including those still exiting). */
  readonly daemons: number;
  /** Object entries of all in-memory indices. */
  readonly indexed: number;
  /** Listed objects the readiness barrier still tracks. */
  readonly barrier: number;
  /** Waiters on the operator's stop signal: in-flight processing cycles, running daemons and timers. */
  readonly followers: number;
}

/** What the queues of one resource hold right now (over all namespaces served). */
export interface QueueCounts {
  /** Objects with a queue stream. */
  readonly streams: number;
  /** Events received and not yet processed. */
  readonly queuedEvents: number;
  /** Live per-object workers: processing, idling, or waiting to start. */
  readonly workers: number;
  /** Workers processing an event right now. */
  readonly busyWorkers: number;
  /** The sum of the queues' worker limits; `null` if any queue is unlimited. */
  readonly workerLimit: number | null;
}

/** The queues of an operator's watchers, registered while the watchers run. */
export class Queues {
  private readonly all = new Map<queueing.Queue, references.Resource | undefined>();

  /** Registers a watcher's queue (with its resource, for the counts per resource). */
  add(queue: queueing.Queue, resource?: references.Resource): void {
    this.all.set(queue, resource);
  }

  delete(queue: queueing.Queue): void {
    this.all.delete(queue);
  }

  /** The counts of the registered queues, by resource (queues registered without one are left out). */
  byResource(): Map<references.Resource, QueueCounts> {
    const counts = new Map<references.Resource, { -readonly [K in keyof QueueCounts]: QueueCounts[K] }>();
    for (const [queue, resource] of this.all) {
      if (resource === undefined) continue;
      let entry = counts.get(resource);
      if (entry === undefined) {
        entry = { streams: 0, queuedEvents: 0, workers: 0, busyWorkers: 0, workerLimit: 0 };
        counts.set(resource, entry);
      }
      entry.streams += queue.size;
      entry.queuedEvents += queue.queuedEvents;
      entry.workers += queue.workerCount;
      entry.busyWorkers += queue.busyWorkers;
      const limit = queue.workerLimit;
      entry.workerLimit = limit === null || entry.workerLimit === null ? null : entry.workerLimit + limit;
    }
    return counts;
  }

  /** Streams and queued events over all queues. */
  count(): { readonly streams: number; readonly queuedEvents: number } {
    let streams = 0;
    let queuedEvents = 0;
    for (const queue of this.all.keys()) {
      streams += queue.size;
      queuedEvents += queue.queuedEvents;
    }
    return { streams, queuedEvents };
  }
}

/**
 * Counts what `op` holds per object now.
 *
 * @example
 * const { memories, streams } = takeCensus(tasks.context);
 */
export function takeCensus(op: context.OperatorContext): Census {
  const queued = op.queues?.count() ?? { streams: 0, queuedEvents: 0 };
  return {
    memories: op.memories.size,
    streams: queued.streams,
    queuedEvents: queued.queuedEvents,
    daemons: op.daemons?.size ?? 0,
    indexed: op.indices?.objects ?? 0,
    barrier: op.barrier?.tracked ?? 0,
    followers: aborts.followers(op.signal),
  };
}
