/**
 * The virtual-time harness of the engine tests (R-TEST-2): a whole operator on a `VirtualClock`
 * against the devcluster over loopback HTTP, through the runtime's real client, started the one
 * way `operators.ts` starts every operator.
 *
 * Daemons, timers, indices and retries live on time: their stop stages, retries and polls are
 * seconds or minutes apart. Here time moves only when a test moves it, so the tests assert exact
 * virtual timestamps (every captured log line carries the virtual time it was logged at) and run
 * in milliseconds. What does not move with the clock — watch events arriving over HTTP — is waited
 * for in real time ("until it has happened", never "see that nothing happened"): `caughtUp()` and
 * the `Observer` wait until the operator has processed an object's newest version, so that a test
 * moves the clock only once the operator is where it should be; the clock itself waits for the
 * operator's in-flight API requests before it moves on.
 *
 * Two shapes of the same harness: `Simulation` (an object with the operator, its log lines and
 * helpers for the reference object; `simulationPerTest()` gives each test a cluster of its own)
 * and `startVirtual()` (the bare running operator with its clock, for tests that keep their own
 * cluster). Stopping sleeps on the same clock (the daemon killer's stages, the hung-task limit),
 * so both keep moving time until the operator is done.
 */
import type { DevCluster } from '../../devcluster/testing.js';
import { type Clock, realClock, VirtualClock } from '../../runtime/cogs/aio/clocks.js';
import type * as settingsModule from '../../runtime/cogs/configs/settings.js';
import type { OperatorRegistry } from '../../runtime/core/intents/registry.js';
import type * as inventory from '../../runtime/core/reactor/inventory.js';
import * as fx from './operators.js';
import { advanceUntil, eventually } from './waiting.js';

type Json = Record<string, unknown>;

export const { KEX, FINALIZER, kopfExample, deferred, DEBUG, INFO, WARNING, ERROR, Observer, versionOf } = fx;
export { eventually };

/** The virtual start of every simulation: a round time, so that timestamps read well. */
export const EPOCH = Date.parse('2030-01-01T00:00:00Z');
/** The same, under the name the daemon tests use. */
export const T0 = EPOCH;

/** One captured log message, with the virtual time it was logged at (ms since `T0`). */
export type Line = fx.Captured;

/** Settings of the simulations: the fast ones of `operators.ts`, plus overrides. */
export function settings(configure?: (s: settingsModule.OperatorSettings) => void): settingsModule.OperatorSettings {
  return fx.fastSettings(configure);
}

/** Settings for virtual-time operators without a simulation: no client retries, no server-side watch timeouts to chase. */
export function virtualSettings(configure?: (s: settingsModule.OperatorSettings) => void): settingsModule.OperatorSettings {
  return fx.fastSettings((s) => {
    s.networking.errorBackoffs = [];
    s.watching.serverTimeout = null;
    s.watching.clientTimeout = null;
    configure?.(s);
  });
}

/** An operator on a virtual clock, its log lines with virtual timestamps, and its devcluster. */
export class Simulation {
  private readonly capture: fx.LogCapture;
  private op: fx.RunningOperator | undefined;

  private constructor(
    readonly cluster: DevCluster,
    readonly clock: Clock,
    readonly registry: OperatorRegistry,
    readonly settings: settingsModule.OperatorSettings,
  ) {
    this.capture = new fx.LogCapture({ clock, origin: clock instanceof VirtualClock ? T0 : 0 });
  }

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
    const clock = options.clock === 'real' ? realClock : (options.clock ?? new VirtualClock({ start: T0 }));
    const sim = new Simulation(options.cluster, clock, options.registry, options.settings ?? settings());
    sim.capture.install();
    await sim.launch();
    return sim;
  }

  private async launch(): Promise<void> {
    this.op = await fx.startOperator({ cluster: this.cluster, registry: this.registry, settings: this.settings, clock: this.clock });
  }

  private get running(): fx.RunningOperator {
    if (this.op === undefined) throw new Error('The simulation has not started.');
    return this.op;
  }

  /** The captured log lines, in order. */
  get lines(): readonly Line[] {
    return this.capture.records;
  }

  /** The operator's context (its memories, indices, …). */
  get context(): inventory.OperatorContext {
    return this.running.context;
  }

  /** Whether the operator has stopped. */
  get done(): boolean {
    return this.running.stopped;
  }

  /** The operator's failure, if it failed. */
  get error(): unknown {
    return this.running.error;
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

  /** Moves virtual time in steps until the predicate holds (`waiting.advanceUntil`). */
  async advanceUntil(predicate: () => boolean, what: string, options: { stepMs?: number; limitMs?: number } = {}): Promise<void> {
    await advanceUntil(this.virtual, predicate, what, options);
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

  /** PATCH requests of an object (bodies parsed), optionally of a subresource only (`null`: the object itself). */
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
    this.running.requestStop();
  }

  /**
   * Raises the stop flag and, on a virtual clock, moves time on (one second per step) until the
   * operator has stopped. Returns the milliseconds the stop took (virtual ones on a virtual clock).
   */
  async stop(options: { readonly stepMs?: number; readonly limitMs?: number } = {}): Promise<number> {
    const started = this.clock.now();
    const op = this.running;
    op.requestStop();
    if (this.clock instanceof VirtualClock) {
      const limitMs = options.limitMs ?? 120_000;
      await advanceUntil(this.clock, () => op.stopped, `the operator to stop within ${limitMs} virtual ms`, { stepMs: options.stepMs ?? 1000, limitMs });
    }
    await op.done;
    return this.clock.now() - started;
  }

  /** Stops the operator (if still running) and starts it again with the same registry and clock. */
  async restart(): Promise<void> {
    if (!this.done) await this.stop();
    await this.launch();
  }

  /** Stops the operator if needed and stops capturing the logs. */
  async close(): Promise<void> {
    try {
      if (this.op !== undefined && !this.done) await this.stop();
    } finally {
      this.capture.uninstall();
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
 * Registers the `beforeEach`/`afterEach` hooks of a suite whose every test runs a simulation:
 * before each test a devcluster with the reference CRD starts; after it, the simulations the test
 * started are closed and the cluster is released (`operators.releaseAndStop`). Call it in the
 * `describe` body.
 */
export function simulationPerTest(): SimulationPerTest {
  const started: Simulation[] = [];
  const current = fx.freshClusterPerTest({
    ending: async () => {
      for (const sim of started.splice(0)) await sim.close();
    },
  });
  return {
    get cluster() {
      return current.get();
    },
    async start(options) {
      const sim = await Simulation.start({ cluster: current.get(), ...options });
      started.push(sim);
      return sim;
    },
  };
}

/** An operator running on a virtual clock (`startVirtual()`). */
export interface VirtualOperator {
  readonly clock: VirtualClock;
  readonly context: inventory.OperatorContext;
  readonly stopped: boolean;
  readonly error: unknown;
  /** Raises the stop flag and keeps virtual time going until the operator has stopped. */
  stop(): Promise<void>;
}

/**
 * Starts an operator on a virtual clock at `EPOCH` (or the given one) against a cluster the test
 * keeps itself; resolves once it watches `watches` (default `kopfexamples`; `false`: at once).
 */
export async function startVirtual(options: {
  readonly cluster: DevCluster;
  readonly registry: OperatorRegistry;
  readonly clock?: VirtualClock;
  readonly settings?: settingsModule.OperatorSettings;
  readonly watches?: string | false;
}): Promise<VirtualOperator> {
  const clock = options.clock ?? new VirtualClock({ start: EPOCH });
  const op = await fx.startOperator({
    cluster: options.cluster,
    registry: options.registry,
    settings: options.settings ?? virtualSettings(),
    clock,
    waitForWatch: options.watches ?? 'kopfexamples',
  });
  return {
    clock,
    context: op.context,
    get stopped() {
      return op.stopped;
    },
    get error() {
      return op.error;
    },
    stop: () => op.stop({ stepMs: 1000, pauseMs: 10 }),
  };
}

/** The operator's memory of an object (by name), if it has one. */
export function memoryOf(op: { readonly context: inventory.OperatorContext }, name: string): inventory.ObjectMemory | undefined {
  for (const memory of op.context.memories.values()) {
    const body = memory.daemons?.body as Json | undefined;
    if ((body?.['metadata'] as Json | undefined)?.['name'] === name) return memory;
  }
  return undefined;
}

/**
 * Waits (real time) until the operator's daemons memory of an object holds the object's newest
 * version in the cluster — i.e. the newest event has been processed, the idle clock refreshed
 * (immediately if the object is gone).
 */
export async function caughtUp(op: { readonly context: inventory.OperatorContext }, cluster: DevCluster, name = 'kopf-example-1'): Promise<void> {
  await eventually(() => {
    const stored = versionOf(cluster, KEX, name);
    if (stored === undefined) return true; // gone: nothing to catch up with
    const seen = (memoryOf(op, name)?.daemons?.body.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    return seen === stored;
  }, `the operator to catch up with ${name}`);
}

/**
 * Moves virtual time to `target` one due sleep at a time, letting the operator catch up with the
 * cluster before every step (so that events caused by one wake-up are processed at its time).
 */
export async function runTo(op: { readonly clock: VirtualClock }, target: number, sync: () => Promise<void>): Promise<void> {
  const { clock } = op;
  for (;;) {
    await sync();
    const next = clock.nextDue();
    if (next === undefined || next > target) break;
    await clock.advanceTo(next);
  }
  await clock.advanceTo(target);
  await sync();
}
