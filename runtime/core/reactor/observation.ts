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
 *
 * The module keeps everything the operator knows about the cluster's shape in one place: the
 * `Insights` themselves, the namespace patterns that select the served namespaces, and the peering
 * objects the operator takes part in.
 */

import type * as clocks from '../../cogs/aio/clocks.js';
import * as revisions from '../../cogs/aio/revisions.js';
import * as toggles from '../../cogs/aio/toggles.js';
import type * as api from '../../cogs/client/api.js';
import * as errors from '../../cogs/client/errors.js';
import * as watching from '../../cogs/client/watching.js';
import type * as settings from '../../cogs/configs/settings.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as instruments from '../../cogs/structs/instruments.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';
import * as peering from '../engines/peering.js';
import * as selectors from '../intents/selectors.js';

/** What both observers need. */
export interface ObservationOptions {
  readonly api: api.KubeReader & api.KubeWatcher;
  readonly settings: settings.OperatorSettings;
  readonly insights: Insights;
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
  readonly namespaces: readonly NamespacePattern[];
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
    picture.setNamespaces(clusterwide ? [null] : exactNamespaces(patterns));
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
        if (matchNamespaces(name, patterns)) listing.push(name);
      } else if (isNamespaceDeleted(event, logger)) {
        picture.removeNamespace(name);
      } else if (matchNamespaces(name, patterns)) {
        picture.addNamespace(name);
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    if (!isForbidden(error)) throw error;
    if (!listed) {
      const exact = exactNamespaces(patterns);
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

/*
 * Insights: the operator's live picture of what to serve, shared by the reactor's tasks.
 *
 * The observers (`observation`) write into it: discovered resources after each scan or re-scan of
 * API groups (R-RES-7/8), and the served namespaces (R-SCOPE-3/4/5). From the discovered resources
 * and the selectors of the registered handlers, it decides which resources are watched and which
 * serve admission webhooks, with Kopf's warnings about ambiguous, unresolved, non-watchable and
 * non-patchable resources (`selectors.reviseResources`, R-RES-3..9). The orchestrator
 * (`orchestration`) reads it and waits for its changes (`waitForChange`) to start and stop
 * watchers; peering and admission look up framework resources in its backbone (`backbone`).
 *
 * Changes are announced through a revision counter that only grows; readiness is a pair of
 * toggles, on after the first resource scan and the first namespace listing (`ready`).
 * Kopf: `kopf._core.reactor.observation.Insights` with `revised`, `ready_resources`,
 * `ready_namespaces` and `backbone`.
 */

/** Where the selectors come from: the operator registry (or anything shaped like it in tests). */
export interface SelectorSource {
  /** The selectors of the registered handlers, by purpose (`OperatorRegistry.selectorUsage`). */
  selectorUsage(): selectors.SelectorUsage;
}

/** The framework's own resources (Kopf: the backbone), by name. */
export const BACKBONE = Object.freeze({
  crds: selectors.parseSelector(['apiextensions.k8s.io', 'customresourcedefinitions']),
  namespaces: selectors.parseSelector(['v1', 'namespaces']),
  events: selectors.parseSelector(['v1', 'events']),
  clusterKopfPeerings: selectors.parseSelector(['kopf.dev', 'clusterkopfpeerings']),
  namespacedKopfPeerings: selectors.parseSelector(['kopf.dev', 'kopfpeerings']),
  clusterZalandoPeerings: selectors.parseSelector(['zalando.org', 'clusterkopfpeerings']),
  namespacedZalandoPeerings: selectors.parseSelector(['zalando.org', 'kopfpeerings']),
  mutatingWebhooks: selectors.parseSelector(['admissionregistration.k8s.io', 'mutatingwebhookconfigurations']),
  validatingWebhooks: selectors.parseSelector(['admissionregistration.k8s.io', 'validatingwebhookconfigurations']),
});

/** The name of a framework resource in the backbone. */
export type BackboneName = keyof typeof BACKBONE;

/**
 * A key identifying a resource with all of its discovered attributes: equal keys mean the same
 * resource served the same way (a changed attribute, e.g. a new subresource, gives a new key).
 */
export function resourceKey(r: references.Resource): string {
  return JSON.stringify([r.group, r.version, r.plural, r.kind, r.singular, r.namespaced, r.preferred, r.shortcuts, r.categories, r.subresources, r.verbs]);
}

/** The groups of every selector of a registry, for the initial scan (R-RES-7); `null`: all groups. */
export function groupsToScan(source: SelectorSource): Set<string> | null {
  const usage = source.selectorUsage();
  return selectors.groupsToScan([...usage.watched, ...usage.patched, ...(usage.indexed ?? []), ...(usage.webhooks ?? [])]);
}

/**
 * The live picture of an operator: watched resources, served namespaces, readiness, changes.
 *
 * @example
 * const insights = new Insights({ registry, logger });
 * insights.reviseResources(await api.scanResources(null), null);
 * insights.setNamespaces([null]);
 * for (let rev = 0; ; rev = await insights.waitForChange(rev, signal)) console.log(insights.watched);
 */
export class Insights {
  /** On once the first scan of resources is done. */
  readonly readyResources = new toggles.Toggle(false, 'ready-resources');
  /** On once the served namespaces are first known. */
  readonly readyNamespaces = new toggles.Toggle(false, 'ready-namespaces');
  /** On when both `readyResources` and `readyNamespaces` are. */
  readonly ready = new toggles.ToggleSet('all');

  private readonly registry: SelectorSource;
  private readonly logger: loggers.Logger | undefined;
  private discoveredList: references.Resource[] = [];
  private watchedList: references.Resource[] = [];
  private webhooksList: references.Resource[] = [];
  private readonly namespaceSet = new Set<string | null>();
  private readonly backboneMap = new Map<BackboneName, references.Resource>();
  private lastWarnings = new Set<string>();
  private readonly changes = new revisions.Revision();
  private readonly backboneWaiters = new Set<() => void>();

  /** @param options.registry the selectors to serve. @param options.logger receives the warnings. */
  constructor(options: { readonly registry: SelectorSource; readonly logger?: loggers.Logger }) {
    this.registry = options.registry;
    this.logger = options.logger;
    this.ready.add(this.readyResources);
    this.ready.add(this.readyNamespaces);
  }

  /** Every resource discovered so far (of the scanned groups). */
  get discovered(): readonly references.Resource[] {
    return this.discoveredList;
  }

  /** The resources to list and watch (R-RES-3..9), in discovery order. */
  get watched(): readonly references.Resource[] {
    return this.watchedList;
  }

  /** The resources selected by admission handlers. */
  get webhooks(): readonly references.Resource[] {
    return this.webhooksList;
  }

  /** The served namespaces; `null` stands for "cluster-wide" (R-SCOPE-5). */
  get namespaces(): ReadonlySet<string | null> {
    return this.namespaceSet;
  }

  /** The revision: it grows by one with every change of the watched resources, the backbone or the namespaces. */
  get revision(): number {
    return this.changes.value;
  }

  /** The API groups to scan initially for the registered selectors (R-RES-7); `null`: all groups. */
  groupsToScan(): Set<string> | null {
    return groupsToScan(this.registry);
  }

  /** A framework resource if discovered (its group must have been scanned). */
  backbone(name: BackboneName): references.Resource | undefined {
    return this.backboneMap.get(name);
  }

  /**
   * Resolves with the first of the named framework resources that is discovered (at once if one
   * already is); resources appear when their CRDs are created at run time (R-RES-8). Rejects with
   * the signal's reason if `signal` aborts first. Kopf: `backbone.wait_for()`.
   */
  waitForBackbone(names: readonly BackboneName[], signal?: AbortSignal): Promise<references.Resource> {
    return new Promise<references.Resource>((resolve, reject) => {
      const present = (): references.Resource | undefined => names.map((name) => this.backboneMap.get(name)).find((r) => r !== undefined);
      const found = present();
      if (found !== undefined) return resolve(found);
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        this.backboneWaiters.delete(waiter);
        reject(signal!.reason);
      };
      const waiter = (): void => {
        const resource = present();
        if (resource === undefined) return;
        this.backboneWaiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
        resolve(resource);
      };
      this.backboneWaiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Resolves with the new revision as soon as it is greater than `since` (at once if it already
   * is). Rejects with the signal's reason if `signal` aborts first.
   */
  waitForChange(since: number, signal?: AbortSignal): Promise<number> {
    return this.changes.waitForChange(since, signal);
  }

  /**
   * Takes the result of scanning `groups` (`null`: all groups) in place of what was discovered
   * before in those groups, and re-decides what is served. Warnings are logged when they differ
   * from the previous revision's (so a re-scan of one group does not repeat them all). Resources
   * that did not change keep their identity. Bumps the revision if the watched resources changed.
   *
   * @returns the warnings of this revision (logged or not).
   */
  reviseResources(scanned: readonly references.Resource[], groups: Iterable<string> | null): string[] {
    const replaced = groups === null ? null : new Set(groups);
    const previous = new Map(this.discoveredList.map((r) => [resourceKey(r), r]));
    const kept = replaced === null ? [] : this.discoveredList.filter((r) => !replaced.has(r.group));
    const fresh = scanned.filter((r) => replaced === null || replaced.has(r.group)).map((r) => previous.get(resourceKey(r)) ?? r);
    this.discoveredList = [...kept, ...fresh];

    const revised = selectors.reviseResources(this.registry.selectorUsage(), this.discoveredList);
    for (const warning of revised.warnings) if (!this.lastWarnings.has(warning)) this.logger?.warning(warning);
    this.lastWarnings = new Set(revised.warnings);

    const before = [...this.backboneMap.values()];
    this.backboneMap.clear();
    for (const [name, selector] of Object.entries(BACKBONE) as Array<[BackboneName, selectors.Selector]>) {
      const found = selector.select(this.discoveredList)[0];
      if (found !== undefined) this.backboneMap.set(name, found);
    }
    for (const waiter of [...this.backboneWaiters]) waiter();

    // A framework resource that comes or goes (a peering CRD) is a change too: peering follows it.
    const changed =
      !sameResources(this.watchedList, revised.watched) ||
      !sameResources(this.webhooksList, revised.webhooks) ||
      !sameResources(before, [...this.backboneMap.values()]);
    this.watchedList = revised.watched;
    this.webhooksList = revised.webhooks;
    if (changed) this.bump();
    return revised.warnings;
  }

  /** Replaces the served namespaces; bumps the revision if they changed. */
  setNamespaces(namespaces: Iterable<string | null>): void {
    const next = new Set(namespaces);
    if (next.size === this.namespaceSet.size && [...next].every((ns) => this.namespaceSet.has(ns))) return;
    this.namespaceSet.clear();
    for (const ns of next) this.namespaceSet.add(ns);
    this.bump();
  }

  /** Adds a served namespace; bumps the revision if it was not served. */
  addNamespace(namespace: string | null): void {
    if (this.namespaceSet.has(namespace)) return;
    this.namespaceSet.add(namespace);
    this.bump();
  }

  /** Removes a served namespace; bumps the revision if it was served. */
  removeNamespace(namespace: string | null): void {
    if (this.namespaceSet.delete(namespace)) this.bump();
  }

  private bump(): void {
    this.changes.bump();
  }
}

function sameResources(a: readonly references.Resource[], b: readonly references.Resource[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map(resourceKey));
  return b.every((r) => keys.has(resourceKey(r)));
}

/*
 * Namespace patterns: which namespaces a namespaced operator serves (R-SCOPE-2, R-SCOPE-4).
 *
 * Users pass one or more patterns (`--namespace` options, or `namespaces` when embedded). A string
 * pattern is a comma-separated list of globs (`*`, `?`), where `!` marks exclusions; a `RegExp`
 * (embedded use only) must match the whole name. Several patterns are OR-ed. The functions here are
 * pure: `observation` applies them to the namespaces it lists and watches, and falls back to
 * `exactNamespaces()` when it may not list namespaces at all. Kopf: `references.match_namespace`
 * and `references.select_specific_namespaces`.
 */

/** A namespace pattern: globs with exclusions, or a regular expression matching whole names. */
export type NamespacePattern = string | RegExp;

/** Converts one glob (`*` any characters, `?` one character; nothing else is special) to a RegExp. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const char of glob) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else source += char.replace(/[\\^$.|+()[\]{}/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/** Whether `name` matches a RegExp as a whole (flags kept, except the stateful `g`/`y`). */
function fullMatch(name: string, pattern: RegExp): boolean {
  const flags = pattern.flags.replace(/[gy]/g, '');
  return new RegExp(`^(?:${pattern.source})$`, flags).test(name);
}

/** The globs of a string pattern, trimmed, without empty ones. */
function globsOf(pattern: string): string[] {
  return pattern
    .split(',')
    .map((glob) => glob.trim())
    .filter((glob) => glob !== '');
}

/**
 * Whether a namespace name matches one pattern (R-SCOPE-2). For string patterns: if the first glob
 * is an exclusion, an implicit leading `*` is assumed; the first glob decides the initial match;
 * each later exclusion removes a match; each later inclusion re-includes only if the first glob
 * matched. A pattern without globs matches nothing.
 *
 * @example
 * matchNamespace('myapp-pr-123', 'myapp-*,!*-pr-*,*-pr-123')    // true
 * matchNamespace('otherapp-pr-123', 'myapp-*,!*-pr-*,*-pr-123') // false
 * matchNamespace('kube-system', /kube-[a-z]+/)               // true (whole-name match)
 */
export function matchNamespace(name: string, pattern: NamespacePattern): boolean {
  if (pattern instanceof RegExp) return fullMatch(name, pattern);
  const globs = globsOf(pattern);
  if (globs.length === 0) return false;
  if (globs[0]!.startsWith('!')) globs.unshift('*');
  const [first, ...rest] = globs as [string, ...string[]];
  const initial = globToRegExp(first).test(name);
  let matched = initial;
  for (const glob of rest) {
    if (glob.startsWith('!')) {
      if (globToRegExp(glob.slice(1)).test(name)) matched = false;
    } else if (initial && globToRegExp(glob).test(name)) {
      matched = true;
    }
  }
  return matched;
}

/** Whether a namespace name matches any of the patterns (several `--namespace` options are OR-ed). */
export function matchNamespaces(name: string, patterns: readonly NamespacePattern[]): boolean {
  return patterns.some((pattern) => matchNamespace(name, pattern));
}

/**
 * The patterns that are plain names: strings containing none of `!`, `*`, `?`, `,` (R-SCOPE-4).
 * These are the namespaces assumed to exist when namespaces cannot be listed. In order, without
 * duplicates; RegExp patterns never count.
 *
 * @example
 * exactNamespaces(['myapp-live', 'myapp-*', /x/]) // ['myapp-live']
 */
export function exactNamespaces(patterns: readonly NamespacePattern[]): string[] {
  const names = patterns.filter((p): p is string => typeof p === 'string' && !/[!*?,]/.test(p)).map((p) => p.trim());
  return [...new Set(names.filter((name) => name !== ''))];
}

/*
 * Which peering objects an operator takes part in, kept in step with the cluster (R-PEER-1/2):
 * the orchestrator's companion for peering. For every peering resource the cluster serves for the
 * operator's scope — `ClusterKopfPeering` for a cluster-wide operator, `KopfPeering` in every
 * served namespace for a namespaced one, of `kopf.dev` and of the legacy `zalando.org` group, both
 * when both exist — it runs the two tasks of `engines/peering` and owns one member toggle of the
 * operator's pause set: on while that object asks the operator to pause.
 *
 * Modes: standalone (and Lease election, which replaces peering) runs nothing. Auto-detection (the default) runs the tasks only for the peering
 * CRDs that exist — also ones created later, and it stops them when a CRD is deleted (dropping
 * its toggle, so a pause that only it caused ends). Mandatory peering (`settings.peering.mandatory`,
 * `--peering NAME`) keeps the operator paused while no peering CRD exists, and starts each new
 * peering object's toggle on, so that nothing is served in that namespace before the object's
 * first event has been evaluated.
 *
 * `adjust()` is called by the orchestrator on every change of the insights *before* it adjusts the
 * watchers, so a new namespace's toggle exists before its watchers start. Kopf:
 * `orchestration.adjust_tasks` with `spawn_missing_peerings` and the `peering CRD is missing` toggle.
 */

/** The backbone names of the peering resources for an operator's scope, `kopf.dev` first. */
export function peeringBackbone(clusterwide: boolean): BackboneName[] {
  return clusterwide ? ['clusterKopfPeerings', 'clusterZalandoPeerings'] : ['namespacedKopfPeerings', 'namespacedZalandoPeerings'];
}

/**
 * Whether the operator takes part in Kopf peering at all: not when standalone, and not with Lease
 * election or sharding, which replace it (docs/leader-election.md, docs/sharding.md).
 */
export function isPeering(settings: settings.OperatorSettings): boolean {
  return !settings.peering.standalone && settings.leaderElection.leaseName === null && settings.sharding.ring === null;
}

/** The peering resources the cluster serves for the operator's scope (none when not peering). */
export function peeringResources(picture: Insights, settings: settings.OperatorSettings): references.Resource[] {
  if (!isPeering(settings)) return [];
  return peeringBackbone(settings.peering.clusterwide !== false)
    .map((name) => picture.backbone(name))
    .filter((resource): resource is references.Resource => resource !== undefined);
}

/** What the peering tasks need. */
export interface PeeringTasksOptions {
  readonly api: api.KubeApi;
  readonly settings: settings.OperatorSettings;
  readonly insights: Insights;
  readonly identity: string;
  /** The operator's pause set: this adds its toggles to it. */
  readonly paused: toggles.ToggleSet;
  readonly clock: clocks.Clock;
  readonly logger: loggers.Logger;
  /** Aborts the removal of the entries at exit (the operator gives up on hung work). */
  readonly cancel?: AbortSignal;
  /** For the keep-alives' jitter; default `Math.random`. */
  readonly random?: () => number;
}

interface Pair {
  readonly toggle: toggles.Toggle;
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

/**
 * The peering tasks of one operator. The `peering CRD is missing` toggle is created at once (on
 * for mandatory peering), so nothing is served before the first `adjust()` has seen the cluster.
 */
export class PeeringTasks {
  private readonly pairs = new Map<string, Pair>();
  private readonly missing: toggles.Toggle;

  constructor(private readonly options: PeeringTasksOptions) {
    this.missing = options.paused.makeToggle(this.mandatory, 'peering CRD is missing');
  }

  /** Read on every use: startup handlers may change the settings (R-ACTIVITY-1). */
  private get mandatory(): boolean {
    return this.options.settings.peering.mandatory && isPeering(this.options.settings);
  }

  /** The peering objects being served now, as `resource key@namespace`. */
  get keys(): string[] {
    return [...this.pairs.keys()];
  }

  /** Starts the tasks of new peering objects and stops those of vanished ones (see the module). */
  adjust(): void {
    const { settings, logger } = this.options;
    const picture = this.options.insights;
    const resources = peeringResources(picture, settings);
    this.missing.turnTo(this.mandatory && resources.length === 0);
    const wanted = new Map<string, { resource: references.Resource; namespace: string | null }>();
    for (const resource of resources) {
      for (const served of picture.namespaces) {
        const namespace = resource.namespaced ? served : null;
        if (resource.namespaced && namespace === null) continue; // a namespaced peering needs a namespace
        wanted.set(`${resourceKey(resource)}@${namespace ?? ''}`, { resource, namespace });
      }
    }
    for (const [key, pair] of [...this.pairs]) {
      if (wanted.has(key)) continue;
      this.pairs.delete(key);
      void this.stopPair(pair);
    }
    for (const [key, { resource, namespace }] of wanted) {
      if (this.pairs.has(key)) continue;
      const what = `${settings.peering.name}@${namespace ?? 'None'}`;
      logger.debug(`Starting the peering tasks for ${what} (${resource.plural}.${resource.group}).`);
      const toggle = this.options.paused.makeToggle(this.mandatory, what);
      const controller = new AbortController();
      const scope: peering.PeeringScope = {
        api: this.options.api,
        settings,
        resource,
        namespace,
        identity: this.options.identity,
        logger,
        clock: this.options.clock,
      };
      const done = Promise.all([
        peering.keepAlive(scope, { signal: controller.signal, cancel: this.options.cancel, random: this.options.random }),
        peering.observePeering(scope, { conflicts: toggle, signal: controller.signal }),
      ]).then(
        () => undefined,
        (error: unknown) => {
          logger.error(`Peering tasks for ${what} have failed: ${String(error)}`);
        },
      );
      this.pairs.set(key, { toggle, controller, done });
    }
  }

  private async stopPair(pair: Pair): Promise<void> {
    pair.controller.abort();
    await pair.done;
    this.options.paused.drop(pair.toggle);
  }

  /** Stops all peering tasks (their entries are removed) and drops their toggles. */
  async stop(): Promise<void> {
    const pairs = [...this.pairs.values()];
    this.pairs.clear();
    await Promise.all(pairs.map((pair) => this.stopPair(pair)));
    this.options.paused.drop(this.missing);
  }
}
