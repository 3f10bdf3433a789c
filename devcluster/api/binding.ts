/**
 * `pods/binding` and the legacy `bindings` resource (D-BI-17): how a scheduler assigns a Pod to a
 * node. A Binding names the Pod and its target node; the Pod gets `spec.nodeName`, the Binding's
 * annotations and a `PodScheduled` condition (the Pod strategy applies it, builtins/pods.ts), and
 * the answer is a 201 `Success` Status. As upstream: a Binding whose target is not a Node or has
 * no name fails with a 500 carrying the field errors, a Pod already bound (or being deleted, or
 * still gated) is a 409 on `pods/binding`, and the Binding's uid and resourceVersion, when given,
 * are preconditions on the Pod. Nothing runs on the node: the Pod stays as clients write it.
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as statuses from '../server/statuses.js';
import * as actions from './actions.js';
import * as objects from './objects.js';
import * as reading from './reading.js';
import * as updating from './updating.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** upstream `ValidatePodBinding`; its errors are not a Status upstream, so they answer 500. */
function targetErrors(binding: JsonObject): void {
  const target = json.isObject(binding['target']) ? binding['target'] : {};
  const errors: fielderrors.FieldError[] = [];
  const kind = target['kind'];
  if (typeof kind === 'string' && kind !== '' && kind !== 'Node') errors.push(fielderrors.notSupported('target.kind', kind, ['Node', '<empty>']));
  if (!target['name']) errors.push(fielderrors.required('target.name'));
  if (errors.length) throw new statuses.ApiError(500, '', fielderrors.renderList(errors));
}

/** The Binding's uid and resourceVersion, when given, must be the Pod's (upstream's storage preconditions). */
function checkPreconditions(binding: JsonObject, pod: JsonObject): void {
  const meta = objects.metaOf(binding);
  const ident = { group: '', resource: 'pods', kind: 'Pod' };
  const uid = meta['uid'];
  if (typeof uid === 'string' && uid !== '' && uid !== objects.uidOf(pod)) {
    throw statuses.conflict(ident, objects.nameOf(pod), `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${objects.uidOf(pod)}`);
  }
  const rv = meta['resourceVersion'];
  if (typeof rv === 'string' && rv !== '' && rv !== objects.rvOf(pod)) {
    throw statuses.conflict(
      ident,
      objects.nameOf(pod),
      `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${objects.rvOf(pod)}`,
    );
  }
}

async function bind(r: actions.SubresourceRequest, name: string, binding: JsonObject): Promise<actions.SubresourceReply> {
  targetErrors(binding);
  const pods = actions.typeOf(r.core, '', 'v1', 'pods');
  await actions.admitAction(r, pods, 'binding', 'Binding', binding);
  const pod = await reading.get(r.core, pods, r.namespace, name, undefined);
  checkPreconditions(binding, pod);
  const annotations = objects.metaOf(binding)['annotations'];
  const nodeName = String((binding['target'] as JsonObject)['name']);
  await updating.update(actions.withoutAdmission(r.core), actions.actionWrite(r, pods, r.namespace, name, 'binding'), {
    kind: 'patch',
    type: 'merge-patch',
    patch: { metadata: json.isObject(annotations) ? { annotations } : {}, spec: { nodeName } },
  });
  return { code: 201, body: actions.success() };
}

/** `POST pods/{name}/binding`. */
export async function bindPod(r: actions.SubresourceRequest): Promise<actions.SubresourceReply> {
  const binding = actions.actionBody(r, ['v1'], 'Binding');
  if (objects.nameOf(binding) !== r.name) throw statuses.badRequest('name in URL does not match name in Binding object');
  return bind(r, r.name!, binding);
}

/** `POST namespaces/{ns}/bindings`: the Pod is the one the Binding names. */
export async function bindLegacy(r: actions.SubresourceRequest): Promise<actions.SubresourceReply> {
  const binding = actions.actionBody(r, ['v1'], 'Binding');
  return bind({ ...r, name: objects.nameOf(binding) }, objects.nameOf(binding), binding);
}
