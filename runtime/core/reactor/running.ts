/**
 * Running an operator (R-LIFE-1..6): `operator()` for embedding, `run()` for a process of its own,
 * and the two halves Kopf also exposes, `spawnTasks()` and `runTasks()`. Kopf:
 * `kopf._core.reactor.running`.
 *
 * `spawnTasks` builds one operator's world and starts its root tasks inside the operator's async
 * context (R-API-6). It only composes: `options.configure` checks the options and writes them into
 * the settings, `roots.assemble` builds the parts the tasks share (the context among them), and
 * one `roots.spawn…` function per root task (or pair of tasks that belong together) starts it. The
 * startup activity runs first; every other task waits for it, so no API call happens before it
 * succeeds (R-ACTIVITY-1, R-LIFE-2). Then, concurrently: the authenticator (login activity and
 * re-logins, R-AUTH-3), the event poster (R-POST), the resource and namespace observers
 * (R-RES-7/8, R-SCOPE) and the orchestrator, which keeps one `orchestration.runWatcher` per
 * resource × namespace. The stop flag and (only when asked to, R-LIFE-6) SIGINT/SIGTERM are root
 * tasks too.
 *
 * `runTasks` waits for the first root task to end — a stop request, a failure, or an unexpected
 * finish — and then stops gracefully (R-LIFE-3): (1) stop the long-lived tasks and wait for them;
 * (2) stop the authenticator, run the cleanup activity (only if startup succeeded), close the HTTP
 * client; (3) give what is still running up to 5 seconds, then cancel it through the context's
 * signal. Only work this operator created is ever cancelled, through its own abort controllers
 * (R-LIFE-5). If a task failed, `runTasks` (and `operator()`) rejects with its error afterwards.
 *
 * The operator's options and their checks live in `options`, the root tasks in `roots`, the stop
 * and ready flags, the signals and the deadlines in `stopping`. Every name of theirs that this
 * module exported before they were split off is re-exported here, so `running` stays the module
 * to import for running an operator.
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import * as errors from '../actions/errors.js';
import * as logging from '../actions/logging.js';
import * as activities from '../engines/activities.js';
import type * as inventory from './inventory.js';
import { configure, type OperatorOptions } from './options.js';
import {
  assemble,
  type LeaseSeat,
  loadMetrics,
  type OperatorTask,
  type Parts,
  RootTasks,
  spawnAdmission,
  spawnCredentialsRetriever,
  spawnDaemonKiller,
  spawnReconciler,
  spawnSharder,
  spawnEndpoints,
  spawnLeaderElector,
  spawnObservers,
  spawnOrchestrator,
  spawnPoster,
  spawnStartup,
  spawnStopTasks,
  type Task,
} from './roots.js';
import { type Awaited, settleWithin } from './stopping.js';

export { checkPeeringOptions, type OperatorOptions, resolveScope, type Watcher } from './options.js';
export type { OperatorTask } from './roots.js';
export {
  type Awaited,
  installSignalHandlers,
  type ReadyFlag,
  raiseReadyFlag,
  STOP_SIGNALS,
  type StopFlag,
  scheduleUltimateExit,
  settleWithin,
  waitForStopFlag,
} from './stopping.js';

/** Seconds that remaining work gets to finish at each stage of a graceful stop (R-LIFE-3). */
export const HUNG_TASK_TIMEOUT = 5;

/** A spawned operator, to be run by `runTasks()` (R-LIFE-1). */
export interface OperatorTasks {
  /** The operator context of this operator. */
  readonly context: inventory.OperatorContext;
  /** Its root tasks, already started (all but the startup activity wait for it). */
  readonly tasks: readonly OperatorTask[];
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
 * @throws MetricsUnavailableError for a `metricsEndpoint` when the metrics (prom-client) cannot be loaded, before anything starts.
 * @throws PeeringOptionsError for malformed or contradicting peering options, before anything starts.
 * @throws OperatorModeError for `leaseName` with `standalone`, `peeringName` or `priority`, or
 *   `leaseNamespace` without `leaseName`; SettingsError for bad `settings.leaderElection` timings.
 * @example
 * const tasks = await spawnTasks({ clusterwide: true, stopFlag: controller.signal });
 * await runTasks(tasks);
 */
export async function spawnTasks(options: OperatorOptions = {}): Promise<OperatorTasks> {
  const { settings, scope } = configure(options);
  // prom-client only for an operator with metrics (R-PERF-201); if it cannot load, nothing starts.
  const reports = options.metricsEndpoint === undefined ? undefined : await loadMetrics();
  const parts = assemble(options, settings, scope, reports);
  const roots = new RootTasks(parts);
  const lease: LeaseSeat = {};
  const uninstall = spawnStopTasks(parts, roots);
  spawnStartup(parts, roots, lease);
  spawnCredentialsRetriever(parts, roots);
  spawnLeaderElector(parts, roots, lease);
  spawnSharder(parts, roots);
  spawnPoster(parts, roots);
  spawnObservers(parts, roots);
  spawnOrchestrator(parts, roots);
  spawnDaemonKiller(parts, roots);
  spawnReconciler(parts, roots);
  spawnEndpoints(parts, roots);
  spawnAdmission(parts, roots);
  const result: OperatorTasks = { context: parts.op, tasks: roots.tasks.map(({ name, done }) => ({ name, done })) };
  machineries.set(result, machineryOf(parts, roots, uninstall));
  return result;
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
