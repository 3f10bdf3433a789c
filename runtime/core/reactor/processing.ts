/**
 * One processing cycle: everything the operator does for one watch-event of one object, in the
 * order Kopf does it (section 2 of the runtime reference; the wire traces of its section 4).
 *
 * The steps live in one module because they depend on each other: the finalizer decision needs the
 * change handlers and the daemons alike, every step contributes to the one patch written per cycle,
 * and the sleep at the end is what retries delayed handlers and advances the stop stages of daemons.
 * `runPass` reads as the order of a cycle, one named step a line; the steps follow it.
 *
 * The cycle runs under per-object error throttling, so an unexpected error slows that object down
 * rather than spinning on it (R-QUEUE-8). In order, it:
 * - indexes the object, then waits at the readiness barrier until the initial listings of indexed
 *   resources are in, so that no handler sees a half-filled index (R-INDEX-7);
 * - runs the on-event handlers (R-EVENT);
 * - decides on the finalizer for change handlers, daemons and timers together (R-FINAL-2..4), and
 *   spawns or stops daemons and timers, even in a cycle that adds the finalizer (R-DAEMON-2/7/9);
 * - unless the operator still waits for its own last patch to come back through the watch (the
 *   consistency window, R-QUEUE-4/5): detects the cause, selects the change handlers, runs the
 *   lifecycle's choice of them once, and stores progress, results and — when the change is done —
 *   the new diff-base;
 * - on deletion, releases the finalizer once nothing is pending, neither deletion handlers nor
 *   exiting daemons (R-FINAL-5);
 * - applies the accumulated patch once (R-PATCH-2/6); if a delay remains and the patch will not
 *   bring a new event by itself, sleeps for it and then touches the object, so that the next cycle
 *   comes with a fresh event (R-PATCH-7).
 *
 * A cycle is given a `CycleContext` (the event, the object's memory, its stream, its logger and
 * cancellation). When the consistency wait ends with the object re-read and newer than the event
 * (R-QUEUE-4), the event was stale: `processCycle` runs another pass over the body as re-read,
 * with the same context otherwise.
 *
 * With metrics on, the watcher passes the resource's instruments: every handler of the cycle, and
 * the cycle itself (as one reconcile, `verdicts.CycleReport`), is reported; daemons and timers report
 * their invocations and their spawning and exit to the same instruments.
 *
 * The handlers' arguments are built by `arguments` (over the read-only views of
 * `cogs/structs/views`), and the report of what a cycle came to by `verdicts`: the cycle only
 * passes them on.
 *
 * Kopf: `kopf._core.reactor.processing`.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as bounds from '../../cogs/configs/bounds.js';
import * as secrets from '../../cogs/configs/secrets.js';
import * as timestamps from '../../cogs/configs/timestamps.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import * as loggers from '../../cogs/structs/loggers.js';
import * as patches from '../../cogs/structs/patches.js';
import type * as references from '../../cogs/structs/references.js';
import * as views from '../../cogs/structs/views.js';
import * as application from '../actions/application.js';
import * as errors from '../actions/errors.js';
import * as execution from '../actions/execution.js';
import * as lifecycles from '../actions/lifecycles.js';
import * as logging from '../actions/logging.js';
import * as outcomes from '../actions/outcomes.js';
import * as progression from '../actions/progression.js';
import * as throttling from '../actions/throttling.js';
import * as daemonsEngine from '../engines/daemons.js';
import * as scheduling from '../engines/scheduling.js';
import * as spawningEngine from '../engines/spawning.js';
import * as timersEngine from '../engines/timers.js';
import * as causes from '../intents/causes.js';
import type * as handlers from '../intents/handlers.js';
import type * as registries from '../intents/registry.js';
import * as args from './arguments.js';
import type * as inventory from './inventory.js';
import type * as queueing from './queueing.js';
import * as verdicts from './verdicts.js';

type Fn = (body: object) => void;

/**
 * Processes one raw event of one object; the queue calls it per object, strictly in order.
 *
 * @param instruments the resource's instruments when metrics are on (see the module's comment).
 */
export async function processResourceEvent(
  op: inventory.OperatorContext,
  resource: references.Resource,
  raw: bodies.RawEvent,
  stream: queueing.StreamContext,
  instruments?: instruments.ResourceInstruments,
): Promise<void> {
  const body = raw.object;
  // An object known to be gone (a patch or a re-read found it missing) has only stale events left
  // until its DELETED: none of them may run a handler again (R-PATCH-9).
  // A fenced (paused) sharded replica starts nothing: its objects may be claimed by the others
  // meanwhile, and the re-listing after the pause brings back what is still its own (R-SHARD-206).
  if (op.sharder !== undefined && raw.type !== 'DELETED' && op.paused?.isOn()) {
    op.barrier?.release(stream.key);
    return;
  }
  const uid = body.metadata?.uid;
  if (raw.type !== 'DELETED' && uid !== undefined && op.memories.hasVanished(uid)) {
    logging.objectLogger({ body, settings: op.settings }).debug('The event is skipped: the object is known to be gone.');
    op.barrier?.release(stream.key);
    return;
  }
  // A sharded replica's own watch adds an object when it becomes the replica's (claimed, or handed
  // over): first noticed then, as by a listing, so that an object handled before resumes (R-SHARD-209).
  const memory = op.memories.recall(stream.key, { listing: raw.type === null || (raw.type === 'ADDED' && op.sharder !== undefined) });
  const logger = logging.objectLogger({ body, settings: op.settings, sink: op.events });
  // Cancelled when the operator stops, or when its watcher stops waiting for this worker (R-QUEUE-7):
  // the worker's signal follows both.
  const cancellation = stream.signal;
  // A cycle skipped by throttling or cancelled is not reported.
  let report: verdicts.CycleReport | undefined;
  try {
    const throttled = await throttling.throttled(
      {
        throttler: memory.throttler,
        delays: op.settings.queueing.errorDelays,
        clock: op.clock,
        logger,
        // Asked for only when an error throttles the object: most cycles never make the signal.
        wakeup: () => stream.pressure.signal,
        // Cancellation on operator exit is not an error of the object.
        errors: () => !cancellation.aborted,
      },
      () => {
        if (instruments !== undefined) report = new verdicts.CycleReport(instruments);
        return processCycle({ op, resource, raw, memory, stream, logger, signal: cancellation, instruments, report });
      },
    );
    if (throttled.status === 'failed') report?.fail();
    if (!cancellation.aborted) report?.finish();
  } catch (error) {
    // Cancelled (R-ERRORS-8): the handler logged it and recorded nothing; this is neither a
    // failure of the object nor of the framework (R-QUEUE-9).
    if (cancellation.aborted) return;
    throw error;
  } finally {
    op.barrier?.release(stream.key); // whatever happened, this object no longer blocks (R-INDEX-7)
    if (raw.type === 'DELETED') {
      op.memories.forget(stream.key);
      if (uid !== undefined) op.memories.markVanished(uid);
    }
  }
}

/** Sleeps unless a newer event arrives or the cycle is cancelled; `true` if the sleep completed. */
async function sleepInterruptibly(cycle: Cycle, ms: number): Promise<boolean> {
  const wakeup = aborts.follow([cycle.stream.pressure.signal, cycle.signal]);
  try {
    return await aborts.sleepOrAbort(cycle.op.clock, ms, wakeup.signal);
  } finally {
    wakeup.release();
  }
}

/** What a cycle is given: the event of one object, and everything around it. */
interface CycleContext {
  readonly op: inventory.OperatorContext;
  readonly resource: references.Resource;
  readonly raw: bodies.RawEvent;
  readonly memory: inventory.ObjectMemory;
  readonly stream: queueing.StreamContext;
  readonly logger: logging.ObjectLogger;
  /** Cancellation of the cycle: the operator stops or the queue gives up on the worker. */
  readonly signal: AbortSignal;
  /** The resource's instruments (metrics on): for daemons and timers, which outlive the cycle. */
  readonly instruments?: instruments.ResourceInstruments;
  /** The report of this cycle (metrics on): handlers of the cycle report through it. */
  readonly report?: verdicts.CycleReport;
  /** The body was re-read from the server, not received from the watch (see `processCycle`). */
  readonly reread?: boolean;
}

/** A pass of the cycle over one body: its context, its one patch, and its handlers' scope. */
interface Cycle extends CycleContext {
  readonly patch: patches.PatchBase<object>;
  readonly scope: args.ResourceScope;
}

/**
 * Runs the cycle for one event. When the event turns out stale — our last patch never came back
 * through the watch, and the object as re-read is newer (R-QUEUE-4) — the cycle starts over with
 * the object as the server has it now, as many times as that happens.
 */
async function processCycle(context: CycleContext): Promise<void> {
  let current = context;
  for (;;) {
    const reread = await runPass(startPass(current));
    if (reread === null) return;
    current = { ...current, raw: { type: 'MODIFIED', object: reread }, reread: true };
  }
}

/** A new pass over the context's body: its patch and the scope its handlers share. */
function startPass(context: CycleContext): Cycle {
  const { op, resource, raw, memory, logger, signal } = context;
  const body = raw.object;
  // Functions left over after a JSON-patch conflict (R-PATCH-3) go out with this cycle's patch —
  // unless this newer body already satisfies them (e.g. the refused request had been applied and
  // only its response was lost): then they are done, and must not hold the handlers back (R-QUEUE-5).
  const leftovers = memory.leftoverFns.length > 0 && new patches.Patch<object>(undefined, memory.leftoverFns).toJsonPatch(body, { merge: false }).length > 0;
  const patch = new patches.Patch<object>(undefined, leftovers ? memory.leftoverFns : []);
  memory.leftoverFns = [];
  const scope: args.ResourceScope = { resource, body, view: views.viewOf(body), patch, logger, memo: memory.memo, signal, indices: op.indices?.byName };
  return { ...context, patch, scope };
}

/**
 * One pass of the cycle over one body, in the order of the module's comment.
 *
 * @returns the object as re-read when the event was stale (see `processCycle`), else `null`.
 */
async function runPass(cycle: Cycle): Promise<bodies.RawBody | null> {
  const { op, resource, raw, memory, logger, patch } = cycle;
  if (!(await indexFirst(cycle))) return null;
  // A body re-read from the server is no watch event: on-event handlers get that version from the watch.
  if (!cycle.reread && op.registry.watchingHandlersOf(resource).length) await processWatchingCause(cycle);

  const spawners = op.registry.spawningHandlersOf(resource);
  const changers = op.registry.hasChangingHandlers(resource);
  if (!spawners.length && !changers) {
    if (raw.type !== 'DELETED') await applyAndSleep(cycle, [], false);
    return null;
  }
  const change = detectChange(cycle, spawners.length > 0, changers);
  const finalizing = decideFinalizer(cycle, change);
  // Daemons and timers: spawned even before the finalizer is added, regardless of consistency.
  const reset = (): boolean => change.old === null || !dicts.deepEqual(change.old, change.now);
  const stopping = spawners.length || memory.daemons ? await processSpawningCause(cycle, change.spawning, { deleted: finalizing.deleted, reset: reset() }) : [];

  let delays: number[] = [];
  let changing = false;
  let consistent = finalizing.consistent;
  if (change.cause !== null && !change.stealth && !finalizing.blocked) {
    const result = await processChangingCause(cycle, change.cause, change.essence, change.old, consistent && !finalizing.overdue);
    if (result === 'interrupted') return null;
    if ('reread' in result) return result.reread;
    ({ delays, changing, consistent } = result);
  }
  if (raw.type === 'DELETED') return null; // nothing to patch: the object is gone (R-PATCH-6)

  // Releasing the finalizer on deletion when nothing is pending: no deletion handler left, no
  // daemon or timer still exiting (R-FINAL-5, R-DAEMON-7).
  const all = [...delays, ...stopping];
  if (finalizing.deleted && finalizing.present && consistent && all.length === 0 && (changing || change.stealth || change.cause === null)) {
    logger.debug('Removing the finalizer, thus allowing the actual deletion.');
    patch.fns.push(removeFinalizer(op.settings.persistence.finalizer));
  }
  await applyAndSleep(cycle, all, changing);
  return null;
}

/**
 * Indices first, then the barrier: nothing else runs before the initial listings are indexed
 * (R-INDEX-7). A newer event that arrived meanwhile is processed instead of this one.
 *
 * @returns whether the pass goes on.
 */
async function indexFirst(cycle: Cycle): Promise<boolean> {
  const { op, resource, stream, signal } = cycle;
  const indexers = op.registry.indexingHandlersOf(resource);
  if (indexers.length && op.indices) await processIndexingCause(cycle, indexers);
  if (op.barrier && !op.barrier.ready) {
    op.barrier.release(stream.key);
    await op.barrier.wait(signal);
    if (stream.pressure.raised) return false;
  }
  return true;
}

/** What changed since the diff-base, and which handlers care (R-CAUSE, R-STORAGE-16). */
interface Change {
  /** The essence of the body now, as it would be stored. */
  readonly essence: dicts.JsonObject;
  /** The stored diff-base, and the essence now as comparable with it. */
  readonly old: dicts.JsonObject | null;
  readonly now: dicts.JsonObject;
  /** The cause for change handlers; `null` without change handlers. */
  readonly cause: causes.ChangingCause | null;
  /** Stealth mode: no change handler pre-matches the object, so it is as if there were none (R-CAUSE-5). */
  readonly stealth: boolean;
  /** The daemons and timers that match the object. */
  readonly spawning: readonly handlers.SpawningHandler[];
  /** How filter callbacks get their kwargs: the same as the handler's (R-FILTERS-6). */
  readonly matching: registries.MatchOptions;
}

/** Compares the body with its diff-base and selects what cares about it (filter callbacks run here). */
function detectChange(cycle: Cycle, spawners: boolean, changers: boolean): Change {
  const { op, resource, raw, memory } = cycle;
  const body = raw.object;
  const { progressStorage, diffbaseStorage, finalizer } = op.settings.persistence;
  // Secret-like fields are digested on both sides: a diff-base written with their values (by Kopf)
  // compares as if written with digests, and is rewritten below (R-SEC-18, R-SEC-19).
  const secretPaths = secrets.secretPathsOf(op.settings.persistence.secretFields, body);
  const essence = secrets.digestSecrets(diffbaseStorage.build({ body, extraFields: op.registry.extraFields(resource) }), secretPaths).essence;
  const fetched = diffbaseStorage.fetch({ body });
  const migrated = fetched === null ? null : secrets.digestSecrets(fetched, secretPaths);
  // A diff-base too large to be stored at all is kept in memory instead (R-STORAGE-16).
  const stored = migrated?.essence ?? memory.unstoredEssence;
  const old = stored === null ? null : progressStorage.clear(stored);
  // Values the stored diff-base keeps as digests are compared as digests (R-STORAGE-16).
  const now = bounds.alignDigests(progressStorage.clear(essence), old);
  const cause = changers ? causes.detectChangingCause({ resource, event: raw, finalizer, old, new: now, initial: memory.initial }) : null;
  // Filter callbacks get the same kwargs as the handler, minus what exists only during an
  // invocation (retry fields, a daemon's stop flag).
  const matching: registries.MatchOptions = {
    kwargs: (handler: args.FilterableHandler & { readonly kind?: string }) =>
      handler.kind === 'change' && cause !== null ? args.changingKwargs(cycle.scope, cause, handler) : args.indexingKwargs(cycle.scope, handler),
  };
  const stealth = cause === null || !op.registry.prematchChanging(cause, matching);
  if (migrated?.changed && !stealth && raw.type !== 'DELETED') {
    diffbaseStorage.store({ body, patch: cycle.patch, essence: migrated.essence });
  }
  const spawning = spawners ? op.registry.spawningHandlers({ resource, body }, matching) : [];
  return { essence, old, now, cause, stealth, spawning, matching };
}

/** The finalizer as a cycle finds it, and whether changing it holds the change handlers back. */
/** Where the object stands with our last patch (R-QUEUE-4): seen back, awaited, or its deadline passed unseen. */
type Consistency = 'consistent' | 'inconsistent' | 'overdue';

interface Finalizing {
  readonly present: boolean;
  /** Deleted, or marked for deletion. */
  readonly deleted: boolean;
  /** Whether the object caught up with our last patch, or the deadline for it passed (R-QUEUE-4). */
  readonly consistent: boolean;
  /**
   * The deadline passed before this (older) body came: it may lack what our last patch stored, so
   * change handlers see the object as re-read, not this body (R-QUEUE-4).
   */
  readonly overdue: boolean;
  /** The finalizer is added or removed in this cycle: change handlers do not run in it. */
  readonly blocked: boolean;
}

/**
 * The finalizer: added when required, removed when no longer required (R-FINAL-2..4). Change
 * handlers do not run in such a cycle; on-event handlers, daemons and timers do.
 */
function decideFinalizer(cycle: Cycle, change: Change): Finalizing {
  const { op, resource, raw, memory, logger, patch } = cycle;
  const body = raw.object;
  const { finalizer } = op.settings.persistence;
  const present = causes.hasFinalizer(body, finalizer);
  const deleted = raw.type === 'DELETED' || causes.isDeletionOngoing(body);
  const required = op.registry.requiresFinalizer(change.stealth || change.cause === null ? { resource, body } : change.cause, {
    ...change.matching,
    stoppedForever: (handler) => memory.daemons?.isStoppedForever(handler.id) ?? false,
  });
  const consistency = consistencyOf(cycle);
  const consistent = consistency !== 'inconsistent';
  const overdue = consistency === 'overdue';
  if (deleted) return { present, deleted, consistent, overdue, blocked: false };
  if (required && !present) {
    logger.debug('Adding the finalizer, thus preventing the actual deletion.');
    patch.fns.push(addFinalizer(finalizer));
    return { present, deleted, consistent, overdue, blocked: true };
  }
  if (!required && present && consistent) {
    logger.debug('Removing the finalizer, as there are no handlers requiring it.');
    patch.fns.push(removeFinalizer(finalizer));
    return { present, deleted, consistent, overdue, blocked: true };
  }
  return { present, deleted, consistent, overdue, blocked: false };
}

/** Indexes the object in all indices of its resource; a `DELETED` event removes it (R-INDEX-3..6). */
async function processIndexingCause(cycle: Cycle, all: readonly handlers.IndexingHandler[]): Promise<void> {
  const { op, resource, raw, memory, stream } = cycle;
  const indices = op.indices!;
  const logger = logging.objectLogger({ body: raw.object, settings: op.settings, terse: true });
  const scope: args.ResourceScope = { ...cycle.scope, logger };
  const matching =
    raw.type === 'DELETED' ? [] : op.registry.indexingHandlers({ resource, body: raw.object }, { kwargs: (handler) => args.indexingKwargs(scope, handler) });
  memory.indexing = await indices.indexObject({
    object: stream.key,
    all,
    matching,
    deleted: raw.type === 'DELETED',
    memory: memory.indexing,
    scope: {
      settings: op.settings,
      clock: op.clock,
      logger,
      signal: cycle.signal,
      kwargs: (handler, retry) => args.indexingKwargs(scope, handler, retry),
      body: () => raw.object,
      instruments: cycle.report,
    },
  });
}

/** Daemons and timers of the object: refresh, spawn, stop (R-DAEMON-2/7/9, R-TIMER-1/3). */
async function processSpawningCause(
  cycle: Cycle,
  matching: readonly handlers.SpawningHandler[],
  found: { readonly deleted: boolean; readonly reset: boolean },
): Promise<number[]> {
  const { op, resource, raw, memory } = cycle;
  const body = raw.object;
  if (!memory.daemons) {
    if (found.deleted || matching.length === 0) return [];
    memory.daemons = new spawningEngine.DaemonsMemory(body, op.clock.now());
  }
  const daemonsMemory = memory.daemons;
  // One logger per object for its tasks and their stopping, lasting as long as they do.
  daemonsMemory.logger ??= cycle.logger.lightened();
  const logger = daemonsMemory.logger as logging.ObjectLogger; // only ever set here
  const scope: spawningEngine.SpawningScope = {
    settings: op.settings,
    clock: op.clock,
    daemons: op.daemons!,
    cancel: op.signal,
    logger,
    instruments: cycle.instruments,
    paused: op.paused,
    wakeups: schedulerOf(op),
  };
  // One launcher per object, shared by its daemons and timers for as long as they run.
  daemonsMemory.launcher ??= launcherOf(op, resource, memory, daemonsMemory, logger, cycle.instruments);
  return await spawningEngine.processSpawningCause({
    cause: { body, deleted: found.deleted, gone: raw.type === 'DELETED', reset: found.reset },
    memory: daemonsMemory,
    matching,
    scope,
    launch: daemonsMemory.launcher,
  });
}

function launcherOf(
  op: inventory.OperatorContext,
  resource: references.Resource,
  memory: inventory.ObjectMemory,
  daemonsMemory: spawningEngine.DaemonsMemory,
  logger: logging.ObjectLogger,
  instruments: instruments.ResourceInstruments | undefined,
): spawningEngine.Launcher {
  const source: args.SpawningScope = { resource, memory: daemonsMemory, logger, memo: memory.memo, indices: op.indices?.byName };
  const background: daemonsEngine.BackgroundScope = {
    settings: op.settings,
    clock: op.clock,
    api: op.api,
    resource,
    memory: daemonsMemory,
    logger,
    cancel: op.signal,
    wakeups: schedulerOf(op),
    titled: { daemon: logging.titledLogger(logger, 'Daemon'), timer: logging.titledLogger(logger, 'Timer') },
    kwargs: (handler, stopper, patch, retry) => args.spawningKwargs(source, handler, stopper, patch, retry),
    instruments,
  };
  return (task, exited) =>
    task.handler.kind === 'daemon' ? daemonsEngine.runDaemon(task, background, exited) : timersEngine.runTimer(task, background, exited);
}

/** The operator's scheduler; contexts built by hand without one share one per clock. */
function schedulerOf(op: inventory.OperatorContext): scheduling.Scheduler {
  return op.scheduler ?? scheduling.sharedScheduler(op.clock);
}

/** On-event handlers: all matching ones, in order, once each; errors ignored; results to status (R-EVENT). */
async function processWatchingCause(cycle: Cycle): Promise<void> {
  const { op, resource, raw } = cycle;
  // Messages of on-event handlers are never posted as k8s-events (R-EVENT-4, R-POST-2).
  const local = logging.objectLogger({ body: raw.object, settings: op.settings, sink: op.events, local: true });
  const scope: args.ResourceScope = { ...cycle.scope, logger: local };
  // Filter callbacks get the same kwargs as the handler (R-FILTERS-6).
  const handlers = op.registry.watchingHandlers(causes.detectWatchingCause({ resource, event: raw }), {
    kwargs: (handler) => args.watchingKwargs(scope, raw, handler),
  });
  if (!handlers.length) return;
  const results = await execution.executeHandlersOnce({
    handlers,
    state: progression.State.fromScratch(),
    scope: {
      settings: op.settings,
      clock: op.clock,
      logger: local,
      signal: cycle.signal,
      lifecycle: lifecycles.allAtOnce,
      defaultErrors: errors.ErrorsMode.IGNORED,
      kwargs: (handler) => args.watchingKwargs(scope, raw, handler),
      body: () => raw.object,
      instruments: cycle.report,
    },
  });
  outcomes.deliverResults(results, cycle.patch);
}

/** Whether the object caught up with our last patch (R-QUEUE-4); clears the expectation when so. */
function consistencyOf(cycle: Cycle): Consistency {
  const { memory, op } = cycle;
  if (memory.expectedVersion === null) return 'consistent';
  const rv = cycle.raw.object.metadata?.resourceVersion;
  if (rv === memory.expectedVersion) {
    memory.expectedVersion = null;
    memory.expectedUntil = null;
    return 'consistent';
  }
  // Past the deadline the expectation stays until a change handler's re-read settles it: an event
  // that runs none (e.g. our own earlier request's) must not make the next stale one look consistent.
  return memory.expectedUntil !== null && op.clock.now() >= memory.expectedUntil ? 'overdue' : 'inconsistent';
}

async function processChangingCause(
  cycle: Cycle,
  cause: causes.ChangingCause,
  essence: dicts.JsonObject,
  old: dicts.JsonObject | null,
  consistent: boolean,
): Promise<'interrupted' | { reread: bodies.RawBody } | { delays: number[]; changing: boolean; consistent: boolean }> {
  const { op, raw, memory, logger, patch } = cycle;

  // Patch first: framework state pending from before (carried-over functions) goes out first (R-QUEUE-5).
  if (patch.fns.length) return { delays: [], changing: false, consistent };

  // Consistency: wait (interruptibly) for our last patch to come back, or for the deadline (R-QUEUE-4).
  // Not for a DELETED event: it runs no handlers, and a vanished object's version never comes (R-QUEUE-6).
  if (!consistent && raw.type !== 'DELETED') {
    const until = memory.expectedUntil ?? op.clock.now();
    const completed = await sleepInterruptibly(cycle, Math.max(0, until - op.clock.now()));
    if (!completed) return 'interrupted';
    memory.expectedVersion = null;
    memory.expectedUntil = null;
    // Our version never came back (a watch gap, a lost event): rather than handling a body that may
    // lack what we stored, the object is re-read (R-QUEUE-4).
    const current = await reread(cycle);
    if (current === null) return 'interrupted';
    // Not allowed to read it (403, reported once by the client): the event's body is handled as
    // it is, as Kopf does (R-SEC-2) — only this watch-gap case then loses its protection.
    if (current === FORBIDDEN) logger.debug('The object could not be re-read (forbidden): handling the event as it is.');
    else if (current.metadata?.resourceVersion !== raw.object.metadata?.resourceVersion) {
      logger.debug('The event is older than the object on the server: handling the object as re-read.');
      if (patch.isEmpty()) return { reread: current };
      // Something is pending for this stale body: it goes out first; the handlers wait for its event.
      return { delays: [], changing: false, consistent: false };
    }
    consistent = true;
  }

  if (!causes.isHandlerReason(cause.reason)) {
    logger.debug(causes.SILENT_REASON_LOGS[cause.reason as 'gone' | 'free' | 'noop']);
    memory.fullyHandledOnce = true;
    return { delays: [], changing: cause.reason !== 'gone', consistent };
  }

  const delays = await handleChange(cycle, cause, essence, old);
  return { delays, changing: true, consistent };
}

/** What `reread` gives when the operator may not read the object (403: no `get` in its RBAC). */
const FORBIDDEN = 'forbidden';

/**
 * The object as the server has it now, or `null` if it is gone (then remembered as vanished), or
 * `FORBIDDEN` when the operator may not read it (R-SEC-2: the client reported the 403 once; the
 * callers go on without the re-read instead of failing the cycle over and over).
 */
async function reread(cycle: Cycle): Promise<bodies.RawBody | null | typeof FORBIDDEN> {
  const { op, resource, raw } = cycle;
  const meta = raw.object.metadata;
  try {
    return await op.api.get(resource, resource.namespaced ? (meta?.namespace ?? null) : null, meta?.name ?? '', { signal: cycle.signal });
  } catch (error) {
    if (clientErrors.isForbidden(error)) return FORBIDDEN;
    if (!(error instanceof clientErrors.ApiNotFoundError)) throw error;
    cycle.logger.debug('The object is gone: nothing to handle.');
    if (meta?.uid !== undefined) op.memories.markVanished(meta.uid);
    return null;
  }
}

/** Runs the handlers of a change cause once and persists the progress (R-HANDLERS-4..8, R-CAUSE-6). */
async function handleChange(cycle: Cycle, cause: causes.ChangingCause, essence: dicts.JsonObject, old: dicts.JsonObject | null): Promise<number[]> {
  const { op, resource, memory, logger, patch } = cycle;
  const body = cycle.raw.object;
  const reason = cause.reason as 'create' | 'update' | 'delete' | 'resume';
  const title = causes.TITLES[reason];
  const storage = op.settings.persistence.progressStorage;
  const now = op.clock.now();
  if (logger.isEnabledFor('debug')) {
    logger.debug(`${title} is in progress: ${JSON.stringify(loggers.redacted(logger, body))}`);
    if (old !== null && cause.diff.length) logger.debug(`${title} diff: ${JSON.stringify(loggers.redactedDiff(logger, cause.diff))}`);
  }

  const selected = op.registry.changingHandlers(cause, { kwargs: (handler) => args.changingKwargs(cycle.scope, cause, handler) });
  const allIds = op.registry.changingHandlersOf(resource).map((h) => h.id);
  let state = (await progression.State.fromStorage({ body, storage, handlerIds: allIds, now })).withPurpose(reason);
  state = await supersede(cycle, state, reason, selected);
  state = state.withHandlers(
    selected.map((h) => h.id),
    now,
  );
  const results = await execution.executeHandlersOnce({
    handlers: selected,
    state,
    scope: {
      settings: op.settings,
      clock: op.clock,
      logger,
      signal: cycle.signal,
      lifecycle: op.lifecycle,
      kwargs: (handler, retry) => args.changingKwargs(cycle.scope, cause, handler, retry),
      change: { body, patch, reason, storage },
      cause,
      body: () => body,
      instruments: cycle.report,
    },
  });
  state = state.withOutcomes(results, op.clock.now());
  outcomes.deliverResults(results, patch);

  if (!state.done) {
    await state.store({ body, patch, storage });
    return state.delays(op.clock.now());
  }
  // The change is done (R-HANDLERS-7).
  const counts = state.counts;
  if (selected.length) logger.info(`${title} is processed: ${counts.success} succeeded; ${counts.failure} failed.`);
  await state.purge({ body, patch, storage, handlerIds: allIds });
  if (old === null || !dicts.deepEqual(old, cause.new)) {
    op.settings.persistence.diffbaseStorage.store({ body, patch, essence });
    memory.unstoredEssence = bounds.isUnstored(patch) ? essence : null;
  }
  memory.fullyHandledOnce = true;
  return [];
}

/**
 * Records of another purpose are superseded by this cause (R-CAUSE-6): each purpose's counts are
 * logged; the records of handlers this cause does not select are purged, the others take its purpose.
 */
async function supersede(
  cycle: Cycle,
  state: progression.State,
  reason: 'create' | 'update' | 'delete' | 'resume',
  selected: readonly handlers.ChangingHandler[],
): Promise<progression.State> {
  const extras = state.extras;
  if (!extras.size) return state;
  const { op, logger, patch } = cycle;
  const body = cycle.raw.object;
  const storage = op.settings.persistence.progressStorage;
  const title = causes.TITLES[reason];
  const selectedIds = new Set(selected.map((h) => h.id));
  for (const [purpose, counts] of extras) {
    const other = causes.TITLES[purpose as keyof typeof causes.TITLES] ?? purpose;
    logger.info(
      `${other} is superseded by ${title.toLowerCase()}: ${counts.success} succeeded; ${counts.failure} failed; ${counts.running} left to the moment.`,
    );
  }
  const others = state
    .entries()
    .filter(([, s]) => s.purpose !== reason)
    .map(([id]) => id);
  const stale = others.filter((id) => !selectedIds.has(id));
  for (const id of stale) {
    for (const sub of state.get(id).subrefs) await storage.purge({ key: sub, body, patch });
    await storage.purge({ key: id, body, patch });
  }
  return progression.State.of(
    state.entries().filter(([id]) => !stale.includes(id)),
    reason,
  ).withPurpose(
    reason,
    others.filter((id) => selectedIds.has(id)),
  );
}

function addFinalizer(finalizer: string): Fn {
  return (body) => {
    const meta = ((body as Record<string, unknown>)['metadata'] ??= {}) as Record<string, unknown>;
    const list = Array.isArray(meta['finalizers']) ? (meta['finalizers'] as string[]) : [];
    if (!list.includes(finalizer)) meta['finalizers'] = [...list, finalizer];
  };
}

function removeFinalizer(finalizer: string): Fn {
  return (body) => {
    const meta = (body as Record<string, unknown>)['metadata'] as Record<string, unknown> | undefined;
    if (!meta || !Array.isArray(meta['finalizers'])) return;
    const list = (meta['finalizers'] as string[]).filter((f) => f !== finalizer);
    if (list.length) meta['finalizers'] = list;
    else delete meta['finalizers'];
  };
}

/** Applies the cycle's patch once, then sleeps for the shortest delay or touches the object (R-PATCH-7). */
async function applyAndSleep(cycle: Cycle, delays: number[], changing: boolean): Promise<void> {
  const { op, logger, patch } = cycle;
  const body = cycle.raw.object;
  const storage = op.settings.persistence.progressStorage;
  const delay = delays.length ? Math.min(...delays) : undefined;
  if (delay !== undefined) cycle.report?.requeue(delay);
  if (!patch.isEmpty()) {
    storage.touch({ body, patch, value: null });
    warnOfBounds(cycle, bounds.takeNotes(patch));
    await applyRefusable(cycle, patch);
    if (delay !== undefined && delay > 0) logger.debug(`Sleeping was skipped because of the patch, ${delay} seconds left.`);
    return;
  }
  if (delay === undefined) {
    if (changing) logger.debug('Handling cycle is finished, waiting for new changes.');
    return;
  }
  if (delay > 0) {
    cycle.report?.finish(); // the cycle's work is over: the sleep is not part of it
    const capped = Math.min(delay, 600);
    logger.debug(
      delay > 600 ? `Sleeping for ${delay} (capped 600) seconds for the delayed handlers.` : `Sleeping for ${delay} seconds for the delayed handlers.`,
    );
    const started = op.clock.now();
    const completed = await sleepInterruptibly(cycle, capped * 1000);
    if (!completed) {
      if (cycle.signal.aborted) return;
      const left = Math.max(0, delay - (op.clock.now() - started) / 1000);
      logger.debug(`Sleeping was interrupted by new changes, ${left} seconds left.`);
      return;
    }
  }
  // The sleep is over: touch the object to provoke the next cycle (R-STORAGE-10).
  const touch = new patches.Patch<object>();
  storage.touch({ body, patch: touch, value: timestamps.formatTimestamp(op.clock.now()) });
  if (!touch.isEmpty()) await applyRefusable(cycle, touch);
}

/** Sends a patch and records what consistency must wait for (R-QUEUE-4/6, R-PATCH-3). */
async function apply(cycle: Cycle, patch: patches.PatchBase<object>): Promise<void> {
  const { op, resource, memory, logger } = cycle;
  const applied = await application.applyPatch({ api: op.api, resource, body: cycle.raw.object, patch, logger, signal: cycle.signal });
  memory.leftoverFns = applied.leftoverFns;
  if (applied.gone) {
    // Its stale events (e.g. of this cycle's earlier requests) must run nothing again (R-PATCH-9):
    // once a read confirms it is gone (a 404 of a PATCH alone is trusted with nothing forever; a
    // forbidden read confirms nothing, and its DELETED event ends it as usual: R-SEC-2).
    const uid = cycle.raw.object.metadata?.uid;
    if (applied.readGone && uid !== undefined) op.memories.markVanished(uid);
    else await reread(cycle);
    return;
  }
  if (!applied.sent || applied.resourceVersion === undefined) return;
  // An object about to vanish (marked, no finalizers left) never shows that version (R-QUEUE-6):
  // expect one that never arrives, so that the events of this cycle's earlier requests (e.g. the
  // merge-patch purging the records before the finalizer's JSON-patch) run no handlers again,
  // until the DELETED event (which does not wait) or the deadline.
  const meta = applied.body.metadata;
  const vanishing = !!meta?.deletionTimestamp && !meta.finalizers?.length;
  const timeout = op.settings.persistence.consistencyTimeout;
  if (!timeout) return;
  memory.expectedVersion = vanishing ? `${applied.resourceVersion}~which~never~arrives` : applied.resourceVersion;
  memory.expectedUntil = op.clock.now() + timeout * 1000;
}

/** The objects already warned about their bounded storage: once per object, not per cycle (R-STORAGE-16). */
const warnedOfBounds = new WeakSet<inventory.ObjectMemory>();

/** Logs, once per object, that its storage had to be bounded to fit the API server's limits. */
function warnOfBounds(cycle: Cycle, notes: readonly string[]): void {
  if (notes.length === 0 || warnedOfBounds.has(cycle.memory)) return;
  warnedOfBounds.add(cycle.memory);
  const text = notes.map((note) => note.charAt(0).toUpperCase() + note.slice(1)).join(' ');
  cycle.logger.warning(`The operator's state does not fit this object as it is. ${text} (Logged once per object.)`);
}

/**
 * Applies a patch; when the server refuses it as unprocessable (422: the object would break a
 * limit or a validation rule), logs the server's reason instead of failing the cycle (R-PATCH-11).
 * A deletion is never held by state that cannot be stored: the finalizer's release is retried
 * alone (R-STORAGE-16).
 */
async function applyRefusable(cycle: Cycle, patch: patches.PatchBase<object>): Promise<void> {
  try {
    await apply(cycle, patch);
  } catch (error) {
    if (!(error instanceof clientErrors.ApiUnprocessableError)) throw error;
    const releasing = causes.isDeletionOngoing(cycle.raw.object) && patch.fns.length > 0 && Object.keys(patch.toMergePatch()).length > 0;
    if (releasing) {
      cycle.logger.warning(`The server refused to store the operator's state: ${sentence(error.message)} Releasing the finalizer without it.`);
      await applyRefusable(cycle, new patches.Patch<object>(undefined, patch.fns));
      return;
    }
    cycle.logger.error(`The server refused to patch the object: ${sentence(error.message)} Nothing is stored until the object changes.`);
  }
}

/** A server's message as a sentence of a log line: with a full stop. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
