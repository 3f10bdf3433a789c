/**
 * Per-object in-memory records (Kopf's `ResourceMemory`): what the operator must remember about an
 * object between processing cycles but must never write to it — either because it belongs to this
 * process only (running daemons and timers, error throttling, index errors) or because it would be
 * meaningless after a restart (the patch the operator waits to see come back).
 *
 * One `ObjectMemory` holds the object's memo (R-MEMO-2); whether it was first seen in the initial
 * listing and has been fully handled once since, which is how resuming is told from changing
 * (R-CAUSE-2); the resource version it waits for to be consistent again (R-QUEUE-4); JSON-patch
 * functions carried over after a conflict (R-PATCH-3); its error-throttling state (R-QUEUE-8); and,
 * only for objects that have them, its daemons and timers and its indexing errors. The record is
 * created on first sight and dropped on the object's DELETED event (daemons still exiting keep their
 * own reference to it).
 *
 * The module is the operator's inventory, as Kopf's is: next to the per-object records, the
 * operator context that bundles them with everything else a processing cycle needs, and the census
 * that counts what all of it holds.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as api from '../../cogs/client/api.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as clients from '../../cogs/client/clients.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as dicts from '../../cogs/structs/dicts.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as references from '../../cogs/structs/references.js';
import type * as events from '../actions/events.js';
import type * as lifecycles from '../actions/lifecycles.js';
import * as throttling from '../actions/throttling.js';
import type * as caching from '../engines/caching.js';
import type * as health from '../engines/health.js';
import type * as indexing from '../engines/indexing.js';
import type * as rings from '../engines/rings.js';
import type * as spawning from '../engines/spawning.js';
import type * as scheduling from '../engines/scheduling.js';
import * as memos from '../intents/memos.js';
import type * as registry from '../intents/registry.js';
import type * as queueing from './queueing.js';

export class ObjectMemory {
  /** The per-object memo: a shallow copy of the operator memo (R-MEMO-2). */
  readonly memo: object;
  /** First seen through the initial listing (`type: null`), not through ADDED/MODIFIED. */
  readonly noticedByListing: boolean;
  /** All selected change handlers finished at least once in this process (R-CAUSE-2). */
  fullyHandledOnce = false;
  /** The resource version of our last PATCH response, and until when to wait for it (ms). */
  expectedVersion: string | null = null;
  expectedUntil: number | null = null;
  /**
   * The essence last handled, when it was too large to be stored on the object even with digests
   * (R-STORAGE-16): used as the diff-base while the object has none, in this process only.
   */
  unstoredEssence: dicts.JsonObject | null = null;
  /** JSON-patch transformation functions left over after a 422 conflict (R-PATCH-3). */
  leftoverFns: ((body: object) => void)[] = [];
  readonly throttler = new throttling.Throttler();
  /** Daemons and timers of this object (created by the spawning engine on first use). */
  daemons: spawning.DaemonsMemory | undefined;
  /** Indexing errors of this object (created by the indexing engine on first failure). */
  indexing: indexing.IndexingMemory | undefined;

  constructor(memo: object, noticedByListing: boolean) {
    this.memo = memo;
    this.noticedByListing = noticedByListing;
  }

  /** The object is "initial" while it came from the listing and is not yet fully handled once. */
  get initial(): boolean {
    return this.noticedByListing && !this.fullyHandledOnce;
  }
}

/**
 * How many uids of vanished objects are remembered. Stale events of an object arrive shortly after
 * it vanished (the events of the operator's own last requests, a relisting in flight); a few
 * thousand recent uids cover any burst of deletions while bounding what is kept.
 */
export const VANISHED_REMEMBERED = 4096;

/** All object memories of one operator, by object key. */
export class Memories {
  private readonly records = new Map<string, ObjectMemory>();
  /** Uids of objects known to be gone, oldest first (insertion order). */
  private readonly vanished = new Set<string>();

  constructor(private readonly operatorMemo: object) {}

  /** The memory of an object, created on first sight. */
  recall(key: string, options: { readonly listing: boolean }): ObjectMemory {
    let memory = this.records.get(key);
    if (!memory) {
      memory = new ObjectMemory(memos.copyMemo(this.operatorMemo), options.listing);
      this.records.set(key, memory);
    }
    return memory;
  }

  /** The memory of an object if there is one (never creates it). */
  peek(key: string): ObjectMemory | undefined {
    return this.records.get(key);
  }

  /**
   * The object with this uid is back (a sharded replica owns it again after it left the
   * replica's watch, R-SHARD-204): it is no longer known to be gone.
   */
  revive(uid: string): void {
    this.vanished.delete(uid);
  }

  /** Drops the memory of a deleted object (its memo goes with it). */
  forget(key: string): void {
    this.records.delete(key);
  }

  /** Remembers that the object with this uid is gone: a uid never comes back. */
  markVanished(uid: string): void {
    this.vanished.delete(uid);
    this.vanished.add(uid);
    if (this.vanished.size > VANISHED_REMEMBERED) this.vanished.delete(this.vanished.values().next().value!);
  }

  /** Whether the object with this uid is known to be gone. */
  hasVanished(uid: string): boolean {
    return this.vanished.has(uid);
  }

  get size(): number {
    return this.records.size;
  }

  /** All remembered objects' memories. */
  values(): IterableIterator<ObjectMemory> {
    return this.records.values();
  }
}

/*
 * The operator context (Kopf's per-operator state bundle): everything one processing cycle needs
 * from the operator it runs in. Built once by `roots.ts`; several operators in one process each
 * have their own (R-LIFE-5), so nothing here is global.
 */

export interface OperatorContext {
  readonly settings: settings.OperatorSettings;
  readonly registry: registry.OperatorRegistry;
  readonly api: api.KubeApi;
  /** The typed client handlers get as `client`, over `api` (absent in tests that build contexts by hand). */
  readonly client?: clients.KubeClient;
  readonly clock: clocks.Clock;
  /** The operator memo (activity handlers get it; objects get shallow copies, R-MEMO-2/3). */
  readonly memo: object;
  readonly memories: Memories;
  /** The lifecycle for change handlers; default: `lifecycles.getDefaultLifecycle()`. */
  readonly lifecycle?: lifecycles.Lifecycle;
  /** Where k8s-events go (the poster's queue). */
  readonly events: events.EventSink;
  /** The operator-level logger (not per object). */
  readonly logger: loggers.Logger;
  /** Aborts when the operator stops: handlers are cancelled, sleeps end. */
  readonly signal: AbortSignal;
  /**
   * While on, watchers do not list or watch (R-WATCH-6) and daemons and timers are stopped
   * (R-DAEMON-10). On when any member is on: each coordinating engine (peering, Lease election)
   * adds its own toggles.
   */
  readonly paused?: toggles.ToggleSet;
  /** This operator's identity among peers (R-PEER-3): its peering entry's key, a Lease's holder. */
  readonly identity?: string;
  /** The in-memory indices (R-INDEX); injected into kwargs by name (R-INDEX-8). */
  readonly indices?: indexing.OperatorIndexers;
  /** Holds all handlers back until the initial listings are indexed (R-INDEX-7). */
  readonly barrier?: indexing.IndexingBarrier;
  /** All running daemons and timers (R-DAEMON); required to spawn any. */
  readonly daemons?: spawning.Daemons;
  /** The operator's one heap of due times (timers' ticks, daemons' and timers' sleeps). */
  readonly scheduler?: scheduling.Scheduler;
  /** The queues of the running watchers, for counting per-object state (`takeCensus`). */
  readonly queues?: queueing.Queues;
  /** Where the operator's work is reported for its metrics; absent when metrics are off. */
  readonly instruments?: instruments.Instruments;
  /** The watch-streams' health, fed by the watchers, read by the liveness and readiness endpoints. */
  readonly streams?: health.StreamHealth;
  /**
   * The watch cache of the kinds reconcile handlers read (R-CACHE): fed by the watchers of its
   * tracked resources, read by the operator's client; absent without reconcile handlers.
   */
  readonly cache?: caching.WatchCache;
  /** The reconcile handlers at work (R-RECONCILE); absent without reconcile handlers. */
  readonly reconcilers?: {
    readonly size: number;
    /** Resolves once the object's calls in flight ended; no new one starts until `unhold` (R-SHARD-203). */
    hold?(resource: references.Resource, namespace: string | null, name: string): Promise<void>;
    unhold?(resource: references.Resource, namespace: string | null, name: string): void;
  };
  /** The ring of a sharded operator (`settings.sharding.ring`), as this replica sees it; absent when not sharded. */
  readonly ring?: rings.Ring;
  /** The handoff of a sharded operator (`reactor/sharding`'s `Sharder`); absent when not sharded. */
  readonly sharder?: Sharding;
}

/** What a watcher of a sharded kind offers the sharder: its queue and a way to feed it an event. */
export interface ShardedWatcher {
  readonly resource: references.Resource;
  readonly namespace: string | null;
  /** Lets one object go (`queueing.Queue.release`); absent for kinds without a queue. */
  readonly queue?: { release(key: string): Promise<void> };
  /** Takes an event as if it came from the watch (into the cache and the queue). */
  feed(event: bodies.RawEvent): void;
}

/** What a ring's maker gets: the operator's client, settings, clock, and its pause set (for fencing). */
export interface RingParts {
  readonly api: api.KubeApi & api.KubeReplacer & api.KubeDeleter;
  readonly settings: settings.OperatorSettings;
  readonly clock: clocks.Clock;
  /** The operator's pause set: the membership holds a member of it, on while it is fenced. */
  readonly paused: toggles.ToggleSet;
  readonly logger: loggers.Logger;
}

/** A ring as made for one operator: the view of the members, and the task that keeps it (its Lease). */
export interface RingSeat {
  readonly ring: rings.Ring;
  /** Joins, keeps the membership, and leaves (its Lease deleted) when `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
}

/** Makes the ring of a sharded operator (the membership; a test's controllable ring). */
export type RingFactory = (parts: RingParts) => RingSeat;

/** The watchers' side of a sharded operator's handoff (R-SHARD-201..204). */
export interface Sharding {
  /** The label selector of this replica's own objects. */
  readonly selector: string;
  /** `false` for an event to drop before the cache and the queue (a blocked object's). */
  admit(event: bodies.RawEvent): boolean;
  /** Joins a watcher of a sharded kind; returns its detachment. */
  attach(watcher: ShardedWatcher): () => void;
  /** The claimer of one dimension: runs until `signal` aborts. */
  claim(resource: references.Resource, namespace: string | null, signal: AbortSignal): Promise<void>;
}

/*
 * A count of what an operator holds per object, read off its own structures.
 *
 * Memory that grows with the objects an operator has *seen*, rather than with those that exist, is
 * the leak that kills long-running operators; RSS is too coarse to see it early (V8 keeps freed
 * pages for a while). So the runtime counts its per-object structures directly: object memories,
 * queue streams with their workers, running daemons and timers, index entries, objects the
 * readiness barrier still tracks, followers of the operator's stop signal (each in-flight
 * processing cycle and each awaited invocation of a daemon or timer has one), due times on the
 * operator's scheduler, and the objects of the watch cache. Once every
 * object is deleted and idle workers have expired, every count is back to zero — the tests of
 * per-object state assert exactly that.
 * The same counts, per resource, are the queue gauges of the operator's metrics.
 */

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
  /** Waiters on the operator's stop signal: in-flight processing cycles, awaited invocations of daemons and timers. */
  readonly followers: number;
  /** Objects held by the watch cache (R-CACHE-108): one per existing object of a cached kind. */
  readonly cached: number;
  /** Reconcile entries (per handler and object) queued, running or scheduled (R-RECONCILE-215). */
  readonly reconciling: number;
  /** Due times pending on the operator's scheduler (timers' ticks, daemons' and timers' sleeps). */
  readonly scheduled: number;
}

/**
 * Counts what `op` holds per object now.
 *
 * @example
 * const { memories, streams } = takeCensus(tasks.context);
 */
export function takeCensus(op: OperatorContext): Census {
  const queued = op.queues?.count() ?? { streams: 0, queuedEvents: 0 };
  return {
    memories: op.memories.size,
    streams: queued.streams,
    queuedEvents: queued.queuedEvents,
    daemons: op.daemons?.size ?? 0,
    indexed: op.indices?.objects ?? 0,
    barrier: op.barrier?.tracked ?? 0,
    followers: aborts.followers(op.signal),
    cached: op.cache?.size ?? 0,
    reconciling: op.reconcilers?.size ?? 0,
    scheduled: op.scheduler?.size ?? 0,
  };
}
