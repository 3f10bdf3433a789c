/**
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

import * as revisions from '../../cogs/aio/revisions.js';
import * as toggles from '../../cogs/aio/toggles.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as references from '../../cogs/structs/references.js';
import * as selectors from '../intents/selectors.js';

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
