/**
 * What an operator cannot do yet, said where an operator starts (see `intents/unsupported`).
 *
 * - Options of peering (`peeringName`, `priority`, `identity`) make `spawnTasks()` (and so `operator()` and `run()`) throw before
 *   anything starts; so do settings that ask for peering (`settings.peering.mandatory` without
 *   `standalone`, a non-zero `settings.peering.priority`), checked again after the startup
 *   activity, which may change the settings (R-ACTIVITY-1).
 * - The default mode, peering auto-detection (R-PEER-2), would use Kopf's peering CRDs if the
 *   cluster had them. This version always runs standalone, so when the cluster serves the peering
 *   resource of the operator's scope — at startup, or once its CRD is created — it logs one
 *   WARNING: other replicas or Kopf operators relying on peering are not coordinated with.
 *   Without those CRDs it stays quiet (one DEBUG line), as Kopf does. `standalone` silences both,
 *   and so does Lease election (`settings.leaderElection.leaseName`), which replaces peering.
 *
 * The peering engine (R-PEER), when it lands, replaces the peering parts of this module.
 */

import type * as settingsModule from '../../cogs/configs/settings.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as unsupported from '../intents/unsupported.js';
import type * as insights from './insights.js';

/** The operator options that belong to engines this version does not have. */
export interface UnavailableOptions {
  readonly peeringName?: string;
  readonly priority?: number;
  readonly identity?: string;
}

const OPTIONS: ReadonlyArray<keyof UnavailableOptions> = ['peeringName', 'priority', 'identity'];

/**
 * Throws for the first option given (not `undefined`) that nothing would use.
 *
 * @throws UnsupportedFeatureError naming the option.
 */
export function checkOptions(options: UnavailableOptions): void {
  for (const name of OPTIONS) {
    if (options[name] !== undefined) throw new unsupported.UnsupportedFeatureError(name, `The option ${name}`);
  }
}

/**
 * Throws if the settings ask for peering: `peering.mandatory` (unless `peering.standalone`), a
 * non-zero `peering.priority`.
 *
 * @throws UnsupportedFeatureError naming the setting.
 */
export function checkSettings(settings: settingsModule.OperatorSettings): void {
  const { peering } = settings;
  if (peering.mandatory && !peering.standalone) {
    throw new unsupported.UnsupportedFeatureError('settings.peering.mandatory', 'Mandatory peering (settings.peering.mandatory)');
  }
  if (peering.priority !== 0) {
    throw new unsupported.UnsupportedFeatureError('settings.peering.priority', `A peering priority (settings.peering.priority = ${peering.priority})`);
  }
}

/** The peering resources that Kopf would use for an operator of this scope (R-PEER-1/2). */
function peeringResources(clusterwide: boolean): insights.BackboneName[] {
  return clusterwide ? ['clusterKopfPeerings', 'clusterZalandoPeerings'] : ['namespacedKopfPeerings', 'namespacedZalandoPeerings'];
}

/** What `watchForPeerings` needs. */
export interface PeeringWatchOptions {
  readonly insights: insights.Insights;
  readonly settings: settingsModule.OperatorSettings;
  readonly logger: loggers.Logger;
  /** Stops the watch; it then resolves. */
  readonly signal: AbortSignal;
}

/**
 * Runs until `signal` aborts. Unless standalone or in Lease election: after the first resource scan, logs at DEBUG
 * that peering is skipped if the cluster has no peering resource for the operator's scope, and
 * logs a WARNING once as soon as it has one (at startup or later).
 */
export async function watchForPeerings(options: PeeringWatchOptions): Promise<void> {
  const { insights: picture, settings, logger, signal } = options;
  try {
    if (!settings.peering.standalone && settings.leaderElection.leaseName === null) {
      await picture.readyResources.waitFor(true, signal);
      const names = peeringResources(settings.peering.clusterwide !== false);
      if (names.every((name) => picture.backbone(name) === undefined)) {
        logger.debug('Peering is not implemented yet and the cluster has no peering resources: the operator runs standalone.');
      }
      const found = await picture.waitForBackbone(names, signal);
      const what = `${found.plural}.${found.group}`;
      logger.warning(`The cluster serves ${what} (Kopf's peering), but this version of kopf-gen does not support peering: `
        + `this operator runs standalone and does not coordinate with other replicas or other Kopf operators using ${what}, `
        + 'so they may handle the same objects at the same time. Run only one operator for these resources, '
        + 'and start it with --standalone (standalone: true) to silence this warning.');
    }
    await untilAborted(signal);
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
