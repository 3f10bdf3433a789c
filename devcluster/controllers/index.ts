/**
 * Starts the built-in control loops of D-GEN-5; each can be switched off for tests that need to
 * observe an object stuck where a real cluster's controller would move it on.
 */
import type * as core from '../api/core.js';
import type * as watching from '../api/watching.js';
import * as crds from './crds.js';
import * as gc from './gc.js';
import type * as loop from './loop.js';
import * as namespaces from './namespaces.js';
import * as pods from './pods.js';
import * as serviceaccounts from './serviceaccounts.js';

export interface ControllerSwitches {
  crds: boolean;
  garbageCollector: boolean;
  namespaces: boolean;
  serviceAccounts: boolean;
  podTermination: boolean;
}

export const DEFAULT_SWITCHES: ControllerSwitches = {
  crds: true,
  garbageCollector: true,
  namespaces: true,
  serviceAccounts: true,
  podTermination: true,
};

export interface ControllerOptions {
  switches: ControllerSwitches;
  podTerminationDelayMs: number;
  warn: (message: string) => void;
}

export function startControllers(c: core.Core, hub: watching.WatchHub, queue: loop.ControllerLoop, opts: ControllerOptions): void {
  if (opts.switches.crds) new crds.CrdController(c, hub, queue, opts.warn);
  if (opts.switches.garbageCollector) gc.startGarbageCollector(c, queue);
  if (opts.switches.namespaces) namespaces.startNamespaceController(c, queue);
  if (opts.switches.serviceAccounts) serviceaccounts.startServiceAccounts(c, queue);
  if (opts.switches.podTermination) pods.startPodTermination(c, queue, opts.podTerminationDelayMs);
}
