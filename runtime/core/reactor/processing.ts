/**
 * One processing cycle: everything the operator does for one watch-event of one object, in the
 * order Kopf does it (section 2 of the runtime reference; the wire traces of its section 4).
 *
 * The steps live in one routine because they depend on each other: the finalizer decision needs the
 * change handlers and the daemons alike, every step contributes to the one patch written per cycle,
 * and the sleep at the end is what retries delayed handlers and advances the stop stages of daemons.
 * Reading this module top to bottom is reading the order of a cycle.
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
 * With metrics on, the watcher passes the resource's instruments: every handler of the cycle, and
 * the cycle itself (as one reconcile, see the reports below), is reported; daemons and timers report their
 * invocations and their spawning and exit to the same instruments.
 *
 * The arguments objects the handlers of a cycle receive, and the report of what a cycle came to,
 * are built here too: nothing else builds them.
 *
 * Kopf: `kopf._core.reactor.processing`.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as bounds from '../../cogs/configs/bounds.js';
import * as timestamps from '../../cogs/configs/timestamps.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import * as dicts from '../../cogs/structs/dicts.js';
import * as diffs from '../../cogs/structs/diffs.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as patches from '../../cogs/structs/patches.js';
import type * as references from '../../cogs/structs/references.js';
import * as application from '../actions/application.js';
import * as errors from '../actions/errors.js';
import * as execution from '../actions/execution.js';
import * as invocation from '../actions/invocation.js';
import * as lifecycles from '../actions/lifecycles.js';
import * as logging from '../actions/logging.js';
import * as outcomes from '../actions/outcomes.js';
import * as progression from '../actions/progression.js';
import * as throttling from '../actions/throttling.js';
import * as daemonsEngine from '../engines/daemons.js';
import * as spawningEngine from '../engines/spawning.js';
import * as timersEngine from '../engines/timers.js';
import * as causes from '../intents/causes.js';
import type * as handlers from '../intents/handlers.js';
import type * as stoppers from '../intents/stoppers.js';
import type * as inventory from './inventory.js';
import type * as queueing from './queueing.js';
import * as subhandling from './subhandling.js';

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
  const uid = body.metadata?.uid;
  if (raw.type !== 'DELETED' && uid !== undefined && op.memories.hasVanished(uid)) {
    logging.objectLogger({ body, settings: op.settings }).debug('The event is skipped: the object is known to be gone.');
    op.barrier?.release(stream.key);
    return;
  }
  const memory = op.memories.recall(stream.key, { listing: raw.type === null });
  const logger = logging.objectLogger({ body, settings: op.settings, sink: op.events });
  // Cancelled when the operator stops, or when its watcher stops waiting for this worker (R-QUEUE-7):
  // the worker's signal follows both.
  const cancellation = stream.signal;
  // A cycle skipped by throttling or cancelled is not reported.
  let report: CycleReport | undefined;
  try {
    const throttled = await throttling.throttled(
      {
        throttler: memory.throttler,
        delays: op.settings.queueing.errorDelays,
        clock: op.clock,
        logger,
        wakeup: stream.pressure.signal,
        // Cancellation on operator exit is not an error of the object.
        errors: () => !cancellation.aborted,
      },
      () => {
        if (instruments !== undefined) report = new CycleReport(instruments);
        return processCycle(op, resource, raw, memory, stream, logger, cancellation, instruments, report);
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

interface Cycle {
  readonly op: inventory.OperatorContext;
  readonly resource: references.Resource;
  readonly raw: bodies.RawEvent;
  readonly memory: inventory.ObjectMemory;
  readonly stream: queueing.StreamContext;
  readonly logger: logging.ObjectLogger;
  readonly patch: patches.PatchBase<object>;
  readonly scope: ResourceScope;
  /** Cancellation of the cycle: the operator stops or the queue gives up on the worker. */
  readonly signal: AbortSignal;
  /** The resource's instruments (metrics on): for daemons and timers, which outlive the cycle. */
  readonly instruments?: instruments.ResourceInstruments;
  /** The report of this cycle (metrics on): handlers of the cycle report through it. */
  readonly report?: CycleReport;
}

async function processCycle(
  op: inventory.OperatorContext,
  resource: references.Resource,
  raw: bodies.RawEvent,
  memory: inventory.ObjectMemory,
  stream: queueing.StreamContext,
  logger: logging.ObjectLogger,
  signal: AbortSignal,
  instruments: instruments.ResourceInstruments | undefined,
  report: CycleReport | undefined,
  reread = false,
): Promise<void> {
  const body = raw.object;
  // Functions left over after a JSON-patch conflict (R-PATCH-3) go out with this cycle's patch —
  // unless this newer body already satisfies them (e.g. the refused request had been applied and
  // only its response was lost): then they are done, and must not hold the handlers back (R-QUEUE-5).
  const leftovers = memory.leftoverFns.length > 0 && new patches.Patch<object>(undefined, memory.leftoverFns).toJsonPatch(body, { merge: false }).length > 0;
  const patch = new patches.Patch<object>(undefined, leftovers ? memory.leftoverFns : []);
  memory.leftoverFns = [];
  const scope: ResourceScope = {
    resource,
    body,
    view: viewOf(body),
    patch,
    logger,
    memo: memory.memo,
    signal,
    indices: op.indices?.byName,
  };
  const cycle: Cycle = { op, resource, raw, memory, stream, logger, patch, scope, signal, instruments, report };

  // Indices first, then the barrier: nothing else runs before the initial listings are indexed
  // (R-INDEX-7). A newer event that arrived meanwhile is processed instead of this one.
  const indexers = op.registry.indexingHandlersOf(resource);
  if (indexers.length && op.indices) await processIndexingCause(cycle, indexers);
  if (op.barrier && !op.barrier.ready) {
    op.barrier.release(stream.key);
    await op.barrier.wait(signal);
    if (stream.pressure.raised) return;
  }

  // A body re-read from the server is no watch event: on-event handlers get that version from the watch.
  if (!reread && op.registry.watchingHandlersOf(resource).length) await processWatchingCause(cycle);

  const spawners = op.registry.spawningHandlersOf(resource);
  const changers = op.registry.hasChangingHandlers(resource);
  if (!spawners.length && !changers) {
    if (raw.type === 'DELETED') return;
    await applyAndSleep(cycle, [], false);
    return;
  }

  const { progressStorage, diffbaseStorage, finalizer } = op.settings.persistence;
  const essence = diffbaseStorage.build({ body, extraFields: op.registry.extraFields(resource) });
  // A diff-base too large to be stored at all is kept in memory instead (R-STORAGE-16).
  const stored = diffbaseStorage.fetch({ body }) ?? memory.unstoredEssence;
  const old = stored === null ? null : progressStorage.clear(stored);
  // Values the stored diff-base keeps as digests are compared as digests (R-STORAGE-16).
  const now = bounds.alignDigests(progressStorage.clear(essence), old);
  const cause = changers ? causes.detectChangingCause({ resource, event: raw, finalizer, old, new: now, initial: memory.initial }) : null;
  // Filter callbacks get the same kwargs as the handler (R-FILTERS-6), minus what exists only
  // during an invocation (retry fields, a daemon's stop flag).
  const matching = {
    kwargs: (handler: FilterableHandler & { readonly kind?: string }) =>
      handler.kind === 'change' && cause !== null ? changingKwargs(cycle.scope, cause, handler) : indexingKwargs(cycle.scope, handler),
  };
  // Stealth mode: no change handler pre-matches the object, so it is as if there were none (R-CAUSE-5).
  const stealth = cause === null || !op.registry.prematchChanging(cause, matching);
  const spawning = spawners.length ? op.registry.spawningHandlers({ resource, body }, matching) : [];

  // The finalizer: added when required, removed when no longer required (R-FINAL-2..4). Change
  // handlers do not run in such a cycle; on-event handlers, daemons and timers do.
  const present = causes.hasFinalizer(body, finalizer);
  const deleted = raw.type === 'DELETED' || causes.isDeletionOngoing(body);
  const required = op.registry.requiresFinalizer(stealth || cause === null ? { resource, body } : cause, {
    ...matching,
    stoppedForever: (handler) => memory.daemons?.isStoppedForever(handler.id) ?? false,
  });
  let consistent = isConsistent(cycle);
  let blocked = false;
  if (!deleted) {
    if (required && !present) {
      logger.debug('Adding the finalizer, thus preventing the actual deletion.');
      patch.fns.push(addFinalizer(finalizer));
      blocked = true;
    } else if (!required && present && consistent) {
      logger.debug('Removing the finalizer, as there are no handlers requiring it.');
      patch.fns.push(removeFinalizer(finalizer));
      blocked = true;
    }
  }

  // Daemons and timers: spawned even before the finalizer is added, regardless of consistency.
  const stopping =
    spawners.length || memory.daemons ? await processSpawningCause(cycle, spawning, { deleted, reset: old === null || !dicts.deepEqual(old, now) }) : [];

  let delays: number[] = [];
  let changing = false;
  if (cause !== null && !stealth && !blocked) {
    const result = await processChangingCause(cycle, cause, essence, old, consistent);
    if (result === 'interrupted') return;
    if ('reread' in result) {
      // The event was stale: the cycle starts over with the object as the server has it now.
      return await processCycle(op, resource, { type: 'MODIFIED', object: result.reread }, memory, stream, logger, signal, instruments, report, true);
    }
    ({ delays, changing, consistent } = result);
  }
  if (raw.type === 'DELETED') return; // nothing to patch: the object is gone (R-PATCH-6)

  // Releasing the finalizer on deletion when nothing is pending: no deletion handler left, no
  // daemon or timer still exiting (R-FINAL-5, R-DAEMON-7).
  const all = [...delays, ...stopping];
  if (deleted && present && consistent && all.length === 0 && (changing || stealth || cause === null)) {
    logger.debug('Removing the finalizer, thus allowing the actual deletion.');
    patch.fns.push(removeFinalizer(finalizer));
  }
  await applyAndSleep(cycle, all, changing);
}

/** Indexes the object in all indices of its resource; a `DELETED` event removes it (R-INDEX-3..6). */
async function processIndexingCause(cycle: Cycle, all: readonly handlers.IndexingHandler[]): Promise<void> {
  const { op, resource, raw, memory, stream } = cycle;
  const indices = op.indices!;
  const logger = logging.objectLogger({ body: raw.object, settings: op.settings, terse: true });
  const scope: ResourceScope = { ...cycle.scope, logger };
  const matching =
    raw.type === 'DELETED' ? [] : op.registry.indexingHandlers({ resource, body: raw.object }, { kwargs: (handler) => indexingKwargs(scope, handler) });
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
      kwargs: (handler, retry) => indexingKwargs(scope, handler, retry),
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
  const { op, resource, raw, memory, logger } = cycle;
  const body = raw.object;
  if (!memory.daemons) {
    if (found.deleted || matching.length === 0) return [];
    memory.daemons = new spawningEngine.DaemonsMemory(body, op.clock.now());
  }
  const daemonsMemory = memory.daemons;
  const scope: spawningEngine.SpawningScope = {
    settings: op.settings,
    clock: op.clock,
    daemons: op.daemons!,
    cancel: op.signal,
    logger,
    instruments: cycle.instruments,
    paused: op.paused,
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
  const source: SpawningScope = { resource, memory: daemonsMemory, logger, memo: memory.memo, indices: op.indices?.byName };
  const background: daemonsEngine.BackgroundScope = {
    settings: op.settings,
    clock: op.clock,
    api: op.api,
    resource,
    memory: daemonsMemory,
    logger,
    cancel: op.signal,
    titled: { daemon: logging.titledLogger(logger, 'Daemon'), timer: logging.titledLogger(logger, 'Timer') },
    kwargs: (handler, stopper, patch, retry) => spawningKwargs(source, handler, stopper, patch, retry),
    instruments,
  };
  return (task) => (task.handler.kind === 'daemon' ? daemonsEngine.runDaemon(task, background) : timersEngine.runTimer(task, background));
}

/** On-event handlers: all matching ones, in order, once each; errors ignored; results to status (R-EVENT). */
async function processWatchingCause(cycle: Cycle): Promise<void> {
  const { op, resource, raw } = cycle;
  // Messages of on-event handlers are never posted as k8s-events (R-EVENT-4, R-POST-2).
  const local = logging.objectLogger({ body: raw.object, settings: op.settings, sink: op.events, local: true });
  const scope: ResourceScope = { ...cycle.scope, logger: local };
  // Filter callbacks get the same kwargs as the handler (R-FILTERS-6).
  const handlers = op.registry.watchingHandlers(causes.detectWatchingCause({ resource, event: raw }), {
    kwargs: (handler) => watchingKwargs(scope, raw, handler),
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
      kwargs: (handler) => watchingKwargs(scope, raw, handler),
      body: () => raw.object,
      instruments: cycle.report,
    },
  });
  outcomes.deliverResults(results, cycle.patch);
}

/** Whether the object caught up with our last patch (R-QUEUE-4); clears the expectation when so. */
function isConsistent(cycle: Cycle): boolean {
  const { memory, op } = cycle;
  if (memory.expectedVersion === null) return true;
  const rv = cycle.raw.object.metadata?.resourceVersion;
  if (rv === memory.expectedVersion || (memory.expectedUntil !== null && op.clock.now() >= memory.expectedUntil)) {
    memory.expectedVersion = null;
    memory.expectedUntil = null;
    return true;
  }
  return false;
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
    if (current.metadata?.resourceVersion !== raw.object.metadata?.resourceVersion) {
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

/** The object as the server has it now, or `null` if it is gone (then remembered as vanished). */
async function reread(cycle: Cycle): Promise<bodies.RawBody | null> {
  const { op, resource, raw } = cycle;
  const meta = raw.object.metadata;
  try {
    return await op.api.get(resource, resource.namespaced ? (meta?.namespace ?? null) : null, meta?.name ?? '', { signal: cycle.signal });
  } catch (error) {
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
    logger.debug(`${title} is in progress: ${JSON.stringify(body)}`);
    if (old !== null && cause.diff.length) logger.debug(`${title} diff: ${JSON.stringify(cause.diff)}`);
  }

  const selected = op.registry.changingHandlers(cause, { kwargs: (handler) => changingKwargs(cycle.scope, cause, handler) });
  const allIds = op.registry.changingHandlersOf(resource).map((h) => h.id);
  let state = (await progression.State.fromStorage({ body, storage, handlerIds: allIds, now })).withPurpose(reason);

  // Records of another purpose are superseded by this cause (R-CAUSE-6).
  const extras = state.extras;
  if (extras.size) {
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
    state = progression.State.of(
      state.entries().filter(([id]) => !stale.includes(id)),
      reason,
    ).withPurpose(
      reason,
      others.filter((id) => selectedIds.has(id)),
    );
  }

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
      kwargs: (handler, retry) => changingKwargs(cycle.scope, cause, handler, retry),
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
    // once a read confirms it is gone (a 404 of a PATCH alone is trusted with nothing forever).
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

/*
 * The arguments objects handlers receive (R-KWARGS-1..5): built lazily per invocation (a field is
 * computed only if the handler reads it), over read-only views of the body of the event being
 * processed. Change handlers also get the reason, old/new essences (or field values for field
 * handlers) with the `oldValue`/`newValue` aliases, the diff, and the retry information.
 *
 * Every handler also gets the operator's typed `client` (from the operator's async context).
 *
 * Daemons and timers run for long, so their `body`, `spec`, `meta`, `status`, `labels` and
 * `annotations` are *live* views (R-KWARGS-8): read-only proxies that resolve every property read
 * against the newest body the object's memory holds, so `spec.field` read in a loop sees the
 * latest value. Writing to them throws; changes go through `patch`.
 */

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

const frozenBodies = new WeakMap<bodies.RawBody, dicts.DeepReadonly<bodies.RawBody>>();

function frozenBody(body: bodies.RawBody): dicts.DeepReadonly<bodies.RawBody> {
  let view = frozenBodies.get(body);
  if (view === undefined) {
    view = dicts.frozenCopy(body);
    frozenBodies.set(body, view);
  }
  return view;
}

function refuse(): never {
  throw new TypeError('The body of a daemon or timer is read-only: write to `patch` instead.');
}

/**
 * A read-only object whose properties are read from `current()` at every access (R-KWARGS-8);
 * nested values are frozen snapshots of the newest body at the moment they are read.
 */
export function liveView(current: () => object): object {
  return new Proxy(
    {},
    {
      get: (_, key) => Reflect.get(current(), key),
      has: (_, key) => Reflect.has(current(), key),
      ownKeys: () => Reflect.ownKeys(current()),
      getOwnPropertyDescriptor: (_, key) => {
        const source = current();
        if (!Object.hasOwn(source, key)) return undefined;
        return { value: Reflect.get(source, key), writable: false, enumerable: true, configurable: true };
      },
      set: refuse,
      defineProperty: refuse,
      deleteProperty: refuse,
      setPrototypeOf: refuse,
    },
  );
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
  return liveView(() => {
    const value = frozenBody(source.scope.memory.body)[key];
    return dicts.isObject(value) ? value : EMPTY;
  });
}

function liveMeta(source: SpawningSource, key: string): object {
  return liveView(() => {
    const meta = frozenBody(source.scope.memory.body)['metadata'];
    const value = dicts.isObject(meta) ? (meta as Readonly<Record<string, unknown>>)[key] : undefined;
    return dicts.isObject(value) ? value : EMPTY;
  });
}

/** The kwargs of daemons and timers, computed from their source on first access. */
const SPAWNING: Readonly<Record<string, (source: SpawningSource) => unknown>> = Object.freeze({
  resource: (s) => s.scope.resource,
  body: (s) => liveView(() => frozenBody(s.scope.memory.body)),
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

/*
 * What one processing cycle came to, for the operator's metrics (controller-runtime's reconcile).
 *
 * A processing cycle runs several handlers — on-event, indexing, change handlers, each possibly
 * retried — and may end with a sleep until the earliest delayed handler is due. Dashboards built
 * for controller-runtime want one verdict per cycle instead (`controller_runtime_reconcile_total`
 * by result, `…_reconcile_time_seconds`): so a cycle of an instrumented operator carries a
 * `CycleReport`. It stands between execution and the resource's instruments, passing every
 * handler's report on while remembering whether any handler failed (and whether for good); the
 * cycle tells it the delay it ends with, and it reports the cycle once, before any sleep, so that
 * the time measured is the work and not the waiting for delayed handlers.
 *
 * Without metrics there is no report at all: the cycle's `report` is `undefined`.
 */

/** The verdict of one processing cycle, reported once (see the module's comment). */
export class CycleReport implements instruments.HandlerInstruments {
  private readonly since: number;
  private failed = false;
  private terminal = false;
  private delay: number | null = null;
  private done = false;

  constructor(private readonly target: instruments.ResourceInstruments) {
    this.since = target.now();
  }

  now(): number {
    return this.target.now();
  }

  /** Passes a handler's report on, and remembers failures other than temporary ones. */
  handled(handlerId: string, result: instruments.HandlerResult, retrying: boolean, since: number): void {
    this.target.handled(handlerId, result, retrying, since);
    if (result === 'permanent' || result === 'arbitrary') {
      this.failed = true;
      if (!retrying) this.terminal = true;
    }
  }

  /** The cycle itself has failed (an unexpected error, which throttles the object). */
  fail(): void {
    this.failed = true;
  }

  /** The object is to be processed again in `seconds` (the shortest delay of the cycle). */
  requeue(seconds: number): void {
    this.delay = seconds;
  }

  /** Reports the cycle, once: later calls do nothing. */
  finish(): void {
    if (this.done) return;
    this.done = true;
    const result: instruments.ReconcileResult = this.failed ? 'error' : this.delay === null ? 'success' : this.delay > 0 ? 'requeue_after' : 'requeue';
    this.target.reconciled(result, { terminal: this.terminal, requeued: this.delay !== null }, this.since);
  }
}
