/**
 * The root tasks of one operator and what they share (R-LIFE-2, R-API-6). `assemble` builds, once,
 * the parts the tasks share (`Parts`: settings, registry, memo, vault, the HTTP client over it, the
 * event queue, the object memories, the insights and the `OperatorContext` among them), and one
 * `spawn…` function per root task (or pair of tasks that belong together) starts it through
 * `RootTasks`, which runs every task in the operator's async context, logs how it ended and gates
 * it on the startup activity: the startup activity runs first, and no other task makes an API
 * call before it succeeds (R-ACTIVITY-1). `running.spawnTasks` calls them in their order.
 *
 * The engines that live per object — daemons and timers (R-DAEMON, R-TIMER), indices (R-INDEX) — are
 * built here too: the operator-wide registry of running daemons, whose `daemon killer` root task
 * stops them all at exit while the API client still works (R-DAEMON-8), and the indices with their
 * readiness barrier (R-INDEX-7), empty from the start so that even startup handlers see them.
 * With reconcile handlers, the watch cache (R-CACHE) too: the handlers' `client` reads from it, and
 * each watcher of a cached kind is declared to it (tracked) before it starts.
 *
 * With `livenessEndpoint`, the `health reporter` root task serves the liveness endpoint (probes
 * and the watch health of `engines/health`, fed by every watcher through `context.streams`) and the
 * readiness endpoint on the same host and port (R-ACTIVITY-4, `liveness`), after the startup
 * activity like every other task.
 *
 * With `metricsEndpoint`, the operator collects metrics (`reporting.OperatorMetrics`, its own
 * registry, reported to by the client, the watchers, the processing cycles and the daemons through
 * `context.instruments`) and serves them: by the health reporter's servers when there is a
 * liveness endpoint (the same server if on the same host and port), else by an `endpoint server`
 * root task of its own (`engines/endpoints`). Without it, there are no instruments at all, and
 * the metrics' module is never loaded (nor prom-client with it): `loadMetrics` imports it before
 * `assemble`, only for an operator with metrics (R-PERF-201).
 *
 * Admission webhooks (R-ADMISSION) have two root tasks: the webhook server from
 * `settings.admission.server`, started after the first resource scan with the request function of
 * `engines/admission` (`engines/serving`), and the manager of the webhook configurations named
 * `settings.admission.managed`, which also cleans them up at a graceful exit (`engines/configuring`).
 * Admission handlers without a server stop the operator right after the startup activity. The same
 * server serves the conversions (`on.convert`, `engines/converting`); with
 * `settings.conversion.managed`, a third root task points their CRDs at it (`engines/crdconversions`).
 *
 * Coordination with other operators: the operator's identity (R-PEER-3, `engines/identities`) and
 * its pause set `context.paused`, on when any member toggle is on. Peering (R-PEER, the peerings
 * of `observation`) rides along with the orchestrator and adds a toggle per peering object; while
 * the set is on, the watchers close their streams (R-WATCH-6) and the daemon killer stops all
 * daemons and timers with `OPERATOR_PAUSING` (R-DAEMON-10); the re-listing after the pause brings
 * them back.
 *
 * With Lease election instead (`leaseName`, `settings.leaderElection`), peering does not run: the
 * `leader elector` root task (`engines/leadership`) holds one member of the pause set, on while this
 * operator is not the Lease's holder; it stops after the main tasks (with the authenticator), so
 * the Lease is released only once the work has stopped, while the client still works. Lease
 * election excludes the options of Kopf peering and standalone mode (`OperatorModeError`).
 */

import { setMaxListeners } from 'node:events';
import * as aborts from '../../cogs/aio/aborts.js';
import * as clocks from '../../cogs/aio/clocks.js';
import * as toggles from '../../cogs/aio/toggles.js';
import * as api from '../../cogs/client/api.js';
import * as clients from '../../cogs/client/clients.js';
import type * as connections from '../../cogs/client/connections.js';
import * as credentials from '../../cogs/client/credentials.js';
import * as clientErrors from '../../cogs/client/errors.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import * as bodies from '../../cogs/structs/bodies.js';
import * as errors from '../actions/errors.js';
import * as execution from '../actions/execution.js';
import * as invocation from '../actions/invocation.js';
import * as logging from '../actions/logging.js';
import * as activities from '../engines/activities.js';
import * as admission from '../engines/admission.js';
import * as caching from '../engines/caching.js';
import * as configuring from '../engines/configuring.js';
import * as crdconversions from '../engines/crdconversions.js';
import * as endpoints from '../engines/endpoints.js';
import * as guarding from '../engines/guarding.js';
import * as health from '../engines/health.js';
import * as identities from '../engines/identities.js';
import * as indexing from '../engines/indexing.js';
import * as leadership from '../engines/leadership.js';
import * as membership from '../engines/membership.js';
import * as posting from '../engines/posting.js';
import * as probing from '../engines/probing.js';
import * as reconciliation from '../engines/reconciliation.js';
import * as scheduling from '../engines/scheduling.js';
import * as serving from '../engines/serving.js';
import * as spawning from '../engines/spawning.js';
import * as memos from '../intents/memos.js';
import * as registries from '../intents/registry.js';
import * as inventory from './inventory.js';
import * as observation from './observation.js';
import { checkLeaseSettings, checkShardSettings, METRICS_SCHEMES, type OperatorOptions, readServiceAccountNamespace, type Scope } from './options.js';
import * as orchestration from './orchestration.js';
import * as queueing from './queueing.js';
import * as reconciling from './reconcilers.js';
import * as sharding from './sharding.js';
import * as reactorErrors from './errors.js';
import * as liveness from './liveness.js';
import type * as reporting from './reporting.js';
import { type Awaited, installSignalHandlers, raiseReadyFlag, scheduleUltimateExit, waitForStopFlag } from './stopping.js';

const logger = logging.getLogger('kopf.reactor.running');

/** One root task of an operator. */
export interface OperatorTask {
  /** Kopf's task names, e.g. `poster of events`. */
  readonly name: string;
  /** Resolves when the task has ended; rejects with its error if it failed. */
  readonly done: Promise<void>;
}

export interface Task extends OperatorTask, Awaited {
  readonly group: 'main' | 'auth';
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function capitalized(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** What the root tasks of one operator share: built once by `assemble()`, before any task starts. */
export interface Parts {
  readonly options: OperatorOptions;
  readonly settings: settingsModule.OperatorSettings;
  readonly scope: Scope;
  readonly registry: registries.OperatorRegistry;
  readonly memo: object;
  readonly clock: clocks.Clock;
  readonly vault: credentials.Vault;
  readonly identity: string;
  /** On while any coordinating engine asks the operator to pause (a peering object, the Lease elector). */
  readonly paused: toggles.ToggleSet;
  /** The operator's metrics; `undefined` when metrics are off (no instruments anywhere). */
  readonly metrics: reporting.OperatorMetrics | undefined;
  /** The metrics' module, loaded by `loadMetrics`; `undefined` when metrics are off. */
  readonly reports: Reports | undefined;
  /** The framework's API client; `typed` is the handlers' `client` over the same connections. */
  readonly client: api.HttpKubeApi;
  readonly typed: clients.KubeClient;
  /** The watch cache, with reconcile handlers only (R-CACHE). */
  readonly cache: caching.WatchCache | undefined;
  /** The k8s-events that loggers and helpers queue for the poster. */
  readonly queue: posting.EventQueue;
  readonly daemons: spawning.Daemons;
  /** The operator's one heap of due times (timers' ticks, daemons' and timers' sleeps). */
  readonly scheduler: scheduling.Scheduler;
  /** Aborted at the first stage of the stop: the long-lived tasks. */
  readonly main: AbortController;
  /** Aborted at the second stage: the authenticator and the leader elector. */
  readonly auth: AbortController;
  /** Aborted last: whatever work is still running (the context's signal). */
  readonly cancel: AbortController;
  readonly op: Context;
  /** What the observers discovered: resources, namespaces, the backbone. */
  readonly picture: observation.Insights;
  /** The ring and its membership task, with `settings.sharding.ring` only (R-SHARD-207). */
  readonly seat: inventory.RingSeat | undefined;
}

/** The metrics' module (`reporting`, over prom-client), as `loadMetrics` hands it over. */
export type Reports = typeof reporting;

/**
 * The metrics' module, imported only for an operator with `metricsEndpoint` (R-PERF-201): a plain
 * run never loads prom-client. Called before anything starts, so that metrics asked for but not
 * loadable stop the operator at once, loudly, rather than let it run without them.
 *
 * @throws MetricsUnavailableError when the module or prom-client cannot be loaded (the import's error as `cause`).
 */
export async function loadMetrics(): Promise<Reports> {
  try {
    return await import('./reporting.js');
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new reactorErrors.MetricsUnavailableError(`Metrics are asked for (metricsEndpoint, --metrics), but they cannot be loaded: ${why}`, { cause: error });
  }
}

/**
 * Builds the operator's shared parts, its context among them. `reports` is the metrics' module
 * (`loadMetrics`), given exactly when `options.metricsEndpoint` is: with it, the operator has metrics.
 */
export function assemble(options: OperatorOptions, settings: settingsModule.OperatorSettings, scope: Scope, reports?: Reports): Parts {
  const registry = options.registry ?? registries.getDefaultRegistry();
  const memo = options.memo ?? new memos.Memo();
  const clock = options.clock ?? clocks.realClock;
  const vault = options.vault ?? new credentials.Vault({ clock });
  const identity = options.identity ?? identities.detectOwnId({ manual: false, clock });
  const paused = new toggles.ToggleSet('any');
  const queues = new queueing.Queues();
  // Metrics off: no registry, no instruments; nothing reports anywhere.
  const metrics = reports === undefined ? undefined : new reports.OperatorMetrics({ queues });
  const client = new api.HttpKubeApi({ vault, settings, clock, logger: logging.getLogger('kopf.clients', { lowLevel: true }), instruments: metrics });
  // The watch cache of the kinds reconcile handlers read (R-CACHE); none without them.
  const cache = registry.hasReconcileHandlers() ? new caching.WatchCache({ logger: logging.getLogger('kopf.engines.caching') }) : undefined;
  // Handlers' `client`: the same connections, credentials, retries and metrics as the framework's,
  // reading cached kinds from the cache and reporting its writes to it (R-CACHE-111/112); writes
  // made inside a reconcile call are recorded as that call's own (R-RECONCILE-211).
  const typed = new clients.KubeClient(client, { cache: cache === undefined ? undefined : reconciliation.recordingWrites(cache) });
  const queue = new posting.EventQueue();
  const main = new AbortController();
  const auth = new AbortController();
  const cancel = new AbortController();
  // Every in-flight event and handler listens to these: lift Node's default limit of 10 listeners.
  setMaxListeners(0, main.signal, cancel.signal);
  const daemons = new spawning.Daemons();
  // One heap of due times for the whole operator: timers' ticks, daemons' and timers' sleeps. Due
  // callbacks run in the operator's context and outside of any handler's — not in the context of
  // whichever handler happened to arm the scheduler's one timer.
  const within = { settings, events: queue.asSink(), client: typed };
  const scheduler = new scheduling.Scheduler(clock, {
    within: (fire) => invocation.runInOperator(within, () => execution.outsideHandlers(fire)),
  });
  const shared = {
    options,
    settings,
    scope,
    registry,
    memo,
    clock,
    vault,
    identity,
    paused,
    metrics,
    reports,
    client,
    typed,
    cache,
    queue,
    daemons,
    scheduler,
    main,
    auth,
    cancel,
  };
  const seat = settings.sharding.ring === null ? undefined : ringSeatOf(options, shared);
  const op = operatorContext(shared, queues, seat?.ring);
  const picture = new observation.Insights({ registry, logger: logging.getLogger('kopf.reactor.observation') });
  return { ...shared, op, picture, seat };
}

/**
 * The ring of a sharded operator (R-SHARD-207), made once before anything starts: its membership
 * holds the operator paused (fenced) from the start until it has joined.
 */
function ringSeatOf(options: OperatorOptions, parts: Pick<Parts, 'client' | 'settings' | 'clock' | 'paused'>): inventory.RingSeat {
  const factory = options.ringFactory ?? membershipRing;
  const { client, settings, clock, paused } = parts;
  return factory({ api: client, settings, clock, paused, logger: logging.getLogger('kopf.engines.membership') });
}

/**
 * The default ring: the Lease-based membership of `engines/membership` (R-SHARD-105..110). Its
 * toggle of the pause set is on from here, so the operator is fenced from the start until it has
 * joined; its identity and namespace are decided now, from the settings or the pod's environment.
 */
function membershipRing(parts: inventory.RingParts): inventory.RingSeat {
  const { api, settings, clock, paused, logger } = parts;
  const sharding = settings.sharding;
  const leaving = new AbortController();
  const ring = new membership.Membership({
    api,
    ring: sharding.ring!,
    identity: sharding.identity ?? membership.defaultIdentity(process.env),
    namespace: sharding.namespace ?? leadership.defaultLeaseNamespace(process.env, readServiceAccountNamespace),
    settings: sharding,
    clock,
    paused: paused.makeToggle(true, 'ring membership'),
    logger,
    signal: leaving.signal,
  });
  const run = async (signal: AbortSignal): Promise<void> => {
    const leave = (): void => leaving.abort();
    if (signal.aborted) leave();
    signal.addEventListener('abort', leave, { once: true });
    try {
      await ring.run();
    } finally {
      signal.removeEventListener('abort', leave);
    }
  };
  return { ring, run };
}

/** The operator context (R-API-6) over the shared parts: what watchers, cycles and handlers see. */
function operatorContext(parts: Omit<Parts, 'op' | 'picture' | 'seat'>, queues: queueing.Queues, ring: inventory.RingSeat['ring'] | undefined) {
  const { settings, registry, clock, memo } = parts;
  // Typed as the global `AbortSignal`, so that the context's type can be named outside this module.
  const signal: AbortSignal = parts.cancel.signal;
  const base = {
    settings,
    registry,
    api: parts.client,
    client: parts.typed,
    clock,
    memo,
    memories: new inventory.Memories(memo),
    lifecycle: parts.options.lifecycle,
    events: parts.queue.asSink(),
    logger: logging.getLogger('kopf.reactor'),
    signal,
    // Indices exist (empty) from the start, so that even startup handlers see them (R-INDEX-1).
    indices: new indexing.OperatorIndexers(registry.indexNames()),
    barrier: new indexing.IndexingBarrier(),
    daemons: parts.daemons,
    scheduler: parts.scheduler,
    queues,
    instruments: parts.metrics,
    streams: new health.StreamHealth(clock),
    paused: parts.paused,
    identity: parts.identity,
  };
  const cache = parts.cache;
  const reconcilers = cache === undefined ? undefined : new reconciling.Reconcilers({ op: base, cache, paused: parts.paused });
  const scope = { ...base, cache, reconcilers };
  // Sharded (R-SHARD-207): the watchers of sharded kinds see only the own objects, through the sharder.
  const sharder = ring === undefined ? undefined : new sharding.Sharder(ring, scope, logging.getLogger('kopf.reactor.sharding'));
  return { ...scope, ring, sharder } satisfies inventory.OperatorContext;
}

export type Context = ReturnType<typeof operatorContext>;

/**
 * The root tasks of one operator as they are spawned. Each runs in the operator's async context
 * (R-API-6); its end is logged — an unexpected finish as a warning, a failure as an error that
 * `runTasks` rethrows, a stop as nothing. All but the startup activity are `gated` on it: if it
 * never succeeds, they wait for the stop instead.
 */
export class RootTasks {
  readonly tasks: Task[] = [];
  readonly failures: unknown[] = [];
  /** Resolves once the startup activity has ended: `true` if it succeeded. */
  readonly started: Promise<boolean>;
  readonly markStarted: (started: boolean) => void;

  constructor(private readonly parts: Parts) {
    let markStarted: (started: boolean) => void = () => undefined;
    this.started = new Promise<boolean>((resolve) => {
      markStarted = resolve;
    });
    this.markStarted = markStarted;
  }

  /** Runs `fn` in the operator's async context. */
  enter<T>(fn: () => T): T {
    return invocation.runInOperator(this.parts.op, fn);
  }

  /** Starts a root task; `finishable` tasks may end on their own without a warning. */
  spawn(name: string, group: Task['group'], body: () => Promise<void>, finishable = false): void {
    const { main, auth, cancel } = this.parts;
    const signal = group === 'main' ? main.signal : auth.signal;
    let isSettled = false;
    const done = this.enter(body);
    const settled = done
      .then(
        () => {
          if (!finishable && !signal.aborted) logger.warning(`${capitalized(name)} has finished unexpectedly.`);
        },
        (error: unknown) => {
          if ((signal.aborted || cancel.signal.aborted) && (aborts.isAbortError(error) || error === signal.reason || error === cancel.signal.reason)) return;
          logger.error(`${capitalized(name)} has failed: ${errors.errorMessage(error)}`, clientErrors.traceExtra(error));
          this.failures.push(error);
        },
      )
      .finally(() => {
        isSettled = true;
      });
    this.tasks.push({ name, group, done, settled, isSettled: () => isSettled });
  }

  /** A body that runs once the startup activity succeeded, or waits for `signal` if it never does. */
  gated(body: () => Promise<void>, signal: AbortSignal = this.parts.main.signal): () => Promise<void> {
    return async () => {
      if (await this.started) await body();
      else await untilAborted(signal);
    };
  }
}

/** The Lease elector's member of the pause set, made by the startup activity (Lease election only). */
export interface LeaseSeat {
  toggle?: toggles.Toggle;
}

/**
 * The stop-flag checker and, when the operator owns the process, the signal handler (R-LIFE-1/3/4/6).
 *
 * @returns a function that removes the signal handlers again (nothing to remove without them).
 */
export function spawnStopTasks({ options, settings, clock, main }: Parts, roots: RootTasks): () => void {
  if (options.stopFlag !== undefined) {
    const flag = options.stopFlag;
    const body = async (): Promise<void> => {
      if (await waitForStopFlag(flag, main.signal)) logger.info('Stop-flag is raised. Operator is stopping.');
    };
    roots.spawn('stop-flag checker', 'main', body, true);
  }
  if (!options.handleSignals) return () => undefined;
  let received = (): void => undefined;
  let ultimate = false;
  const uninstall = installSignalHandlers((name) => {
    logger.info(`Signal ${name} is received. Operator is stopping.`);
    if (!ultimate) scheduleUltimateExit(settings.process.ultimateExitingTimeout, options.exit ?? ((code) => process.exit(code)), clock);
    ultimate = true;
    received();
  });
  const body = (): Promise<void> =>
    Promise.race([
      new Promise<void>((resolve) => {
        received = resolve;
      }),
      untilAborted(main.signal),
    ]);
  roots.spawn('signal handler', 'main', body, true);
  return uninstall;
}

/**
 * The startup activity (R-ACTIVITY-1/3, R-LIFE-2): runs first, then checks what its handlers may
 * have changed in the settings (an admission server for admission handlers, R-ADMISSION-2; Lease
 * election, paused before anything watches), raises the ready flag and opens the gate of the others.
 */
export function spawnStartup({ options, settings, registry, memo, clock, paused, main, op, seat }: Parts, roots: RootTasks, lease: LeaseSeat): void {
  const body = async (): Promise<void> => {
    try {
      await activities.runActivity({
        activity: 'startup',
        handlers: registry.activityHandlers('startup'),
        settings,
        memo,
        clock,
        signal: main.signal,
        indices: op.indices.byName,
      });
      serving.checkSettings(settings, registry); // an admission server for admission handlers (R-ADMISSION-2)
      // Lease election (possibly turned on by a startup handler): paused before anything watches.
      if (settings.leaderElection.leaseName !== null) {
        checkLeaseSettings(settings);
        lease.toggle = paused.makeToggle(true, 'lease election');
      }
      checkShardSettings(settings);
      const identity = settings.sharding.identity;
      if (settings.sharding.ring !== (seat?.ring.name ?? null) || (seat !== undefined && identity !== null && identity !== seat.ring.identity)) {
        // The ring decides how every watcher lists (R-SHARD-201): it is chosen before anything starts.
        throw new reactorErrors.OperatorModeError(
          `settings.sharding.ring or .identity was changed by a startup handler: set them before the operator starts (the shards option, --shards, or the settings given to the operator).`,
        );
      }
    } catch (error) {
      roots.markStarted(false);
      if (main.signal.aborted) logger.warning('Startup activity is only partially executed due to cancellation.');
      throw error;
    }
    if (options.readyFlag !== undefined) raiseReadyFlag(options.readyFlag);
    roots.markStarted(true);
    await untilAborted(main.signal);
  };
  roots.spawn('startup activity', 'main', body, false);
}

/** The authenticator (R-AUTH-3): the login activity, and re-logins whenever the credentials fail. */
export function spawnCredentialsRetriever({ options, registry, vault, settings, memo, clock, auth, op }: Parts, roots: RootTasks): void {
  const connection: connections.ConnectionOptions = {
    kubeconfig: options.kubeconfig,
    kubeconfigContext: options.kubeconfigContext,
    connection: options.connection,
    env: options.env,
  };
  const body = (): Promise<void> =>
    activities.authenticator({
      handlers: registry.activityHandlers('authentication'),
      vault,
      settings,
      memo,
      clock,
      signal: auth.signal,
      indices: op.indices.byName,
      connection,
    });
  roots.spawn('credentials retriever', 'auth', roots.gated(body, auth.signal));
}

/**
 * The Lease elector (docs/leader-election.md): holds the operator paused while it is not the
 * Lease's holder; without Lease election, it only waits for the stop. It stops after the main
 * tasks (as the authenticator does): the Lease is released only once the operator's work has
 * stopped, and while the API client still works.
 */
export function spawnLeaderElector({ settings, client, identity, clock, auth }: Parts, roots: RootTasks, lease: LeaseSeat): void {
  const body = async (): Promise<void> => {
    const election = settings.leaderElection;
    if (lease.toggle === undefined || election.leaseName === null) return untilAborted(auth.signal);
    await leadership.runElection({
      api: client,
      name: election.leaseName,
      identity,
      settings: election,
      clock,
      paused: lease.toggle,
      signal: auth.signal,
      namespace: election.leaseNamespace ?? leadership.defaultLeaseNamespace(process.env, readServiceAccountNamespace),
      logger: logging.getLogger('kopf.engines.leadership'),
    });
  };
  roots.spawn('leader elector', 'auth', roots.gated(body, auth.signal));
}

/**
 * The sharder (R-SHARD-207), with `settings.sharding.ring` only: the ring's membership in the
 * 'auth' stage (like the Lease elector: it leaves the ring, deleting its Lease, only after the
 * operator's work has stopped, while the client still works), and the rebalancer among the main
 * tasks. The claimers ride along with the watchers (`orchestration.runWatcher`).
 */
export function spawnSharder({ seat, op, auth, main }: Parts, roots: RootTasks): void {
  const sharder = op.sharder;
  if (seat === undefined || sharder === undefined) return;
  roots.spawn(
    'ring membership',
    'auth',
    roots.gated(() => seat.run(auth.signal), auth.signal),
  );
  roots.spawn(
    'rebalancer',
    'main',
    roots.gated(() => sharder.rebalance(main.signal)),
  );
}

/** The poster of k8s-events (R-POST): creates the events that loggers and helpers queued. */
export function spawnPoster({ queue, client, settings, clock, main }: Parts, roots: RootTasks): void {
  const body = (): Promise<void> =>
    posting.runPoster({ queue, writer: client, settings, clock, signal: main.signal, logger: logging.getLogger('kopf.engines.posting') });
  roots.spawn('poster of events', 'main', roots.gated(body));
}

/** The observers of resources and namespaces (R-RES-7/8, R-SCOPE): what there is to watch. */
export function spawnObservers({ client, settings, picture, clock, main, metrics, scope }: Parts, roots: RootTasks): void {
  const common = {
    api: client,
    settings,
    insights: picture,
    logger: logging.getLogger('kopf.reactor.observation'),
    clock,
    signal: main.signal,
    instruments: metrics,
  };
  const resources = (): Promise<void> => observation.observeResources(common);
  const namespaces = (): Promise<void> => observation.observeNamespaces({ ...common, ...scope });
  roots.spawn('resource observer', 'main', roots.gated(resources));
  roots.spawn('namespace observer', 'main', roots.gated(namespaces));
}

/**
 * The orchestrator: one watcher per resource × namespace (default `orchestration.runWatcher`), with
 * peering riding along. The peering toggles exist before any watcher starts, and mandatory peering
 * holds everything back from the start (R-PEER-2).
 */
export function spawnOrchestrator({ options, client, settings, picture, identity, paused, clock, main, cancel, op }: Parts, roots: RootTasks): void {
  const peeringTasks = new observation.PeeringTasks({
    api: client,
    settings,
    insights: picture,
    identity,
    paused,
    clock,
    cancel: cancel.signal,
    logger: logging.getLogger('kopf.engines.peering'),
  });
  const watcher = options.watcher ?? orchestration.runWatcher;
  const body = (): Promise<void> =>
    orchestration.orchestrate({
      insights: picture,
      signal: main.signal,
      logger: logging.getLogger('kopf.reactor.orchestration'),
      companion: peeringTasks,
      spawn: (resource, namespace, signal) => {
        op.reconcilers?.track(resource, namespace); // before its watcher: the cache holds what it lists (R-CACHE-106)
        return watcher(op, resource, namespace, signal);
      },
    });
  roots.spawn('multidimensional multitasker', 'main', roots.gated(body, main.signal));
}

/**
 * The daemon killer: while the operator is paused, every daemon and timer is stopped (R-DAEMON-10);
 * at exit, all of them are stopped in memory (R-DAEMON-8), while the API client still works for
 * their last patches.
 */
export function spawnDaemonKiller({ paused, daemons, scheduler, settings, clock, main }: Parts, roots: RootTasks): void {
  const body = async (): Promise<void> => {
    try {
      for (;;) {
        await paused.waitFor(true, main.signal);
        void daemons.pauseAll({ settings, clock }).catch((error: unknown) => {
          logger.error(`Daemons and timers are not stopped for the pause: ${errors.errorMessage(error)}`);
        });
        await paused.waitFor(false, main.signal);
      }
    } catch (error) {
      if (!main.signal.aborted) throw error;
    }
    await daemons.killAll({ settings, clock });
    // Every timer and daemon has exited or was abandoned: nothing is due any more.
    scheduler.close();
  };
  roots.spawn('daemon killer', 'main', body);
}

/**
 * The reconciler (R-RECONCILE-213): reconcile calls run from the cache's changes as long as the
 * operator runs; at the stop, no new call starts, the calls in flight see their `signal` aborted,
 * and the stop waits for them (within the operator's deadlines for its tasks).
 */
export function spawnReconciler({ op, main }: Parts, roots: RootTasks): void {
  const reconcilers = op.reconcilers;
  if (reconcilers === undefined) return;
  const body = async (): Promise<void> => {
    await untilAborted(main.signal);
    await reconcilers.stop();
  };
  roots.spawn('reconciler', 'main', body);
}

/**
 * The operator's own HTTP endpoints, one server per host and port: the health reporter serves the
 * liveness and readiness endpoints (R-ACTIVITY-4), and the metrics too when there are any; without
 * a liveness endpoint, the metrics get an endpoint server of their own. Scrapes are answered until
 * the stop begins; then the servers close, and later scrapes are refused.
 */
export function spawnEndpoints(parts: Parts, roots: RootTasks): void {
  const { options, registry, metrics, main } = parts;
  const extra: endpoints.Endpoint[] = [];
  if (metrics !== undefined && parts.reports !== undefined) extra.push(metricsEndpointOf(parts, parts.reports, metrics, options.metricsEndpoint!));
  if (options.livenessEndpoint !== undefined) {
    spawnHealthReporter(parts, roots, options.livenessEndpoint, extra);
    return;
  }
  if (registry.activityHandlers('probe').length > 0) {
    logger.info('Probes are registered, but no liveness endpoint is served (livenessEndpoint, --liveness): they will not run.');
  }
  if (extra.length === 0) return;
  const body = (): Promise<void> =>
    endpoints.serveEndpoints({ endpoints: extra, logger: logging.getLogger('kopf.reactor.endpoints'), signal: main.signal, onServing: options.onServing });
  roots.spawn('endpoint server', 'main', roots.gated(body));
}

/**
 * The metrics endpoint: for an `https://` URL, over TLS and guarded by the API server's
 * TokenReview and SubjectAccessReview through the operator's own client (R-SEC-9..12); plain
 * HTTP otherwise, with a WARNING when that is reachable from beyond the loopback interface.
 */
function metricsEndpointOf(parts: Parts, reports: Reports, metrics: reporting.OperatorMetrics, url: string): endpoints.Endpoint {
  const { options, client, clock, main } = parts;
  const address = endpoints.parseEndpointUrl(url, 'metricsEndpoint', METRICS_SCHEMES);
  if (!address.secure) {
    if (!endpoints.isLoopbackHost(address.host)) {
      logger.warning(
        `The metrics at ${endpoints.formatAddress(address)} are served in plain HTTP to anyone who can reach them; serve them at https://… to require a token with the right to get ${address.path}.`,
      );
    }
    return reports.metricsEndpoint(metrics, url);
  }
  // Made or read when the server starts (after the startup activity); its errors stop the operator.
  const certificate = (): endpoints.EndpointTls => reports.metricsCertificate(address, options.metricsTlsDir);
  const guard = new guarding.AccessGuard({
    post: (path, body, signal) => client.request({ method: 'POST', path, body, signal }),
    clock,
    logger: logging.getLogger('kopf.reactor.metrics'),
    signal: main.signal,
  });
  return reports.metricsEndpoint(metrics, url, 'metricsEndpoint', { tls: certificate, guard });
}

/** The health reporter: the probes' results and the watch health, and `alongside` on the same servers. */
function spawnHealthReporter(parts: Parts, roots: RootTasks, url: string, alongside: endpoints.Endpoint[]): void {
  const { options, settings, registry, memo, clock, picture, paused, main, op } = parts;
  const body = (): Promise<void> =>
    liveness.reportHealth({
      url,
      settings,
      clock,
      insights: picture,
      streams: op.streams,
      barrier: op.barrier,
      paused,
      prober: new probing.Prober({ handlers: registry.activityHandlers('probe'), settings, memo, clock, indices: op.indices.byName, signal: main.signal }),
      logger: logging.getLogger('kopf.engines.probing'),
      signal: main.signal,
      onServing: options.onServing,
      alongside,
    });
  roots.spawn('health reporter', 'main', roots.gated(body));
}

/**
 * Admission webhooks (R-ADMISSION): the server gets the request function once resources are
 * discovered; the manager keeps the webhook configurations pointing at it and cleans them up at
 * exit, while the API client still works.
 */
export function spawnAdmission(parts: Parts, roots: RootTasks): void {
  const { settings, registry, client, picture, vault, main, cancel, clock } = parts;
  const configs = new serving.ClientConfigs();
  const fn = webhookFnOf(parts);
  const admissionLogger = logging.getLogger('kopf.engines.admission');
  const ready = picture.readyResources;
  const server = (): Promise<void> =>
    serving.serveWebhooks({ settings, registry, fn, configs, ready, vault, logger: admissionLogger, signal: main.signal, cancellation: cancel.signal });
  // A server that stops serving stops the operator (R-ADMISSION-3), as it says itself: finishable.
  roots.spawn('admission webhook server', 'main', roots.gated(server), true);
  const manager = (): Promise<void> =>
    configuring.manageConfigurations({
      settings,
      registry,
      api: client,
      resources: picture,
      ready,
      configs,
      configurationResource: (type, signal) => picture.waitForBackbone([type === 'validating' ? 'validatingWebhooks' : 'mutatingWebhooks'], signal),
      logger: admissionLogger,
      signal: main.signal,
      cancellation: cancel.signal,
    });
  roots.spawn('admission webhook manager', 'main', roots.gated(manager));
  // Conversions (R-CONVERT-208): their CRDs pointed at the same server when managed.
  if (registries.convertedCrds(registry).length === 0) return;
  const crds = (): Promise<void> =>
    crdconversions.manageCrdConversions({
      settings,
      registry,
      api: client,
      crds: picture.backbone('crds') ?? observation.CRDS,
      ready,
      configs,
      clock,
      logger: logging.getLogger('kopf.engines.converting'),
      signal: main.signal,
    });
  roots.spawn('conversion webhook manager', 'main', roots.gated(crds));
}

/** The request function of the admission webhook server (`engines/admission`), over this operator's parts. */
function webhookFnOf({ registry, settings, clock, picture, metrics, typed, memo, op }: Parts): ReturnType<typeof admission.webhookFn> {
  return admission.webhookFn({
    registry,
    settings,
    clock,
    resources: picture,
    indices: op.indices.byName,
    signal: op.signal,
    instruments: metrics,
    client: typed,
    memos: {
      recallMemo: (body, { ephemeral }) => (ephemeral ? memos.copyMemo(memo) : op.memories.recall(bodies.objectKey(body), { listing: false }).memo),
    },
  });
}
