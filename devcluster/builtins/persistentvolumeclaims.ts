/**
 * PersistentVolumeClaims (D-BI-16): stored only — nothing provisions or binds a volume, so a claim
 * stays `Pending` until a client writes its status. What a 1.32 server fills in is filled in here:
 * `volumeMode: Filesystem`, `status.phase: Pending`, `dataSource` and `dataSourceRef` mirrored
 * into each other, and the default StorageClass (the one annotated
 * `storageclass.kubernetes.io/is-default-class: "true"`, newest first, as the DefaultStorageClass
 * admission plugin picks it) when the claim names none. Validation is upstream's: access modes
 * and a positive storage request are required, and the spec is immutable after creation except
 * `resources.requests` of bound claims and a first `volumeName`.
 *
 * StatefulSets reuse `defaultClaim` for their volume claim templates.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as names from '../meta/names.js';
import * as podspecs from './podspecs.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const VOLUME_MODES = ['Block', 'Filesystem'];
const STORAGE_CLASSES = 'storage.k8s.io/storageclasses';
const DEFAULT_CLASS_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];
const IMMUTABLE_SPEC_MESSAGE = 'spec is immutable after creation except resources.requests for bound claims';

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');

/** `dataSource` and `dataSourceRef` mirror each other when only one is set (upstream `NormalizeDataSources`). */
function normalizeDataSources(spec: JsonObject): JsonObject {
  const out: JsonObject = { ...spec };
  const source = out['dataSource'];
  const ref = out['dataSourceRef'];
  const copy = (from: JsonObject): JsonObject => {
    const to: JsonObject = { kind: from['kind'], name: from['name'] };
    if (from['apiGroup'] !== undefined) to['apiGroup'] = from['apiGroup'];
    return to;
  };
  if (json.isObject(source) && ref === undefined) out['dataSourceRef'] = copy(source);
  else if (json.isObject(ref) && source === undefined && !ref['namespace']) out['dataSource'] = copy(ref);
  return out;
}

/** The spec defaults of a claim (or a claim template): `volumeMode: Filesystem`. Returns a copy. */
export function defaultClaimSpec(spec: JsonObject): JsonObject {
  return { ...spec, volumeMode: spec['volumeMode'] ?? 'Filesystem' };
}

/** A claim (or claim template) with its defaults: the spec's, and `status.phase: Pending`. Returns a copy. */
export function defaultClaim(claim: JsonObject): JsonObject {
  const status: JsonObject = { ...strategies.mapOf(claim, 'status') };
  status['phase'] ??= 'Pending';
  return { ...claim, spec: defaultClaimSpec(specOf(claim)), status };
}

/** The name of the default StorageClass (the newest of several), or undefined. */
export function defaultStorageClass(classes: readonly JsonObject[]): string | undefined {
  const defaults = classes.filter((sc) => {
    const annotations = strategies.mapOf(objects.metaOf(sc), 'annotations');
    return DEFAULT_CLASS_ANNOTATIONS.some((key) => annotations[key] === 'true');
  });
  defaults.sort((a, b) => {
    const byTime = String(objects.metaOf(b)['creationTimestamp'] ?? '').localeCompare(String(objects.metaOf(a)['creationTimestamp'] ?? ''));
    return byTime || objects.nameOf(a).localeCompare(objects.nameOf(b));
  });
  return defaults[0] ? objects.nameOf(defaults[0]) : undefined;
}

function specErrors(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const modes = strategies.listOf(spec, 'accessModes');
  if (modes.length === 0) errors.push(fielderrors.required('spec.accessModes', 'at least 1 access mode is required'));
  for (const mode of modes) if (!ACCESS_MODES.includes(mode as string)) errors.push(fielderrors.notSupported('spec.accessModes', mode, ACCESS_MODES));
  if (modes.includes('ReadWriteOncePod') && modes.some((m) => m !== 'ReadWriteOncePod' && ACCESS_MODES.includes(m as string)))
    errors.push(fielderrors.forbidden('spec.accessModes', 'may not use ReadWriteOncePod with other access modes'));
  const requests = strategies.mapOf(strategies.mapOf(spec, 'resources'), 'requests');
  const at = fielderrors.child('spec.resources', 'storage', true);
  if (requests['storage'] === undefined) errors.push(fielderrors.required(at));
  else if (!(podspecs.parseQuantity(requests['storage']) > 0)) errors.push(fielderrors.invalid(at, String(requests['storage']), 'must be greater than zero'));
  const className = spec['storageClassName'];
  if (typeof className === 'string' && className !== '') {
    for (const msg of names.dns1123SubdomainErrors(className)) errors.push(fielderrors.invalid('spec.storageClassName', className, msg));
  }
  const mode = spec['volumeMode'];
  if (mode !== undefined && !VOLUME_MODES.includes(mode as string)) errors.push(fielderrors.notSupported('spec.volumeMode', mode, VOLUME_MODES));
  return errors;
}

/** upstream `ValidatePersistentVolumeClaimUpdate` (without the spec diff upstream appends to the message). */
function updateErrors(claim: JsonObject, old: JsonObject): FieldError[] {
  const spec = specOf(claim);
  const oldSpec = specOf(old);
  const bound = strategies.stringOf(strategies.mapOf(claim, 'status'), 'phase') === 'Bound';
  const next: JsonObject = { ...spec };
  const prev: JsonObject = { ...oldSpec };
  if (!prev['volumeName'] && next['volumeName'] !== undefined) prev['volumeName'] = next['volumeName'];
  if (prev['storageClassName'] === undefined && next['storageClassName'] !== undefined) prev['storageClassName'] = next['storageClassName'];
  if (bound) {
    const requests = { ...strategies.mapOf(strategies.mapOf(next, 'resources'), 'requests') };
    const oldStorage = strategies.mapOf(strategies.mapOf(prev, 'resources'), 'requests')['storage'];
    if (oldStorage === undefined) delete requests['storage'];
    else requests['storage'] = oldStorage;
    next['resources'] = { ...strategies.mapOf(next, 'resources'), requests };
  }
  const errors: FieldError[] = [];
  if (strategies.changed(next, prev)) errors.push(fielderrors.forbidden('spec', IMMUTABLE_SPEC_MESSAGE));
  const size = podspecs.parseQuantity(strategies.mapOf(strategies.mapOf(spec, 'resources'), 'requests')['storage']);
  const oldSize = podspecs.parseQuantity(strategies.mapOf(strategies.mapOf(oldSpec, 'resources'), 'requests')['storage']);
  const capacity = podspecs.parseQuantity(strategies.mapOf(strategies.mapOf(old, 'status'), 'capacity')['storage']);
  if (size < oldSize && !(size > capacity)) errors.push(fielderrors.forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  return errors;
}

function withDefaults(obj: JsonObject): JsonObject {
  return { ...obj, spec: normalizeDataSources(defaultClaimSpec(specOf(obj))) };
}

/** The PersistentVolumeClaim strategy; see the module comment. */
export const persistentVolumeClaimStrategy: resources.Strategy = strategies.plainStrategy('PersistentVolumeClaim', {
  prepareForCreate(obj, ctx) {
    const out = withDefaults(obj);
    const spec = specOf(out);
    if (spec['storageClassName'] === undefined) {
      const className = defaultStorageClass(ctx.listAll(STORAGE_CLASSES));
      if (className) out['spec'] = { ...spec, storageClassName: className };
    }
    return { ...out, status: { phase: 'Pending' } };
  },
  prepareForUpdate: (obj, old) => strategies.keepStatus(withDefaults(obj), old),
  prepareForSubresource(sub, obj, old, ctx) {
    const out = strategies.statusSubresource.prepareForSubresource!(sub, obj, old, ctx);
    return defaultClaim(out);
  },
  validate(obj, old, _ctx, subresource) {
    if (subresource === 'status') return strategies.listOf(specOf(obj), 'accessModes').length ? [] : [fielderrors.required('Spec.accessModes')];
    const errors = specErrors(specOf(obj));
    if (old) errors.push(...updateErrors(obj, old));
    return errors;
  },
});
