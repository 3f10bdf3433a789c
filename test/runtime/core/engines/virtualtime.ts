/**
 * Shared fixtures of the engine tests that run an operator on virtual time (R-TEST-2): the
 * operator is the embedded one (`spawnTasks` + `runTasks`) with a `VirtualClock`, serving a
 * devcluster through the runtime's real HTTP client. Time moves only when a test moves it, so timer
 * schedules, idle periods and retry delays are asserted as exact virtual timestamps.
 *
 * Moving time is not enough on its own: watch events are real I/O that arrive whenever they
 * arrive, so before each step the test waits (in real time, for something that must happen) until
 * the operator has seen the object's newest version — `caughtUp()` — and only then moves the clock.
 * That keeps "the object's last event" at an exact virtual time, too.
 */
import type { DevCluster } from '../../../../devcluster/testing.js';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import type * as credentials from '../../../../runtime/cogs/client/credentials.js';
import type * as settings from '../../../../runtime/cogs/configs/settings.js';
import type { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import type * as inventory from '../../../../runtime/core/reactor/inventory.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../reliability/operating.js';
import { advanceUntilSettled } from '../../../support/waiting.js';

export const EPOCH = Date.parse('2030-01-01T00:00:00Z');

/** Settings for virtual-time operators: fast back-offs, no server-side watch timeouts to chase. */
export function virtualSettings(configure?: (s: settings.OperatorSettings) => void): settings.OperatorSettings {
  return fx.fastSettings((s) => {
    s.networking.errorBackoffs = [];
    s.watching.serverTimeout = null;
    s.watching.clientTimeout = null;
    configure?.(s);
  });
}

/** An operator running on a virtual clock. */
export interface VirtualOperator {
  readonly clock: clocks.VirtualClock;
  readonly context: inventory.OperatorContext;
  readonly stopped: boolean;
  readonly error: unknown;
  /** Raises the stop flag and keeps virtual time going until the operator has stopped. */
  stop(): Promise<void>;
}

/**
 * Starts an operator on a virtual clock (cluster-wide, standalone), logging in through an
 * `on.login` handler; resolves once it watches `watches` (default `kopfexamples`; `false`: at once).
 */
export async function startVirtual(options: {
  readonly cluster: DevCluster;
  readonly registry: OperatorRegistry;
  readonly clock?: clocks.VirtualClock;
  readonly settings?: settings.OperatorSettings;
  readonly watches?: string | false;
}): Promise<VirtualOperator> {
  const { cluster, registry } = options;
  const clock = options.clock ?? new clocks.VirtualClock({ start: EPOCH });
  if (registry.activityHandlers('authentication').length === 0) {
    on.login({ registry }, function login_fn(): credentials.ConnectionInfo {
      return { server: cluster.url, token: cluster.token };
    });
  }
  const stopper = new AbortController();
  const watches = options.watches ?? 'kopfexamples';
  const before = watches === false ? 0 : fx.watchRequests(cluster, watches).length;
  let error: unknown;
  let stopped = false;
  const spawned = await running.spawnTasks({
    registry,
    settings: options.settings ?? virtualSettings(),
    clock,
    clusterwide: true,
    standalone: true,
    stopFlag: stopper.signal,
  });
  const done = running.runTasks(spawned).then(
    () => {
      stopped = true;
    },
    (e: unknown) => {
      error = e;
      stopped = true;
    },
  );
  if (watches !== false) await fx.eventually(() => stopped || fx.watchRequests(cluster, watches).length > before, `the watch of ${watches}`);
  return {
    clock,
    context: spawned.context,
    get stopped() {
      return stopped;
    },
    get error() {
      return error;
    },
    async stop() {
      stopper.abort();
      // The graceful stop sleeps on the operator's clock: keep virtual time going until it is over.
      await advanceUntilSettled(clock, done);
    },
  };
}

type Json = Record<string, unknown>;

/** The resource version of an object in the cluster, if it exists. */
export function versionOf(
  cluster: DevCluster,
  ref: { group: string; version: string; resource: string },
  name: string,
  namespace = 'default',
): string | undefined {
  const body = cluster.store.get(ref, name, namespace) as { metadata?: { resourceVersion?: string } } | undefined;
  return body?.metadata?.resourceVersion;
}

/** The operator's memory of an object (by name), if it has one. */
export function memoryOf(op: VirtualOperator, name: string): import('../../../../runtime/core/reactor/inventory.js').ObjectMemory | undefined {
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
export async function caughtUp(op: VirtualOperator, cluster: DevCluster, name = 'kopf-example-1'): Promise<void> {
  await fx.eventually(() => {
    const stored = versionOf(cluster, fx.KEX, name);
    if (stored === undefined) return true; // gone: nothing to catch up with
    const seen = (memoryOf(op, name)?.daemons?.body.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    return seen === stored;
  }, `the operator to catch up with ${name}`);
}

/**
 * Moves virtual time to `target` one due sleep at a time, letting the operator catch up with the
 * cluster before every step (so that events caused by one wake-up are processed at its time).
 */
export async function runTo(op: VirtualOperator, target: number, sync: () => Promise<void>): Promise<void> {
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

/**
 * An observer of processing cycles, for resources without daemons: an on-event handler whose
 * `when` filter notes the resource version of every processed event and never matches (so it is
 * never invoked and logs nothing). On-event handlers run after indexing in a cycle, so a noted
 * version means the object's indices are up to date with it.
 */
export class Observer {
  private readonly versions = new Map<string, string | undefined>();
  private readonly deleted = new Set<string>();

  constructor(registry: OperatorRegistry, resource = 'kopfexamples') {
    on.event(
      resource,
      {
        registry,
        id: `observer-of-${resource}`,
        when: ({ body, type }) => {
          const key = `${body.metadata?.namespace ?? ''}/${body.metadata?.name ?? ''}`;
          this.versions.set(key, body.metadata?.resourceVersion);
          if (type === 'DELETED') this.deleted.add(key);
          else this.deleted.delete(key);
          return false;
        },
      },
      () => {
        throw new Error('The observer never matches.');
      },
    );
  }

  /**
   * Waits until the newest version of an object has been processed — or, for an object that is
   * gone, its `DELETED` event (if the operator has seen the object at all).
   */
  async caughtUp(cluster: DevCluster, name: string, ref: { group: string; version: string; resource: string } = fx.KEX, namespace = 'default'): Promise<void> {
    const key = `${namespace}/${name}`;
    await fx.eventually(() => {
      const stored = versionOf(cluster, ref, name, namespace);
      if (stored === undefined) return !this.versions.has(key) || this.deleted.has(key);
      return this.versions.get(key) === stored;
    }, `the operator to process the newest version of ${key}`);
  }
}
