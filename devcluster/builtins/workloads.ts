/**
 * What the workload kinds (Jobs, CronJobs, StatefulSets, DaemonSets, ReplicaSets,
 * ReplicationControllers) share: a pod template defaulted as every pod template is (podspecs.ts,
 * without the Pod-only defaults), and the checks upstream repeats for each of them — a label
 * selector that parses, is not empty and selects the template's labels, non-negative counts, and
 * the pod template's own validation.
 *
 * The per-kind modules (jobs.ts, statefulsets.ts, …) compose these with their own defaults and
 * update rules, so the messages stay identical across kinds where upstream's are.
 */
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as objectmeta from '../meta/objectmeta.js';
import * as selectors from '../meta/selectors.js';
import * as podspecs from './podspecs.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

/** A pod template (`{metadata, spec}`) with the pod-template defaults of D-BI-7 applied. Returns a copy. */
export function defaultTemplate(template: unknown): JsonObject {
  const out: JsonObject = json.isObject(template) ? { ...template } : {};
  out['spec'] = podspecs.defaultPodSpec(strategies.mapOf(out, 'spec'), { pod: false });
  return out;
}

/** The labels of the template at `spec.template` (an empty map when it has none). */
export function templateLabels(spec: JsonObject): Record<string, string> {
  return strategies.mapOf(strategies.mapOf(strategies.mapOf(spec, 'template'), 'metadata'), 'labels') as Record<string, string>;
}

/** A parsed LabelSelector, or the field error upstream reports for one that does not parse. */
export function parseSelector(value: unknown, path: string): { selector?: selectors.LabelSelector; errors: FieldError[] } {
  try {
    return { selector: selectors.labelSelectorFromObject(value), errors: [] };
  } catch (err) {
    if (err instanceof selectors.SelectorError) return { errors: [fielderrors.invalid(path, value, err.message)] };
    throw err;
  }
}

/** Whether a LabelSelector object has neither `matchLabels` nor `matchExpressions`. */
export function isEmptySelector(value: unknown): boolean {
  const matchLabels = strategies.mapOf(value, 'matchLabels');
  return Object.keys(matchLabels).length + strategies.listOf(value, 'matchExpressions').length === 0;
}

/**
 * The selector rules of ReplicaSets, Deployments and StatefulSets: required, parsable, not empty
 * (`empty selector is invalid for <noun>`), and selecting the template's labels.
 */
export function requiredSelectorErrors(spec: JsonObject, noun: string): FieldError[] {
  const value = spec['selector'];
  if (value === undefined || value === null) return [fielderrors.required('spec.selector')];
  const { selector, errors } = parseSelector(value, 'spec.selector');
  if (isEmptySelector(value)) errors.push(fielderrors.invalid('spec.selector', value, `empty selector is invalid for ${noun}`));
  if (selector) errors.push(...selectorMatchErrors(selector, spec));
  return errors;
}

/** `spec.template.metadata.labels: Invalid value: …: \`selector\` does not match template \`labels\`` when it does not. */
export function selectorMatchErrors(selector: selectors.LabelSelector, spec: JsonObject): FieldError[] {
  if (selector.requirements.length === 0 && !selector.matchesNothing) return []; // an empty selector matches everything
  const labels = templateLabels(spec);
  if (selectors.matchesLabels(selector, labels)) return [];
  return [fielderrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`')];
}

/** `must be greater than or equal to 0` for every named integer of `spec` that is negative. */
export function nonNegativeErrors(spec: JsonObject, keys: readonly string[], prefix = 'spec'): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of keys) {
    const v = spec[key];
    if (strategies.isInteger(v) && v < 0) errors.push(fielderrors.invalid(`${prefix}.${key}`, v, 'must be greater than or equal to 0'));
  }
  return errors;
}

/**
 * Upstream's ValidatePodTemplateSpec at `path` (`spec.template`): the template's labels and
 * annotations, then (unless `podSpec: false`, as for StatefulSets) its pod spec (D-BI-7).
 */
export function templateErrors(template: unknown, path: string, opts: { podSpec: boolean } = { podSpec: true }): FieldError[] {
  const meta = strategies.mapOf(template, 'metadata');
  const errors = [
    ...objectmeta.validateLabels(strategies.mapOf(meta, 'labels') as Record<string, string>, `${path}.metadata.labels`),
    ...objectmeta.validateAnnotations(strategies.mapOf(meta, 'annotations') as Record<string, string>, `${path}.metadata.annotations`),
  ];
  if (opts.podSpec) errors.push(...podspecs.validatePodSpec(strategies.mapOf(template, 'spec'), `${path}.spec`));
  return errors;
}

/**
 * The replica counters of a workload's status: non-negative, none above `status.replicas`, and
 * `availableReplicas` not above `readyReplicas` (`readyLimitMessage` is upstream's wording, which
 * differs between kinds).
 */
export function replicaStatusErrors(status: JsonObject, counters: readonly string[], readyLimitMessage: string): FieldError[] {
  const errors = nonNegativeErrors(status, [...counters, 'observedGeneration', 'collisionCount'], 'status');
  const replicas = strategies.isInteger(status['replicas']) ? status['replicas'] : 0;
  const value = (key: string): number => (strategies.isInteger(status[key]) ? status[key] : 0);
  for (const key of counters) {
    if (key !== 'replicas' && value(key) > replicas) errors.push(fielderrors.invalid(`status.${key}`, value(key), 'cannot be greater than status.replicas'));
  }
  if (value('availableReplicas') > value('readyReplicas'))
    errors.push(fielderrors.invalid('status.availableReplicas', value('availableReplicas'), readyLimitMessage));
  return errors;
}

/** `status.collisionCount` may not go down (`cannot be decremented`). */
export function collisionCountErrors(status: JsonObject, oldStatus: JsonObject): FieldError[] {
  const next = strategies.isInteger(status['collisionCount']) ? status['collisionCount'] : undefined;
  const prev = strategies.isInteger(oldStatus['collisionCount']) ? oldStatus['collisionCount'] : undefined;
  if (prev !== undefined && (next === undefined || next < prev)) return [fielderrors.invalid('status.collisionCount', next ?? 0, 'cannot be decremented')];
  return [];
}

/** The rule of long-running workloads: the template runs with `restartPolicy: Always`, without a deadline. */
export function alwaysRestartErrors(spec: JsonObject, kind: string, deadline: 'invalid' | 'forbidden'): FieldError[] {
  const errors: FieldError[] = [];
  const podSpec = strategies.mapOf(strategies.mapOf(spec, 'template'), 'spec');
  const restart = strategies.stringOf(podSpec, 'restartPolicy');
  if (restart !== 'Always') errors.push(fielderrors.notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (podSpec['activeDeadlineSeconds'] !== undefined) {
    const at = 'spec.template.spec.activeDeadlineSeconds';
    const message = `activeDeadlineSeconds in ${kind} is not Supported`;
    errors.push(deadline === 'forbidden' ? fielderrors.forbidden(at, message) : fielderrors.invalid(at, podSpec['activeDeadlineSeconds'], message));
  }
  return errors;
}

/** `<path>: Invalid value: …: field is immutable` when a value changed (upstream's ValidateImmutableField). */
export function immutableErrors(next: unknown, old: unknown, path: string): FieldError[] {
  return strategies.changed(next, old) ? [fielderrors.invalid(path, next ?? null, 'field is immutable')] : [];
}

/** What a workload kind's strategy is made of (see `workloadStrategy`). */
export interface WorkloadParts {
  /** The kind's defaults (pod-template defaults included); returns a copy. */
  defaults(obj: JsonObject): JsonObject;
  /** Validation of a main-endpoint write (`old` on update). */
  validate(obj: JsonObject, old: JsonObject | undefined): FieldError[];
  /** Validation of a `/status` write; none when absent. */
  statusErrors?(obj: JsonObject, old: JsonObject | undefined): FieldError[];
}

/**
 * The strategy shape the workload kinds share (D-BI-13..15): generation bumped by spec changes,
 * defaults on every write, status dropped on create and kept by main-endpoint writes, `/status`
 * writes validated by the kind's status rules. `overrides` adds what a kind has beyond that.
 */
export function workloadStrategy(kind: string, parts: WorkloadParts, overrides: Partial<resources.Strategy> = {}): resources.Strategy {
  return strategies.plainStrategy(kind, {
    generation: (old, next) => strategies.changed(old['spec'], next['spec']),
    prepareForCreate(obj) {
      const { status: _status, ...rest } = parts.defaults(obj);
      return rest;
    },
    prepareForUpdate: (obj, old) => strategies.keepStatus(parts.defaults(obj), old),
    prepareForSubresource: strategies.statusSubresource.prepareForSubresource,
    validate(obj, old, _ctx, subresource) {
      if (subresource === 'status') return parts.statusErrors?.(obj, old) ?? [];
      return parts.validate(obj, old);
    },
    ...overrides,
  });
}
