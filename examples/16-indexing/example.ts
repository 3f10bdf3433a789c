/**
 * In-memory indices (Kopf's example 16-indexing, in TypeScript): two indices over all pods, kept
 * up to date by the operator's watch of pods, and a timer on KopfExample objects that reads them —
 * no API call for the lookup.
 *
 * - `podsRunning`: `[namespace, name]` → whether the pod is running (composite keys, compared by
 *   value);
 * - `podsByLabel`: `[label, value]` → the names of the pods with that label.
 *
 * Every 5 seconds, the timer writes the running pods of `default` and `kube-system` to the
 * object's `status['running-pods']`, and the pods that share a label with the object to
 * `status['labelled-pods']`.
 *
 * The indices are typed from what the functions return (`IndexOf<typeof fn>`) and injected into
 * every handler's arguments under their names — their handler ids, given explicitly here, as
 * other handlers depend on them (a test runner's transpiler may rename function expressions). They
 * follow the naming advice of the user's guide (plural, several words), so they never shadow a
 * built-in argument; Kopf's original calls them `is_running` and `by_label`. Its liveness probes (`pod_count`, `pod_names`) are left out: kopf-gen
 * has no probes yet.
 */
import { builtins, on, type IndexOf } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

export const podsRunning = on.index(builtins.Pods, { id: 'podsRunning' }, ({ namespace, name, status }) => {
  // Index only what you need: a boolean per pod, not the pod's body.
  return new Map([[[namespace ?? '', name] as const, status?.phase === 'Running']]);
});

export const podsByLabel = on.index(
  builtins.Pods,
  { id: 'podsByLabel' },
  ({ labels, name }) => new Map(Object.entries(labels).map(([label, value]) => [[label, value] as const, name])),
);

declare module 'kopf-gen/runtime' {
  interface OperatorIndices {
    podsRunning: IndexOf<typeof podsRunning>; // Index<readonly [string, string], boolean>
    podsByLabel: IndexOf<typeof podsByLabel>; // Index<readonly [string, string], string>
  }
}

on.timer(KopfExamples, { interval: 5 }, function intervalled({ labels, podsRunning, podsByLabel, patch, logger }) {
  const labelled = [...podsByLabel].map(([[label, value], names]) => `${label}=${value}: ${[...names].join(', ')}`);
  logger.debug(`Pods by label: ${labelled.join('; ') || 'none'}`);

  patch.status['running-pods'] = [...podsRunning]
    .filter(([[namespace], running]) => ['kube-system', 'default'].includes(namespace) && [...running].some(Boolean))
    .map(([[namespace, name]]) => `${namespace}::${name}`);

  // A lookup by a composite key: a fresh array, equal by value to the keys the indexer returned.
  patch.status['labelled-pods'] = Object.entries(labels).flatMap(([label, value]) => [...(podsByLabel.get([label, value]) ?? [])]);
});
