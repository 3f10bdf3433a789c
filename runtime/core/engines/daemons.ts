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

/**
 * The invocations of one daemon or timer: one in-memory progress state for retries, one patch that
 * is applied after every invocation and then reset (R-PATCH-8).
 */
export class Invoker {
  private state: progression.State;
  /** Whether the current retry cycle has had its first attempt (which stamps its `started`). */
  private attempted = false;
  private patch: patches.PatchBase<object> | undefined;
  private leftovers: ((body: object) => void)[] = [];
  private readonly invocable: execution.Invocable;
  private readonly execution: execution.ExecutionScope;

  constructor(
    private readonly task: Task,
    private readonly scope: BackgroundScope,
  ) {
    const { handler, stopper } = task;
    this.invocable = handler as unknown as execution.Invocable;
    this.state = this.fresh();
    this.execution = {
      settings: scope.settings,
      clock: scope.clock,
      signal: scope.cancel,
      logger: handler.kind === 'daemon' ? scope.titled.daemon : scope.titled.timer,
      lifecycle: lifecycles.allAtOnce,
      defaultErrors: errors.ErrorsMode.TEMPORARY,
      // Read at the moment of a failure: a forced stop makes it a cancellation (R-DAEMON-5).
      stopping: {
        get aborted() {
          return stopper.cancelled;
        },
        get reason() {
          return stopper.cancellationReason;
        },
      },
      kwargs: (_handler, retry) => scope.kwargs(handler, stopper, () => this.currentPatch(), retry),
      body: () => scope.memory.body,
      instruments: scope.instruments,
    };
  }

  private fresh(): progression.State {
    return progression.State.fromScratch().withHandlers([this.task.handler.id], this.scope.clock.now());
  }

  private currentPatch(): patches.PatchBase<object> {
    return (this.patch ??= new patches.Patch<object>(undefined, this.leftovers));
  }

  /** Whether the current retry cycle is over (succeeded, or failed for good). */
  get done(): boolean {
    return this.state.done;
  }

  /** Seconds until the next attempt of an unfinished retry cycle. */
  get delay(): number | null {
    return this.state.delay(this.scope.clock.now());
  }

  /** Starts a new retry cycle: `retry` counts from 0 again (R-TIMER-4). */
  reset(): void {
    this.state = this.fresh();
    this.attempted = false;
  }

  /** The kwargs for option callbacks (e.g. `initialDelay`), as of the first attempt. */
  kwargs(): object {
    const now = this.scope.clock.now();
    return this.scope.kwargs(this.task.handler, this.task.stopper, () => this.currentPatch(), { retry: 0, started: new Date(now), runtime: 0 });
  }

  /**
   * Invokes the handler once (if its retry is due), delivers its result, applies and resets its patch.
   *
   * @returns the outcome; `null` if the retry is not due yet (nothing was invoked); `'cancelled'`
   *   if the invocation was cancelled (the task must end).
   */
  async invoke(): Promise<outcomes.Outcome | null | 'cancelled'> {
    // A retry cycle starts with its first attempt — not when the task began to wait for its initial
    // delay or for the object to idle —, so `started`, `runtime` and `timeout` count from there.
    if (!this.attempted) {
      this.state = this.fresh();
      this.attempted = true;
    }
    let results: Map<string, outcomes.Outcome>;
    try {
      results = await execution.executeHandlersOnce({ handlers: [this.invocable], state: this.state, scope: this.execution });
    } catch {
      return 'cancelled'; // execution has logged `… is cancelled. Will escalate.`
    }
    const outcome = results.get(this.task.handler.id) ?? null;
    if (outcome === null) return null;
    this.state = this.state.withOutcomes(results, this.scope.clock.now());
    if (outcome.error === undefined && outcome.result !== undefined && outcome.result !== null) {
      outcomes.deliverResults(results, this.currentPatch());
    }
    await this.apply();
    return outcome;
  }

  private async apply(): Promise<void> {
    // Functions left over after a conflict go out even if this invocation did not touch its patch.
    const patch = this.patch ?? (this.leftovers.length > 0 ? this.currentPatch() : undefined);
    this.patch = undefined;
    if (patch === undefined || patch.isEmpty()) return;
    const { scope } = this;
    try {
      const applied = await application.applyPatch({
        api: scope.api,
        resource: scope.resource,
        body: scope.memory.body,
        patch,
        logger: scope.logger,
        signal: scope.cancel,
      });
      this.leftovers = applied.leftoverFns;
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
 * The task of one daemon (R-DAEMON-3/4): the initial delay, then invocations until the daemon
 * finishes, fails for good, is cancelled, or is asked to stop between retries.
 */
export async function runDaemon(task: Task, scope: BackgroundScope): Promise<void> {
  const { handler, stopper } = task;
  const invoker = new Invoker(task, scope);
  const delay = initialDelayOf(handler, () => invoker.kwargs());
  if (delay > 0) await stopper.wait(delay);
  while (!stopper.isSet() && !invoker.done) {
    if ((await invoker.invoke()) === 'cancelled') return;
    const next = invoker.delay;
    if (!invoker.done && next !== null && next > 0) await stopper.wait(next);
  }
  const title = spawning.titleOf(handler);
  if (stopper.isSet()) scope.logger.debug(`${title} has exited on request and will not be retried or restarted.`);
  else scope.logger.debug(`${title} has exited on its own and will not be retried or restarted.`);
}
