/**
 * Namespaces (D-BI-2): phase and the `kubernetes` finalizer on create, the immutable
 * `kubernetes.io/metadata.name` label, `/status` and `/finalize` writes, and the first DELETE
 * that marks the namespace Terminating. The namespace controller does the rest.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as statuses from '../server/statuses.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

export const NAME_LABEL = 'kubernetes.io/metadata.name';
export const KUBERNETES_FINALIZER = 'kubernetes';
export const IMMORTAL = new Set(['default', 'kube-system', 'kube-public']);

const specOf = (o: JsonObject): JsonObject => (json.isObject(o['spec']) ? o['spec'] : {});
const statusOf = (o: JsonObject): JsonObject => (json.isObject(o['status']) ? o['status'] : {});

function withNameLabel(obj: JsonObject): JsonObject {
  return objects.withMeta(obj, (m) => {
    m['labels'] = { ...(json.isObject(m['labels']) ? m['labels'] : {}), [NAME_LABEL]: String(m['name']) };
  });
}

export function specFinalizers(obj: JsonObject): string[] {
  const f = specOf(obj)['finalizers'];
  return Array.isArray(f) ? (f as string[]) : [];
}

export const namespaceStrategy: resources.Strategy = {
  nameRule: 'label',
  putCreates: false,
  requireResourceVersion: false,
  deleteReturnsObject: true,
  fieldSelectors: { 'status.phase': (o) => statusOf(o)['phase'] as string | undefined },
  prepareForCreate(obj) {
    const finalizers = specFinalizers(obj);
    return withNameLabel({
      ...obj,
      spec: { ...specOf(obj), finalizers: finalizers.includes(KUBERNETES_FINALIZER) ? finalizers : [...finalizers, KUBERNETES_FINALIZER] },
      status: { phase: 'Active' },
    });
  },
  prepareForUpdate(obj, old) {
    return withNameLabel({ ...obj, spec: { ...specOf(obj), finalizers: specFinalizers(old) }, status: statusOf(old) });
  },
  prepareForSubresource(sub, obj, old) {
    if (sub === 'status') return { ...old, metadata: objects.metaOf(obj), status: statusOf(obj) };
    // D-SUB-6: a finalize write changes spec.finalizers and nothing else.
    if (sub === 'finalize') return { ...old, spec: { ...specOf(old), finalizers: specFinalizers(obj) } };
    return old;
  },
  markForDeletion(obj, now) {
    const name = objects.nameOf(obj);
    if (IMMORTAL.has(name)) {
      throw statuses.forbidden(`namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, kind: 'namespaces' });
    }
    if (objects.metaOf(obj)['deletionTimestamp'] !== undefined) {
      return specFinalizers(obj).length ? 'conflict' : undefined;
    }
    return objects.withMeta({ ...obj, status: { ...statusOf(obj), phase: 'Terminating' } }, (m) => {
      m['deletionTimestamp'] = now;
      m['deletionGracePeriodSeconds'] = 0;
    });
  },
  readyForRemoval(obj) {
    return specFinalizers(obj).length === 0;
  },
};
