/**
 * ReplicaSets (D-BI-15): stored only — no Pods are created. The strategy applies upstream's only
 * default, `replicas: 1`, and the pod template's defaults, and validates as upstream: a non-empty
 * selector that selects the template (`empty selector is invalid for deployment` — upstream reuses
 * the Deployment's wording), `restartPolicy: Always`, no `activeDeadlineSeconds`, non-negative
 * counts, and a selector that never changes. The scale subresource is the generic one (D-SUB-5).
 */
import type * as resources from '../api/resources.js';
import type * as fielderrors from '../meta/fielderrors.js';
import * as strategies from './strategies.js';
import * as workloads from './workloads.js';
import type { JsonObject } from '../json.js';
type FieldError = fielderrors.FieldError;

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');

/** The defaults of D-BI-15 for a ReplicaSet. Returns a copy. */
export function defaultReplicaSetSpec(spec: JsonObject): JsonObject {
  return { ...spec, replicas: spec['replicas'] ?? 1, template: workloads.defaultTemplate(spec['template']) };
}

/** upstream `ValidateReplicaSetSpec`, and the selector's immutability on update. */
export function validateReplicaSet(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  const spec = specOf(obj);
  const errors = workloads.nonNegativeErrors(spec, ['replicas', 'minReadySeconds']);
  errors.push(...workloads.requiredSelectorErrors(spec, 'deployment'));
  errors.push(...workloads.templateErrors(spec['template'], 'spec.template'));
  errors.push(...workloads.alwaysRestartErrors(spec, 'ReplicaSet', 'forbidden'));
  if (old) errors.push(...workloads.immutableErrors(spec['selector'], specOf(old)['selector'], 'spec.selector'));
  return errors;
}

/** The replica counters of ReplicaSets and ReplicationControllers' statuses. */
export const REPLICA_COUNTERS = ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'];

function withDefaults(obj: JsonObject): JsonObject {
  return { ...obj, spec: defaultReplicaSetSpec(specOf(obj)) };
}

/** The ReplicaSet strategy; see the module comment. */
export const replicaSetStrategy: resources.Strategy = workloads.workloadStrategy('ReplicaSet', {
  defaults: withDefaults,
  validate: validateReplicaSet,
  statusErrors: (obj) => workloads.replicaStatusErrors(strategies.mapOf(obj, 'status'), REPLICA_COUNTERS, 'cannot be greater than readyReplicas'),
});
