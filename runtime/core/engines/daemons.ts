/**
 * What runs inside a daemon's task (R-DAEMON-3..5, R-DAEMON-12, R-PATCH-8), and the in-memory
 * invocation that daemons and timers share.
 *
 * A daemon is a handler invoked once per object and expected to run for as long as the object
 * exists: it sleeps its `initialDelay` (only a stop request interrupts it), then is invoked;
 * failures are retried like change handlers' (R-ERRORS), but with an in-memory state — nothing is
 * persisted, and only a stop request interrupts the sleep between attempts. After every
 * invocation its result goes to the status and its own patch (separate from the processing
 * cycles') is applied to the newest body, then reset.
 *
 * When it returns or fails for good without having been asked to stop, it has exited on its own:
 * `spawning.ts` then never re-spawns it for this object in this process. A daemon that settles with
 * an error after its `signal` was aborted (the forced stop) is cancelled, not failed: no retry.
 *
 * Thousands run at once, so a task is not a suspended async function but a small object that
 * steps from one state to the next (R-PERF-302): its sleeps are entries on the operator's
 * scheduler, woken early by the stop flag; an invocation that returns synchronously completes
 * without a promise (R-PERF-301). What stays suspended while a daemon runs is the daemon's own
 * code and the few promises its one invocation is awaited with.
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as api from '../../cogs/client/api.js';
import * as errors from '../actions/errors.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as patches from '../../cogs/structs/patches.js';
import type * as references from '../../cogs/structs/references.js';
import * as application from '../actions/application.js';
import * as execution from '../actions/execution.js';
import * as lifecycles from '../actions/lifecycles.js';
import * as outcomes from '../actions/outcomes.js';
import * as progression from '../actions/progression.js';
import type * as handlers from '../intents/handlers.js';
import type * as stoppers from '../intents/stoppers.js';
import * as invocation from '../actions/invocation.js';
import * as spawning from './spawning.js';

/** What the task of a daemon or timer needs besides its handler and stopper. */
export interface BackgroundScope {
  readonly settings: settings.OperatorSettings;
  readonly clock: clocks.Clock;
  readonly api: Pick<api.KubeReader, 'get'> & api.KubeWriter;
  readonly resource: references.Resource;
  /** The object's daemons memory: the newest body, the idle clock. */
  readonly memory: spawning.DaemonsMemory;
  /** The per-object logger (handlers get it as `logger`). */
  readonly logger: loggers.Logger;
  /** The same, wording execution's messages as `Daemon '<id>' …` and `Timer '<id>' …`. */
  readonly titled: { readonly daemon: loggers.Logger; readonly timer: loggers.Logger };
  /** Aborts when the operator cancels everything (the last stage of its stop). */
  readonly cancel: AbortSignal;
  /** The operator's scheduler: where the tasks' sleeps are due. */
  readonly wakeups: stoppers.Wakeups;
  /** Builds the kwargs of one invocation (live views of the body, `stopped`, retry fields). */
  readonly kwargs: (
    handler: handlers.SpawningHandler,
    stopper: stoppers.DaemonStopper,
    patch: () => patches.PatchBase<object>,
    retry: execution.RetryKwargs,
  ) => object;
  /** Where invocations are reported (the operator's metrics), if anywhere. */
  readonly instruments?: instruments.HandlerInstruments;
}

/** A daemon or timer task: its handler and stop flag, as `spawning.ts` launches it. */
export type Task = Omit<spawning.Daemon, 'done' | 'exited'>;

/** What one attempt came to: an outcome, `null` if a retry was not due yet, `'cancelled'`. */
export type Attempt = outcomes.Outcome | null | 'cancelled';

/** The forced stop of a daemon as execution reads it (R-DAEMON-5): its signal, if aborted. */
class ForcedStop {
  constructor(private readonly stopper: stoppers.DaemonStopper) {}
  get aborted(): boolean {
    return this.stopper.cancelled;
  }
  get reason(): unknown {
    return this.stopper.cancellationReason;
  }
}

/**
 * The invocations of one daemon or timer: an in-memory progress state for retries (kept only
 * while a retry cycle is unfinished), one patch that is applied after every invocation and then
 * reset (R-PATCH-8).
 */
export class Invoker {
  /** The unfinished retry cycle after a failed attempt; `null` before the first attempt and after the last. */
  private state: progression.State | null = null;
  /** The current retry cycle is over (succeeded, or failed for good). */
  private finished = false;
  private patch: patches.PatchBase<object> | undefined;
  private leftovers: ((body: object) => void)[] | undefined;
  private readonly invocable: execution.Invocable;

  constructor(
    private readonly task: Task,
    private readonly scope: BackgroundScope,
  ) {
    this.invocable = task.handler as unknown as execution.Invocable;
  }

  /** What execution needs for one invocation (made per invocation: nothing kept between ticks). */
  private execution(): execution.ExecutionScope {
    const { scope } = this;
    const { handler, stopper } = this.task;
    const patch = (): patches.PatchBase<object> => this.currentPatch();
    return {
      settings: scope.settings,
      clock: scope.clock,
      signal: scope.cancel,
      logger: handler.kind === 'daemon' ? scope.titled.daemon : scope.titled.timer,
      lifecycle: lifecycles.allAtOnce,
      defaultErrors: errors.ErrorsMode.TEMPORARY,
      // Read at the moment of a failure: a forced stop makes it a cancellation (R-DAEMON-5).
      stopping: new ForcedStop(stopper),
      kwargs: (_handler, retry) => scope.kwargs(handler, stopper, patch, retry),
      body: () => scope.memory.body,
      instruments: scope.instruments,
    };
  }

  private currentPatch(): patches.PatchBase<object> {
    return (this.patch ??= new patches.Patch<object>(undefined, this.leftovers ?? []));
  }

  /** Whether the current retry cycle is over (succeeded, or failed for good). */
  get done(): boolean {
    return this.finished;
  }

  /** Seconds until the next attempt of an unfinished retry cycle (0 before its first attempt). */
  get delay(): number | null {
    if (this.state !== null) return this.state.delay(this.scope.clock.now());
    return this.finished ? null : 0;
  }

  /** Starts a new retry cycle: `retry` counts from 0 again (R-TIMER-4). */
  reset(): void {
    this.state = null;
    this.finished = false;
  }

  /** The kwargs for option callbacks (e.g. `initialDelay`), as of the first attempt. */
  kwargs(): object {
    const now = this.scope.clock.now();
    return this.scope.kwargs(this.task.handler, this.task.stopper, () => this.currentPatch(), { retry: 0, started: new Date(now), runtime: 0 });
  }

  /**
   * Invokes the handler once (if its retry is due), delivers its result, applies and resets its
   * patch. Synchronous when the handler is and there is nothing to patch: the common tick of a
   * timer completes without a promise.
   *
   * @returns the outcome; `null` if the retry is not due yet (nothing was invoked); `'cancelled'`
   *   if the invocation was cancelled (the task must end).
   */
  invoke(): Attempt | Promise<Attempt> {
    if (this.state !== null) return this.retry(this.state);
    // A retry cycle starts with its first attempt — not when the task began to wait for its initial
    // delay or for the object to idle —, so `started`, `runtime` and `timeout` count from there.
    const fresh = progression.HandlerState.fromScratch({ now: this.scope.clock.now() });
    let outcome: outcomes.Outcome | Promise<outcomes.Outcome>;
    try {
      outcome = execution.executeHandlerNow({ handler: this.invocable, state: fresh, scope: this.execution() });
    } catch {
      return 'cancelled'; // execution has logged `… is cancelled. Will escalate.`
    }
    if (!invocation.isPromiseLike(outcome)) return this.conclude(fresh, outcome);
    return outcome.then(
      (settled) => this.conclude(fresh, settled),
      () => 'cancelled' as const,
    );
  }

  /** After the first attempt of a cycle: the cycle is over, or its state is kept for the retries. */
  private conclude(fresh: progression.HandlerState, outcome: outcomes.Outcome): Attempt | Promise<Attempt> {
    if (outcome.final) this.finished = true;
    else {
      const results = new Map([[this.task.handler.id, outcome]]);
      this.state = progression.State.of([[this.task.handler.id, fresh]]).withOutcomes(results, this.scope.clock.now());
    }
    return this.deliver(outcome);
  }

  /** An attempt of an unfinished retry cycle (the general path of execution). */
  private async retry(state: progression.State): Promise<Attempt> {
    let results: Map<string, outcomes.Outcome>;
    try {
      results = await execution.executeHandlersOnce({ handlers: [this.invocable], state, scope: this.execution() });
    } catch {
      return 'cancelled'; // execution has logged `… is cancelled. Will escalate.`
    }
    const outcome = results.get(this.task.handler.id) ?? null;
    if (outcome === null) return null;
    const next = state.withOutcomes(results, this.scope.clock.now());
    this.state = next.done ? null : next;
    this.finished = next.done;
    return await this.deliver(outcome);
  }

  /** Delivers a result into the patch and applies it; synchronous when there is nothing to apply. */
  private deliver(outcome: outcomes.Outcome): Attempt | Promise<Attempt> {
    if (outcome.error === undefined && outcome.result !== undefined && outcome.result !== null) {
      outcomes.deliverResults(new Map([[this.task.handler.id, outcome]]), this.currentPatch());
    }
    // Functions left over after a conflict go out even if this invocation did not touch its patch.
    const patch = this.patch ?? (this.leftovers !== undefined && this.leftovers.length > 0 ? this.currentPatch() : undefined);
    this.patch = undefined;
    if (patch === undefined || patch.isEmpty()) return outcome;
    return this.apply(patch).then(() => outcome);
  }

  private async apply(patch: patches.PatchBase<object>): Promise<void> {
    const { scope } = this;
    // One turn of the event loop first: a processing cycle that has just spawned this task sends
    // its own patch (the finalizer) before the task's first patch goes out.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      const applied = await application.applyPatch({
        api: scope.api,
        resource: scope.resource,
        body: scope.memory.body,
        patch,
        logger: scope.logger,
        signal: scope.cancel,
      });
      this.leftovers = applied.leftoverFns.length > 0 ? applied.leftoverFns : undefined;
    } catch (error) {
      if (scope.cancel.aborted) return;
      scope.logger.error(`${spawning.titleOf(this.task.handler)} could not apply its patch: ${errors.errorMessage(error)}`);
    }
  }
}

/** Seconds of a handler's `initialDelay` (a number, or a callback given the handler's arguments). */
export function initialDelayOf(handler: handlers.SpawningHandler, kwargs: () => object): number {
  const option = handler.initialDelay;
  if (option === null) return 0;
  const value = typeof option === 'function' ? option(kwargs()) : option;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * The steps of a daemon or timer task: one pending wake-up at a time — a due time on the
 * operator's scheduler, or an idle reset of the object —, cut short by the stop flag, then the
 * step it was waiting for. Subclasses say what the steps are (small numbers, so that a waiting task
 * holds no closure per step); `exit()` ends the task once.
 */
export abstract class Steps {
  protected readonly invoker: Invoker;
  /** Cancels the pending due time on the scheduler. */
  private cancel: (() => void) | null = null;
  /** Whether the pending wake-up is an idle reset (not a due time). */
  private onReset = false;
  /** The step the pending wake-up leads to; 0: none. */
  private pending = 0;
  private ended = false;
  /** The one callback of this task for the scheduler, the stop flag and idle resets. */
  private readonly wake = (): void => {
    const step = this.pending;
    this.pending = 0;
    this.cancel?.();
    this.cancel = null;
    if (this.onReset) this.scope.memory.unwaitReset(this.wake);
    this.onReset = false;
    if (step !== 0) this.step(step);
  };

  constructor(
    protected readonly task: Task,
    protected readonly scope: BackgroundScope,
    private readonly exited: () => void,
  ) {
    this.invoker = new Invoker(task, scope);
  }

  /** Starts the task: the stop flag wakes whatever it waits for. */
  start(): void {
    this.task.stopper.whenSet(this.wake);
    this.begin();
  }

  protected abstract begin(): void;

  /** Runs the step a wake-up led to. */
  protected abstract step(step: number): void;

  /** What to do with what an attempt came to. */
  protected abstract afterAttempt(attempt: Attempt): void;

  /** Sleeps `seconds` (only the stop flag interrupts), then `step`; at once if the flag is set. */
  protected sleep(seconds: number, step: number): void {
    if (this.task.stopper.isSet()) {
      this.step(step);
      return;
    }
    this.pending = step;
    this.cancel = this.scope.wakeups.schedule(this.scope.clock.now() + Math.max(0, seconds) * 1000, this.wake);
  }

  /** Waits for the object's next idle reset (or the stop flag), then `step`. */
  protected untilReset(step: number): void {
    if (this.task.stopper.isSet()) {
      this.step(step);
      return;
    }
    this.pending = step;
    this.onReset = true;
    this.scope.memory.whenReset(this.wake);
  }

  /** Invokes once, then `afterAttempt()` — synchronously if the invocation was. */
  protected attempt(): void {
    const attempt = this.invoker.invoke();
    if (!invocation.isPromiseLike(attempt)) {
      this.afterAttempt(attempt);
      return;
    }
    attempt.then(
      (settled) => this.afterAttempt(settled),
      (error: unknown) => {
        // Not expected (execution turns errors into outcomes): end the task, loudly.
        this.scope.logger.error(`${spawning.titleOf(this.task.handler)} has failed unexpectedly: ${errors.errorMessage(error)}`);
        this.exit();
      },
    );
  }

  /** Ends the task (once), logging `message` at DEBUG if given. */
  protected exit(message?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.task.stopper.unwait(this.wake);
    if (message !== undefined) this.scope.logger.debug(`${spawning.titleOf(this.task.handler)} ${message}`);
    this.exited();
  }
}

/** How the end of a task is logged (R-DAEMON-4, R-TIMER-1). */
export const EXITED_ON_REQUEST = 'has exited on request and will not be retried or restarted.';
export const EXITED_ON_ITS_OWN = 'has exited on its own and will not be retried or restarted.';

/**
 * The task of one daemon (R-DAEMON-3/4): the initial delay, then invocations until the daemon
 * finishes, fails for good, is cancelled, or is asked to stop between retries.
 */
class DaemonSteps extends Steps {
  protected begin(): void {
    const delay = initialDelayOf(this.task.handler, () => this.invoker.kwargs());
    if (delay > 0) {
      this.sleep(delay, AGAIN);
      return;
    }
    this.again();
  }

  protected step(): void {
    this.again(); // the only step a daemon waits for
  }

  private again(): void {
    if (this.task.stopper.isSet() || this.invoker.done) {
      this.finish();
      return;
    }
    this.attempt();
  }

  protected afterAttempt(attempt: Attempt): void {
    if (attempt === 'cancelled') {
      this.exit();
      return;
    }
    if (this.invoker.done) {
      this.finish();
      return;
    }
    // A retry: after its delay (a zero delay still yields to the event loop).
    this.sleep(this.invoker.delay ?? 0, AGAIN);
  }

  private finish(): void {
    this.exit(this.task.stopper.isSet() ? EXITED_ON_REQUEST : EXITED_ON_ITS_OWN);
  }
}

/** The daemon's one step: invoke (again). */
const AGAIN = 1;

/** Starts the task of one daemon; `exited` is called once when it has exited. */
export function runDaemon(task: Task, scope: BackgroundScope, exited: () => void): void {
  new DaemonSteps(task, scope, exited).start();
}
