/**
 * Pods (D-BI-7): stored only — nothing schedules or runs them. The strategy applies the pod
 * defaults (podspecs.ts), starts every Pod `Pending` with its QoS class, keeps the spec immutable
 * but for upstream's exceptions, and serves the subresources that write into a Pod: `status`,
 * `ephemeralcontainers` (ephemeralcontainers.ts) and `binding` (D-BI-17), which sets the node a
 * scheduler would have picked.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as times from '../meta/times.js';
import * as statuses from '../server/statuses.js';
import * as ephemeralcontainers from './ephemeralcontainers.js';
import * as podspecs from './podspecs.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

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

/**
 * `status.conditions` with the condition of `type` set to `condition`: its transition time is kept
 * when its status does not change (upstream `UpdatePodCondition`).
 */
export function withPodCondition(pod: JsonObject, condition: JsonObject, now: string): JsonObject {
  const status = strategies.mapOf(pod, 'status');
  const conditions = strategies.listOf(status, 'conditions').filter(json.isObject);
  const index = conditions.findIndex((c) => c['type'] === condition['type']);
  const previous = index >= 0 ? conditions[index] : undefined;
  const next: JsonObject = { ...condition, lastTransitionTime: previous && previous['status'] === condition['status'] ? previous['lastTransitionTime'] : now };
  if (next['lastTransitionTime'] === undefined) next['lastTransitionTime'] = now;
  const out = [...conditions];
  if (index >= 0) out[index] = next;
  else out.push(next);
  return { ...pod, status: { ...status, conditions: out } };
}

const BINDING = { group: '', resource: 'pods/binding', kind: 'Binding' };

/**
 * A write through `pods/binding` (D-BI-17): the stored Pod gets `spec.nodeName`, the request's
 * annotations and a `PodScheduled` condition — refused with 409 when the Pod is being deleted, is
 * already bound, or still has scheduling gates.
 */
function bindPod(obj: JsonObject, old: JsonObject, now: string): JsonObject {
  const name = objects.nameOf(old);
  const spec = strategies.mapOf(old, 'spec');
  if (objects.metaOf(old)['deletionTimestamp'] !== undefined)
    throw statuses.conflict(BINDING, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  const bound = strategies.stringOf(spec, 'nodeName');
  if (bound) throw statuses.conflict(BINDING, name, `pod ${name} is already assigned to node ${JSON.stringify(bound)}`);
  if (strategies.listOf(spec, 'schedulingGates').length) throw statuses.conflict(BINDING, name, `pod ${name} has non-empty .spec.schedulingGates`);
  const annotations = objects.metaOf(obj)['annotations'];
  const bindingPod = objects.withMeta({ ...old, spec: { ...spec, nodeName: strategies.stringOf(strategies.mapOf(obj, 'spec'), 'nodeName') } }, (m) => {
    if (json.isObject(annotations)) m['annotations'] = annotations;
  });
  return withPodCondition(bindingPod, { type: 'PodScheduled', status: 'True' }, now);
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
  prepareForSubresource(sub, obj, old, ctx) {
    if (sub === 'ephemeralcontainers') return ephemeralcontainers.applyEphemeralContainers(obj, old);
    if (sub === 'binding') return bindPod(obj, old, times.formatTime(ctx.now()));
    return strategies.statusSubresource.prepareForSubresource!(sub, obj, old, ctx);
  },
  validate(obj, old, _ctx, subresource) {
    if (subresource === 'ephemeralcontainers' && old) return ephemeralcontainers.ephemeralContainerErrors(obj, old);
    if (subresource === 'binding') return [];
    const errors = podspecs.validatePodSpec(obj['spec'], 'spec');
    if (!old) errors.push(...ephemeralcontainers.createErrors(obj));
    if (old && errors.length === 0) errors.push(...podspecs.specUpdateErrors(strategies.mapOf(obj, 'spec'), strategies.mapOf(old, 'spec')));
    return errors;
  },
  gracePeriod: podGracePeriod,
});
