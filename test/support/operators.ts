/**
 * The fixtures every operator test uses (the analogue of Kopf's `tests/conftest.py`): the
 * reference CRD and object, a devcluster with them, fast operator settings, log capture through
 * the logging sink, and the one way to run an operator in the background for a test.
 *
 * The operator is the embedded `operator()` (as `spawnTasks()` + `runTasks()`) with a stop flag
 * and a login handler, so the tests go through the whole runtime: login and re-login, discovery,
 * list-watch, per-object queueing, the processing cycle, patching and the client's retries. On a
 * `VirtualClock` (`options.clock`) time moves only when the test moves it; `virtualtime.ts` builds
 * its harness on this one. The section 8 scenarios run the operator as `kopf run` through the
 * test runner instead (`scenarios.ts`), since that invocation is what they prove.
 *
 * Nothing here waits "long enough": `atRest()` waits for the operator's own signal that it is
 * done with an object (`signals.ts`), `waiting.ts` for everything else that must happen.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import * as YAML from 'yaml';
import { DevCluster, type RequestRecord } from '../../devcluster/testing.js';
import * as clocks from '../../runtime/cogs/aio/clocks.js';
import type * as credentials from '../../runtime/cogs/client/credentials.js';
import * as settings from '../../runtime/cogs/configs/settings.js';
import * as logging from '../../runtime/core/actions/logging.js';
import type { OperatorRegistry } from '../../runtime/core/intents/registry.js';
import type * as inventory from '../../runtime/core/reactor/inventory.js';
import * as running from '../../runtime/core/reactor/running.js';
import { on } from '../../runtime/on.js';
import { AT_REST, GONE } from './signals.js';
import { advanceUntilSettled, eventually } from './waiting.js';

export { AT_REST, GONE } from './signals.js';
export { eventually } from './waiting.js';

/** The repository's root folder. */
export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CRD_FILE = path.join(ROOT, 'fixtures/crds/kopfexamples.yaml');
export const OBJECT_FILE = path.join(ROOT, 'fixtures/objects/kopf-example-1.yaml');
export const KOPF_CRD = fs.readFileSync(CRD_FILE, 'utf8');
export const KOPF_EXAMPLE = fs.readFileSync(OBJECT_FILE, 'utf8');
export const KEX = { group: 'kopf.dev', version: 'v1', resource: 'kopfexamples' } as const;
/** Kopf's default finalizer and diff-base annotation. */
export const FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker';
export const LHC = 'kopf.zalando.org/last-handled-configuration';

type JsonObject = Record<string, unknown>;

/** A resource that takes anything: no schema for spec or status, and no status subresource. */
export const ODD = { group: 'kopf.dev', version: 'v1', resource: 'oddities' } as const;
export const ODDITIES_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'oddities.kopf.dev' },
  spec: {
    group: 'kopf.dev',
    scope: 'Namespaced',
    names: { kind: 'Oddity', plural: 'oddities', singular: 'oddity' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

/** A devcluster (plain HTTP, fast) with the reference CRD loaded. */
export async function startCluster(options: Parameters<typeof DevCluster.start>[0] = {}): Promise<DevCluster> {
  const cluster = await DevCluster.start({ tls: false, ...options });
  await cluster.load(KOPF_CRD);
  return cluster;
}

/** The reference object of the spec (section 8.0, the fixture file), renamed and amended. */
export function kopfExample(name = 'kopf-example-1', extra: JsonObject = {}): JsonObject {
  const reference = YAML.parse(KOPF_EXAMPLE) as JsonObject & { metadata: JsonObject };
  const { metadata, ...rest } = extra as { metadata?: JsonObject };
  return { ...reference, metadata: { ...reference.metadata, name, namespace: 'default', ...metadata }, ...rest };
}

/** Settings that keep tests fast: short back-offs, reconnects, idle and exit timeouts. */
export function fastSettings(configure?: (s: settings.OperatorSettings) => void): settings.OperatorSettings {
  const s = new settings.OperatorSettings({ warn: () => undefined });
  s.networking.errorBackoffs = [0.05, 0.05];
  s.execution.defaultBackoff = 0.2;
  s.watching.reconnectBackoff = 0.05;
  s.queueing.idleTimeout = 1;
  s.queueing.exitTimeout = 0.5;
  s.queueing.errorDelays = [0.1, 0.1, 0.2];
  s.persistence.consistencyTimeout = 2;
  s.posting.enabled = false;
  configure?.(s);
  return s;
}

/** One captured log message. */
export interface Captured {
  readonly level: number;
  readonly name: string;
  readonly message: string;
  /** The message as printed in the `plain` format without traces: `[ns/name] message`. */
  readonly line: string;
  /** The object the message is about (`ns/name`, or `name` if cluster-scoped), if any. */
  readonly object: string | undefined;
  /** When it was logged: milliseconds since the capture's `origin` on its clock (real time by default). */
  readonly at: number;
  readonly error?: unknown;
}

/** Captures all log output (DEBUG and up) while installed, each message with the time it was logged. */
export class LogCapture {
  readonly records: Captured[] = [];
  private restore: (() => void) | undefined;

  /** @param timing the clock whose `now()` stamps the messages, and the origin subtracted from it. */
  constructor(private readonly timing: { readonly clock: clocks.Clock; readonly origin: number } = { clock: clocks.realClock, origin: 0 }) {}

  install(): this {
    this.clear();
    logging.configure({ verbose: true });
    this.restore = logging.setLogSink((_line, record) => {
      const prefix = record.ref !== undefined ? logging.prefixOf(record.ref) : '';
      const object = record.ref ? `${record.ref.namespace ?? ''}/${record.ref.name}`.replace(/^\//, '') : undefined;
      const at = this.timing.clock.now() - this.timing.origin;
      this.records.push({
        level: record.level,
        name: record.name,
        message: record.message,
        line: `${prefix}${record.message}`,
        object,
        at,
        error: record.error,
      });
    });
    return this;
  }

  uninstall(): void {
    this.restore?.();
    this.restore = undefined;
    logging.configure({});
  }

  /** Lines (`[ns/name] message`) at a level (numeric, or any when omitted). */
  lines(level?: number): string[] {
    return this.records.filter((r) => level === undefined || r.level === level).map((r) => r.line);
  }

  /** Lines containing a text. */
  grep(text: string, level?: number): string[] {
    return this.lines(level).filter((line) => line.includes(text));
  }

  clear(): void {
    this.records.length = 0;
  }
}

/**
 * Strips the finalizers of all `kopfexamples` left in `default` (no object waits for an operator
 * that is gone) and stops the cluster: the end of every test with a cluster of its own.
 */
export async function releaseAndStop(cluster: DevCluster): Promise<void> {
  for (const body of cluster.store.list(KEX, 'default')) {
    const name = (body['metadata'] as { name: string }).name;
    await cluster.store.patch(KEX, name, { metadata: { finalizers: null } }, { namespace: 'default', type: 'merge-patch' });
  }
  await cluster.stop();
}

/** What a suite started with `clusterPerTest()` reads in its tests. */
export interface ClusterPerTest {
  /** The current test's devcluster (a fresh one for every test). */
  readonly cluster: DevCluster;
  /** The log capture, installed anew (and emptied) for every test. */
  readonly logs: LogCapture;
  /** Stops the current test's devcluster and starts another one with `options` (`startCluster()`'s) in its place. */
  restartCluster(options: Parameters<typeof startCluster>[0]): Promise<DevCluster>;
}

/** The devcluster of the test that runs now, for the per-test fixtures below. */
export interface CurrentCluster {
  /** The current test's devcluster; throws outside a test. */
  get(): DevCluster;
  /** Stops the current test's devcluster and starts another one with `options` in its place. */
  replace(options: Parameters<typeof startCluster>[0]): Promise<DevCluster>;
}

/**
 * Registers the `beforeEach`/`afterEach` hooks that give every test of a suite a devcluster of
 * its own: before each test, a cluster with the reference CRD starts (then `hooks.started` runs);
 * after it, `hooks.ending` runs, then the cluster is released (`releaseAndStop()`).
 */
export function freshClusterPerTest(hooks: { readonly started?: () => void; readonly ending?: () => Promise<void> | void } = {}): CurrentCluster {
  let current: DevCluster | undefined;
  beforeEach(async () => {
    current = await startCluster();
    hooks.started?.();
  });
  afterEach(async () => {
    await hooks.ending?.();
    const cluster = current;
    current = undefined;
    if (cluster !== undefined) await releaseAndStop(cluster);
  });
  const get = (): DevCluster => {
    if (current === undefined) throw new Error('The devcluster exists only while a test runs.');
    return current;
  };
  return {
    get,
    async replace(options) {
      await get().stop();
      current = await startCluster(options);
      return current;
    },
  };
}

/**
 * Registers the hooks of a suite whose every test runs operators against a devcluster of its own
 * (`freshClusterPerTest()`), with the log capture installed anew (and emptied) for every test.
 * Call it in the `describe` body; read `cluster` and `logs` inside the tests.
 */
export function clusterPerTest(): ClusterPerTest {
  const logs = new LogCapture();
  const current = freshClusterPerTest({ started: () => logs.install(), ending: () => logs.uninstall() });
  return {
    get cluster() {
      return current.get();
    },
    logs,
    restartCluster: (options) => current.replace(options),
  };
}

export const DEBUG = 10;
export const INFO = 20;
export const WARNING = 30;
export const ERROR = 40;

/** An operator running in the background. */
export interface RunningOperator {
  readonly settings: settings.OperatorSettings;
  /** The stop flag given to the operator. */
  readonly stopFlag: AbortSignal;
  /** The operator's context (its signal, memories, …). */
  readonly context: inventory.OperatorContext;
  /** Settles when the operator has stopped; never rejects (see `error`). */
  readonly done: Promise<void>;
  /** The error the operator failed with, if any (set once `done` settles). */
  readonly error: unknown;
  readonly stopped: boolean;
  /** Raises the stop flag only (the operator begins its graceful stop). */
  requestStop(): void;
  /**
   * Raises the stop flag and waits until the operator has stopped; on a `VirtualClock`, moves
   * virtual time on meanwhile (in `stepMs` steps, default 100), since the graceful stop sleeps on
   * that clock.
   */
  stop(options?: { readonly stepMs?: number; readonly pauseMs?: number }): Promise<void>;
}

export interface OperatorOptions {
  readonly cluster: DevCluster;
  readonly registry: OperatorRegistry;
  readonly settings?: settings.OperatorSettings;
  /**
   * The token the login handler returns (a function: asked on every login); default: the
   * cluster admin's. A login handler is registered unless the registry has one already.
   */
  readonly token?: string | (() => string);
  /** Resolve only after the first watch request of this resource (plural; default `kopfexamples`). */
  readonly waitForWatch?: string | false;
  /** Serve the operator's metrics there (`running.OperatorOptions.metricsEndpoint`). */
  readonly metricsEndpoint?: string;
  /** The https metrics' certificate directory (`running.OperatorOptions.metricsTlsDir`). */
  readonly metricsTlsDir?: string;
  /** Serve the liveness and readiness endpoints there (`running.OperatorOptions.livenessEndpoint`). */
  readonly livenessEndpoint?: string;
  /** Hears the served endpoints' URLs (`running.OperatorOptions.onServing`). */
  readonly onServing?: running.OperatorOptions['onServing'];
  /**
   * The operator's clock (default: the real one). With a `VirtualClock` the test moves time
   * itself, and `stop()` keeps it moving until the operator has stopped (its stop sleeps on it).
   */
  readonly clock?: clocks.Clock;
  /** Serve only these namespace patterns (`--namespace`) instead of the whole cluster. */
  readonly namespaces?: readonly string[];
  /** The ring of a sharded operator (`running.OperatorOptions.ringFactory`), with `settings.sharding.ring`. */
  readonly ringFactory?: running.OperatorOptions['ringFactory'];
}

/**
 * Starts an operator (`operator()`, cluster-wide unless `namespaces`, standalone, with a stop flag) serving the
 * devcluster, logging in through an `on.login` handler that returns the cluster's address and a
 * bearer token. Resolves once it watches `kopfexamples`.
 */
export async function startOperator(options: OperatorOptions): Promise<RunningOperator> {
  const { cluster, registry } = options;
  const s = options.settings ?? fastSettings();
  const token = options.token ?? cluster.token;
  if (registry.activityHandlers('authentication').length === 0) {
    on.login({ registry }, function login_fn(): credentials.ConnectionInfo {
      return { server: cluster.url, token: typeof token === 'function' ? token() : token };
    });
  }
  const stopper = new AbortController();
  const watched = options.waitForWatch ?? 'kopfexamples';
  const watchesBefore = watched === false ? 0 : watchRequests(cluster, watched).length;
  let error: unknown;
  let stopped = false;
  // `operator()` is exactly these two steps; spawning first gives the tests the operator's context.
  const spawned = await running.spawnTasks({
    registry,
    settings: s,
    ...(options.namespaces !== undefined ? { namespaces: [...options.namespaces] } : { clusterwide: true }),
    standalone: true,
    stopFlag: stopper.signal,
    metricsEndpoint: options.metricsEndpoint,
    ...(options.metricsTlsDir !== undefined ? { metricsTlsDir: options.metricsTlsDir } : {}),
    livenessEndpoint: options.livenessEndpoint,
    onServing: options.onServing,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.ringFactory ? { ringFactory: options.ringFactory } : {}),
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
  if (watched !== false) {
    await eventually(() => stopped || watchRequests(cluster, watched).length > watchesBefore, `the operator to watch ${watched}`);
  }
  return {
    settings: s,
    stopFlag: stopper.signal,
    context: spawned.context,
    done,
    get error() {
      return error;
    },
    get stopped() {
      return stopped;
    },
    requestStop() {
      stopper.abort();
    },
    async stop(steps = {}) {
      stopper.abort();
      const clock = options.clock;
      if (clock instanceof clocks.VirtualClock) await advanceUntilSettled(clock, done, { stepMs: 100, pauseMs: 0, ...steps });
      await done;
    },
  };
}

/** The watch requests of a resource (default `kopfexamples`) so far. */
export function watchRequests(cluster: DevCluster, plural = 'kopfexamples'): RequestRecord[] {
  return cluster.requests.filter((r) => r.method === 'GET' && r.resource === plural && /(^|&)watch=(true|1)/.test(r.query));
}

/** The list requests of `kopfexamples` so far. */
export function listRequests(cluster: DevCluster): RequestRecord[] {
  return cluster.requests.filter((r) => r.method === 'GET' && r.resource === 'kopfexamples' && r.name === undefined && !/(^|&)watch=(true|1)/.test(r.query));
}

/**
 * Waits until the newest captured line about an object is the end of a processing cycle that
 * changed nothing (`AT_REST`), or with `gone` the notice of its deletion (`GONE`): the explicit
 * signal that the operator is done with it, after which a test asserts that nothing else happened.
 */
export async function atRest(logs: LogCapture, name: string, options: { namespace?: string; gone?: boolean } = {}): Promise<void> {
  const prefix = `[${options.namespace ?? 'default'}/${name}] `;
  const last = options.gone ? GONE : AT_REST;
  await eventually(() => logs.records.filter((r) => r.line.startsWith(prefix)).at(-1)?.message === last, `${prefix}${last}`);
}

/** A promise with its resolver exposed (a handler awaits it; the test decides when it settles). */
export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Counts of values in a list, e.g. handler invocations by object name. */
export function tally(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** The annotations of an object in the cluster (read out of band). */
export function annotationsOf(cluster: DevCluster, name: string): Record<string, string> {
  const body = cluster.store.get(KEX, name, 'default') as { metadata?: { annotations?: Record<string, string> } } | undefined;
  return body?.metadata?.annotations ?? {};
}

/** The parsed JSON bodies of PATCH requests to an object (optionally a subresource). */
export function patchBodies(cluster: DevCluster, name: string, subresource?: string): unknown[] {
  return cluster.requests
    .filter((r) => r.method === 'PATCH' && r.resource === 'kopfexamples' && r.name === name && r.subresource === subresource)
    .map((r) => JSON.parse(r.body ?? 'null') as unknown);
}

type Ref = { readonly group: string; readonly version: string; readonly resource: string };

/** The resource version of an object in the cluster, if it exists. */
export function versionOf(cluster: DevCluster, ref: Ref, name: string, namespace = 'default'): string | undefined {
  const body = cluster.store.get(ref, name, namespace) as { metadata?: { resourceVersion?: string } } | undefined;
  return body?.metadata?.resourceVersion;
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

  /** The resource version of the newest event of an object (`ns/name`) the operator has processed. */
  seen(key: string): string | undefined {
    return this.versions.get(key);
  }

  /**
   * Waits until the newest version of an object has been processed — or, for an object that is
   * gone, its `DELETED` event (if the operator has seen the object at all).
   */
  async caughtUp(cluster: DevCluster, name: string, ref: Ref = KEX, namespace = 'default'): Promise<void> {
    const key = `${namespace}/${name}`;
    await eventually(() => {
      const stored = versionOf(cluster, ref, name, namespace);
      if (stored === undefined) return !this.versions.has(key) || this.deleted.has(key);
      return this.versions.get(key) === stored;
    }, `the operator to process the newest version of ${key}`);
  }
}

/** Whether the operator's queues hold no unprocessed event and no worker is processing one. */
export function queuesIdle(op: { readonly context: inventory.OperatorContext }): boolean {
  for (const counts of op.context.queues?.byResource().values() ?? []) if (counts.busyWorkers > 0 || counts.queuedEvents > 0) return false;
  return true;
}

/**
 * Waits until the operator is done with an object whose cycles do not end with `AT_REST` (on-event
 * handlers alone, for instance): the `observer` has seen the object's newest stored version and the
 * queues are idle. That cycle is then over, and what it patched changed nothing (a change would
 * have made a newer version), so nothing more follows for the object on its own.
 */
export async function quiet(op: { readonly context: inventory.OperatorContext }, cluster: DevCluster, observer: Observer, name: string): Promise<void> {
  const key = `default/${name}`;
  await eventually(() => observer.seen(key) === versionOf(cluster, KEX, name) && queuesIdle(op), `the operator to be done with ${key}`);
}
