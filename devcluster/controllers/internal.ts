/**
 * Writes by the devcluster's own controllers: the same pipeline as client requests, run as a
 * named system user, with or without admission (the CRD cleanup bypasses webhooks, D-ADM-1).
 */
import * as core from '../api/core.js';
import * as deleting from '../api/deleting.js';
import type * as options from '../api/options.js';
import type * as resources from '../api/resources.js';
import * as updating from '../api/updating.js';
import * as statuses from '../server/statuses.js';
import type { JsonObject } from '../json.js';

export function systemRequest(
  type: resources.ResourceType,
  namespace: string | undefined,
  name: string | undefined,
  manager: string,
  subresource?: string,
): core.WriteRequest {
  return {
    type,
    namespace,
    name,
    subresource,
    dryRun: false,
    fieldManager: manager,
    fieldValidation: 'Ignore',
    warnings: [],
    user: { username: `system:serviceaccount:kube-system:${manager}`, uid: '', groups: ['system:serviceaccounts', 'system:authenticated'] },
  };
}

export function withoutAdmission(c: core.Core): core.Core {
  return Object.create(c, { admission: { value: core.noAdmission } }) as core.Core;
}

/** Merge-patches an object (or its subresource) as a controller; 404 and 409 are reported as false. */
export async function patch(
  c: core.Core,
  type: resources.ResourceType,
  namespace: string | undefined,
  name: string,
  body: JsonObject,
  manager: string,
  subresource?: string,
): Promise<boolean> {
  try {
    await updating.update(c, systemRequest(type, namespace, name, manager, subresource), { kind: 'patch', type: 'merge-patch', patch: body });
    return true;
  } catch (err) {
    if (err instanceof statuses.ApiError && (err.code === 404 || err.code === 409)) return false;
    throw err;
  }
}

/** Deletes an object as a controller; a missing object is not an error. */
export async function remove(
  c: core.Core,
  type: resources.ResourceType,
  namespace: string | undefined,
  name: string,
  manager: string,
  policy: options.PropagationPolicy = 'Background',
  gracePeriodSeconds?: number,
): Promise<void> {
  try {
    await deleting.remove(c, systemRequest(type, namespace, name, manager), {
      dryRun: false,
      propagationPolicy: policy,
      gracePeriodSeconds,
      preconditions: {},
    });
  } catch (err) {
    if (err instanceof statuses.ApiError && err.code === 404) return;
    throw err;
  }
}
