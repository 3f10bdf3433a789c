/**
 * The scale subresource (D-SUB-4/5): a `Scale` view over a spec/status replicas path. Reads render
 * the view; writes apply a Scale (PUT) or a patch of the Scale (merge/JSON patch) and store only the
 * new replica count into the object.
 */
import * as selectors from '../meta/selectors.js';
import * as jsonpatch from '../patching/jsonpatch.js';
import * as merge from '../patching/merge.js';
import * as statuses from '../server/statuses.js';
import * as objects from './objects.js';
import type * as resources from './resources.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

export function scaleOf(type: resources.ResourceType, stored: JsonObject): JsonObject {
  const spec = type.scale!;
  const replicas = objects.getPath(stored, spec.specReplicasPath);
  if (replicas === undefined) {
    throw statuses.internal(`the spec replicas field "${spec.specReplicasPath}" does not exist`);
  }
  const status: JsonObject = { replicas: Number(objects.getPath(stored, spec.statusReplicasPath) ?? 0) };
  if (spec.labelSelectorPath) {
    const sel = objects.getPath(stored, spec.labelSelectorPath);
    if (typeof sel === 'string') status['selector'] = sel;
    else if (json.isObject(sel) && spec.selectorIsMap) status['selector'] = selectors.labelSelectorToString({ matchLabels: sel as Record<string, string> });
    else if (json.isObject(sel)) status['selector'] = selectors.labelSelectorToString(sel as never);
  }
  const m = objects.metaOf(stored);
  // ObjectMeta in Go's order (D-BI-24): the Scale is a struct whatever the scaled kind.
  const metadata: JsonObject = { name: m['name'] };
  if (m['namespace']) metadata['namespace'] = m['namespace'];
  Object.assign(metadata, { uid: m['uid'], resourceVersion: m['resourceVersion'], creationTimestamp: m['creationTimestamp'] });
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas: Number(replicas) }, status };
}

/** Computes the new Scale from a request, returning the replicas and the precondition RV if any. */
export function desiredScale(
  current: JsonObject,
  input: { kind: 'replace'; body: unknown } | { kind: 'merge' | 'json'; patch: unknown },
): { replicas: number; resourceVersion: string | undefined } {
  let next: unknown;
  if (input.kind === 'replace') next = input.body;
  else if (input.kind === 'merge') next = merge.applyMergePatch(current, input.patch);
  else {
    try {
      next = jsonpatch.applyJsonPatch(current, jsonpatch.parseJsonPatch(input.patch));
    } catch (err) {
      if (err instanceof jsonpatch.JsonPatchError) throw err.code === 'failed' ? statuses.jsonPatchRejected() : statuses.badRequest(err.message);
      throw err;
    }
  }
  if (!json.isObject(next)) throw statuses.badRequest('the body of the request is not a Scale object');
  const replicas = json.isObject(next['spec']) ? (next['spec'] as JsonObject)['replicas'] : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) throw statuses.badRequest('spec.replicas: Required value');
  const rv = objects.rvOf(next);
  return { replicas, resourceVersion: rv || undefined };
}
