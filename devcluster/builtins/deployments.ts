/**
 * Deployments (D-BI-9): stored only — no ReplicaSets or Pods are created and `status` stays as
 * clients write it. The strategy applies the defaults (replicas, rolling-update strategy, history
 * and progress limits, pod-template defaults from podspecs.ts), validates the selector against the
 * template labels, keeps the selector immutable, and bumps `generation` on spec or annotation
 * changes (D-META-7). The scale subresource (D-SUB-5) is generic (api/scale.ts) and renders
 * `status.selector` from `spec.selector`.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as selectors from '../meta/selectors.js';
import * as podspecs from './podspecs.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const STRATEGY_TYPES = ['Recreate', 'RollingUpdate'];
const INTEGER_FIELDS = ['spec.replicas', 'spec.revisionHistoryLimit', 'spec.progressDeadlineSeconds', 'spec.minReadySeconds'];

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');

function defaultStrategy(value: unknown): JsonObject {
  const out: JsonObject = json.isObject(value) ? { ...value } : {};
  out['type'] ??= 'RollingUpdate';
  if (out['type'] === 'RollingUpdate') {
    const rolling: JsonObject = { ...strategies.mapOf(out, 'rollingUpdate') };
    rolling['maxUnavailable'] ??= '25%';
    rolling['maxSurge'] ??= '25%';
    out['rollingUpdate'] = rolling;
  }
  return out;
}

/** The defaults of D-BI-9 (pod-template defaults included). Returns a copy. */
export function defaultDeploymentSpec(spec: JsonObject): JsonObject {
  const out: JsonObject = { ...spec };
  out['replicas'] ??= 1;
  out['strategy'] = defaultStrategy(out['strategy']);
  out['revisionHistoryLimit'] ??= 10;
  out['progressDeadlineSeconds'] ??= 600;
  const template = strategies.mapOf(out, 'template');
  out['template'] = { ...template, spec: podspecs.defaultPodSpec(strategies.mapOf(template, 'spec'), { pod: false }) };
  return out;
}

function withDefaults(obj: JsonObject): JsonObject {
  strategies.requireIntegers(obj, INTEGER_FIELDS, 'Deployment');
  podspecs.checkDecodable(strategies.mapOf(strategies.mapOf(specOf(obj), 'template'), 'spec'), 'Deployment', 'v1', 'spec.template.spec');
  return { ...obj, spec: defaultDeploymentSpec(specOf(obj)) };
}

function validateSelector(spec: JsonObject): FieldError[] {
  const selector = spec['selector'];
  if (selector === undefined || selector === null) return [fielderrors.required('spec.selector')];
  let parsed: selectors.LabelSelector;
  try {
    parsed = selectors.labelSelectorFromObject(selector);
  } catch (err) {
    if (err instanceof selectors.SelectorError) return [fielderrors.invalid('spec.selector', selector, err.message)];
    throw err;
  }
  if (parsed.requirements.length === 0) return [fielderrors.invalid('spec.selector', selector, 'empty selector is invalid for deployment')];
  const labels = strategies.mapOf(strategies.mapOf(strategies.mapOf(spec, 'template'), 'metadata'), 'labels') as Record<string, string>;
  if (!selectors.matchesLabels(parsed, labels)) {
    return [fielderrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`')];
  }
  return [];
}

function validateRollout(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of ['replicas', 'revisionHistoryLimit', 'minReadySeconds']) {
    const v = spec[key];
    if (strategies.isInteger(v) && v < 0) errors.push(fielderrors.invalid(`spec.${key}`, v, 'must be greater than or equal to 0'));
  }
  const strategy = strategies.mapOf(spec, 'strategy');
  const type = strategy['type'];
  if (!STRATEGY_TYPES.includes(type as string)) errors.push(fielderrors.notSupported('spec.strategy.type', type, STRATEGY_TYPES));
  if (type === 'Recreate' && strategy['rollingUpdate'] !== undefined) {
    errors.push(fielderrors.forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
  }
  const rolling = strategies.mapOf(strategy, 'rollingUpdate');
  const isZero = (v: unknown): boolean => v === 0 || v === '0%';
  if (type === 'RollingUpdate' && isZero(rolling['maxUnavailable']) && isZero(rolling['maxSurge'])) {
    errors.push(fielderrors.invalid('spec.strategy.rollingUpdate.maxUnavailable', rolling['maxUnavailable'], 'may not be 0 when `maxSurge` is 0'));
  }
  return errors;
}

/** Validates a (defaulted) Deployment; `old` is the stored one on update. */
export function validateDeployment(obj: JsonObject, old: JsonObject | undefined): FieldError[] {
  const spec = specOf(obj);
  const errors = [...validateSelector(spec), ...validateRollout(spec)];
  const templateSpec = strategies.mapOf(spec, 'template')['spec'];
  errors.push(...podspecs.validatePodSpec(templateSpec, 'spec.template.spec'));
  const restart = strategies.stringOf(templateSpec, 'restartPolicy');
  if (restart === 'Never' || restart === 'OnFailure') errors.push(fielderrors.notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (old && strategies.changed(specOf(old)['selector'], spec['selector'])) {
    errors.push(fielderrors.invalid('spec.selector', spec['selector'] ?? null, 'field is immutable'));
  }
  return errors;
}

/** The Deployment strategy; see the module comment. */
export const deploymentStrategy: resources.Strategy = strategies.plainStrategy('Deployment', {
  generation: (old, next) =>
    strategies.changed(old['spec'], next['spec']) || strategies.changed(objects.metaOf(old)['annotations'], objects.metaOf(next)['annotations']),
  prepareForCreate(obj) {
    const { status: _s, ...rest } = withDefaults(obj);
    return rest;
  },
  prepareForUpdate(obj, old) {
    return strategies.keepStatus(withDefaults(obj), old);
  },
  prepareForSubresource: strategies.statusSubresource.prepareForSubresource,
  validate: (obj, old) => validateDeployment(obj, old),
});
