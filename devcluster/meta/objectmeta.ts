/**
 * Validation of `metadata` as every resource shares it (D-META-8..14): names and generateName,
 * namespace, labels, annotations, finalizers, ownerReferences, and the JSON types of the fields.
 *
 * The write pipeline calls {@link validateObjectMeta} on the object it is about to store (after the
 * namespace was taken from the URL, D-META-10, see {@link resolveNamespace}) and adds the returned
 * field errors to those of the resource's own strategy before answering 422. The string rules live
 * in names.ts; the error values and their rendering in fielderrors.ts. Finalizer rules that depend
 * on the previous state (warnings for CRs, no additions while deleting) are separate functions
 * because only updates have a previous state.
 */
import * as fielderrors from './fielderrors.js';
import * as names from './names.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** How a resource validates its metadata. */
export interface ObjectMetaOptions {
  /** The resource's rule for `metadata.name` (D-META-8). */
  readonly nameRule: names.NameRule;
  /** Namespaced resources need a DNS-1123 label namespace; cluster-scoped ones must have none. */
  readonly namespaced: boolean;
  /** On create an empty name is fine when `generateName` is set (the name is generated later). */
  readonly creating: boolean;
}

/** Upper bound of the summed lengths of all annotation keys and values (D-META-12). */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
/** `metadata.finalizers` entry that orphans dependents. */
export const FINALIZER_ORPHAN = 'orphan';
/** `metadata.finalizers` entry of foreground deletion. */
export const FINALIZER_FOREGROUND = 'foregroundDeletion';
/** Finalizers without `/` that Kubernetes itself uses; they do not trigger the CR warning. */
export const WELL_KNOWN_FINALIZERS: ReadonlySet<string> = new Set(['kubernetes', FINALIZER_ORPHAN, FINALIZER_FOREGROUND]);

const PATH = 'metadata';
const at = (key: string): string => fielderrors.child(PATH, key);

/**
 * Validates an object's `metadata` and returns every problem found (empty when valid).
 *
 * Field paths and texts follow upstream: e.g. `metadata.name: Required value: name or generateName is
 * required`, `metadata.labels: Invalid value: "bad key": name part must consist of …`,
 * `metadata.annotations: Too long: may not be more than 262144 bytes`. Fields of the wrong JSON type
 * give `FieldValueTypeInvalid` errors and are not checked further. `null` counts as absent.
 *
 * @example validateObjectMeta({ name: 'Bad_Name' }, { nameRule: 'subdomain', namespaced: false, creating: true })
 */
export function validateObjectMeta(meta: unknown, opts: ObjectMetaOptions): fielderrors.FieldError[] {
  if (meta === undefined || meta === null) meta = {};
  if (!json.isObject(meta)) return [fielderrors.typeInvalid(PATH, meta, 'must be of type object')];
  const errors: fielderrors.FieldError[] = [];
  const read = new Reader(meta, errors);

  const name = read.string('name') ?? '';
  const generateName = read.string('generateName') ?? '';
  const namespace = read.string('namespace') ?? '';
  for (const key of ['uid', 'resourceVersion', 'selfLink', 'creationTimestamp', 'deletionTimestamp']) read.string(key);
  const generation = read.integer('generation');
  read.integer('deletionGracePeriodSeconds');
  const labels = read.stringMap('labels');
  const annotations = read.stringMap('annotations');
  const finalizers = read.stringList('finalizers');
  const ownerReferences = read.objectList('ownerReferences');
  read.objectList('managedFields');

  if (generateName) {
    for (const msg of names.nameErrors(generateName, opts.nameRule, true)) errors.push(fielderrors.invalid(at('generateName'), generateName, msg));
  }
  if (!name) {
    if (!(opts.creating && generateName)) errors.push(fielderrors.required(at('name'), 'name or generateName is required'));
  } else {
    for (const msg of names.nameErrors(name, opts.nameRule)) errors.push(fielderrors.invalid(at('name'), name, msg));
  }
  if (opts.namespaced) {
    if (!namespace) errors.push(fielderrors.required(at('namespace')));
    else for (const msg of names.dns1123LabelErrors(namespace)) errors.push(fielderrors.invalid(at('namespace'), namespace, msg));
  } else if (namespace) {
    errors.push(fielderrors.forbidden(at('namespace'), 'not allowed on this type'));
  }
  if (generation !== undefined && generation < 0) {
    errors.push(fielderrors.invalid(at('generation'), generation, 'must be greater than or equal to 0'));
  }
  if (labels) errors.push(...validateLabels(labels, at('labels')));
  if (annotations) errors.push(...validateAnnotations(annotations, at('annotations')));
  if (ownerReferences) errors.push(...validateOwnerReferences(ownerReferences, at('ownerReferences')));
  if (finalizers) errors.push(...validateFinalizers(finalizers, at('finalizers')));
  return errors;
}

/** Label keys and values (D-META-11); every error is on `path` itself, valued with the key or value. */
export function validateLabels(labels: Readonly<Record<string, string>>, path = at('labels')): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  for (const key of Object.keys(labels).sort()) {
    for (const msg of names.qualifiedNameErrors(key)) errors.push(fielderrors.invalid(path, key, msg));
    const value = labels[key]!;
    for (const msg of names.labelValueErrors(value)) errors.push(fielderrors.invalid(path, value, msg));
  }
  return errors;
}

/** Annotation keys (label-key rule, case-insensitive) and the total size limit (D-META-12). */
export function validateAnnotations(annotations: Readonly<Record<string, string>>, path = at('annotations')): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  let size = 0;
  for (const key of Object.keys(annotations).sort()) {
    for (const msg of names.qualifiedNameErrors(key.toLowerCase())) errors.push(fielderrors.invalid(path, key, msg));
    size += Buffer.byteLength(key, 'utf8') + Buffer.byteLength(annotations[key]!, 'utf8');
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) {
    errors.push(fielderrors.tooLong(path, `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`));
  }
  return errors;
}

/** Finalizer names (qualified names) and the orphan/foreground exclusion (D-META-13). */
export function validateFinalizers(finalizers: readonly string[], path = at('finalizers')): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  for (const finalizer of finalizers) {
    for (const msg of names.qualifiedNameErrors(finalizer)) errors.push(fielderrors.invalid(path, finalizer, msg));
  }
  if (finalizers.includes(FINALIZER_ORPHAN) && finalizers.includes(FINALIZER_FOREGROUND)) {
    errors.push(fielderrors.invalid(path, finalizers, `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`));
  }
  return errors;
}

/**
 * Owner references (D-META-14): `apiVersion` (with a version), `kind`, `name`, `uid` are required,
 * an Event cannot be an owner, and at most one entry may be the controller. As upstream, errors
 * about one entry's members are reported on `metadata.ownerReferences.<member>` without an index.
 */
export function validateOwnerReferences(refs: readonly JsonObject[], path = at('ownerReferences')): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  let firstController: string | undefined;
  for (const ref of refs) {
    const apiVersion = typeof ref['apiVersion'] === 'string' ? ref['apiVersion'] : '';
    const kind = typeof ref['kind'] === 'string' ? ref['kind'] : '';
    const name = typeof ref['name'] === 'string' ? ref['name'] : '';
    const uid = typeof ref['uid'] === 'string' ? ref['uid'] : '';
    const { group, version } = splitApiVersion(apiVersion);
    if (!version) errors.push(fielderrors.invalid(fielderrors.child(path, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (!kind) errors.push(fielderrors.invalid(fielderrors.child(path, 'kind'), kind, 'kind must not be empty'));
    if (!name) errors.push(fielderrors.invalid(fielderrors.child(path, 'name'), name, 'name must not be empty'));
    if (!uid) errors.push(fielderrors.invalid(fielderrors.child(path, 'uid'), uid, 'uid must not be empty'));
    if (group === '' && version === 'v1' && kind === 'Event') {
      errors.push(fielderrors.invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref['controller'] === true) {
      const current = `${kind}/${name}`;
      if (firstController === undefined) firstController = current;
      else
        errors.push(
          fielderrors.invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
    }
  }
  return errors;
}

/** `group/version` → parts; a bare `v1` is the core group; more than one `/` has no valid version. */
function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: parts[0]! };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return { group: '', version: '' };
}

/**
 * Warnings for finalizers a CR write adds (D-META-13): each new entry without `/` that is not a
 * well-known Kubernetes finalizer yields one text for a `Warning` header. Entries already present in
 * `oldFinalizers` (absent on create) are not warned about again. Non-string entries are ignored.
 */
export function finalizerWarnings(oldFinalizers: unknown, newFinalizers: unknown): string[] {
  const old = new Set(strings(oldFinalizers));
  const warnings: string[] = [];
  for (const finalizer of new Set(strings(newFinalizers))) {
    if (old.has(finalizer) || finalizer.includes('/') || WELL_KNOWN_FINALIZERS.has(finalizer)) continue;
    warnings.push(
      `metadata.finalizers: ${JSON.stringify(finalizer)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`,
    );
  }
  return warnings;
}

/**
 * The error for adding finalizers to an object that is being deleted (D-VERB-17); call it only when
 * the stored object has a `deletionTimestamp`. Removing or reordering finalizers is fine (→ undefined).
 * Body (exact): `Forbidden: no new finalizers can be added if the object is being deleted, found new
 * finalizers []string{"x"}` on `metadata.finalizers`; several additions are listed sorted.
 */
export function newFinalizersWhileDeleting(oldFinalizers: unknown, newFinalizers: unknown): fielderrors.FieldError | undefined {
  const old = new Set(strings(oldFinalizers));
  const added = [...new Set(strings(newFinalizers))].filter((f) => !old.has(f)).sort();
  if (added.length === 0) return undefined;
  const list = `[]string{${added.map((f) => JSON.stringify(f)).join(', ')}}`;
  return fielderrors.forbidden(at('finalizers'), `no new finalizers can be added if the object is being deleted, found new finalizers ${list}`);
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** The exact message of a body namespace that differs from the URL's (D-META-10). */
export const NAMESPACE_MISMATCH_MESSAGE = 'the namespace of the provided object does not match the namespace sent on the request';

/** A body namespace that contradicts the request URL; the pipeline answers 400 BadRequest with its message. */
export class NamespaceMismatchError extends Error {
  readonly code = 'namespace-mismatch' as const;
  constructor() {
    super(NAMESPACE_MISMATCH_MESSAGE);
    this.name = 'NamespaceMismatchError';
  }
}

/**
 * The namespace to store for a write (D-META-10): for namespaced resources the URL's namespace,
 * which an empty body namespace takes silently and a different one contradicts
 * (→ {@link NamespaceMismatchError}); for cluster-scoped resources none (a body value is cleared).
 *
 * @example resolveNamespace('a', 'b', true) // throws NamespaceMismatchError
 */
export function resolveNamespace(bodyNamespace: unknown, requestNamespace: string | undefined, namespaced: boolean): string | undefined {
  if (!namespaced) return undefined;
  const given = typeof bodyNamespace === 'string' ? bodyNamespace : '';
  if (given && requestNamespace !== undefined && given !== requestNamespace) throw new NamespaceMismatchError();
  return requestNamespace ?? (given || undefined);
}

/** Reads metadata members, recording a type error (and returning undefined) for a wrong JSON type. */
class Reader {
  constructor(
    private readonly meta: JsonObject,
    private readonly errors: fielderrors.FieldError[],
  ) {}

  private get(key: string): unknown {
    const value = this.meta[key];
    return value === null ? undefined : value;
  }

  private wrong(path: string, value: unknown, type: string): undefined {
    this.errors.push(fielderrors.typeInvalid(path, value, `must be of type ${type}`));
    return undefined;
  }

  string(key: string): string | undefined {
    const value = this.get(key);
    if (value === undefined || typeof value === 'string') return value;
    return this.wrong(at(key), value, 'string');
  }

  integer(key: string): number | undefined {
    const value = this.get(key);
    if (value === undefined || (typeof value === 'number' && Number.isInteger(value))) return value;
    return this.wrong(at(key), value, 'integer');
  }

  /** A map of strings; `null` values count as empty strings (as Go decodes them). */
  stringMap(key: string): Record<string, string> | undefined {
    const value = this.get(key);
    if (value === undefined) return undefined;
    if (!json.isObject(value)) return this.wrong(at(key), value, 'object');
    const out: Record<string, string> = {};
    let ok = true;
    for (const [k, v] of Object.entries(value)) {
      if (v === null) out[k] = '';
      else if (typeof v === 'string') out[k] = v;
      else {
        ok = false;
        this.wrong(fielderrors.child(at(key), k, true), v, 'string');
      }
    }
    return ok ? out : undefined;
  }

  stringList(key: string): string[] | undefined {
    const value = this.get(key);
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) return this.wrong(at(key), value, 'array');
    let ok = true;
    value.forEach((v, i) => {
      if (typeof v !== 'string') {
        ok = false;
        this.wrong(fielderrors.child(at(key), i), v, 'string');
      }
    });
    return ok ? (value as string[]) : undefined;
  }

  /** A list of objects; for owner references also the member types (strings, booleans). */
  objectList(key: string): JsonObject[] | undefined {
    const value = this.get(key);
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) return this.wrong(at(key), value, 'array');
    let ok = true;
    value.forEach((item, i) => {
      const path = fielderrors.child(at(key), i);
      if (!json.isObject(item)) {
        ok = false;
        this.wrong(path, item, 'object');
        return;
      }
      if (key !== 'ownerReferences') return;
      for (const member of ['apiVersion', 'kind', 'name', 'uid']) {
        const m = item[member];
        if (m !== undefined && m !== null && typeof m !== 'string') {
          ok = false;
          this.wrong(fielderrors.child(path, member), m, 'string');
        }
      }
      for (const member of ['controller', 'blockOwnerDeletion']) {
        const m = item[member];
        if (m !== undefined && m !== null && typeof m !== 'boolean') {
          ok = false;
          this.wrong(fielderrors.child(path, member), m, 'boolean');
        }
      }
    });
    return ok ? (value as JsonObject[]) : undefined;
  }
}
