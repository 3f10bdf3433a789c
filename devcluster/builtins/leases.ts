import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

function normalize(obj: JsonObject): JsonObject {
  if (!json.isObject(obj['spec'])) return obj;
  strategies.requireIntegers(obj, ['spec.leaseDurationSeconds', 'spec.leaseTransitions'], 'Lease', 'coordination.k8s.io/v1');
  const out = strategies.normalizeTimeAt(obj, ['spec', 'acquireTime'], true, 'Lease', 'coordination.k8s.io/v1');
  return strategies.normalizeTimeAt(out, ['spec', 'renewTime'], true, 'Lease', 'coordination.k8s.io/v1');
}

/** Validates a Lease spec (D-BI-10). */
export function validateLease(obj: JsonObject): FieldError[] {
  const spec = strategies.mapOf(obj, 'spec');
  const errors: FieldError[] = [];
  const duration = spec['leaseDurationSeconds'];
  if (strategies.isInteger(duration) && duration <= 0) errors.push(fielderrors.invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = spec['leaseTransitions'];
  if (strategies.isInteger(transitions) && transitions < 0)
    errors.push(fielderrors.invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  if (strategies.stringOf(spec, 'preferredHolder') && !strategies.stringOf(spec, 'strategy')) {
    errors.push(fielderrors.forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  }
  return errors;
}

/** The Lease strategy; see the module comment. */
export const leaseStrategy: resources.Strategy = strategies.plainStrategy('Lease', {
  putCreates: true,
  requireResourceVersion: true,
  prepareForCreate: (obj) => normalize(obj),
  prepareForUpdate: (obj) => normalize(obj),
  validate: (obj) => validateLease(obj),
});
