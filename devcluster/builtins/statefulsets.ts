/**
 * StatefulSets (D-BI-15): stored only — no Pods or PersistentVolumeClaims are created. The
 * strategy applies upstream's defaults (`replicas: 1`, `podManagementPolicy: OrderedReady`, a
 * `RollingUpdate` strategy with `partition: 0`, `revisionHistoryLimit: 10`, the claim retention
 * policy `Retain`/`Retain`), the pod template's defaults, and the defaults of a claim to each volume
 * claim template (persistentvolumeclaims.ts), which also gains `apiVersion: v1` and
 * `kind: PersistentVolumeClaim` as on a real server. Validation is upstream's: the name is a DNS
 * label, the selector is required, not empty and selects the template, and an update may change
 * only `replicas`, `ordinals`, `template`, `updateStrategy`, `persistentVolumeClaimRetentionPolicy`
 * and `minReadySeconds`. The scale subresource is the generic one (D-SUB-5).
 */
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as persistentvolumeclaims from './persistentvolumeclaims.js';
import * as strategies from './strategies.js';
import * as workloads from './workloads.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const POD_MANAGEMENT = ['OrderedReady', 'Parallel'];
const RETENTION = ['Retain', 'Delete'];
const MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];
const IMMUTABLE_SPEC_MESSAGE =
  "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');

function defaultUpdateStrategy(value: unknown): JsonObject {
  const out: JsonObject = json.isObject(value) ? { ...value } : {};
  if (!out['type']) {
    out['type'] = 'RollingUpdate';
    out['rollingUpdate'] ??= {};
  }
  if (out['type'] === 'RollingUpdate' && json.isObject(out['rollingUpdate'])) {
    out['rollingUpdate'] = { ...out['rollingUpdate'], partition: out['rollingUpdate']['partition'] ?? 0 };
  }
  return out;
}

/** A volume claim template with a claim's defaults, typed as a PersistentVolumeClaim. */
function defaultClaimTemplate(claim: unknown): unknown {
  if (!json.isObject(claim)) return claim;
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...persistentvolumeclaims.defaultClaim(claim) };
}

/** The defaults of D-BI-15 for a StatefulSet. Returns a copy. */
export function defaultStatefulSetSpec(spec: JsonObject): JsonObject {
  const out: JsonObject = { ...spec };
  if (!out['podManagementPolicy']) out['podManagementPolicy'] = 'OrderedReady';
  out['updateStrategy'] = defaultUpdateStrategy(out['updateStrategy']);
  const retention: JsonObject = { ...strategies.mapOf(out, 'persistentVolumeClaimRetentionPolicy') };
  if (!retention['whenDeleted']) retention['whenDeleted'] = 'Retain';
  if (!retention['whenScaled']) retention['whenScaled'] = 'Retain';
  out['persistentVolumeClaimRetentionPolicy'] = retention;
  out['replicas'] ??= 1;
  out['revisionHistoryLimit'] ??= 10;
  out['template'] = workloads.defaultTemplate(out['template']);
  if (Array.isArray(out['volumeClaimTemplates'])) out['volumeClaimTemplates'] = out['volumeClaimTemplates'].map(defaultClaimTemplate);
  return out;
}

function updateStrategyErrors(spec: JsonObject): FieldError[] {
  const strategy = strategies.mapOf(spec, 'updateStrategy');
  const type = strategy['type'];
  const at = 'spec.updateStrategy';
  if (!type) return [fielderrors.required(at)];
  if (type === 'OnDelete') {
    if (strategy['rollingUpdate'] !== undefined)
      return [fielderrors.invalid(`${at}.rollingUpdate`, strategy['rollingUpdate'], "only allowed for updateStrategy 'RollingUpdate'")];
    return [];
  }
  if (type !== 'RollingUpdate') return [fielderrors.invalid(at, strategy, "must be 'RollingUpdate' or 'OnDelete'")];
  const rolling = strategies.mapOf(strategy, 'rollingUpdate');
  const errors = workloads.nonNegativeErrors(rolling, ['partition'], `${at}.rollingUpdate`);
  const maxUnavailable = rolling['maxUnavailable'];
  if (maxUnavailable === 0 || maxUnavailable === '0%') errors.push(fielderrors.invalid(`${at}.rollingUpdate.maxUnavailable`, maxUnavailable, 'cannot be 0'));
  return errors;
}

function retentionErrors(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const policy = spec['persistentVolumeClaimRetentionPolicy'];
  if (!json.isObject(policy)) return errors;
  for (const key of ['whenDeleted', 'whenScaled']) {
    if (!RETENTION.includes(policy[key] as string))
      errors.push(fielderrors.notSupported(`spec.persistentVolumeClaimRetentionPolicy.${key}`, policy[key] ?? '', RETENTION));
  }
  return errors;
}

/** upstream `ValidateStatefulSetSpec`. The template's pod spec is not validated, as upstream's does not. */
function specErrors(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const policy = spec['podManagementPolicy'];
  if (!policy) errors.push(fielderrors.required('spec.podManagementPolicy'));
  else if (!POD_MANAGEMENT.includes(policy as string))
    errors.push(fielderrors.invalid('spec.podManagementPolicy', policy, "must be 'OrderedReady' or 'Parallel'"));
  errors.push(...updateStrategyErrors(spec), ...retentionErrors(spec));
  errors.push(...workloads.nonNegativeErrors(spec, ['replicas', 'minReadySeconds']));
  const start = strategies.mapOf(spec, 'ordinals')['start'];
  if (strategies.isInteger(start) && start < 0) errors.push(fielderrors.invalid('spec.ordinals.start', start, 'must be greater than or equal to 0'));
  errors.push(...workloads.requiredSelectorErrors(spec, 'statefulset'));
  errors.push(...workloads.templateErrors(spec['template'], 'spec.template', { podSpec: false }));
  errors.push(...workloads.alwaysRestartErrors(spec, 'StatefulSet', 'forbidden'));
  return errors;
}

/** Validates a (defaulted) StatefulSet; `old` is the stored one on update. */
export function validateStatefulSet(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  const spec = specOf(obj);
  const errors = specErrors(spec);
  if (old) {
    const oldSpec = specOf(old);
    const kept: JsonObject = { ...spec };
    for (const key of MUTABLE) {
      if (oldSpec[key] === undefined) delete kept[key];
      else kept[key] = oldSpec[key];
    }
    if (strategies.changed(kept, oldSpec)) errors.push(fielderrors.forbidden('spec', IMMUTABLE_SPEC_MESSAGE));
  }
  return errors;
}

const COUNTERS = ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas'];

/** upstream `ValidateStatefulSetStatusUpdate`. */
function statusErrors(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  const status = strategies.mapOf(obj, 'status');
  const errors = workloads.replicaStatusErrors(status, COUNTERS, 'cannot be greater than status.readyReplicas');
  if (old) errors.push(...workloads.collisionCountErrors(status, strategies.mapOf(old, 'status')));
  return errors;
}

function withDefaults(obj: JsonObject): JsonObject {
  return { ...obj, spec: defaultStatefulSetSpec(specOf(obj)) };
}

/** The StatefulSet strategy; see the module comment. */
export const statefulSetStrategy: resources.Strategy = workloads.workloadStrategy(
  'StatefulSet',
  { defaults: withDefaults, validate: validateStatefulSet, statusErrors },
  { nameRule: 'label' },
);
