/**
 * Running an operator (R-LIFE-1..6): `operator()` for embedding, `run()` for a process of its own,
 * and the two halves Kopf also exposes, `spawnTasks()` and `runTasks()`.
 *
 * `spawnTasks` builds one operator's world — settings, registry, memo, vault, the HTTP client over
 * it, the event queue, the object memories, the insights and the `OperatorContext` — and starts its
 * root tasks inside the operator's async context (R-API-6). The startup activity runs first; every
 * other task waits for it, so no API call happens before it succeeds (R-ACTIVITY-1, R-LIFE-2). Then,
 * concurrently: the authenticator (login activity and re-logins, R-AUTH-3), the event poster
 * (R-POST), the resource and namespace observers (R-RES-7/8, R-SCOPE) and the orchestrator, which
 * keeps one `orchestration.runWatcher` per resource × namespace. The stop flag and (only when asked to,
 * R-LIFE-6) SIGINT/SIGTERM are root tasks too.
 *
 * `spawnTasks` itself only composes: `configure` checks the options and writes them into the
 * settings, `assemble` builds the parts the tasks share (`Parts`, the context among them), and one
 * `spawn…` function per root task (or pair of tasks that belong together) starts it through
 * `RootTasks`, which runs every task in the operator's async context, logs how it ended and gates
 * it on the startup activity. Kopf: `kopf._core.reactor.running.spawn_tasks`.
 *
 * `runTasks` waits for the first root task to end — a stop request, a failure, or an unexpected
 * finish — and then stops gracefully (R-LIFE-3): (1) stop the long-lived tasks and wait for them;
 * (2) stop the authenticator, run the cleanup activity (only if startup succeeded), close the HTTP
 * client; (3) give what is still running up to 5 seconds, then cancel it through the context's
 * signal. Only work this operator created is ever cancelled, through its own abort controllers
 * (R-LIFE-5). If a task failed, `runTasks` (and `operator()`) rejects with its error afterwards.
 *
 * The engines that live per object — daemons and timers (R-DAEMON, R-TIMER), indices (R-INDEX) — are
 * built here too: the operator-wide registry of running daemons, whose `daemon killer` root task
 * stops them all at exit while the API client still works (R-DAEMON-8), and the indices with their
 * readiness barrier (R-INDEX-7), empty from the start so that even startup handlers see them.
 *
 * With `livenessEndpoint`, the `health reporter` root task serves the liveness endpoint (probes
 * and the watch health of `engines/health`, fed by every watcher through `context.streams`) and the
 * readiness endpoint on the same host and port (R-ACTIVITY-4, `reporting`), after the startup
 * activity like every other task.
 *
 * With `metricsEndpoint`, the operator collects metrics (`metrics.OperatorMetrics`, its own
 * registry, reported to by the client, the watchers, the processing cycles and the daemons through
 * `context.instruments`) and serves them: by the health reporter's servers when there is a
 * liveness endpoint (the same server if on the same host and port), else by an `endpoint server`
 * root task of its own (`engines/endpoints`). Without it, there are no instruments at all.
 *
 * Admission webhooks (R-ADMISSION) have two root tasks: the webhook server from
 * `settings.admission.server`, started after the first resource scan with the request function of
 * `engines/admission` (`engines/serving`), and the manager of the webhook configurations named
 * `settings.admission.managed`, which also cleans them up at a graceful exit (`engines/configuring`).
 * Admission handlers without a server stop the operator right after the startup activity.
 *
 * Coordination with other operators: the operator's identity (R-PEER-3, `engines/identities`) and
 * its pause set `context.paused`, on when any member toggle is on. Peering (R-PEER, the peerings
 * of `observation`) rides along with the orchestrator and adds a toggle per peering object; while the set is on, the
 * watchers close their streams (R-WATCH-6) and the daemon killer stops all daemons and timers
 * with `OPERATOR_PAUSING` (R-DAEMON-10); the re-listing after the pause brings them back.
 *
 * With Lease election instead (`leaseName`, `settings.leaderElection`), peering does not run: the
 * `leader elector` root task (`engines/leadership`) holds one member of the pause set, on while this
 * operator is not the Lease's holder; it stops after the main tasks (with the authenticator), so
 * the Lease is released only once the work has stopped, while the client still works. Lease
 * election excludes the options of Kopf peering and standalone mode (`OperatorModeError`).
 *
 * What stops an operator is part of running it and follows below. A stop request can come from
 * several places — the user's stop flag (an `AbortSignal`, a promise, or an object with `wait()`),
 * SIGINT/SIGTERM when the operator owns the process — and every wait during the stop must have a
 * deadline, or one stuck task would keep the process alive forever: hence the stop and ready flags
 * in all their accepted shapes, OS signal handlers (installed only when asked to), the forced
 * "ultimate exit" after a termination signal, and waiting for tasks with a deadline (R-LIFE-3/4/6,
 * R-ACTIVITY-3).
 */

import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import * as aborts from '../../cogs/aio/aborts.js';
import * as clocks from '../../cogs/aio/clocks.js';
import * as toggles from '../../cogs/aio/toggles.js';
import * as api from '../../cogs/client/api.js';
import * as clients from '../../cogs/client/clients.js';
import * as connections from '../../cogs/client/connections.js';
import * as credentials from '../../cogs/client/credentials.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as settingsModule from '../../cogs/configs/settings.js';
import * as bodies from '../../cogs/structs/bodies.js';
import type * as references from '../../cogs/structs/references.js';
import * as errors from '../actions/errors.js';
import * as invocation from '../actions/invocation.js';
import type * as lifecycles from '../actions/lifecycles.js';
import * as logging from '../actions/logging.js';
import * as activities from '../engines/activities.js';
import * as admission from '../engines/admission.js';
import * as configuring from '../engines/configuring.js';
import * as endpoints from '../engines/endpoints.js';
import * as health from '../engines/health.js';
import * as identities from '../engines/identities.js';
import * as indexing from '../engines/indexing.js';
import * as leadership from '../engines/leadership.js';
import * as posting from '../engines/posting.js';
import * as probing from '../engines/probing.js';
import * as serving from '../engines/serving.js';
import * as spawning from '../engines/spawning.js';
import * as memos from '../intents/memos.js';
import * as registries from '../intents/registry.js';
import * as inventory from './inventory.js';
import * as observation from './observation.js';
import * as orchestration from './orchestration.js';
import * as queueing from './queueing.js';
import * as reporting from './reporting.js';
import { OperatorModeError, OperatorScopeError, PeeringOptionsError } from './errors.js';

/** Seconds that remaining work gets to finish at each stage of a graceful stop (R-LIFE-3). */
export const HUNG_TASK_TIMEOUT = 5;

/** Runs one resource in one namespace until the signal aborts (default: `orchestration.runWatcher`). */
export type Watcher = (context: inventory.OperatorContext, resource: references.Resource, namespace: string | null, signal: AbortSignal) => Promise<void>;

/**
 * Options of `operator()`, `run()` and `spawnTasks()` (R-LIFE-1). The connection options
 * (`kubeconfig`, `kubeconfigContext`, `connection`, `env`) say where the built-in login gets
 * credentials instead of the process's environment (`connections.ConnectionOptions`).
 */
export interface OperatorOptions extends connections.ConnectionOptions {
  /** Default: the global default registry. */
  readonly registry?: registries.OperatorRegistry;
  /** Default: fresh settings. The options below write into it (e.g. `peering.priority`). */
  readonly settings?: settingsModule.OperatorSettings;
  /** The operator memo (activity handlers get it; objects get copies). Default: an empty `Memo`. */
  readonly memo?: object;
  /** Serve all namespaces (`--all-namespaces`). Not together with `namespaces`. */
  readonly clusterwide?: boolean;
  /** Namespace patterns (globs, or regular expressions matching whole names), OR-ed (R-SCOPE-2). */
  readonly namespaces?: readonly observation.NamespacePattern[];
  /** Sets `settings.peering.standalone`. */
  readonly standalone?: boolean;
  /** The priority among peers (R-PEER-8): sets `settings.peering.priority`. An integer. */
  readonly priority?: number;
  /** The peering object's name: sets `settings.peering.name` and makes peering mandatory (R-PEER-2). */
  readonly peeringName?: string;
  /**
   * Leader election on this Lease (`settings.leaderElection.leaseName`, docs/leader-election.md):
   * replicas are hot standbys, only the Lease's holder works. Not together with `standalone`,
   * `peeringName` or `priority`.
   */
  readonly leaseName?: string;
  /** The Lease's namespace (`settings.leaderElection.leaseNamespace`). Default: `$POD_NAMESPACE`, else the service account's, else `default`. */
  readonly leaseNamespace?: string;
  /**
   * `http://HOST:PORT/PATH` of the liveness endpoint (R-ACTIVITY-4): the probes' results and the
   * watch health; the readiness endpoint is served on the same host and port at
   * `settings.health.readinessPath` (default `/readyz`). Default: none (docs/health.md).
   */
  readonly livenessEndpoint?: string;
  /**
   * `http://HOST:PORT/PATH` where the operator serves its Prometheus metrics (docs/metrics.md),
   * e.g. `http://0.0.0.0:8080/metrics`. Default: no metrics are collected at all.
   */
  readonly metricsEndpoint?: string;
  /** Called once the operator's endpoints (liveness, readiness, metrics) listen, with their URLs (ports resolved). */
  readonly onServing?: (served: readonly endpoints.ServedEndpoint[]) => void;
  /** Raised → the operator stops gracefully (INFO `Stop-flag is raised. Operator is stopping.`). */
  readonly stopFlag?: StopFlag;
  /** Raised right after the startup activity succeeded (R-ACTIVITY-3). */
  readonly readyFlag?: ReadyFlag;
  /** The lifecycle of change handlers. Default: the global default lifecycle. */
  readonly lifecycle?: lifecycles.Lifecycle;
  /** A credentials vault, e.g. pre-populated (then no initial login runs). Default: a new one. */
  readonly vault?: credentials.Vault;
  /**
   * This operator's identity among peers (R-PEER-3), also the Lease's `holderIdentity` in Lease
   * election. Default: `$POD_ID`, else `<user>@<host>/<UTC time>/<3 random chars>`.
   */
  readonly identity?: string;
  /** Stop on SIGINT/SIGTERM (R-LIFE-3/4). Default `false` for `operator()`, `true` for `run()`. */
  readonly handleSignals?: boolean;
  /** The forced exit after a signal (R-LIFE-4). Default `process.exit`. */
  readonly exit?: (code: number) => void;
  /** Default: the real clock. */
  readonly clock?: clocks.Clock;
  /** Default: `orchestration.runWatcher` (a seam for tests and embedders). */
  readonly watcher?: Watcher;
}

/**
 * Checks the peering options before anything starts: `peeringName` and `identity` non-empty,
 * `priority` an integer, and no `peeringName`, `priority` or `identity` together with
 * `standalone: true` (they would do nothing).
 *
 * @throws PeeringOptionsError naming the option.
 */
export function checkPeeringOptions(options: Pick<OperatorOptions, 'standalone' | 'peeringName' | 'priority' | 'identity' | 'leaseName'>): void {
  if (options.peeringName !== undefined && (typeof options.peeringName !== 'string' || options.peeringName === '')) {
    throw new PeeringOptionsError(`peeringName must be a non-empty name of a peering object, got ${JSON.stringify(options.peeringName)}.`);
  }
  if (options.identity !== undefined && (typeof options.identity !== 'string' || options.identity === '')) {
    throw new PeeringOptionsError(`identity must be a non-empty string, got ${JSON.stringify(options.identity)}.`);
  }
  if (options.priority !== undefined && !Number.isSafeInteger(options.priority)) {
    throw new PeeringOptionsError(`priority must be an integer, got ${String(options.priority)}.`);
  }
  if (options.standalone === true) {
    if (options.peeringName !== undefined)
      throw new PeeringOptionsError('standalone and peeringName cannot be used together: a standalone operator does not peer.');
    if (options.priority !== undefined) throw new PeeringOptionsError('standalone and priority cannot be used together: a priority only ranks peers.');
    if (options.identity !== undefined && options.leaseName === undefined) {
      throw new PeeringOptionsError('standalone and identity cannot be used together: an identity only names the operator among peers (or as a Lease holder).');
    }
  }
}

/** One root task of an operator. */
export interface OperatorTask {
  /** Kopf's task names, e.g. `poster of events`. */
  readonly name: string;
  /** Resolves when the task has ended; rejects with its error if it failed. */
  readonly done: Promise<void>;
}

/** A spawned operator, to be run by `runTasks()` (R-LIFE-1). */
export interface OperatorTasks {
  /** The operator context of this operator. */
  readonly context: inventory.OperatorContext;
  /** Its root tasks, already started (all but the startup activity wait for it). */
  readonly tasks: readonly OperatorTask[];
}

interface Task extends OperatorTask, Awaited {
  readonly group: 'main' | 'auth';
}

interface Machinery {
  readonly tasks: readonly Task[];
  readonly main: AbortController;
  readonly auth: AbortController;
  readonly cancel: AbortController;
  readonly started: Promise<boolean>;
  readonly failures: unknown[];
  readonly clock: clocks.Clock;
  readonly cleanup: () => Promise<void>;
  readonly close: () => void;
  running: boolean;
}

const machineries = new WeakMap<OperatorTasks, Machinery>();
const logger = logging.getLogger('kopf.reactor.running');

const NO_SCOPE_WARNING =
  'Absence of either namespaces or cluster-wide flag will become an error soon. ' + 'For now, switching to the cluster-wide mode for backward compatibility.';

/**
 * The operator's scope (R-SCOPE-1): both modes → throws; neither → WARNING and cluster-wide.
 *
 * @throws OperatorScopeError for `clusterwide` with `namespaces`.
 */
export function resolveScope(options: Pick<OperatorOptions, 'clusterwide' | 'namespaces'>): {
  clusterwide: boolean;
  namespaces: observation.NamespacePattern[];
} {
  const patterns = [...(options.namespaces ?? [])];
  if (options.clusterwide && patterns.length > 0) {
    throw new OperatorScopeError('The operator can be either cluster-wide or namespaced, not both.');
  }
  if (!options.clusterwide && patterns.length === 0) {
    logger.warning(NO_SCOPE_WARNING);
    return { clusterwide: true, namespaces: [] };
  }
  return { clusterwide: options.clusterwide === true, namespaces: patterns };
}

/**
 * Writes `leaseName`/`leaseNamespace` into `settings.leaderElection` and checks that Lease election
 * is not combined with options of Kopf peering or standalone mode; returns whether it is on.
 *
 * @throws OperatorModeError for a combination; configErrors.SettingsError for bad timings.
 */
function applyLeaseOptions(options: OperatorOptions, settings: settingsModule.OperatorSettings): boolean {
  const election = settings.leaderElection;
  if (options.leaseName !== undefined) election.leaseName = options.leaseName;
  if (options.leaseNamespace !== undefined) election.leaseNamespace = options.leaseNamespace;
  if (election.leaseName === null) {
    if (options.leaseNamespace !== undefined) throw new OperatorModeError("leaseNamespace is given without leaseName: Lease election needs the Lease's name.");
    return false;
  }
  const others: ReadonlyArray<[keyof OperatorOptions, boolean]> = [
    ['standalone', options.standalone === true],
    ['peeringName', options.peeringName !== undefined],
    ['priority', options.priority !== undefined],
  ];
  for (const [name, given] of others) {
    if (given) throw new OperatorModeError(`leaseName (Lease election) and ${name} (Kopf peering) exclude each other: choose one mode of coordination.`);
  }
  checkLeaseSettings(settings);
  return true;
}

/**
 * With `settings.leaderElection.leaseName` set: valid timings, and no setting of another mode of
 * coordination (`peering.standalone`, `peering.mandatory`). Checked again after the startup activity.
 *
 * @throws OperatorModeError for a combination; configErrors.SettingsError for bad timings.
 */
function checkLeaseSettings(settings: settingsModule.OperatorSettings): void {
  if (settings.leaderElection.leaseName === null) return;
  for (const name of ['standalone', 'mandatory'] as const) {
    if (settings.peering[name]) {
      throw new OperatorModeError(
        `settings.leaderElection.leaseName (Lease election) and settings.peering.${name} exclude each other: choose one mode of coordination.`,
      );
    }
  }
  settings.leaderElection.validate();
}

/** The in-cluster service account's namespace, if the operator runs in a pod. */
function readServiceAccountNamespace(): string | undefined {
  try {
    return fs.readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8');
  } catch {
    return undefined;
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function capitalized(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/**
 * Builds an operator and starts its root tasks (R-LIFE-2); `runTasks()` then runs them to the end.
 * Writes `standalone` and the scope into `settings.peering`.
 *
 * The root tasks, in the order they are spawned (each by a function of its own, below): the stop
 * flag and signal handler, the startup activity, the authenticator and the leader elector, the
 * poster of events, the resource and namespace observers, the orchestrator with peering, the
 * daemon killer, the operator's HTTP endpoints, and the admission webhook server and manager.
 *
 * @throws OperatorScopeError for `clusterwide` together with `namespaces`.
 * @throws ConnectionOptionsError for `connection` together with `kubeconfig`/`kubeconfigContext`.
 * @throws EndpointUrlError for a malformed `livenessEndpoint` or `metricsEndpoint`, before anything starts.
 * @throws PeeringOptionsError for malformed or contradicting peering options, before anything starts.
 * @throws OperatorModeError for `leaseName` with `standalone`, `peeringName` or `priority`, or
 *   `leaseNamespace` without `leaseName`; SettingsError for bad `settings.leaderElection` timings.
 * @example
 * const tasks = await spawnTasks({ clusterwide: true, stopFlag: controller.signal });
 * await runTasks(tasks);
 */
export async function spawnTasks(options: OperatorOptions = {}): Promise<OperatorTasks> {
  const { settings, scope } = configure(options);
  const parts = assemble(options, settings, scope);
  const roots = new RootTasks(parts);
  const lease: LeaseSeat = {};
  const uninstall = spawnStopTasks(parts, roots);
  spawnStartup(parts, roots, lease);
  spawnCredentialsRetriever(parts, roots);
  spawnLeaderElector(parts, roots, lease);
  spawnPoster(parts, roots);
  spawnObservers(parts, roots);
  spawnOrchestrator(parts, roots);
  spawnDaemonKiller(parts, roots);
  spawnEndpoints(parts, roots);
  spawnAdmission(parts, roots);
  const result: OperatorTasks = { context: parts.op, tasks: roots.tasks.map(({ name, done }) => ({ name, done })) };
  machineries.set(result, machineryOf(parts, roots, uninstall));
  return result;
}

/**
 * Checks the options before anything starts, and writes those that are settings into the settings
 * (peering, scope, Lease election).
 */
function configure(options: OperatorOptions): { settings: settingsModule.OperatorSettings; scope: Scope } {
  checkPeeringOptions(options);
  const settings = options.settings ?? new settingsModule.OperatorSettings();
  applyLeaseOptions(options, settings);
  connections.checkConnectionOptions(options);
  if (options.livenessEndpoint !== undefined) endpoints.parseEndpointUrl(options.livenessEndpoint, 'livenessEndpoint');
  if (options.metricsEndpoint !== undefined) endpoints.parseEndpointUrl(options.metricsEndpoint, 'metricsEndpoint');
  const scope = resolveScope(options);
  if (options.standalone !== undefined) settings.peering.standalone = options.standalone;
  if (options.peeringName !== undefined) {
    settings.peering.mandatory = true;
    settings.peering.name = options.peeringName;
  }
  if (options.priority !== undefined) settings.peering.priority = options.priority;
  settings.peering.clusterwide = scope.clusterwide;
  return { settings, scope };
}

type Scope = ReturnType<typeof resolveScope>;

/** What the root tasks of one operator share: built once by `assemble()`, before any task starts. */
interface Parts {
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
  /** The framework's API client; `typed` is the handlers' `client` over the same connections. */
  readonly client: api.HttpKubeApi;
  readonly typed: clients.KubeClient;
  /** The k8s-events that loggers and helpers queue for the poster. */
  readonly queue: posting.EventQueue;
  readonly daemons: spawning.Daemons;
  /** Aborted at the first stage of the stop: the long-lived tasks. */
  readonly main: AbortController;
  /** Aborted at the second stage: the authenticator and the leader elector. */
  readonly auth: AbortController;
  /** Aborted last: whatever work is still running (the context's signal). */
  readonly cancel: AbortController;
  readonly op: Context;
  /** What the observers discovered: resources, namespaces, the backbone. */
  readonly picture: observation.Insights;
}

/** Builds the operator's shared parts, its context among them. */
function assemble(options: OperatorOptions, settings: settingsModule.OperatorSettings, scope: Scope): Parts {
  const registry = options.registry ?? registries.getDefaultRegistry();
  const memo = options.memo ?? new memos.Memo();
  const clock = options.clock ?? clocks.realClock;
  const vault = options.vault ?? new credentials.Vault({ clock });
  const identity = options.identity ?? identities.detectOwnId({ manual: false, clock });
  const paused = new toggles.ToggleSet('any');
  const queues = new queueing.Queues();
  // Metrics off: no registry, no instruments; nothing reports anywhere.
  const metrics = options.metricsEndpoint === undefined ? undefined : new reporting.OperatorMetrics({ queues });
  const client = new api.HttpKubeApi({ vault, settings, clock, logger: logging.getLogger('kopf.clients', { lowLevel: true }), instruments: metrics });
  // Handlers' `client`: the same connections, credentials, retries and metrics as the framework's.
  const typed = new clients.KubeClient(client);
  const queue = new posting.EventQueue();
  const main = new AbortController();
  const auth = new AbortController();
  const cancel = new AbortController();
  // Every in-flight event and handler listens to these: lift Node's default limit of 10 listeners.
  setMaxListeners(0, main.signal, cancel.signal);
  const daemons = new spawning.Daemons();
  const shared = { options, settings, scope, registry, memo, clock, vault, identity, paused, metrics, client, typed, queue, daemons, main, auth, cancel };
  const op = operatorContext(shared, queues);
  const picture = new observation.Insights({ registry, logger: logging.getLogger('kopf.reactor.observation') });
  return { ...shared, op, picture };
}

/** The operator context (R-API-6) over the shared parts: what watchers, cycles and handlers see. */
function operatorContext(parts: Omit<Parts, 'op' | 'picture'>, queues: queueing.Queues) {
  const { settings, registry, clock, memo } = parts;
  return {
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
    signal: parts.cancel.signal,
    // Indices exist (empty) from the start, so that even startup handlers see them (R-INDEX-1).
    indices: new indexing.OperatorIndexers(registry.indexNames()),
    barrier: new indexing.IndexingBarrier(),
    daemons: parts.daemons,
    queues,
    instruments: parts.metrics,
    streams: new health.StreamHealth(clock),
    paused: parts.paused,
    identity: parts.identity,
  } satisfies inventory.OperatorContext;
}

type Context = ReturnType<typeof operatorContext>;

/**
 * The root tasks of one operator as they are spawned. Each runs in the operator's async context
 * (R-API-6); its end is logged — an unexpected finish as a warning, a failure as an error that
 * `runTasks` rethrows, a stop as nothing. All but the startup activity are `gated` on it: if it
 * never succeeds, they wait for the stop instead.
 */
class RootTasks {
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
  gated(body: () => Promise<void>, signal = this.parts.main.signal): () => Promise<void> {
    return async () => {
      if (await this.started) await body();
      else await untilAborted(signal);
    };
  }
}

/** The Lease elector's member of the pause set, made by the startup activity (Lease election only). */
interface LeaseSeat {
  toggle?: toggles.Toggle;
}

/**
 * The stop-flag checker and, when the operator owns the process, the signal handler (R-LIFE-1/3/4/6).
 *
 * @returns a function that removes the signal handlers again (nothing to remove without them).
 */
function spawnStopTasks({ options, settings, clock, main }: Parts, roots: RootTasks): () => void {
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
function spawnStartup({ options, settings, registry, memo, clock, paused, main, op }: Parts, roots: RootTasks, lease: LeaseSeat): void {
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
function spawnCredentialsRetriever({ options, registry, vault, settings, memo, clock, auth, op }: Parts, roots: RootTasks): void {
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
function spawnLeaderElector({ settings, client, identity, clock, auth }: Parts, roots: RootTasks, lease: LeaseSeat): void {
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

/** The poster of k8s-events (R-POST): creates the events that loggers and helpers queued. */
function spawnPoster({ queue, client, settings, clock, main }: Parts, roots: RootTasks): void {
  const body = (): Promise<void> =>
    posting.runPoster({ queue, writer: client, settings, clock, signal: main.signal, logger: logging.getLogger('kopf.engines.posting') });
  roots.spawn('poster of events', 'main', roots.gated(body));
}

/** The observers of resources and namespaces (R-RES-7/8, R-SCOPE): what there is to watch. */
function spawnObservers({ client, settings, picture, clock, main, metrics, scope }: Parts, roots: RootTasks): void {
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
function spawnOrchestrator({ options, client, settings, picture, identity, paused, clock, main, cancel, op }: Parts, roots: RootTasks): void {
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
      spawn: (resource, namespace, signal) => watcher(op, resource, namespace, signal),
    });
  roots.spawn('multidimensional multitasker', 'main', roots.gated(body, main.signal));
}

/**
 * The daemon killer: while the operator is paused, every daemon and timer is stopped (R-DAEMON-10);
 * at exit, all of them are stopped in memory (R-DAEMON-8), while the API client still works for
 * their last patches.
 */
function spawnDaemonKiller({ paused, daemons, settings, clock, main }: Parts, roots: RootTasks): void {
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
  };
  roots.spawn('daemon killer', 'main', body);
}

/**
 * The operator's own HTTP endpoints, one server per host and port: the health reporter serves the
 * liveness and readiness endpoints (R-ACTIVITY-4), and the metrics too when there are any; without
 * a liveness endpoint, the metrics get an endpoint server of their own. Scrapes are answered until
 * the stop begins; then the servers close, and later scrapes are refused.
 */
function spawnEndpoints(parts: Parts, roots: RootTasks): void {
  const { options, registry, metrics, main } = parts;
  const extra: endpoints.Endpoint[] = [];
  if (metrics !== undefined) extra.push(reporting.metricsEndpoint(metrics, options.metricsEndpoint!));
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

/** The health reporter: the probes' results and the watch health, and `alongside` on the same servers. */
function spawnHealthReporter(parts: Parts, roots: RootTasks, url: string, alongside: endpoints.Endpoint[]): void {
  const { options, settings, registry, memo, clock, picture, paused, main, op } = parts;
  const body = (): Promise<void> =>
    reporting.reportHealth({
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
function spawnAdmission(parts: Parts, roots: RootTasks): void {
  const { settings, registry, client, picture, vault, main, cancel } = parts;
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

/** What `runTasks` needs of a spawned operator: its tasks, its stages, its cleanup and its close. */
function machineryOf({ registry, settings, memo, clock, client, main, auth, cancel, op }: Parts, roots: RootTasks, uninstall: () => void): Machinery {
  const cleanup = (): Promise<void> =>
    roots.enter(async () => {
      const forever = new AbortController();
      await activities.runActivity({
        activity: 'cleanup',
        handlers: registry.activityHandlers('cleanup'),
        settings,
        memo,
        clock,
        signal: forever.signal,
        indices: op.indices.byName,
      });
    });
  const close = (): void => {
    client.close();
    uninstall();
  };
  const { tasks, started, failures } = roots;
  return { tasks, main, auth, cancel, started, failures, clock, running: false, cleanup, close };
}

/**
 * Runs spawned tasks until the first of them ends (stop flag, signal, failure), then stops the
 * operator gracefully (R-LIFE-3, see the module's comment). Tasks in `ignored` are not waited for
 * as hung work at the last stage (they are stopped all the same).
 *
 * @throws the error of the first failed task (or of the cleanup activity), after all steps.
 */
export async function runTasks(spawned: OperatorTasks, options: { readonly ignored?: Iterable<OperatorTask> } = {}): Promise<void> {
  const m = machineries.get(spawned);
  if (m === undefined) throw new TypeError('runTasks() accepts only the result of spawnTasks().');
  if (m.running) throw new TypeError('These operator tasks are already running.');
  m.running = true;
  const ignored = new Set([...(options.ignored ?? [])].map((task) => task.name));
  const wait = (tasks: readonly Task[]): Promise<Awaited[]> => settleWithin(tasks, HUNG_TASK_TIMEOUT * 1000, m.clock);
  const names = (tasks: readonly Awaited[]): string => tasks.map((task) => `'${task.name}'`).join(', ');
  try {
    await Promise.race(m.tasks.map((task) => task.settled));

    // 1. Stop the long-lived tasks; if they hang, cancel their remaining work.
    m.main.abort();
    const hung = await wait(m.tasks.filter((task) => task.group === 'main'));
    if (hung.length > 0) {
      logger.warning(`Root tasks are not stopped in ${HUNG_TASK_TIMEOUT} seconds: ${names(hung)}. Cancelling their work.`);
      m.cancel.abort();
      await settleWithin(hung, HUNG_TASK_TIMEOUT * 1000, m.clock);
    }

    // 2. Stop the authenticator, clean up, close the clients.
    m.auth.abort();
    await wait(m.tasks.filter((task) => task.group === 'auth'));
    if (await m.started) {
      try {
        await m.cleanup();
      } catch (error) {
        logger.error(`Cleanup activity has failed: ${errors.errorMessage(error)}`, { error });
        m.failures.push(error);
      }
    }
    m.close();

    // 3. Give the remaining work up to 5 seconds, then cancel it.
    const remaining = m.tasks.filter((task) => !task.isSettled() && !ignored.has(task.name));
    const abandoned = remaining.length > 0 ? await wait(remaining) : [];
    m.cancel.abort();
    if (abandoned.length > 0) logger.warning(`Hung tasks are cancelled and abandoned: ${names(abandoned)}.`);
  } finally {
    m.main.abort();
    m.auth.abort();
    m.cancel.abort();
  }
  if (m.failures.length > 0) throw m.failures[0];
}

/**
 * Runs an operator until it stops (R-LIFE-1): embedded use, no OS signal handlers unless
 * `handleSignals` (R-LIFE-6). Stop it with `stopFlag`.
 *
 * @throws the error of a failed task (e.g. an `ActivityError` of the startup) after a graceful stop.
 * @example
 * const stop = new AbortController();
 * const running = operator({ clusterwide: true, stopFlag: stop.signal, readyFlag: () => console.log('ready') });
 * // …
 * stop.abort();
 * await running;
 */
export async function operator(options: OperatorOptions = {}): Promise<void> {
  await runTasks(await spawnTasks(options));
}

/**
 * Runs an operator that owns the process (the CLI's choice): as `operator()`, but stops on
 * SIGINT/SIGTERM and exits forcibly if still alive `settings.process.ultimateExitingTimeout`
 * seconds after a signal (R-LIFE-3/4). Node cannot block, so it returns a promise.
 */
export async function run(options: OperatorOptions = {}): Promise<void> {
  await operator({ ...options, handleSignals: options.handleSignals ?? true });
}

/*
 * What stops an operator and how its tasks are waited for while it stops (R-LIFE-3/4/6,
 * R-ACTIVITY-3): the user's stop flag and ready flag in all their accepted shapes, OS signal
 * handlers (installed only when asked to), the forced "ultimate exit" after a termination signal,
 * and waiting for tasks with a deadline. `running` composes these into the graceful stop sequence.
 */

/** A stop flag (R-LIFE-1): an abort signal, a promise, or anything with `wait()`; raised when it settles. */
export type StopFlag = AbortSignal | PromiseLike<unknown> | { wait(): PromiseLike<unknown> };

/** A ready flag (R-ACTIVITY-3): anything with `set()`, or a function; raised after the startup activity. */
export type ReadyFlag = { set(): void } | ((...args: unknown[]) => void);

/** The OS signals that stop an operator that owns its process. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = Object.freeze(['SIGINT', 'SIGTERM'] as NodeJS.Signals[]);

/**
 * Waits until the stop flag is raised (a promise or `wait()` rejecting counts as raised too).
 *
 * @returns `true` when the flag was raised, `false` when `signal` aborted first.
 */
export async function waitForStopFlag(flag: StopFlag, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  let raised: PromiseLike<unknown>;
  if (flag instanceof AbortSignal) {
    if (flag.aborted) return true;
    raised = new Promise<void>((resolve) => flag.addEventListener('abort', () => resolve(), { once: true }));
  } else if ('wait' in flag && typeof flag.wait === 'function') {
    raised = flag.wait();
  } else {
    raised = flag as PromiseLike<unknown>;
  }
  let onAbort = (): void => undefined;
  const stopped = new Promise<boolean>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      Promise.resolve(raised).then(
        () => true,
        () => true,
      ),
      stopped,
    ]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Raises a ready flag: calls `set()`, or the function itself. */
export function raiseReadyFlag(flag: ReadyFlag): void {
  if (typeof flag === 'function') flag();
  else flag.set();
}

/**
 * Installs SIGINT/SIGTERM handlers on the process (only for operators that own it, R-LIFE-6).
 *
 * @returns a function that removes them again.
 */
export function installSignalHandlers(onSignal: (name: NodeJS.Signals) => void): () => void {
  const listeners = STOP_SIGNALS.map((name) => [name, () => onSignal(name)] as const);
  for (const [name, listener] of listeners) process.on(name, listener);
  return () => {
    for (const [name, listener] of listeners) process.off(name, listener);
  };
}

/**
 * Schedules the forced exit of R-LIFE-4: `exit(1)` after `timeout` seconds (`null`: never) on the
 * operator's clock. A real timer does not keep the process alive: it only fires if something else
 * does.
 */
export function scheduleUltimateExit(timeout: number | null, exit: (code: number) => void, clock: clocks.Clock = clocks.realClock): void {
  if (timeout === null || timeout === undefined) return;
  clocks.scheduleUnreferenced(clock, Math.max(0, timeout * 1000), () => exit(1));
}

/** A task as the stop sequence sees it. */
export interface Awaited {
  readonly name: string;
  /** Never rejects (errors are collected elsewhere). */
  readonly settled: Promise<void>;
  /** Whether it has settled. */
  isSettled(): boolean;
}

/**
 * Waits for tasks to settle, but at most `ms` on `clock`.
 *
 * @returns the tasks still pending when the time ran out (empty if all settled).
 */
export async function settleWithin(tasks: readonly Awaited[], ms: number, clock: clocks.Clock): Promise<Awaited[]> {
  const pending = tasks.filter((task) => !task.isSettled());
  if (pending.length === 0) return [];
  const done = new AbortController();
  const timer = aborts.sleepOrAbort(clock, ms, done.signal);
  await Promise.race([Promise.all(pending.map((task) => task.settled)), timer]);
  done.abort();
  await timer;
  return pending.filter((task) => !task.isSettled());
}
