/**
 * The `pods/ephemeralcontainers` subresource (D-BI-17), how `kubectl debug` adds a debugging
 * container to a running Pod: a write there changes only `spec.ephemeralContainers` (everything
 * else of the Pod is kept as stored), the new containers get the container defaults, and
 * upstream's rules apply — existing ephemeral containers may be neither removed nor changed, names
 * are unique among all the Pod's containers, a target container must exist, and the fields that
 * would make an ephemeral container a service (ports, probes, lifecycle, resources, …) are
 * forbidden. Nothing runs the container: its status appears only if a client writes it.
 */
import * as objects from '../api/objects.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as names from '../meta/names.js';
import * as podspecs from './podspecs.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const PATH = 'spec.ephemeralContainers';
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
/** Container fields an ephemeral container may not set (upstream's allow list, inverted). */
const FORBIDDEN_FIELDS = ['ports', 'resources', 'resizePolicy', 'restartPolicy', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle'];

/** The stored Pod with only `spec.ephemeralContainers` taken from the request (defaulted). */
export function applyEphemeralContainers(pod: JsonObject, old: JsonObject): JsonObject {
  const spec: JsonObject = { ...strategies.mapOf(old, 'spec') };
  const next = strategies.mapOf(pod, 'spec')['ephemeralContainers'];
  if (Array.isArray(next)) spec['ephemeralContainers'] = next.map((c) => podspecs.defaultContainer(c, false));
  else delete spec['ephemeralContainers'];
  return { ...old, metadata: { ...objects.metaOf(old) }, spec };
}

/** A value Go would consider its type's zero value (absent, empty string, empty list or object). */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === false || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  return json.isObject(v) && Object.values(v).every(isZero);
}

function containerErrors(container: JsonObject, at: string, taken: Set<string>, targets: ReadonlySet<string>): FieldError[] {
  const errors: FieldError[] = [];
  const name = strategies.stringOf(container, 'name');
  if (!name) errors.push(fielderrors.required(`${at}.name`));
  else {
    for (const msg of names.dns1123LabelErrors(name)) errors.push(fielderrors.invalid(`${at}.name`, name, msg));
    if (taken.has(name)) errors.push(fielderrors.duplicate(`${at}.name`, name));
    taken.add(name);
  }
  if (!strategies.stringOf(container, 'image').trim()) errors.push(fielderrors.required(`${at}.image`));
  const target = container['targetContainerName'];
  if (typeof target === 'string' && target !== '' && !targets.has(target)) errors.push(fielderrors.notFound(`${at}.targetContainerName`, target));
  for (const key of FORBIDDEN_FIELDS) {
    if (!isZero(container[key])) errors.push(fielderrors.forbidden(`${at}.${key}`, 'cannot be set for an Ephemeral Container'));
  }
  return errors;
}

/** The rules of an `ephemeralcontainers` write of `pod` over the stored `old`. */
export function ephemeralContainerErrors(pod: JsonObject, old: JsonObject): FieldError[] {
  if (MIRROR_ANNOTATION in strategies.mapOf(objects.metaOf(old), 'annotations')) {
    return [fielderrors.forbidden('', 'static pods do not support ephemeral containers')];
  }
  const spec = strategies.mapOf(pod, 'spec');
  const regular = [...strategies.listOf(spec, 'containers'), ...strategies.listOf(spec, 'initContainers')].map((c) => strategies.stringOf(c, 'name'));
  const taken = new Set(regular);
  const targets = new Set(regular);
  const next = strategies.listOf(spec, 'ephemeralContainers');
  const errors: FieldError[] = [];
  next.forEach((c, i) => errors.push(...containerErrors(json.isObject(c) ? c : {}, fielderrors.child(PATH, i), taken, targets)));
  const byName = new Map(next.filter(json.isObject).map((c) => [strategies.stringOf(c, 'name'), c]));
  for (const existing of strategies.listOf(strategies.mapOf(old, 'spec'), 'ephemeralContainers').filter(json.isObject)) {
    const name = strategies.stringOf(existing, 'name');
    const now = byName.get(name);
    if (!now) errors.push(fielderrors.forbidden(PATH, `existing ephemeral containers ${JSON.stringify(name)} may not be removed\n`));
    else if (strategies.changed(now, existing))
      errors.push(fielderrors.forbidden(PATH, `existing ephemeral containers ${JSON.stringify(name)} may not be changed\n`));
  }
  return errors;
}

/** A Pod is created without ephemeral containers (they are added through the subresource). */
export function createErrors(pod: JsonObject): FieldError[] {
  return strategies.listOf(strategies.mapOf(pod, 'spec'), 'ephemeralContainers').length ? [fielderrors.forbidden(PATH, 'cannot be set on create')] : [];
}
