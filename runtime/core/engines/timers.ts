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
 * Retry counters cover one retry cycle and start from zero after a success. After a final failure
 * (a permanent error, `errors: PERMANENT`, exhausted `retries`/`timeout`) the timer stops for this
 * object until the operator restarts — Kopf's documented behaviour (its implementation starts a new
 * retry cycle one interval later instead); the user's guide says so.
 */

import * as daemons from './daemons.js';
import * as spawning from './spawning.js';

/** The task of one timer. */
export async function runTimer(task: daemons.Task, scope: daemons.BackgroundScope): Promise<void> {
  const { handler, stopper } = task;
  if (handler.kind !== 'timer') throw new TypeError(`Not a timer: ${handler.id}`);
  const { clock, memory, logger } = scope;
  const title = spawning.titleOf(handler);
  const invoker = new daemons.Invoker(task, scope);

  if (memory.firstDelay(handler.id)) {
    const delay = daemons.initialDelayOf(handler, () => invoker.kwargs());
    if (delay > 0) await stopper.wait(delay);
  }

  while (!stopper.isSet()) {
    if (invoker.done) invoker.reset();

    // The idle clock is a moving target: every essential change prolongs the wait.
    if (handler.idle !== null) {
      for (;;) {
        const left = memory.idleResetTime + handler.idle * 1000 - clock.now();
        if (stopper.isSet() || left <= 0) break;
        await stopper.wait(left / 1000);
      }
      if (stopper.isSet()) break;
    }

    const started = clock.now();
    const outcome = await invoker.invoke();
    if (outcome === 'cancelled') return;
    if (outcome === null) {
      // a retry not due yet: sleep what is left of its delay
      await stopper.wait(invoker.delay ?? 0);
      continue;
    }

    if (!invoker.done) {
      await stopper.wait(invoker.delay ?? 0);
      continue;
    }
    if (outcome.error !== undefined) {
      logger.debug(`${title} has failed for good and will not be invoked again for this object until the operator restarts.`);
      return;
    }
    if (handler.interval !== null && handler.sharp) {
      const elapsed = (clock.now() - started) / 1000;
      await stopper.wait(handler.interval - (elapsed % handler.interval));
    } else if (handler.interval !== null) {
      await stopper.wait(handler.interval);
    } else if (handler.idle !== null) {
      while (!stopper.isSet() && memory.idleResetTime <= started) await memory.nextReset(stopper);
    } else {
      logger.debug(`${title} has exited on its own and will not be retried or restarted.`);
      return;
    }
  }
  logger.debug(`${title} has exited on request and will not be retried or restarted.`);
}
