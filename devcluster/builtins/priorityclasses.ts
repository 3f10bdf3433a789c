/**
 * PriorityClasses (scheduling.k8s.io/v1): the generic strategy plus upstream's one default,
 * `preemptionPolicy: PreemptLowerPriority` (D-BI-16). Clients rely on it being set: kubectl's
 * describer reads it without a nil check.
 */
import type * as resources from '../api/resources.js';
import type * as upstream from '../upstream/catalog.js';
import * as generic from './generic.js';
import type { JsonObject } from '../json.js';

const withDefaults = (obj: JsonObject): JsonObject => ({ ...obj, preemptionPolicy: obj['preemptionPolicy'] ?? 'PreemptLowerPriority' });

/** The PriorityClass strategy. */
export function priorityClassStrategy(e: upstream.ResourceEntry): resources.Strategy {
  const base = generic.genericStrategy(e);
  return {
    ...base,
    prepareForCreate: (obj, ctx) => withDefaults(base.prepareForCreate ? base.prepareForCreate(obj, ctx) : obj),
    prepareForUpdate: (obj, old, ctx) => withDefaults(base.prepareForUpdate ? base.prepareForUpdate(obj, old, ctx) : obj),
  };
}
