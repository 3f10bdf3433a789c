/**
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

import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as api from '../../cogs/client/api.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as references from '../../cogs/structs/references.js';
import * as peering from '../engines/peering.js';
import * as insights from './insights.js';

/** The backbone names of the peering resources for an operator's scope, `kopf.dev` first. */
export function peeringBackbone(clusterwide: boolean): insights.BackboneName[] {
  return clusterwide ? ['clusterKopfPeerings', 'clusterZalandoPeerings'] : ['namespacedKopfPeerings', 'namespacedZalandoPeerings'];
}

/**
 * Whether the operator takes part in Kopf peering at all: not when standalone, and not with Lease
 * election, which replaces it (docs/leader-election.md).
 */
export function isPeering(settings: settingsModule.OperatorSettings): boolean {
  return !settings.peering.standalone && settings.leaderElection.leaseName === null;
}

/** The peering resources the cluster serves for the operator's scope (none when not peering). */
export function peeringResources(picture: insights.Insights, settings: settingsModule.OperatorSettings): references.Resource[] {
  if (!isPeering(settings)) return [];
  return peeringBackbone(settings.peering.clusterwide !== false)
    .map((name) => picture.backbone(name))
    .filter((resource): resource is references.Resource => resource !== undefined);
}

/** What the peering tasks need. */
export interface PeeringTasksOptions {
  readonly api: api.KubeApi;
  readonly settings: settingsModule.OperatorSettings;
  readonly insights: insights.Insights;
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
        wanted.set(`${insights.resourceKey(resource)}@${namespace ?? ''}`, { resource, namespace });
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
