/**
 * Daemons and timers as background tasks: one per (object, handler), spawned by processing cycles,
 * stopped in stages, and killed at operator exit (R-DAEMON-2..11, R-TIMER-1).
 *
 * The processing cycle of an object calls `processSpawningCause()`: it refreshes the object's live
 * body and idle clock, spawns what matches and is not running (even before the finalizer is added,
 * regardless of consistency), and stops what no longer matches (`FILTERS_MISMATCH`) or everything
 * when the object is being deleted (`RESOURCE_DELETED`). Stopping is not a single act: the stop flag
 * is set, a well-behaved daemon gets a few zero-time turns of the event loop to exit at once, and
 * then the stages of R-DAEMON-6 — graceful (`cancellationBackoff`), forced (`cancellationTimeout`,
 * the daemon's signal aborted), abandoned — are driven by later cycles: each cycle returns the
 * seconds until the next stage as a delay, which the reactor sleeps and then touches the object
 * for. While any delay is returned, the finalizer stays (R-FINAL-5).
 *
 * When the operator pauses (peering or Lease election, R-DAEMON-10), `Daemons.pauseAll()` stops
 * every task in memory with `OPERATOR_PAUSING`; cycles that run while the operator is paused (events
 * already queued when the pause began still arrive) spawn nothing, and a pause that begins during
 * a cycle stops what it has just spawned. The events of the re-listing after the pause spawn them
 * again, each only after its previous instance has exited.
 *
 * At operator exit there are no more cycles: `Daemons.killAll()` walks the same stages in memory,
 * with real waits (R-DAEMON-8). For an object that is already gone (a `DELETED` event), the same
 * in-memory stopping runs in the background.
 *
 * What runs inside a task — the daemon loop or the timer schedule — lives in `daemons.ts` and
 * `timers.ts`; this module only knows how to start, count and stop tasks. It keeps per-object
 * state small (a map of running tasks, created only for objects that have daemons or timers), as
 * operators run thousands of them.
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as handlers from '../intents/handlers.js';
import * as stoppers from '../intents/stoppers.js';

const R = stoppers.DaemonStoppingReason;

/** One running (or exiting) daemon or timer of one object. */
export interface Daemon {
  readonly handler: handlers.SpawningHandler;
  readonly stopper: stoppers.DaemonStopper;
  /** Words the engine's messages as `Daemon '<id>' …` / `Timer '<id>' …`. */
  readonly logger: loggers.Logger;
  /** Settles (never rejects) when the task has exited. */
  readonly done: Promise<void>;
  /** The task has exited. */
  exited: boolean;
}

/** The title of a spawning handler in log messages: `Daemon '<id>'` or `Timer '<id>'`. */
export function titleOf(handler: handlers.SpawningHandler): string {
  return `${handler.kind === 'daemon' ? 'Daemon' : 'Timer'} '${handler.id}'`;
}

/**
 * The daemons-related memory of one object (Kopf: `DaemonsMemory`): what runs, what stopped
 * forever, the newest body (what the live views of R-KWARGS-8 read) and the idle clock of timers.
 */
export class DaemonsMemory {
  /** Running or exiting tasks by handler id (an exiting one still blocks a re-spawn). */
  readonly running = new Map<string, Daemon>();
  /** Handlers that exited on their own: not re-spawned in this process (R-DAEMON-4). (Arrays: a handful at most.) */
  private stoppedForever: string[] | undefined;
  /** Timers whose initial delay has been slept for this object (once per process, R-TIMER-2). */
  private delayedOnce: string[] | undefined;
  /** The newest body of the object. */
  body: bodies.RawBody;
  /** When the object last changed essentially (clock ms; R-TIMER-3). */
  idleResetTime: number;
  /** How this object's tasks are started; set once by the reactor (shared by all its tasks). */
  launcher: Launcher | undefined;
  /** The logger of this object's tasks; set once by the reactor (it lives as long as they do). */
  logger: loggers.Logger | undefined;
  /** One-shot callbacks for the next idle reset. */
  private resetWaiters: (() => void)[] | undefined;

  constructor(body: bodies.RawBody, now: number) {
    this.body = body;
    this.idleResetTime = now;
  }

  /** Whether a handler exited on its own for this object (R-DAEMON-4). */
  isStoppedForever(id: string): boolean {
    return this.stoppedForever?.includes(id) ?? false;
  }

  /** Marks a handler as exited on its own: never re-spawned for this object in this process. */
  stopForever(id: string): void {
    if (this.isStoppedForever(id)) return;
    // Exact-size arrays (`[]` then `push` would reserve room for 17): thousands of objects have one.
    this.stoppedForever = this.stoppedForever === undefined ? [id] : [...this.stoppedForever, id];
  }

  /** `true` the first time it is asked for a handler: its initial delay is due (once per object). */
  firstDelay(id: string): boolean {
    if (this.delayedOnce?.includes(id)) return false;
    this.delayedOnce = this.delayedOnce === undefined ? [id] : [...this.delayedOnce, id];
    return true;
  }

  /** Takes the newest body; an essential change resets the idle clock and wakes idle timers. */
  refresh(body: bodies.RawBody, reset: boolean, now: number): void {
    this.body = body;
    if (!reset) return;
    this.idleResetTime = now;
    const waiters = this.resetWaiters;
    this.resetWaiters = undefined;
    if (waiters) for (const waiter of waiters) waiter();
  }

  /** Calls `callback` once at the next idle reset, unless `unwaitReset()` removes it first. */
  whenReset(callback: () => void): void {
    if (this.resetWaiters === undefined) this.resetWaiters = [callback];
    else this.resetWaiters.push(callback);
  }

  /** Removes a callback of `whenReset()` that has not been called. */
  unwaitReset(callback: () => void): void {
    const waiters = this.resetWaiters;
    const at = waiters?.indexOf(callback) ?? -1;
    if (at >= 0) waiters!.splice(at, 1);
  }
}

/** Starts the task of a daemon or timer, which calls `exited` once when it has exited. */
export type Launcher = (daemon: Omit<Daemon, 'done' | 'exited'>, exited: () => void) => void;

/** What spawning and stopping need from the operator. */
export interface SpawningScope {
  readonly settings: settings.OperatorSettings;
  readonly clock: clocks.Clock;
  /** The operator-wide registry of running tasks (for the exit). */
  readonly daemons: Daemons;
  /** Aborts when the operator cancels everything: the daemons' signals follow it. */
  readonly cancel: AbortSignal;
  /** The per-object logger the engine's messages go to (worded per daemon). */
  readonly logger: loggers.Logger;
  /** Where tasks are reported when spawned and when exited (the operator's metrics), if anywhere. */
  readonly instruments?: instruments.SpawningInstruments;
  /** On while the operator is paused: what a cycle spawns is stopped right away (R-DAEMON-10). */
  readonly paused?: toggles.Awaitable;
  /** The operator's scheduler, where the stop flags' `wait(timeout)` are due. */
  readonly wakeups?: stoppers.Wakeups;
}

/** Yields to the event loop up to N times, or waits up to T seconds, for an instant exit (R-DAEMON-11). */
async function waitForInstantExit(daemon: Daemon, scope: Pick<SpawningScope, 'settings' | 'clock'>): Promise<void> {
  const { instantExitTimeout, instantExitZeroTimeCycles } = scope.settings.background;
  if (instantExitTimeout !== null && instantExitTimeout > 0) {
    const timer = new AbortController();
    await Promise.race([daemon.done, scope.clock.sleep(instantExitTimeout * 1000, timer.signal).catch(() => undefined)]);
    timer.abort();
    return;
  }
  const yielding = (async (): Promise<void> => {
    for (let turn = 0; turn < instantExitZeroTimeCycles && !daemon.exited; turn += 1) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  })();
  // Zero-time turns of the event loop: a virtual clock must not move on meanwhile.
  await (scope.clock.busy ? scope.clock.busy(yielding) : yielding);
}

/** The stages' settings of a handler: timers have no graceful or forced stage (R-TIMER-1). */
function stagesOf(handler: handlers.SpawningHandler): { backoff: number | null; timeout: number | null; polling: number | null } {
  return handler.kind === 'daemon'
    ? { backoff: handler.cancellationBackoff, timeout: handler.cancellationTimeout, polling: handler.cancellationPolling }
    : { backoff: null, timeout: null, polling: null };
}

/**
 * Asks daemons to stop for `reason` and advances their stop stages as far as time allows now
 * (R-DAEMON-6). Returns the seconds until each one's next stage (an empty list when all have
 * exited or were abandoned): the delays that drive the next processing cycles.
 */
export async function stopDaemons(
  daemons: Iterable<Daemon>,
  reason: stoppers.DaemonStoppingReason,
  scope: Pick<SpawningScope, 'settings' | 'clock'>,
): Promise<number[]> {
  const delays: number[] = [];
  for (const daemon of [...daemons]) {
    const { stopper, handler, logger } = daemon;
    const title = titleOf(handler);
    if (!stopper.has(reason)) {
      stopper.set(reason);
      await waitForInstantExit(daemon, scope);
    }
    if (daemon.exited || stopper.has(R.DAEMON_ABANDONED)) continue;
    const { backoff, timeout, polling } = stagesOf(handler);
    const age = (scope.clock.now() - (stopper.when ?? scope.clock.now())) / 1000;
    if (backoff !== null && age < backoff) {
      if (!stopper.has(R.DAEMON_SIGNALLED)) {
        stopper.set(R.DAEMON_SIGNALLED);
        logger.debug(`${title} is signalled to exit gracefully.`);
      }
      delays.push(backoff - age);
    } else if (timeout !== null && age < timeout + (backoff ?? 0)) {
      if (!stopper.has(R.DAEMON_CANCELLED)) {
        logger.debug(`${title} is signalled to exit by force.`);
        stopper.abort(R.DAEMON_CANCELLED);
        await waitForInstantExit(daemon, scope);
        if (daemon.exited) continue;
      }
      delays.push(timeout + (backoff ?? 0) - age);
    } else if (timeout !== null) {
      stopper.set(R.DAEMON_ABANDONED);
      logger.warning(`${title} did not exit in time. Leaving it orphaned.`);
    } else {
      const every = polling ?? scope.settings.background.cancellationPolling;
      logger.debug(`${title} is still exiting. The next check is in ${every} seconds.`);
      delays.push(every);
    }
  }
  return delays;
}

/**
 * Stops one daemon without processing cycles (operator exit, a vanished object, R-DAEMON-8): set the
 * flag, give it the instant-exit turns, wait `cancellationBackoff` if set, abort its signal and
 * wait `cancellationTimeout` if set, then give up with the WARNING of the abandon stage.
 *
 * The stages are measured from the first stop request (R-DAEMON-6): a daemon that is already
 * being stopped — say, for the deletion of its object — goes on from the stage it has reached
 * instead of starting over, and an orphan stays an orphan (it is not signalled or given up on twice).
 */
export async function stopInMemory(daemon: Daemon, reason: stoppers.DaemonStoppingReason, scope: Pick<SpawningScope, 'settings' | 'clock'>): Promise<void> {
  const { stopper, handler, logger } = daemon;
  const title = titleOf(handler);
  if (daemon.exited) return;
  stopper.set(reason);
  if (stopper.has(R.DAEMON_ABANDONED)) return;
  await waitForInstantExit(daemon, scope);
  if (daemon.exited) return;
  const { backoff, timeout } = stagesOf(handler);
  const since = stopper.when ?? scope.clock.now();
  const within = async (seconds: number): Promise<boolean> => {
    const ms = since + seconds * 1000 - scope.clock.now();
    if (ms > 0 && !daemon.exited) {
      const timer = new AbortController();
      await Promise.race([daemon.done, scope.clock.sleep(ms, timer.signal).catch(() => undefined)]);
      timer.abort();
    }
    return daemon.exited;
  };
  if (backoff !== null && !stopper.has(R.DAEMON_CANCELLED)) {
    if (!stopper.has(R.DAEMON_SIGNALLED)) {
      stopper.set(R.DAEMON_SIGNALLED);
      logger.debug(`${title} is signalled to exit gracefully.`);
    }
    if (await within(backoff)) return;
  }
  if (timeout !== null) {
    if (!stopper.has(R.DAEMON_CANCELLED)) {
      logger.debug(`${title} is signalled to exit by force.`);
      stopper.abort(R.DAEMON_CANCELLED);
    }
    if (await within(timeout + (backoff ?? 0))) return;
  }
  if (daemon.exited || stopper.has(R.DAEMON_ABANDONED)) return;
  stopper.set(R.DAEMON_ABANDONED);
  logger.warning(`${title} did not exit in time. Leaving it orphaned.`);
}

/**
 * All daemons and timers of one operator (Kopf keeps them in the object memories and walks them
 * at exit; a flat set makes the walk and the counting cheap). Closed at exit: nothing new spawns.
 */
export class Daemons {
  private readonly live = new Set<Daemon>();
  private closing = false;

  /** How many tasks are running or exiting. */
  get size(): number {
    return this.live.size;
  }

  /** Whether the operator is exiting (no more spawning). */
  get closed(): boolean {
    return this.closing;
  }

  /** @internal */
  add(daemon: Daemon): void {
    this.live.add(daemon);
  }

  /** @internal */
  delete(daemon: Daemon): void {
    this.live.delete(daemon);
  }

  /**
   * Operator pausing (R-DAEMON-10): stops every running task in memory with `OPERATOR_PAUSING`
   * (all at once, through the usual stages). The registry stays open: the re-listing after the
   * pause spawns them again. Resolves when all of them have exited or were abandoned.
   */
  async pauseAll(scope: Pick<SpawningScope, 'settings' | 'clock'>): Promise<void> {
    await Promise.all([...this.live].map((daemon) => stopInMemory(daemon, R.OPERATOR_PAUSING, scope)));
  }

  /**
   * Operator exit (R-DAEMON-8): closes the registry, stops every task in memory with
   * `OPERATOR_EXITING` (all at once), then waits for all of them — orphans included — to settle;
   * the operator's hung-task limit (R-LIFE-3) bounds that last wait.
   */
  async killAll(scope: Pick<SpawningScope, 'settings' | 'clock'>): Promise<void> {
    this.closing = true;
    const all = [...this.live];
    await Promise.all(all.map((daemon) => stopInMemory(daemon, R.OPERATOR_EXITING, scope)));
    await Promise.all([...this.live].map((daemon) => daemon.done));
  }
}

/** What one processing cycle found for the daemons and timers of an object. */
export interface SpawningCause {
  readonly body: bodies.RawBody;
  /** `deletionTimestamp` is set, or the object is gone (a `DELETED` event). */
  readonly deleted: boolean;
  /** The object is gone: no more cycles will come, stopping goes on in the background. */
  readonly gone: boolean;
  /** The essence changed (R-TIMER-3). */
  readonly reset: boolean;
}

/**
 * The daemons' part of a processing cycle (R-DAEMON-2/7/9): refresh, then either stop everything
 * (deletion) or spawn the matching handlers and stop the mismatching ones. Returns the delays of
 * stopping tasks (seconds), which must keep the cycle going and the finalizer in place.
 */
export async function processSpawningCause(options: {
  readonly cause: SpawningCause;
  readonly memory: DaemonsMemory;
  /** The handlers whose filters match the object now. */
  readonly matching: readonly handlers.SpawningHandler[];
  readonly scope: SpawningScope;
  readonly launch: Launcher;
}): Promise<number[]> {
  const { cause, memory, matching, scope, launch } = options;
  memory.refresh(cause.body, cause.reset, scope.clock.now());
  if (cause.gone) {
    for (const daemon of memory.running.values()) void stopInMemory(daemon, R.RESOURCE_DELETED, scope);
    return [];
  }
  if (cause.deleted) return await stopDaemons(memory.running.values(), R.RESOURCE_DELETED, scope);

  // Nothing spawns while the operator is paused (R-DAEMON-10): the re-listing after the pause does.
  if (!scope.daemons.closed && !scope.paused?.isOn()) {
    for (const handler of matching) {
      if (memory.running.has(handler.id) || memory.isStoppedForever(handler.id)) continue;
      spawn(handler, memory, scope, launch);
    }
  }
  const ids = new Set(matching.map((handler) => handler.id));
  const mismatching = [...memory.running.values()].filter((daemon) => !ids.has(daemon.handler.id));
  const delays = await stopDaemons(mismatching, R.FILTERS_MISMATCH, scope);
  // The pause began while this cycle ran (e.g. between spawning and here): stopped right away.
  if (scope.paused?.isOn()) delays.push(...(await stopDaemons(memory.running.values(), R.OPERATOR_PAUSING, scope)));
  return delays;
}

/** A running task's record; its `done` promise is made only when someone waits for it. */
class RunningTask implements Daemon {
  exited = false;
  #done: Promise<void> | undefined;
  #settle: (() => void) | undefined;

  constructor(
    readonly handler: handlers.SpawningHandler,
    readonly stopper: stoppers.DaemonStopper,
    readonly logger: loggers.Logger,
  ) {}

  get done(): Promise<void> {
    if (this.exited) return Promise.resolve();
    this.#done ??= new Promise<void>((resolve) => {
      this.#settle = resolve;
    });
    return this.#done;
  }

  /** Marks the task as exited and settles `done`. */
  end(): void {
    this.exited = true;
    this.#settle?.();
  }
}

function spawn(handler: handlers.SpawningHandler, memory: DaemonsMemory, scope: SpawningScope, launch: Launcher): void {
  const { daemons, instruments, logger } = scope;
  const stopper = new stoppers.DaemonStopper(scope.clock, scope.cancel, scope.wakeups);
  const daemon = new RunningTask(handler, stopper, logger);
  // What the exit closure keeps is all a running task keeps of this cycle: no scope, no body.
  const exited = (): void => {
    if (daemon.exited) return;
    // Prevent re-spawns of those that exited on their own; filter mismatches, deletion and
    // operator stops leave the way open for a later re-spawn (R-DAEMON-4/9/10).
    if (!stopper.isSet()) memory.stopForever(handler.id);
    stopper.set(R.DONE);
    stopper.release();
    daemon.end(); // `done` settles later (a promise): the bookkeeping below comes first
    if (memory.running.get(handler.id) === daemon) memory.running.delete(handler.id);
    daemons.delete(daemon);
    instruments?.exited(handler.id, handler.kind);
  };
  memory.running.set(handler.id, daemon);
  daemons.add(daemon);
  instruments?.spawned(handler.id, handler.kind);
  // The task starts after this cycle's step, as a spawned task would; a failure to start is its exit.
  queueMicrotask(() => start(daemon, launch, exited));
}

function start(daemon: Daemon, launch: Launcher, exited: () => void): void {
  try {
    launch(daemon, exited);
  } catch (error) {
    daemon.logger.error(`${titleOf(daemon.handler)} could not start: ${error instanceof Error ? error.message : String(error)}`);
    exited();
  }
}
