/**
 * What runs inside a timer's task: when it is invoked again — after an initial delay, on an
 * interval (regular or sharp), after the object has been idle, or after a retry delay — and what a
 * failure does to that schedule (R-TIMER-2..4).
 *
 * A timer is a daemon that the framework wakes up: after its initial delay (once per object per
 * process) it loops until stopped — wait for the object to be idle long enough (if `idle`), invoke,
 * apply the patch, then sleep: the retry delay after a failure that will be retried (it overrides
 * the schedule), else what is left of the `interval` grid (`sharp`), else the full `interval`,
 * else (idle-only) until the object changes again; a timer with neither is a one-shot. Only stop
 * requests interrupt the sleeps, so a timer never overlaps itself.
 *
 * The loop is a few steps of a small object (`daemons.Steps`), not a suspended async function:
 * between ticks a timer is one entry on the operator's scheduler (R-PERF-302), and a tick whose
 * handler returns synchronously runs to its next sleep without a promise (R-PERF-301).
 *
 * Retry counters cover one retry cycle and start from zero after a success. After a final failure
 * (a permanent error, `errors: PERMANENT`, exhausted `retries`/`timeout`) the timer stops for this
 * object until the operator restarts — Kopf's documented behaviour (its implementation starts a new
 * retry cycle one interval later instead); the user's guide says so.
 */

import * as daemons from './daemons.js';

/** The steps a timer waits for: the next round, the rest of an idle wait, an idle reset. */
const NEXT = 1;
const IDLING = 2;
const RESET = 3;

class TimerSteps extends daemons.Steps {
  /** When the current invocation started (clock ms): the sharp grid and the idle wait count from it. */
  private started = 0;

  protected begin(): void {
    const { handler } = this.task;
    if (handler.kind !== 'timer') throw new TypeError(`Not a timer: ${handler.id}`);
    if (this.scope.memory.firstDelay(handler.id)) {
      const delay = daemons.initialDelayOf(handler, () => this.invoker.kwargs());
      if (delay > 0) {
        this.sleep(delay, NEXT);
        return;
      }
    }
    this.next();
  }

  protected step(step: number): void {
    if (step === IDLING) this.whenIdle();
    else if (step === RESET) this.afterReset();
    else this.next();
  }

  private next(): void {
    if (this.task.stopper.isSet()) {
      this.exit(daemons.EXITED_ON_REQUEST);
      return;
    }
    if (this.invoker.done) this.invoker.reset();
    // The idle clock is a moving target: every essential change prolongs the wait.
    if (this.idle !== null) {
      this.whenIdle();
      return;
    }
    this.invoke();
  }

  private get idle(): number | null {
    return this.task.handler.kind === 'timer' ? this.task.handler.idle : null;
  }

  private whenIdle(): void {
    if (this.task.stopper.isSet()) {
      this.exit(daemons.EXITED_ON_REQUEST);
      return;
    }
    const left = this.scope.memory.idleResetTime + (this.idle ?? 0) * 1000 - this.scope.clock.now();
    if (left > 0) {
      this.sleep(left / 1000, IDLING);
      return;
    }
    this.invoke();
  }

  private invoke(): void {
    this.started = this.scope.clock.now();
    this.attempt();
  }

  protected afterAttempt(attempt: daemons.Attempt): void {
    const { handler } = this.task;
    if (handler.kind !== 'timer') return;
    if (attempt === 'cancelled') {
      this.exit();
      return;
    }
    // A retry not due yet, or an unfinished retry cycle: sleep what is left of its delay.
    if (attempt === null || !this.invoker.done) {
      this.sleep(this.invoker.delay ?? 0, NEXT);
      return;
    }
    if (attempt.error !== undefined) {
      this.exit('has failed for good and will not be invoked again for this object until the operator restarts.');
      return;
    }
    if (handler.interval !== null && handler.sharp) {
      const elapsed = (this.scope.clock.now() - this.started) / 1000;
      this.sleep(handler.interval - (elapsed % handler.interval), NEXT);
    } else if (handler.interval !== null) {
      this.sleep(handler.interval, NEXT);
    } else if (handler.idle !== null) {
      this.afterReset();
    } else {
      this.exit(daemons.EXITED_ON_ITS_OWN);
    }
  }

  /** Idle-only timers: after an invocation, the next one waits for the object to change again. */
  private afterReset(): void {
    if (this.task.stopper.isSet() || this.scope.memory.idleResetTime > this.started) {
      this.next();
      return;
    }
    this.untilReset(RESET);
  }
}

/** Starts the task of one timer; `exited` is called once when it has exited. */
export function runTimer(task: daemons.Task, scope: daemons.BackgroundScope, exited: () => void): void {
  new TimerSteps(task, scope, exited).start();
}
