/**
 * ReplicationControllers (D-BI-15): stored only — no Pods are created. The legacy kind keeps its
 * legacy rules: the selector is a plain label map defaulted from the template's labels (and so
 * are the controller's own labels when it has none), `replicas` defaults to 1, and the selector
 * may change on update. Validation is upstream's: a non-empty selector that selects the template,
 * `restartPolicy: Always`, non-negative counts. The scale subresource renders the selector map.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as selectors from '../meta/selectors.js';
import * as replicasets from './replicasets.js';
import * as strategies from './strategies.js';
import * as workloads from './workloads.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');

/** upstream `SetDefaults_ReplicationController`: selector and labels from the template, one replica. Returns a copy. */
export function defaultReplicationController(rc: JsonObject): JsonObject {
  const spec: JsonObject = { ...specOf(rc) };
  if (json.isObject(spec['template'])) spec['template'] = workloads.defaultTemplate(spec['template']);
  const labels = strategies.mapOf(strategies.mapOf(spec['template'], 'metadata'), 'labels');
  const hasTemplateLabels = json.isObject(strategies.mapOf(spec['template'], 'metadata')['labels']);
  let out: JsonObject = rc;
  if (hasTemplateLabels) {
    if (Object.keys(strategies.mapOf(spec, 'selector')).length === 0) spec['selector'] = { ...labels };
    if (Object.keys(objects.labelsOf(rc)).length === 0)
      out = objects.withMeta(rc, (m) => {
        m['labels'] = { ...labels };
      });
  }
  spec['replicas'] ??= 1;
  return { ...out, spec };
}

/** upstream `ValidateReplicationControllerSpec`. */
export function validateReplicationController(obj: JsonObject): FieldError[] {
  const spec = specOf(obj);
  const errors = workloads.nonNegativeErrors(spec, ['replicas', 'minReadySeconds']);
  const selector = strategies.mapOf(spec, 'selector') as Record<string, string>;
  if (Object.keys(selector).length === 0) errors.push(fielderrors.required('spec.selector'));
  else errors.push(...objectmetaLabelErrors(selector));
  if (!json.isObject(spec['template'])) {
    errors.push(fielderrors.required('spec.template'));
    return errors;
  }
  const labels = workloads.templateLabels(spec);
  if (Object.keys(selector).length && !selectors.matchesLabels(selectors.labelSelectorFromObject({ matchLabels: selector }), labels))
    errors.push(fielderrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  errors.push(...workloads.templateErrors(spec['template'], 'spec.template'));
  errors.push(...workloads.alwaysRestartErrors(spec, 'ReplicationController', 'forbidden'));
  return errors;
}

function objectmetaLabelErrors(selector: Record<string, string>): FieldError[] {
  try {
    selectors.labelSelectorFromObject({ matchLabels: selector });
    return [];
  } catch (err) {
    if (err instanceof selectors.SelectorError) return [fielderrors.invalid('spec.selector', selector, err.message)];
    throw err;
  }
}

/** The ReplicationController strategy; see the module comment. */
export const replicationControllerStrategy: resources.Strategy = workloads.workloadStrategy('ReplicationController', {
  defaults: defaultReplicationController,
  validate: (obj) => validateReplicationController(obj),
  statusErrors: (obj) => workloads.replicaStatusErrors(strategies.mapOf(obj, 'status'), replicasets.REPLICA_COUNTERS, 'cannot be greater than readyReplicas'),
});
