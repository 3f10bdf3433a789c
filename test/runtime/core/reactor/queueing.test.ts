import { describe, expect, it } from 'vitest';
import * as aborts from '../../../../runtime/cogs/aio/aborts.js';
import { realClock, VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import { silentLogger, type Logger } from '../../../../runtime/cogs/structs/loggers.js';
import type { RawEvent } from '../../../../runtime/cogs/structs/bodies.js';
import { Queue, type StreamContext } from '../../../../runtime/core/reactor/queueing.js';
import { eventually, flushed } from '../../../support/waiting.js';

const ev = (uid: string, rv: string, type: RawEvent['type'] = 'MODIFIED'): RawEvent => ({
  type,
  object: { metadata: { uid, name: uid, resourceVersion: rv } },
});
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('per-object queueing', () => {
  it('R-QUEUE-2 processes one object strictly in order and different objects concurrently', async () => {
    const log: string[] = [];
    const gates = new Map<string, () => void>();
    const queue = new Queue(
      async (event) => {
        const id = `${event.object.metadata!.uid}@${event.object.metadata!.resourceVersion}`;
        log.push(`start ${id}`);
        await new Promise<void>((r) => gates.set(id, r));
        log.push(`end ${id}`);
      },
      {
        clock: realClock,
        logger: silentLogger,
        idleTimeout: 5,
        exitTimeout: 1,
        onFatal: (e) => {
          throw e;
        },
      },
    );
    queue.push(ev('a', '1'));
    queue.push(ev('a', '2'));
    queue.push(ev('b', '1'));
    await tick();
    expect(log).toEqual(['start a@1', 'start b@1']);
    gates.get('b@1')!();
    gates.get('a@1')!();
    await tick();
    await tick();
    expect(log).toEqual(['start a@1', 'start b@1', 'end b@1', 'end a@1', 'start a@2']);
    gates.get('a@2')!();
    await queue.stop();
  });

  it('R-QUEUE-1 routes objects without a uid by kind, apiVersion, name, namespace and creation time', async () => {
    const seen: string[] = [];
    const queue = new Queue(
      async (_e, s: StreamContext) => {
        seen.push(s.key);
      },
      {
        clock: realClock,
        logger: silentLogger,
        idleTimeout: 5,
        exitTimeout: 1,
        onFatal: (e) => {
          throw e;
        },
      },
    );
    queue.push({ type: null, object: { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', namespace: 'ns' } } });
    await tick();
    expect(seen).toEqual(['Pod//v1//p//ns//-']);
    await queue.stop();
  });

  it('R-QUEUE-2 backpressure: while the client is saturated, new workers wait and running ones go on; every event is processed in order', async () => {
    const log: string[] = [];
    let saturated = true;
    let drained!: () => void;
    const drain = new Promise<void>((resolve) => {
      drained = resolve;
    });
    const queue = new Queue(
      async (event) => {
        log.push(`${event.object.metadata!.uid}@${event.object.metadata!.resourceVersion}`);
      },
      {
        clock: realClock,
        logger: silentLogger,
        idleTimeout: 5,
        exitTimeout: 1,
        onFatal: (e) => {
          throw e;
        },
        unsaturated: () => (saturated ? drain : undefined),
      },
    );
    saturated = false;
    queue.push(ev('a', '1'));
    await tick();
    saturated = true;
    queue.push(ev('a', '2')); // a's worker is idle, not new: it goes on
    queue.push(ev('b', '1')); // a new worker: held back
    queue.push(ev('b', '2'));
    await tick();
    await tick();
    expect(log).toEqual(['a@1', 'a@2']);
    expect(queue.queuedEvents).toBe(2);
    saturated = false;
    drained();
    await tick();
    await tick();
    expect(log).toEqual(['a@1', 'a@2', 'b@1', 'b@2']);
    await queue.stop();
  });

  it('R-QUEUE-7 workers held back by backpressure end when the queue stops, their events unprocessed', async () => {
    const log: string[] = [];
    const queue = new Queue(
      async (event) => {
        log.push(event.object.metadata!.uid!);
      },
      {
        clock: realClock,
        logger: silentLogger,
        idleTimeout: 5,
        exitTimeout: 0.01,
        onFatal: (e) => {
          throw e;
        },
        unsaturated: (signal) => new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      },
    );
    queue.push(ev('a', '1'));
    await tick();
    await queue.stop();
    expect(log).toEqual([]);
    expect(queue.size).toBe(0);
  });

  it('R-QUEUE-3 raises the pressure when a newer event waits and clears it when the last one is taken', async () => {
    const pressures: boolean[] = [];
    let release!: () => void;
    const queue = new Queue(
      async (event, stream) => {
        if (event.object.metadata!.resourceVersion === '1') {
          await new Promise<void>((r) => {
            release = r;
          });
          pressures.push(stream.pressure.raised);
        } else {
          pressures.push(stream.pressure.raised);
        }
      },
      {
        clock: realClock,
        logger: silentLogger,
        idleTimeout: 5,
        exitTimeout: 1,
        onFatal: (e) => {
          throw e;
        },
      },
    );
    queue.push(ev('a', '1'));
    await tick();
    queue.push(ev('a', '2'));
    release();
    await tick();
    await tick();
    expect(pressures).toEqual([true, false]);
    await queue.stop();
  });

  it('R-QUEUE-2 an idle worker exits after idleTimeout and a new one starts on demand', async () => {
    const clock = new VirtualClock();
    let processed = 0;
    const queue = new Queue(
      async () => {
        processed++;
      },
      {
        clock,
        logger: silentLogger,
        idleTimeout: 5,
        exitTimeout: 1,
        onFatal: (e) => {
          throw e;
        },
      },
    );
    queue.push(ev('a', '1'));
    await tick();
    expect(queue.size).toBe(1);
    await clock.advance(5000);
    await tick();
    expect(queue.size).toBe(0);
    queue.push(ev('a', '2'));
    await tick();
    expect(processed).toBe(2);
    await queue.stop();
  });

  it('R-QUEUE-2 the worker limit caps concurrent objects', async () => {
    let concurrent = 0;
    let peak = 0;
    let handled = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = new Queue(
      async () => {
        concurrent++;
        peak = Math.max(peak, concurrent);
        await gate;
        concurrent--;
        handled++;
      },
      {
        clock: realClock,
        logger: silentLogger,
        idleTimeout: 0.01,
        exitTimeout: 1,
        workerLimit: 2,
        onFatal: (e) => {
          throw e;
        },
      },
    );
    for (const uid of ['a', 'b', 'c', 'd', 'e']) queue.push(ev(uid, '1'));
    // Two objects are held in their handlers; a third worker would start in memory, within this turn.
    await eventually(() => concurrent === 2, 'two busy workers');
    await flushed();
    expect(peak).toBe(2);
    release();
    await eventually(() => handled === 5, 'all five objects handled');
    expect(peak).toBe(2);
    await queue.stop();
  });

  it('R-QUEUE-7 stopping waits exitTimeout for busy workers, then cancels them with a warning', async () => {
    const clock = new VirtualClock();
    const warnings: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      warning: (m: string) => {
        warnings.push(m);
      },
    };
    let cancelled = false;
    const queue = new Queue(
      async (_e, stream) => {
        await new Promise<void>((_r, reject) =>
          stream.signal.addEventListener('abort', () => {
            cancelled = true;
            reject(stream.signal.reason);
          }),
        );
      },
      {
        clock,
        logger,
        idleTimeout: 5,
        exitTimeout: 2,
        onFatal: (e) => {
          throw e;
        },
      },
    );
    queue.push(ev('stuck', '1'));
    await tick();
    const stopped = queue.stop();
    await tick();
    await clock.advance(2000);
    await stopped;
    expect(cancelled).toBe(true);
    expect(warnings).toEqual(["Unprocessed streams left for ['stuck']."]);
  });

  it('R-QUEUE-9 a processor failure is reported as fatal for the watcher', async () => {
    const fatal: unknown[] = [];
    const queue = new Queue(
      async () => {
        throw new Error('boom');
      },
      {
        clock: realClock,
        logger: silentLogger,
        idleTimeout: 5,
        exitTimeout: 1,
        onFatal: (e) => {
          fatal.push(e);
        },
      },
    );
    queue.push(ev('a', '1'));
    await tick();
    await tick();
    expect(fatal.map((e) => (e as Error).message)).toEqual(['boom']);
    await queue.stop();
  });
});

describe('stopping a drained queue', () => {
  it('R-QUEUE-7: a queue whose workers have drained leaves no exit-timeout sleep pending (nothing keeps the process alive)', async () => {
    const clock = new VirtualClock();
    const queue = new Queue(async () => undefined, {
      clock,
      logger: silentLogger,
      idleTimeout: 5,
      exitTimeout: 2,
      onFatal: (e) => {
        throw e;
      },
    });
    queue.push(ev('a', '1'));
    await flushed();
    await queue.stop();
    expect(clock.pending).toBe(0);
  });
});

describe('releasing one object (a sharded replica handing it over)', () => {
  const options = (clock: VirtualClock) => ({
    clock,
    logger: silentLogger,
    idleTimeout: 60,
    exitTimeout: 1,
    onFatal: (e: unknown) => {
      throw e;
    },
  });

  it('R-SHARD-203: Queue.release lets the current event finish, drops the backlog, and resolves once no worker runs for the key', async () => {
    const clock = new VirtualClock();
    const t0 = clock.now();
    const log: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const queue = new Queue(async (event) => {
      const id = `${event.object.metadata!.uid}@${event.object.metadata!.resourceVersion}`;
      log.push(`start ${id}`);
      if (id === 'a@1') await gate;
      log.push(`end ${id}`);
    }, options(clock));
    queue.push(ev('a', '1'));
    queue.push(ev('a', '2'));
    queue.push(ev('a', '3'));
    queue.push(ev('b', '1'));
    await flushed();
    expect(queue.queuedEvents).toBe(2);
    let released = false;
    const release = queue.release('a').then(() => (released = true));
    expect(queue.queuedEvents).toBe(0); // the backlog is dropped at once
    await flushed();
    expect(released).toBe(false); // a@1 is still being processed
    open();
    await release;
    expect(log).toEqual(['start a@1', 'start b@1', 'end b@1', 'end a@1']);
    // The released object's worker is gone (not idling), the other object's idles on.
    expect(queue.workerCount).toBe(1);
    expect(queue.size).toBe(1);
    // The queue takes the object again afterwards: a new worker.
    queue.push(ev('a', '4'));
    await eventually(() => log.includes('end a@4'), 'the new event to be processed');
    expect(clock.now()).toBe(t0); // no time passed: nothing waited on the clock
    await queue.stop();
  });

  it('R-SHARD-203: Queue.release raises the pressure, which wakes a cycle sleeping on it', async () => {
    const clock = new VirtualClock();
    const slept: boolean[] = [];
    const queue = new Queue(async (_event, stream) => {
      slept.push(await aborts.sleepOrAbort(clock, 3_600_000, stream.pressure.signal));
    }, options(clock));
    queue.push(ev('a', '1'));
    await eventually(() => clock.pending > 0, 'the cycle to sleep');
    const released = queue.release('a');
    await eventually(() => slept.length > 0, 'the sleeping cycle to wake');
    await released;
    expect(slept).toEqual([false]); // cut short, not slept out: the clock never moved
    expect(queue.workerCount).toBe(0);
    await queue.stop();
  });

  it('R-SHARD-203: Queue.release of an unknown key, or of an idle worker’s, resolves at once', async () => {
    const clock = new VirtualClock();
    const queue = new Queue(async () => undefined, options(clock));
    await queue.release('nobody');
    queue.push(ev('a', '1'));
    await eventually(() => queue.busyWorkers === 0 && queue.workerCount === 1, 'the worker to idle');
    await queue.release('a'); // not after idleTimeout: the virtual clock does not move
    expect([queue.workerCount, queue.size]).toEqual([0, 0]);
    expect(clock.pending).toBe(0); // the idle expiry is cancelled
    await queue.stop();
  });
});
