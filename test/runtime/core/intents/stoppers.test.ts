import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import { DaemonStopper, DaemonStoppingReason, reasonNames } from '../../../../runtime/core/intents/stoppers.js';

describe('DaemonStopper', () => {
  it('R-DAEMON-5 the bit flags of DaemonStoppingReason', () => {
    expect(DaemonStoppingReason).toEqual({
      DONE: 1, FILTERS_MISMATCH: 2, RESOURCE_DELETED: 4, OPERATOR_PAUSING: 8, OPERATOR_EXITING: 16,
      DAEMON_SIGNALLED: 32, DAEMON_CANCELLED: 64, DAEMON_ABANDONED: 128,
    });
    expect(reasonNames(DaemonStoppingReason.RESOURCE_DELETED | DaemonStoppingReason.OPERATOR_EXITING)).toEqual(['RESOURCE_DELETED', 'OPERATOR_EXITING']);
    expect(reasonNames(null)).toEqual([]);
  });

  it('R-DAEMON-5 accumulates reasons and wakes waiters', async () => {
    const stopper = new DaemonStopper(new VirtualClock());
    expect(stopper.isSet()).toBe(false);
    expect(stopper.reason).toBeNull();
    const waiting = stopper.wait();
    stopper.set(DaemonStoppingReason.FILTERS_MISMATCH);
    stopper.set(DaemonStoppingReason.RESOURCE_DELETED);
    await expect(waiting).resolves.toBe(true);
    expect(stopper.reason).toBe(6);
    expect(stopper.signal.aborted).toBe(false);
  });

  it('R-DAEMON-5 wait(timeout) resolves false after the timeout on the injected clock', async () => {
    const clock = new VirtualClock();
    const stopper = new DaemonStopper(clock);
    const waiting = stopper.wait(2);
    await clock.advance(1999);
    let settled = false;
    void waiting.then(() => { settled = true; });
    await Promise.resolve();
    expect(settled).toBe(false);
    await clock.advance(1);
    await expect(waiting).resolves.toBe(false);
  });

  it('R-DAEMON-6 the forced stage aborts the signal and sets the flag', () => {
    const stopper = new DaemonStopper(new VirtualClock());
    stopper.abort();
    expect(stopper.signal.aborted).toBe(true);
    expect(stopper.reason).toBe(DaemonStoppingReason.DAEMON_CANCELLED);
  });
});
