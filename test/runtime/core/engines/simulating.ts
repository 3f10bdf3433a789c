/**
 * The simulation of the engines' tests (R-TEST-2): a whole operator on a `VirtualClock` against
 * the devcluster over loopback HTTP, through the runtime's real client.
 *
 * Daemons and timers live on time: their stop stages, retries and polls are seconds or minutes
 * apart. Here time moves only when a test moves it (`advance()`), so the tests assert exact virtual
 * timestamps of log lines (every captured line carries `clock.now()` at the moment it was logged)
 * and run in milliseconds. What does not move with the clock — watch events arriving over HTTP —
 * is waited for in real time with `waitFor()` ("until it has happened", never "see that nothing
 * happened"); the clock itself waits for the operator's in-flight API requests before it moves on.
 *
 * Stopping the operator sleeps on the same clock (the daemon killer's stages, the 5-second
 * hung-task limit), so `stop()` keeps moving time until the operator is done, and reports the
 * virtual time it took.
 */
import { afterEach, beforeEach } from 'vitest';

import type { DevCluster } from '../../../../devcluster/testing.js';
import { type Clock, realClock, VirtualClock } from '../../../../runtime/cogs/aio/clocks.js';
import type * as settingsModule from '../../../../runtime/cogs/configs/settings.js';
import * as logging from '../../../../runtime/core/actions/logging.js';
import type { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import type * as inventory from '../../../../runtime/core/reactor/inventory.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../reliability/operating.js';

type Json = Record<string, unknown>;

export const { KEX, kopfExample, eventually, deferred } = fx;
export const DEBUG = fx.DEBUG;
export const INFO = fx.INFO;
export const WARNING = fx.WARNING;
export const ERROR = fx.ERROR;
export const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';

/** The virtual start of every simulation: a round time, so that timestamps read well. */
export const T0 = Date.parse('2030-01-01T00:00:00Z');

/** One captured log message, with the virtual time it was logged at (ms since `T0`). */
export interface Line {
  readonly level: number;
  readonly message: string;
  /** The object prefix, e.g. `default/kopf-example-1`, if any. */
  readonly object: string | undefined;
  /** Milliseconds of virtual time since `T0`. */
  readonly at: number;
  readonly error?: unknown;
}

/** A devcluster with the reference CRD (plain HTTP). */
export async function startCluster(): Promise<DevCluster> {
  return await fx.startCluster();
}

/** Settings of the simulations: the reliability tests' fast ones, plus overrides. */
export function settings(configure?: (s: settingsModule.OperatorSettings) => void): settingsModule.OperatorSettings {
  return fx.fastSettings(configure);
}

/** An operator on a virtual clock, its log lines with virtual timestamps, and its devcluster. */
export class Simulation {
  readonly lines: Line[] = [];
  private restoreSink: (() => void) | undefined;
  private stopper = new AbortController();
  private doneFlag = false;
  private failure: unknown;
  private runningDone: Promise<void> = Promise.resolve();
  context!: inventory.OperatorContext;

  private constructor(
    readonly cluster: DevCluster,
    readonly clock: Clock,
    readonly registry: OperatorRegistry,
    readonly settings: settingsModule.OperatorSettings,
  ) {}

  private get virtual(): VirtualClock {
    if (!(this.clock instanceof VirtualClock)) throw new TypeError('This simulation runs in real time: it cannot move the clock.');
    return this.clock;
  }

  /**
   * Starts an operator (cluster-wide, standalone) with the registry's handlers on a virtual clock
   * at `T0` (or on the given clock, e.g. `'real'` for tests that must run in real time); resolves
   * once it watches `kopfexamples`.
   */
  static async start(options: {
    readonly cluster: DevCluster;
    readonly registry: OperatorRegistry;
    readonly settings?: settingsModule.OperatorSettings;
    readonly clock?: VirtualClock | 'real';
  }): Promise<Simulation> {
    const { cluster, registry } = options;
    const clock = options.clock === 'real' ? realClock : (options.clock ?? new VirtualClock({ start: T0 }));
    const sim = new Simulation(cluster, clock, registry, options.settings ?? settings());
    sim.capture();
    await sim.launch();
    return sim;
  }

  private capture(): void {
    logging.configure({ verbose: true });
    this.restoreSink = logging.setLogSink((_line, record) => {
      const object = record.ref ? `${record.ref.namespace ?? ''}/${record.ref.name}`.replace(/^\//, '') : undefined;
      this.lines.push({ level: record.level, message: record.message, object, at: this.now, error: record.error });
    });
  }

  private async launch(): Promise<void> {
    const { cluster, registry, clock } = this;
    if (registry.activityHandlers('authentication').length === 0) {
      on.login({ registry }, function login_fn() {
        return { server: cluster.url, token: cluster.token };
      });
    }
    this.stopper = new AbortController();
    this.doneFlag = false;
    this.failure = undefined;
    const watchesBefore = fx.watchRequests(cluster).length;
    const spawned = await running.spawnTasks({
      registry,
      settings: this.settings,
      clock,
      clusterwide: true,
      standalone: true,
      stopFlag: this.stopper.signal,
    });
    this.context = spawned.context;
    this.runningDone = running.runTasks(spawned).then(
      () => {
        this.doneFlag = true;
      },
      (error: unknown) => {
        this.failure = error;
        this.doneFlag = true;
      },
    );
    await eventually(() => this.doneFlag || fx.watchRequests(cluster).length > watchesBefore, 'the operator to watch kopfexamples');
  }

  /** Whether the operator has stopped. */
  get done(): boolean {
    return this.doneFlag;
  }

  /** The operator's failure, if it failed. */
  get error(): unknown {
    return this.failure;
  }

  /** Virtual milliseconds since `T0`. */
  get now(): number {
    return this.clock instanceof VirtualClock ? this.clock.now() - T0 : this.clock.now();
  }

  /** Moves virtual time forward (waking sleepers on the way, waiting for their API requests). */
  async advance(ms: number): Promise<void> {
    await this.virtual.advance(ms);
  }

  /** Moves virtual time to `T0 + ms`. */
  async advanceTo(ms: number): Promise<void> {
    await this.virtual.advanceTo(T0 + ms);
  }

  /**
   * Moves virtual time in steps until the predicate holds (checked in real time between steps):
   * for what waits on the clock at a moment the test cannot know, e.g. a watcher's reconnection.
   */
  async advanceUntil(predicate: () => boolean, what: string, options: { stepMs?: number; limitMs?: number } = {}): Promise<void> {
    const step = options.stepMs ?? 100;
    const deadline = this.clock.now() + (options.limitMs ?? 60_000);
    while (!predicate()) {
      if (this.clock.now() >= deadline) throw new Error(`Virtual time ran out waiting for ${what}.`);
      await fx.pause(5);
      if (!predicate()) await this.advance(step);
    }
  }

  /** Lines whose message contains the text (or matches the pattern), optionally at one level. */
  grep(what: string | RegExp, level?: number): Line[] {
    return this.lines.filter(
      (line) => (level === undefined || line.level === level) && (typeof what === 'string' ? line.message.includes(what) : what.test(line.message)),
    );
  }

  /** Virtual times (ms since `T0`) of the lines containing the text. */
  times(what: string | RegExp, level?: number): number[] {
    return this.grep(what, level).map((line) => line.at);
  }

  /** Messages (in order) of one object, or of all. */
  messages(object?: string): string[] {
    return this.lines.filter((line) => object === undefined || line.object === object).map((line) => line.message);
  }

  /** Waits in real time until `times` lines contain the text (the clock does not move meanwhile). */
  async waitFor(what: string | RegExp, options: { times?: number; timeoutMs?: number } = {}): Promise<void> {
    const times = options.times ?? 1;
    await eventually(() => this.grep(what).length >= times, `${times}× log line ${String(what)}`, options.timeoutMs ?? 10_000);
  }

  /** Waits in real time until the predicate holds. */
  async until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    await eventually(predicate, what, timeoutMs);
  }

  /** An object of the reference CRD from the store. */
  object(name = 'kopf-example-1'): Json | undefined {
    return this.cluster.store.get(KEX, name, 'default');
  }

  /** The finalizers of an object ([] if it is gone or has none). */
  finalizers(name = 'kopf-example-1'): string[] {
    return ((this.object(name)?.['metadata'] as Json | undefined)?.['finalizers'] ?? []) as string[];
  }

  async create(name = 'kopf-example-1', extra: Json = {}): Promise<Json> {
    return await this.cluster.store.create(kopfExample(name, extra));
  }

  async patch(patch: Json, name = 'kopf-example-1'): Promise<Json> {
    return await this.cluster.store.patch(KEX, name, patch, { namespace: 'default', type: 'merge-patch' });
  }

  async delete(name = 'kopf-example-1'): Promise<void> {
    await this.cluster.store.delete(KEX, name, { namespace: 'default' });
  }

  /** PATCH requests of an object (bodies parsed), optionally of a subresource only. */
  patches(name = 'kopf-example-1', subresource?: string | null): Json[] {
    return this.cluster.requests
      .filter(
        (r) =>
          r.method === 'PATCH' &&
          r.resource === 'kopfexamples' &&
          r.name === name &&
          (subresource === undefined || r.subresource === (subresource ?? undefined)),
      )
      .map((r) => JSON.parse(r.body ?? 'null') as Json);
  }

  /** Raises the stop flag (the operator begins its graceful stop; see `stop()` to finish it). */
  requestStop(): void {
    this.stopper.abort();
  }

  /**
   * Raises the stop flag and, on a virtual clock, moves time on (one second per step) until the
   * operator has stopped. Returns the milliseconds the stop took (virtual ones on a virtual clock).
   */
  async stop(options: { readonly stepMs?: number; readonly limitMs?: number } = {}): Promise<number> {
    const started = this.clock.now();
    this.stopper.abort();
    if (!(this.clock instanceof VirtualClock)) {
      await this.runningDone;
      return this.clock.now() - started;
    }
    const step = options.stepMs ?? 1000;
    const limit = started + (options.limitMs ?? 120_000);
    while (!this.doneFlag) {
      if (this.clock.now() >= limit) throw new Error(`The operator did not stop within ${options.limitMs ?? 120_000} virtual ms.`);
      await fx.pause(5);
      if (!this.doneFlag) await this.clock.advance(step);
    }
    await this.runningDone;
    return this.clock.now() - started;
  }

  /** Stops the operator (if still running) and starts it again with the same registry and clock. */
  async restart(): Promise<void> {
    if (!this.doneFlag) await this.stop();
    await this.launch();
  }

  /** Stops the operator if needed and stops capturing the logs. */
  async close(): Promise<void> {
    try {
      if (!this.doneFlag) await this.stop();
    } finally {
      this.restoreSink?.();
      this.restoreSink = undefined;
      logging.configure({});
    }
  }
}

/** What a suite started with `simulationPerTest()` reads and calls in its tests. */
export interface SimulationPerTest {
  /** The current test's devcluster (a fresh one for every test). */
  readonly cluster: DevCluster;
  /** Starts a simulation against the current test's devcluster; it is closed after the test. */
  start(options: Omit<Parameters<typeof Simulation.start>[0], 'cluster'>): Promise<Simulation>;
}

/**
 * Registers the `beforeEach`/`afterEach` hooks of a suite whose every test runs a simulation: before
 * each test a devcluster with the reference CRD starts; after it, the simulations the test started
 * are closed, the finalizers of all `kopfexamples` left in `default` are stripped (no object waits
 * for an operator that is gone) and the cluster stops. Call it in the `describe` body.
 */
export function simulationPerTest(): SimulationPerTest {
  let current: DevCluster | undefined;
  const started: Simulation[] = [];
  beforeEach(async () => {
    current = await startCluster();
  });
  afterEach(async () => {
    for (const sim of started.splice(0)) await sim.close();
    const cluster = current;
    current = undefined;
    if (cluster === undefined) return;
    for (const body of cluster.store.list(KEX, 'default')) {
      const name = (body['metadata'] as { name: string }).name;
      await cluster.store.patch(KEX, name, { metadata: { finalizers: null } }, { namespace: 'default', type: 'merge-patch' });
    }
    await cluster.stop();
  });
  const currentCluster = (): DevCluster => {
    if (current === undefined) throw new Error('The devcluster exists only while a test runs.');
    return current;
  };
  return {
    get cluster() {
      return currentCluster();
    },
    async start(options) {
      const sim = await Simulation.start({ cluster: currentCluster(), ...options });
      started.push(sim);
      return sim;
    },
  };
}
