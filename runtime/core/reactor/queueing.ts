/**
 * Per-object queueing: what lets an operator handle many objects at once while never handling one
 * object twice at the same time, nor its events out of order (R-QUEUE-1..3, R-QUEUE-7).
 *
 * A watcher pushes every raw event here; events are routed by object identity (uid, or a
 * synthetic key) to one worker per object, which processes that object's events strictly in
 * arrival order while different objects run concurrently (optionally capped by `workerLimit`).
 * There is no time batching: every event is processed. Each object has a *pressure* signal that is
 * raised whenever a newer event waits behind the one being processed, so the processing cycle's
 * interruptible sleeps (delays, consistency waits, throttling) end early (R-QUEUE-3). Idle workers
 * exit after `idleTimeout` and are recreated on demand. On stop, workers get up to `exitTimeout` to
 * drain, then are cancelled (WARNING `Unprocessed streams left for [...]`).
 *
 * Backpressure: while the API client is saturated (far more requests waiting than it sends at
 * once), a *new* worker waits before it starts; its object's events wait in the queue as they came.
 * A burst of thousands of new objects thus holds thousands of queued bodies, not thousands of
 * processing cycles stalled on the API with all their state. Objects being processed go on.
 */
import { setMaxListeners } from 'node:events';

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import * as bodies from '../../cogs/structs/bodies.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as references from '../../cogs/structs/references.js';
import { PressureRaisedError } from './errors.js';

/**
 * The "a newer event is waiting" signal of one object. Its `AbortController` is made only when
 * someone asks for the signal (a cycle that sleeps or is throttled): thousands of objects whose
 * events wait in the queue, or whose workers idle, hold none.
 */
export class Pressure {
  private controller: AbortController | undefined;
  private up = false;

  /** Aborted while newer events are queued behind the current one. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.up) this.controller.abort(PRESSURE_RAISED);
    }
    return this.controller.signal;
  }

  get raised(): boolean {
    return this.up;
  }

  raise(): void {
    if (this.up) return;
    this.up = true;
    this.controller?.abort(PRESSURE_RAISED);
  }

  clear(): void {
    if (!this.up) return;
    this.up = false;
    this.controller = undefined;
  }

  /** Drops the signal of a pressure not raised: nobody waits on an idle object's pressure. */
  relax(): void {
    if (!this.up) this.controller = undefined;
  }
}

/** The one reason of every raised pressure: events can arrive in bursts, and an error per raise costs a stack trace. */
const PRESSURE_RAISED = new PressureRaisedError();

/** What a processor gets besides the event. */
export interface StreamContext {
  readonly key: string;
  readonly pressure: Pressure;
  /**
   * Aborted when the queue is stopping hard or its outer `signal` (the operator's) aborts: the
   * cancellation of everything done for the object. One per worker, shared by its events.
   */
  readonly signal: AbortSignal;
}

export type Processor = (event: bodies.RawEvent, stream: StreamContext) => Promise<void>;

export interface QueueOptions {
  clock: clocks.Clock;
  logger: loggers.Logger;
  /** Seconds an idle worker lives (settings.queueing.idleTimeout). */
  idleTimeout: number;
  /** Seconds to drain on stop (settings.queueing.exitTimeout). */
  exitTimeout: number;
  /** Max concurrent workers (settings.queueing.workerLimit); null/undefined = unlimited. */
  workerLimit?: number | null;
  /**
   * Backpressure: before a new worker starts, it waits while this returns a promise (the API
   * client is saturated, see `api.Saturable`). Objects already being processed are not held.
   */
  unsaturated?: (signal: AbortSignal) => Promise<void> | undefined;
  /** An outer cancellation (the operator's signal), folded into every stream's `signal`. */
  signal?: AbortSignal;
  /** Called when a processor throws: the error is fatal for the watcher (R-QUEUE-9). */
  onFatal: (error: unknown, key: string) => void;
}

/**
 * Where the worker of a stream is: none; `held` back while the API client is saturated
 * (backpressure); `starting` (waiting for a slot under `workerLimit`, or for its first turn);
 * `busy` processing; `idle` with no event left, until `idleTimeout` after its last one.
 */
type State = 'none' | 'held' | 'starting' | 'busy' | 'idle';

/**
 * One object's queue and the state of its worker: a plain record. A worker is not a suspended
 * async function for its whole life: it is an async loop only while it processes events; held
 * back it is a callback on the client's promise, idle a callback on the clock.
 */
interface Stream {
  readonly key: string;
  readonly events: bodies.RawEvent[];
  readonly pressure: Pressure;
  state: State;
  /** Cancels the idle expiry while idle. */
  expire: (() => void) | undefined;
  /** Who waits for this worker to end (`release()`); set only while the object is being released. */
  released: (() => void)[] | undefined;
}

export class Queue {
  private readonly streams = new Map<string, Stream>();
  private readonly stopping = new AbortController();
  private closed = false;
  private active = 0;
  /** Workers in the middle of processing an event (not idling, not held back). */
  private busy = 0;
  /** Live workers: held back, starting, processing or idling. */
  private live = 0;
  private readonly slotWaiters: (() => void)[] = [];
  /** Who waits for the last worker to end (`stop()`). */
  private drainWaiters: (() => void)[] = [];

  constructor(
    private readonly processor: Processor,
    private readonly options: QueueOptions,
  ) {
    // Every running handler may listen to it: no "leak" warning for many objects.
    setMaxListeners(0, this.stopping.signal);
  }

  /** Routes one event to its object's worker (R-QUEUE-1/2). */
  push(event: bodies.RawEvent): void {
    if (this.closed) return;
    const key = bodies.objectKey(event.object);
    const stream = this.streams.get(key);
    if (stream === undefined) {
      const created: Stream = { key, events: [event], pressure: new Pressure(), state: 'none', expire: undefined, released: undefined };
      this.streams.set(key, created);
      this.spawn(created);
      return;
    }
    stream.events.push(event);
    if (stream.state === 'idle') this.resume(stream);
    else if (stream.state !== 'none') stream.pressure.raise();
    else this.spawn(stream);
  }

  /**
   * Lets go of one object (a sharded replica handing it over, R-SHARD-203): the events waiting for
   * it are dropped, the pressure is raised so that the current cycle's sleeps end early, and the
   * worker ends after its current event instead of idling. Resolves when no worker runs for `key`.
   * The caller keeps new events of the object away meanwhile (they would start a new worker).
   */
  release(key: string): Promise<void> {
    const stream = this.streams.get(key);
    if (stream === undefined || stream.state === 'none') return Promise.resolve();
    stream.events.length = 0;
    stream.pressure.raise();
    const ended = new Promise<void>((resolve) => (stream.released ??= []).push(resolve));
    if (stream.state === 'idle') {
      stream.expire?.();
      stream.expire = undefined;
      this.end(stream);
    }
    return ended;
  }

  /** Number of objects with a live worker or queued events. */
  get size(): number {
    return this.streams.size;
  }

  /** Number of live per-object workers: processing, idling, or waiting to start. */
  get workerCount(): number {
    return this.live;
  }

  /** Number of workers processing an event right now. */
  get busyWorkers(): number {
    return this.busy;
  }

  /** The cap on concurrent workers (`workerLimit`); `null` when unlimited. */
  get workerLimit(): number | null {
    return this.options.workerLimit || null;
  }

  /** Number of events waiting to be processed, over all objects. */
  get queuedEvents(): number {
    let count = 0;
    for (const stream of this.streams.values()) count += stream.events.length;
    return count;
  }

  /** A new worker: held back while the client is saturated, then started (R-QUEUE-2). */
  private spawn(stream: Stream): void {
    this.live += 1;
    const held = this.options.unsaturated?.(this.stopping.signal);
    if (held === undefined) {
      stream.state = 'starting';
      void this.start(stream);
      return;
    }
    stream.state = 'held';
    held.then(
      () => this.start(stream),
      () => {
        // Stopped while held back: the events stay unprocessed, as for any cancelled worker.
        stream.state = 'none';
        if (this.streams.get(stream.key) === stream) this.streams.delete(stream.key);
        this.ended();
        for (const resolve of stream.released ?? []) resolve();
        stream.released = undefined;
      },
    );
  }

  private async start(stream: Stream): Promise<void> {
    stream.state = 'starting';
    await this.acquire();
    await this.run(stream, true);
  }

  /** An idle worker gets a new event: it goes on, on its next turn, with the slot it holds. */
  private resume(stream: Stream): void {
    stream.expire?.();
    stream.expire = undefined;
    stream.state = 'starting';
    void Promise.resolve().then(() => this.run(stream, false));
  }

  private async acquire(): Promise<void> {
    const limit = this.options.workerLimit;
    if (!limit) return;
    while (this.active >= limit) await new Promise<void>((r) => this.slotWaiters.push(r));
    this.active++;
  }

  private releaseSlot(): void {
    if (!this.options.workerLimit) return;
    this.active--;
    this.slotWaiters.shift()?.();
  }

  /**
   * One busy period of a worker: its events in order, until none is left (then it idles) or the
   * queue stops it. One cancellation per busy period (not per event), released when it goes idle:
   * an idle object holds nothing on the operator's signal.
   */
  private async run(stream: Stream, fresh: boolean): Promise<void> {
    if (fresh && this.closed && stream.events.length === 0) return this.end(stream);
    stream.state = 'busy';
    const cancellation = this.options.signal ? aborts.follow([this.stopping.signal, this.options.signal]) : undefined;
    const context: StreamContext = { key: stream.key, pressure: stream.pressure, signal: cancellation?.signal ?? this.stopping.signal };
    let over = false;
    try {
      for (;;) {
        const event = stream.events.shift();
        if (event === undefined) break;
        if (stream.events.length === 0) stream.pressure.clear();
        this.busy += 1;
        try {
          await this.processor(event, context);
        } catch (error) {
          over = true;
          if (this.stopping.signal.aborted) break; // cancelled by stop(): not a failure
          this.options.onFatal(error, stream.key);
          break;
        } finally {
          this.busy -= 1;
        }
        if (this.stopping.signal.aborted) {
          over = true; // cancelled by stop(): the rest is abandoned
          break;
        }
      }
    } catch (error) {
      over = true;
      throw error;
    } finally {
      cancellation?.release();
      if (over || this.closed || stream.released !== undefined) this.end(stream);
      else this.idle(stream);
    }
  }

  /** No event left: the worker idles until `idleTimeout` passes or a new event comes (R-QUEUE-2). */
  private idle(stream: Stream): void {
    stream.state = 'idle';
    stream.pressure.relax();
    stream.expire = this.options.clock.schedule(this.options.idleTimeout * 1000, () => {
      stream.expire = undefined;
      this.end(stream);
    });
  }

  /** The worker is over: the stream goes unless events came meanwhile (then a new worker takes them). */
  private end(stream: Stream): void {
    stream.state = 'none';
    const released = stream.released;
    stream.released = undefined;
    if (this.streams.get(stream.key) === stream && stream.events.length === 0) this.streams.delete(stream.key);
    else if (!this.closed && stream.events.length) this.spawn(stream);
    this.releaseSlot();
    this.ended();
    if (released !== undefined) for (const resolve of released) resolve();
  }

  private ended(): void {
    this.live -= 1;
    if (this.live === 0 && this.drainWaiters.length) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const waiter of waiters) waiter();
    }
  }

  /** Resolves when no worker is left. */
  private drained(): Promise<void> {
    if (this.live === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /**
   * Stops accepting events, lets workers drain for `exitTimeout`, then cancels the rest
   * (R-QUEUE-7). Resolves when every worker has ended.
   */
  async stop(): Promise<void> {
    this.closed = true;
    for (const stream of [...this.streams.values()])
      if (stream.state === 'idle') {
        stream.expire?.();
        stream.expire = undefined;
        this.end(stream);
      }
    const drained = this.drained().then(() => true);
    // Cancelled once drained: a pending timer would keep the process alive for the whole timeout.
    const drainedOrLate = new AbortController();
    const timeout = aborts.sleepOrAbort(this.options.clock, this.options.exitTimeout * 1000, drainedOrLate.signal).then(() => false);
    const done = await Promise.race([drained, timeout]);
    drainedOrLate.abort();
    if (!done) {
      const left = [...this.streams.keys()];
      if (left.length) this.options.logger.warning(`Unprocessed streams left for [${left.map((k) => `'${k}'`).join(', ')}].`);
      this.stopping.abort(new DOMException('The queue is stopping.', 'AbortError'));
      await this.drained();
    }
  }
}

/** What the queues of one resource hold right now (over all namespaces served). */
export interface QueueCounts {
  /** Objects with a queue stream. */
  readonly streams: number;
  /** Events received and not yet processed. */
  readonly queuedEvents: number;
  /** Live per-object workers: processing, idling, or waiting to start. */
  readonly workers: number;
  /** Workers processing an event right now. */
  readonly busyWorkers: number;
  /** The sum of the queues' worker limits; `null` if any queue is unlimited. */
  readonly workerLimit: number | null;
}

/** The queues of an operator's watchers, registered while the watchers run. */
export class Queues {
  private readonly all = new Map<Queue, references.Resource | undefined>();

  /** Registers a watcher's queue (with its resource, for the counts per resource). */
  add(queue: Queue, resource?: references.Resource): void {
    this.all.set(queue, resource);
  }

  delete(queue: Queue): void {
    this.all.delete(queue);
  }

  /** The counts of the registered queues, by resource (queues registered without one are left out). */
  byResource(): Map<references.Resource, QueueCounts> {
    const counts = new Map<references.Resource, { -readonly [K in keyof QueueCounts]: QueueCounts[K] }>();
    for (const [queue, resource] of this.all) {
      if (resource === undefined) continue;
      let entry = counts.get(resource);
      if (entry === undefined) {
        entry = { streams: 0, queuedEvents: 0, workers: 0, busyWorkers: 0, workerLimit: 0 };
        counts.set(resource, entry);
      }
      entry.streams += queue.size;
      entry.queuedEvents += queue.queuedEvents;
      entry.workers += queue.workerCount;
      entry.busyWorkers += queue.busyWorkers;
      const limit = queue.workerLimit;
      entry.workerLimit = limit === null || entry.workerLimit === null ? null : entry.workerLimit + limit;
    }
    return counts;
  }

  /** Streams and queued events over all queues. */
  count(): { readonly streams: number; readonly queuedEvents: number } {
    let streams = 0;
    let queuedEvents = 0;
    for (const queue of this.all.keys()) {
      streams += queue.size;
      queuedEvents += queue.queuedEvents;
    }
    return { streams, queuedEvents };
  }
}
