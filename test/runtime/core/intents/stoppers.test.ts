import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import { makeResource } from '../../../../runtime/cogs/structs/references.js';
import { Patch } from '../../../../runtime/cogs/structs/patches.js';
import { getLogger } from '../../../../runtime/core/actions/logging.js';
import { DaemonsMemory } from '../../../../runtime/core/engines/spawning.js';
import type { SpawningHandler } from '../../../../runtime/core/intents/handlers.js';
import { DaemonStopper, DaemonStoppingReason, reasonNames, type DaemonStopped } from '../../../../runtime/core/intents/stoppers.js';
import { spawningKwargs } from '../../../../runtime/core/reactor/arguments.js';

describe('DaemonStopper', () => {
  it('R-DAEMON-5 the bit flags of DaemonStoppingReason', () => {
    expect(DaemonStoppingReason).toEqual({
      DONE: 1,
      FILTERS_MISMATCH: 2,
      RESOURCE_DELETED: 4,
      OPERATOR_PAUSING: 8,
      OPERATOR_EXITING: 16,
      DAEMON_SIGNALLED: 32,
      DAEMON_CANCELLED: 64,
      DAEMON_ABANDONED: 128,
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
    void waiting.then(() => {
      settled = true;
    });
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

describe('the stop flag a daemon receives (stopped)', () => {
  const stoppedOf = (stopper: DaemonStopper): DaemonStopped => {
    const body = { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name: 'x', namespace: 'ns', uid: 'u' } };
    const resource = makeResource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample' });
    const memory = new DaemonsMemory(body, 0);
    const kwargs = spawningKwargs(
      { resource, memory, logger: getLogger('test'), memo: {} },
      { param: null } as unknown as SpawningHandler,
      stopper,
      () => new Patch<object>(),
      { retry: 0, started: new Date(0), runtime: 0 },
    );
    return (kwargs as { stopped: DaemonStopped }).stopped;
  };

  it('R-DAEMON-5 is a read-only view: isSet(), reason, wait() and signal follow the stopper, also detached', async () => {
    const stopper = new DaemonStopper(new VirtualClock());
    const stopped = stoppedOf(stopper);
    const { isSet, wait } = stopped;
    expect(isSet()).toBe(false);
    expect(stopped.reason).toBeNull();
    const waiting = wait();
    stopper.set(DaemonStoppingReason.RESOURCE_DELETED);
    await expect(waiting).resolves.toBe(true);
    expect(isSet()).toBe(true);
    expect(stopped.reason).toBe(DaemonStoppingReason.RESOURCE_DELETED);
    expect(stopped.signal.aborted).toBe(false);
    stopper.abort();
    expect(stopped.signal.aborted).toBe(true);
    expect(() => {
      (stopped as { isSet: unknown }).isSet = () => false;
    }).toThrow(TypeError);
    expect(() => {
      (stopped as { reason: unknown }).reason = 0;
    }).toThrow(TypeError);
    expect(Object.isFrozen(stopped)).toBe(true);
  });
});
