/**
 * DaemonSets (D-BI-15): stored only — no Pods are created on nodes. The strategy applies
 * upstream's defaults (a `RollingUpdate` strategy with `maxUnavailable: 1` and `maxSurge: 0`,
 * `revisionHistoryLimit: 10`) and the pod template's defaults, and validates as upstream: a
 * non-empty selector that selects the template, exactly one of `maxUnavailable`/`maxSurge`
 * non-zero, `restartPolicy: Always`, no `activeDeadlineSeconds`, and a selector that never changes.
 */
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as strategies from './strategies.js';
import * as workloads from './workloads.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const STRATEGY_TYPES = ['RollingUpdate', 'OnDelete'];

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');

/** The defaults of D-BI-15 for a DaemonSet. Returns a copy. */
export function defaultDaemonSetSpec(spec: JsonObject): JsonObject {
  const out: JsonObject = { ...spec };
  const strategy: JsonObject = json.isObject(out['updateStrategy']) ? { ...out['updateStrategy'] } : {};
  if (!strategy['type']) strategy['type'] = 'RollingUpdate';
  if (strategy['type'] === 'RollingUpdate') {
    const rolling: JsonObject = { ...strategies.mapOf(strategy, 'rollingUpdate') };
    rolling['maxUnavailable'] ??= 1;
    rolling['maxSurge'] ??= 0;
    strategy['rollingUpdate'] = rolling;
  }
  out['updateStrategy'] = strategy;
  out['revisionHistoryLimit'] ??= 10;
  out['template'] = workloads.defaultTemplate(out['template']);
  return out;
}

/** The integer or percentage of an IntOrString (`"25%"` → 25); NaN when malformed. */
function intOrPercent(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^[0-9]+%$/.test(v)) return Number(v.slice(0, -1));
  return Number.NaN;
}

function rollingUpdateErrors(rolling: JsonObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of ['maxUnavailable', 'maxSurge']) {
    const v = rolling[key];
    const at = `${path}.${key}`;
    if (typeof v === 'string' && Number.isNaN(intOrPercent(v)))
      errors.push(
        fielderrors.invalid(
          at,
          v,
          "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        ),
      );
    else if (typeof v === 'number' && v < 0) errors.push(fielderrors.invalid(at, v, 'must be greater than or equal to 0'));
    else if (typeof v === 'string' && intOrPercent(v) > 100) errors.push(fielderrors.invalid(at, v, 'must not be greater than 100%'));
  }
  const unavailable = intOrPercent(rolling['maxUnavailable']) || 0;
  const surge = intOrPercent(rolling['maxSurge']) || 0;
  if (unavailable !== 0 && surge !== 0)
    errors.push(fielderrors.invalid(`${path}.maxSurge`, rolling['maxSurge'], 'may not be set when maxUnavailable is non-zero'));
  if (unavailable === 0 && surge === 0) errors.push(fielderrors.required(`${path}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  return errors;
}

/** upstream `ValidateDaemonSetSpec`, and the selector's immutability on update. */
export function validateDaemonSet(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  const spec = specOf(obj);
  const errors: FieldError[] = [];
  const value = spec['selector'];
  if (value === undefined || value === null) errors.push(fielderrors.required('spec.selector'));
  else {
    const parsed = workloads.parseSelector(value, 'spec.selector');
    errors.push(...parsed.errors);
    if (parsed.selector) errors.push(...workloads.selectorMatchErrors(parsed.selector, spec));
    if (workloads.isEmptySelector(value)) errors.push(fielderrors.invalid('spec.selector', value, 'empty selector is invalid for daemonset'));
  }
  errors.push(...workloads.templateErrors(spec['template'], 'spec.template'));
  errors.push(...workloads.alwaysRestartErrors(spec, 'DaemonSet', 'forbidden'));
  errors.push(...workloads.nonNegativeErrors(spec, ['minReadySeconds', 'revisionHistoryLimit']));
  const strategy = strategies.mapOf(spec, 'updateStrategy');
  const type = strategy['type'];
  if (type === 'RollingUpdate') {
    if (!json.isObject(strategy['rollingUpdate'])) errors.push(fielderrors.required('spec.updateStrategy.rollingUpdate'));
    else errors.push(...rollingUpdateErrors(strategy['rollingUpdate'], 'spec.updateStrategy.rollingUpdate'));
  } else if (type !== 'OnDelete') errors.push(fielderrors.notSupported('spec.updateStrategy', strategy, STRATEGY_TYPES));
  if (old) errors.push(...workloads.immutableErrors(spec['selector'], specOf(old)['selector'], 'spec.selector'));
  return errors;
}

const COUNTERS = [
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
];

/** upstream `ValidateDaemonSetStatusUpdate`. */
function statusErrors(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  const status = strategies.mapOf(obj, 'status');
  const errors = workloads.nonNegativeErrors(status, [...COUNTERS, 'observedGeneration', 'collisionCount'], 'status');
  if (old) errors.push(...workloads.collisionCountErrors(status, strategies.mapOf(old, 'status')));
  return errors;
}

function withDefaults(obj: JsonObject): JsonObject {
  return { ...obj, spec: defaultDaemonSetSpec(specOf(obj)) };
}

/** The DaemonSet strategy; see the module comment. */
export const daemonSetStrategy: resources.Strategy = workloads.workloadStrategy('DaemonSet', {
  defaults: withDefaults,
  validate: validateDaemonSet,
  statusErrors,
});
