/**
 * The health reporter: the liveness and readiness endpoints of one operator (R-ACTIVITY-4).
 *
 * The kubelet restarts a container whose liveness probe fails and sends no traffic to (or, for an
 * operator, simply reports as not ready) one whose readiness probe fails. So the two answers differ:
 *
 * - **liveness** (`--liveness=http://HOST:PORT/PATH`): HTTP 500 with a JSON list of problems when
 *   the operator no longer hears the cluster — a watch-stream down or silent beyond its budget, or
 *   an initial listing, the resource discovery or the readiness barrier of the indices (R-INDEX-7)
 *   not complete within `settings.health.listingBudget` (`engines/health`) — or when a probe failed
 *   or did not finish (`engines/probing`). Otherwise HTTP 200 with `{ <probe id>: <result> }`.
 *   Watch problems are answered at once, without evaluating the probes.
 * - **readiness** (`settings.health.readinessPath`, default `/readyz`, on the same host and port):
 *   HTTP 200 once resource discovery is done, every wanted watch-stream (resource × namespace) has
 *   completed its initial listing, and the readiness barrier is open; HTTP 503 with what is still
 *   missing otherwise. It never runs probes.
 *
 * A paused operator (a standby of Lease election, a peer paused by Kopf's peering) neither lists
 * nor indexes: it is ready (it works as soon as it resumes), and the indices' barrier is no
 * problem while it is paused; after it resumes, the budgets of the listings count from then.
 *
 * Both exist only after the startup activity succeeded (R-ACTIVITY-1): before that, nothing listens.
 * Problems are logged once when they appear (WARNING) and once when all are gone (INFO), as seen by
 * the liveness requests. Kopf: `kopf._core.engines.probing.health_reporter`.
 *
 * The kubelet's probes do not authenticate, so anyone who reaches the health port may ask. The
 * answers therefore say what is unhealthy, never why a probe failed (R-SEC-14): a probe's error
 * message may name a database URL with its password. It goes to the operator's log (the WARNING
 * above) instead; `settings.health.details` adds it to the answers to callers on the loopback
 * interface only (`kubectl port-forward`, a sidecar). Unlike Kopf, whose answer has the message.
 *
 * The Prometheus metrics are in `reporting`, loaded only when an operator asks for them.
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import * as watching from '../../cogs/client/watching.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';
import * as endpoints from '../engines/endpoints.js';
import * as health from '../engines/health.js';
import type * as indexing from '../engines/indexing.js';
import * as probing from '../engines/probing.js';
import type * as observation from './observation.js';
import * as orchestration from './orchestration.js';

const JSON_TYPE = 'application/json';

/** What the reporter reads. */
export interface ReporterSources {
  readonly settings: settingsModule.OperatorSettings;
  readonly clock: clocks.Clock;
  readonly prober: probing.Prober;
  readonly streams: health.StreamHealth;
  readonly insights: observation.Insights;
  /** The readiness barrier of the indices, if the operator has one. */
  readonly barrier?: indexing.IndexingBarrier;
  /**
   * When the operator began to watch (the startup activity's end), or resumed after its latest
   * pause: the budgets of discovery and the barrier count from here.
   */
  readonly since: number;
  /** On while the operator is paused (a standby of Lease election, a paused peer): see the module's comment. */
  readonly paused?: toggles.Awaitable;
}

function overBudget(sources: ReporterSources, budget: number | null): boolean {
  return budget !== null && sources.clock.now() - sources.since > budget * 1000;
}

/** The watch problems now: streams, discovery, the readiness barrier. */
export function watchProblems(sources: ReporterSources): health.Problem[] {
  const budgets = sources.settings.health;
  const problems = health.assessStreams(sources.streams.snapshots(), budgets, sources.clock.now());
  const elapsed = `${Math.floor((sources.clock.now() - sources.since) / 1000)} s`;
  if (!sources.insights.ready.isOn() && overBudget(sources, budgets.listingBudget)) {
    problems.push({
      kind: 'discovery',
      name: 'resources and namespaces',
      reason: `the discovery is not complete after ${elapsed} (budget ${budgets.listingBudget} s)`,
    });
  } else if (sources.barrier !== undefined && !sources.barrier.ready && !sources.paused?.isOn() && overBudget(sources, budgets.listingBudget)) {
    problems.push({
      kind: 'barrier',
      name: 'indices',
      reason: `the initial listings are not indexed after ${elapsed} (budget ${budgets.listingBudget} s; ${sources.barrier.tracked} listed objects still to index)`,
    });
  }
  return problems;
}

/** What readiness still waits for (empty: ready). */
export function readinessWaits(sources: ReporterSources): string[] {
  if (!sources.insights.ready.isOn()) return ['the discovery of resources and namespaces'];
  if (sources.paused?.isOn()) return []; // a standby: ready to work once it resumes
  const listed = sources.streams.listedKeys();
  const waits = orchestration
    .dimensionsOf(sources.insights.watched, sources.insights.namespaces)
    .filter((dimension) => !listed.has(orchestration.dimensionKey(dimension)))
    .map((dimension) => `the initial listing of ${references.resourceName(dimension.resource)} ${watching.whereOf(dimension.namespace)}`);
  if (sources.barrier !== undefined && !sources.barrier.ready) waits.push('the indexing of the initial listings');
  return waits;
}

function json(status: number, body: unknown): endpoints.EndpointResponse {
  return { status, contentType: JSON_TYPE, body: `${JSON.stringify(body)}\n` };
}

/** A probe's problem without its error message (R-SEC-14); other problems are the framework's own words. */
export function withoutDetails(problem: health.Problem): health.Problem {
  if (problem.kind !== 'probe' || !problem.reason.startsWith('failed')) return problem;
  return { ...problem, reason: "failed (the operator's log has the error)" };
}

/** Whether a caller gets the probes' error messages: with `settings.health.details`, on loopback only. */
function detailed(sources: ReporterSources, request: endpoints.EndpointRequest): boolean {
  return sources.settings.health.details === true && endpoints.isLoopbackHost(request.remoteAddress ?? '');
}

/**
 * The liveness handler (see the module's comment). Logs problems when they appear and when they
 * are gone.
 */
export function livenessHandler(sources: ReporterSources, logger: loggers.Logger): endpoints.EndpointHandler {
  let known = new Set<string>();
  const remember = (problems: readonly health.Problem[]): void => {
    const now = new Set(problems.map((problem) => `${problem.kind}|${problem.name}`));
    for (const problem of problems) {
      if (!known.has(`${problem.kind}|${problem.name}`)) logger.warning(`The operator is unhealthy: ${problem.kind} ${problem.name}: ${problem.reason}.`);
    }
    if (known.size > 0 && now.size === 0) logger.info('The operator is healthy again.');
    known = now;
  };
  return async (request) => {
    const watch = watchProblems(sources);
    if (watch.length > 0) {
      remember(watch);
      return json(500, { status: 'unhealthy', problems: watch });
    }
    const report = await sources.prober.probe();
    const failed = probing.probeProblems(report, sources.settings.health.probeTimeout);
    remember(failed);
    const shown = detailed(sources, request) ? failed : failed.map(withoutDetails);
    if (failed.length > 0) return json(500, { status: 'unhealthy', problems: shown, probes: probing.probeResults(report) });
    return json(200, probing.probeResults(report));
  };
}

/** The readiness handler (see the module's comment). */
export function readinessHandler(sources: ReporterSources): endpoints.EndpointHandler {
  return () => {
    const waiting = readinessWaits(sources);
    return waiting.length > 0 ? json(503, { status: 'not ready', waiting }) : json(200, { status: 'ready' });
  };
}

/** What `reportHealth` needs. */
export interface ReportingOptions extends Omit<ReporterSources, 'since'> {
  /** `http://HOST:PORT/PATH` of the liveness endpoint. */
  readonly url: string;
  /** How the URL was given, for errors (e.g. `--liveness`). Default `livenessEndpoint`. */
  readonly option?: string;
  readonly logger: loggers.Logger;
  /** Stops serving; `reportHealth` then resolves. */
  readonly signal: AbortSignal;
  /** Called once the endpoints listen, with their URLs (ports resolved). */
  readonly onServing?: (served: readonly endpoints.ServedEndpoint[]) => void;
  /**
   * Other endpoints of the operator (its metrics) to serve with these: on the same server when on
   * the same host and port, on servers of their own otherwise.
   */
  readonly alongside?: readonly endpoints.Endpoint[];
}

/**
 * Serves the liveness endpoint and, on the same host and port, the readiness endpoint (and the
 * `alongside` endpoints), until `signal` aborts.
 *
 * @throws engineErrors.EndpointUrlError for a malformed URL; engineErrors.EndpointBindError if the address
 *   cannot be bound; configErrors.SettingsError for malformed `settings.health` values.
 */
export async function reportHealth(options: ReportingOptions): Promise<void> {
  const { settings, url, logger, signal } = options;
  health.checkBudgets(settings.health);
  const sources: { -readonly [K in keyof ReporterSources]: ReporterSources[K] } = { ...options, since: options.clock.now() };
  // After a pause, the listings start over: their budgets count from the resumption.
  if (options.paused !== undefined) {
    const paused = options.paused;
    void (async () => {
      for (;;) {
        await paused.waitFor(true, signal);
        await paused.waitFor(false, signal);
        sources.since = options.clock.now();
      }
    })().catch(() => undefined); // ends with the signal
  }
  const list: endpoints.Endpoint[] = [{ name: 'liveness', url, option: options.option ?? 'livenessEndpoint', handle: livenessHandler(sources, logger) }];
  const path = settings.health.readinessPath;
  if (path !== null) {
    const address = endpoints.parseEndpointUrl(url, options.option ?? 'livenessEndpoint');
    list.push({
      name: 'readiness',
      url: endpoints.formatAddress({ ...address, path }),
      option: 'settings.health.readinessPath',
      handle: readinessHandler(sources),
    });
  }
  list.push(...(options.alongside ?? []));
  await endpoints.serveEndpoints({ endpoints: list, logger, signal, onServing: options.onServing });
}
