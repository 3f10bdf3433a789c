import type * as resources from '../api/resources.js';
import * as podspecs from './podspecs.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';

/** The grace period when neither the request nor the pod sets one (upstream default). */
export const DEFAULT_GRACE_SECONDS = 30;

const TERMINAL_PHASES = new Set(['Succeeded', 'Failed']);

function withDefaults(obj: JsonObject): JsonObject {
  const spec = strategies.mapOf(obj, 'spec');
  podspecs.checkDecodable(spec, 'Pod', 'v1', 'spec');
  return { ...obj, spec: podspecs.defaultPodSpec(spec, { pod: true }) };
}

/**
 * The grace period of the first DELETE of a pod (D-VERB-28): 0 (immediate) for a pod that was never
 * scheduled (`spec.nodeName` empty) or has finished (`Succeeded`/`Failed`); otherwise the requested
 * grace, else `spec.terminationGracePeriodSeconds`, else 30. Negative values count as 1.
 */
export function podGracePeriod(pod: JsonObject, requested: number | undefined): number {
  const spec = strategies.mapOf(pod, 'spec');
  if (!strategies.stringOf(spec, 'nodeName')) return 0;
  if (TERMINAL_PHASES.has(strategies.stringOf(strategies.mapOf(pod, 'status'), 'phase'))) return 0;
  const fromSpec = spec['terminationGracePeriodSeconds'];
  const grace = requested ?? (strategies.isInteger(fromSpec) ? fromSpec : DEFAULT_GRACE_SECONDS);
  return grace < 0 ? 1 : grace;
}

const specField =
  (key: string) =>
  (o: JsonObject): string =>
    strategies.stringOf(strategies.mapOf(o, 'spec'), key);
const statusField =
  (key: string) =>
  (o: JsonObject): string =>
    strategies.stringOf(strategies.mapOf(o, 'status'), key);

/** The Pod strategy; see the module comment. */
export const podStrategy: resources.Strategy = strategies.plainStrategy('Pod', {
  deleteReturnsObject: true,
  fieldSelectors: {
    'spec.nodeName': specField('nodeName'),
    'spec.restartPolicy': specField('restartPolicy'),
    'spec.schedulerName': specField('schedulerName'),
    'spec.serviceAccountName': specField('serviceAccountName'),
    'status.phase': statusField('phase'),
    'status.podIP': statusField('podIP'),
  },
  generation: (old, next) => strategies.changed(old['spec'], next['spec']),
  prepareForCreate(obj) {
    const out = withDefaults(obj);
    return { ...out, status: { phase: 'Pending', qosClass: podspecs.qosClass(strategies.mapOf(out, 'spec')) } };
  },
  prepareForUpdate(obj, old) {
    return strategies.keepStatus(withDefaults(obj), old);
  },
  prepareForSubresource: strategies.statusSubresource.prepareForSubresource,
  validate(obj, old) {
    const errors = podspecs.validatePodSpec(obj['spec'], 'spec');
    if (old && errors.length === 0) errors.push(...podspecs.specUpdateErrors(strategies.mapOf(obj, 'spec'), strategies.mapOf(old, 'spec')));
    return errors;
  },
  gracePeriod: podGracePeriod,
});
