/**
 * Observation: keeps the `Insights` up to date with the cluster — which resources exist and which
 * namespaces are served — while the operator runs.
 *
 * Two long-lived tasks, started concurrently after the startup activity (R-LIFE-2):
 *
 * - `observeResources` scans the API groups the handlers need (R-RES-7), then watches
 *   `customresourcedefinitions` and re-scans a CRD's group on every non-listing event (R-RES-8),
 *   so CRDs created or deleted at run time start or stop being served.
 * - `observeNamespaces` lists and watches `v1/namespaces` and serves those matching the patterns
 *   (R-SCOPE-2/3), with the fallbacks of R-SCOPE-4 when that is forbidden; in cluster-wide mode it
 *   serves `null` only (R-SCOPE-5).
 *
 * Both read the API through `watching.infiniteWatch` (so reconnects and re-lists come for free),
 * resolve when their `signal` aborts, and reject only on errors that are fatal to the operator.
 * The orchestrator (`orchestration`) turns the resulting picture into watcher tasks.
 * Kopf: `kopf._core.reactor.observation` (`resource_observer`, `namespace_observer`).
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as api from '../../cogs/client/api.js';
import * as errors from '../../cogs/client/errors.js';
import * as watching from '../../cogs/client/watching.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';
import type * as insights from './insights.js';
import * as namespaces from './namespaces.js';

/** What both observers need. */
export interface ObservationOptions {
  readonly api: api.KubeReader & api.KubeWatcher;
  readonly settings: settings.OperatorSettings;
  readonly insights: insights.Insights;
  readonly logger: loggers.Logger;
  /** Default: the real clock. */
  readonly clock?: clocks.Clock;
  /** Stops the observer; it then resolves. */
  readonly signal: AbortSignal;
  /** Where the watch streams' listings, connections and 410s are reported (metrics on). */
  readonly instruments?: instruments.Instruments;
}

/** What the namespace observer needs in addition: the operator's scope (R-SCOPE-1). */
export interface NamespaceObservationOptions extends ObservationOptions {
  /** Serve all namespaces through cluster-wide requests (`--all-namespaces`). */
  readonly clusterwide: boolean;
  /** The namespace patterns (`--namespace`), OR-ed; ignored when cluster-wide. */
  readonly namespaces: readonly namespaces.NamespacePattern[];
}

/** `apiextensions.k8s.io/v1` CRDs, used when discovery did not report them. */
export const CRDS: references.Resource = references.makeResource({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  singular: 'customresourcedefinition',
  shortcuts: ['crd', 'crds'],
  namespaced: false,
  verbs: ['list', 'watch', 'get'],
});

/** Core `v1/namespaces`. */
export const NAMESPACES: references.Resource = references.makeResource({
  group: '',
  version: 'v1',
  plural: 'namespaces',
  kind: 'Namespace',
  singular: 'namespace',
  shortcuts: ['ns'],
  namespaced: false,
  verbs: ['list', 'watch', 'get'],
});

/** Resolves when the signal aborts (at once if it has). */
function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function isForbidden(error: unknown): boolean {
  return error instanceof errors.ApiForbiddenError;
}

/**
 * Scans the needed API groups into `insights` (R-RES-7; `insights.readyResources` goes on), then,
 * unless `settings.scanning.disabled`, watches CRDs and re-scans the group of every CRD that is
 * added, modified or deleted (R-RES-8). Listing events are ignored (the initial scan covered them).
 *
 * *Errors:* if CRDs may not be listed or watched (HTTP 403), logs the WARNING
 * `Not enough permissions to watch for resources: …` and keeps the startup picture. Other API
 * errors (after the client's retries) reject: the operator cannot go on without its observer.
 *
 * @example
 * await Promise.all([observeResources({ api, settings, insights, logger, signal }), …]);
 */
export async function observeResources(options: ObservationOptions): Promise<void> {
  const { api, settings, logger, signal } = options;
  const picture = options.insights;
  const groups = picture.groupsToScan();
  try {
    picture.reviseResources(await api.scanResources(groups, { signal }), groups);
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
  picture.readyResources.turnOn();
  if (settings.scanning.disabled) return await untilAborted(signal);

  const resource = picture.backbone('crds') ?? CRDS;
  const ctx: watching.WatchContext = {
    api,
    settings,
    logger,
    clock: options.clock,
    resource,
    namespace: null,
    instruments: options.instruments?.forResource(resource),
  };
  try {
    for await (const event of watching.infiniteWatch(ctx, { signal })) {
      if (watching.isListed(event) || event.type === null) continue;
      const spec = (event.object as { spec?: { group?: unknown } }).spec;
      const group = typeof spec?.group === 'string' ? spec.group : undefined;
      if (group === undefined) continue;
      picture.reviseResources(await api.scanResources([group], { signal }), [group]);
    }
  } catch (error) {
    if (signal.aborted) return;
    if (!isForbidden(error)) throw error;
    logger.warning(
      'Not enough permissions to watch for resources: changes (creation/deletion/updates) will not be noticed; ' +
        'the resources are only refreshed on operator restarts.',
    );
    await untilAborted(signal);
  }
}

/**
 * Whether a namespace event means the namespace is gone (R-SCOPE-3): a `DELETED` event, or a
 * `deletionTimestamp` with `status.conditions` none of which is `"True"`. While any condition is
 * `"True"`, deletion is pending and the namespace stays served (debug log
 * `Namespace '<ns>' termination pending: <reason>: <message>` per such condition).
 */
export function isNamespaceDeleted(event: bodies.RawEvent, logger?: loggers.Logger): boolean {
  if (event.type === 'DELETED') return true;
  const meta = event.object.metadata ?? {};
  if (!meta.deletionTimestamp) return false;
  const status = event.object['status'] as { conditions?: unknown } | undefined;
  const conditions = Array.isArray(status?.conditions) ? (status.conditions as Array<Record<string, unknown>>) : [];
  const pending = conditions.filter((condition) => condition['status'] === 'True');
  for (const condition of pending) {
    logger?.debug(`Namespace '${meta.name}' termination pending: ${String(condition['reason'])}: ${String(condition['message'])}`);
  }
  return conditions.length > 0 && pending.length === 0;
}

/** Renders names as Kopf renders a Python collection in its messages: `['a', 'b']`. */
function pythonList(names: readonly string[]): string {
  return `[${names.map((name) => `'${name}'`).join(', ')}]`;
}

/**
 * Keeps the served namespaces of `insights` up to date (R-SCOPE-1..5); `insights.readyNamespaces`
 * goes on once they are first known.
 *
 * - Cluster-wide: serves `null` only; namespaces are not observed.
 * - `settings.scanning.disabled`: serves the plain names among the patterns; nothing is observed.
 * - Otherwise: lists `v1/namespaces` and serves those matching any pattern (each listing, also a
 *   re-list after a lost watch, replaces the set); then follows the watch-stream: new matching
 *   namespaces are added, deleted ones removed (`isNamespaceDeleted`).
 *
 * *Errors:* a 403 on the first listing logs the WARNING `Not enough permissions to list namespaces.
 * Falling back to a list of namespaces which are assumed to exist: […]` and serves the plain names
 * (R-SCOPE-4); a 403 later (on watching or re-listing) logs a WARNING and keeps the current set.
 * Other API errors (after the client's retries) reject.
 */
export async function observeNamespaces(options: NamespaceObservationOptions): Promise<void> {
  const { api, settings, logger, signal, clusterwide } = options;
  const picture = options.insights;
  const patterns = options.namespaces;
  if (clusterwide || settings.scanning.disabled) {
    picture.setNamespaces(clusterwide ? [null] : namespaces.exactNamespaces(patterns));
    picture.readyNamespaces.turnOn();
    return await untilAborted(signal);
  }

  const ctx: watching.WatchContext = {
    api,
    settings,
    logger,
    clock: options.clock,
    resource: NAMESPACES,
    namespace: null,
    instruments: options.instruments?.forResource(NAMESPACES),
  };
  let listing: string[] | null = null; // names collected from the current listing, if one is going on
  let listed = false;
  try {
    for await (const event of watching.infiniteWatch(ctx, { signal })) {
      if (watching.isListed(event)) {
        picture.setNamespaces(listing ?? []);
        picture.readyNamespaces.turnOn();
        listing = null;
        listed = true;
        continue;
      }
      const name = event.object.metadata?.name;
      if (typeof name !== 'string') continue;
      if (event.type === null) {
        listing ??= [];
        if (namespaces.matchNamespaces(name, patterns)) listing.push(name);
      } else if (isNamespaceDeleted(event, logger)) {
        picture.removeNamespace(name);
      } else if (namespaces.matchNamespaces(name, patterns)) {
        picture.addNamespace(name);
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    if (!isForbidden(error)) throw error;
    if (!listed) {
      const exact = namespaces.exactNamespaces(patterns);
      logger.warning(`Not enough permissions to list namespaces. Falling back to a list of namespaces which are assumed to exist: ${pythonList(exact)}`);
      picture.setNamespaces(exact);
      picture.readyNamespaces.turnOn();
    } else {
      logger.warning(
        'Not enough permissions to watch for namespaces: changes (deletion/creation) will not be noticed; ' +
          'the namespaces are only refreshed on operator restarts.',
      );
    }
    await untilAborted(signal);
  }
}
