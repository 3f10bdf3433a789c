/**
 * Steps shared by every write verb (D-VERB-1): body identity checks, custom-resource schema
 * processing, metadata finalisation, validation, admission, managedFields and persistence with
 * the optimistic-concurrency check of step 14. create/update/patch/delete are assembled from
 * these in creating.ts, updating.ts and deleting.ts.
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as keyorder from '../meta/keyorder.js';
import * as objectmeta from '../meta/objectmeta.js';
import * as apply from '../patching/apply.js';
import * as statuses from '../server/statuses.js';
import * as revisions from '../store/revisions.js';
import type * as core from './core.js';
import * as objects from './objects.js';
import * as resources from './resources.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

export const identOf = (t: resources.ResourceType): statuses.ResourceIdent => ({ group: t.group, resource: t.resource, kind: t.kind });

const contexts = new WeakMap<core.Core, resources.StrategyContext>();

/** The strategy context of a core (built once per core: it only forwards to the core's sources). */
export function strategyContext(c: core.Core): resources.StrategyContext {
  let ctx = contexts.get(c);
  if (!ctx) {
    ctx = {
      now: () => new Date(c.clock.now()),
      uid: () => c.ids.uid(),
      random: () => c.ids.random(),
      lookup: (storage, key) => c.store.get(storage, key),
      listAll: (storage) => c.store.list(storage),
    };
    contexts.set(c, ctx);
  }
  return ctx;
}

/** Decodes a body into a JSON object or throws 400. */
export function requireObject(body: unknown): JsonObject {
  if (!json.isObject(body)) throw statuses.badRequest('the body of the request was not a JSON object');
  return body;
}

/**
 * Step 6: apiVersion/kind of the body, namespace and name consistency with the URL.
 * Returns a copy with apiVersion/kind/namespace/name normalised.
 */
export function checkIdentity(req: core.WriteRequest, body: JsonObject, opts: { urlName?: string }): JsonObject {
  const type = req.type;
  const expected = resources.apiVersionOf(type);
  const apiVersion = body['apiVersion'];
  if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== expected) {
    throw statuses.badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${expected})`);
  }
  const kind = body['kind'];
  if (kind !== undefined && kind !== '' && kind !== type.kind) {
    if (!type.builtin) {
      throw statuses.invalid(identOf(type), objects.nameOf(body), [fielderrors.invalid('kind', kind, `must be ${type.kind}`)]);
    }
    throw statuses.badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${type.kind})`);
  }
  if (body['metadata'] !== undefined && !json.isObject(body['metadata'])) {
    throw statuses.badRequest('metadata must be an object');
  }
  const out: JsonObject = { ...body, apiVersion: expected, kind: type.kind, metadata: { ...objects.metaOf(body) } };
  const meta = out['metadata'] as JsonObject;
  if (type.namespaced) {
    const ns = meta['namespace'];
    if (ns === undefined || ns === '') meta['namespace'] = req.namespace;
    else if (ns !== req.namespace) throw statuses.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  } else {
    delete meta['namespace'];
  }
  if (opts.urlName !== undefined) {
    const name = meta['name'];
    if (name === undefined || name === '') meta['name'] = opts.urlName;
    else if (name !== opts.urlName) throw statuses.badRequest(`the name of the object (${String(name)}) does not match the name on the URL (${opts.urlName})`);
  }
  return out;
}

/** Step 7 for CRs: pruning, null removal, defaulting, with unknown-field handling per fieldValidation. */
export function normalizeBody(req: core.WriteRequest, obj: JsonObject): JsonObject {
  const strategy = req.type.strategy;
  if (!strategy.normalize) return obj;
  const { value, unknownFields } = strategy.normalize(obj);
  if (unknownFields.length) {
    if (req.fieldValidation === 'Strict') {
      throw statuses.badRequest(`strict decoding error: ${unknownFields.map((f) => `unknown field "${f}"`).join(', ')}`);
    }
    if (req.fieldValidation === 'Warn') for (const f of unknownFields) req.warnings.push(`unknown field "${f}"`);
  }
  return value;
}

/** Re-applies defaults after mutating admission changed the object (D-CRD-10 b). */
export function redefault(req: core.WriteRequest, obj: JsonObject): JsonObject {
  return req.type.strategy.normalize ? req.type.strategy.normalize(obj).value : obj;
}

/** Step 12 validation: generic metadata rules plus the kind's own rules; throws one 422. */
export function validate(c: core.Core, req: core.WriteRequest, obj: JsonObject, old: JsonObject | undefined): void {
  const strategy = req.type.strategy;
  const errors: fielderrors.FieldError[] = [
    ...objectmeta.validateObjectMeta(obj['metadata'], { nameRule: strategy.nameRule, namespaced: req.type.namespaced, creating: old === undefined }),
    ...(strategy.validate?.(obj, old, strategyContext(c), req.subresource) ?? []),
  ];
  if (old) {
    const deletingError = objects.metaOf(old)['deletionTimestamp']
      ? objectmeta.newFinalizersWhileDeleting(objects.finalizersOf(old), objects.finalizersOf(obj))
      : undefined;
    if (deletingError) errors.push(deletingError);
  }
  if (errors.length) throw statuses.invalid(identOf(req.type), objects.nameOf(obj), errors);
  if (!req.type.builtin) req.warnings.push(...objectmeta.finalizerWarnings(old ? objects.finalizersOf(old) : [], objects.finalizersOf(obj)));
  const extra = strategy.warnings?.(obj, old);
  if (extra) req.warnings.push(...extra);
}

/**
 * Records the write's manager in managedFields (D-META-15). `requested` is what the request sent:
 * `[]` resets the entries, a list replaces them, undefined keeps the stored ones.
 */
export function recordManager(c: core.Core, req: core.WriteRequest, before: JsonObject | undefined, after: JsonObject, requested: unknown): JsonObject {
  const base = objects.withMeta(after, (m) => {
    if (requested === undefined) delete m['managedFields'];
    else m['managedFields'] = requested;
  });
  const meta = base['metadata'] as JsonObject;
  const entries = apply.recordUpdate({
    before,
    after: base,
    manager: req.fieldManager,
    apiVersion: resources.apiVersionOf(req.type),
    subresource: req.subresource,
    now: objects.formatTime(c.clock.now()),
    listSemantics: req.type.strategy.listSemantics ?? apply.atomicLists,
    statusSubresource: resources.hasStatus(req.type),
  });
  // `base` and its metadata are this function's own copies.
  if (entries.length) meta['managedFields'] = entries;
  else delete meta['managedFields'];
  return base;
}

/** Sets or bumps `metadata.generation` per the kind's rule (D-META-7). */
export function applyGeneration(type: resources.ResourceType, obj: JsonObject, old: JsonObject | undefined): JsonObject {
  const rule = type.strategy.generation;
  return objects.withMeta(obj, (m) => {
    if (!rule) {
      delete m['generation'];
      return;
    }
    if (!old) {
      m['generation'] = 1;
      return;
    }
    const prev = Number(objects.metaOf(old)['generation'] ?? 1);
    m['generation'] = rule(old, obj) ? prev + 1 : prev;
  });
}

/** The options of the request as admission reviews carry them (members in Go's order). */
export function admissionOptions(kind: 'CreateOptions' | 'UpdateOptions' | 'DeleteOptions', req: core.WriteRequest): JsonObject {
  const options: JsonObject = { kind, apiVersion: 'meta.k8s.io/v1' };
  if (req.dryRun) options['dryRun'] = ['All'];
  if (kind !== 'DeleteOptions' && req.fieldManager) options['fieldManager'] = req.fieldManager;
  return options;
}

const storedOrderings = new WeakMap<resources.ResourceType, keyorder.Ordering>();

/**
 * What orders the stored form of a type's objects: the type itself, or for a built-in version
 * stored in another's form (events.k8s.io/v1 Events are stored as v1 Events) that other type.
 */
function storedOrdering(c: core.Core, type: resources.ResourceType): keyorder.Ordering {
  if (!type.builtin || !type.strategy.toStorage) return type;
  let ordering = storedOrderings.get(type);
  if (!ordering) {
    ordering = c.registry.all().find((t) => t.storage === type.storage && t.builtin && !t.strategy.toStorage) ?? { builtin: true };
    storedOrderings.set(type, ordering);
  }
  return ordering;
}

/** The object in the order the server writes it (D-BI-24); done once per write, before admission and storage. */
export function arrange(c: core.Core, type: resources.ResourceType, obj: JsonObject): JsonObject {
  return keyorder.arrange(storedOrdering(c, type), obj);
}

/**
 * Persists an object put in order by `arrange` (D-BI-24): the store stamps
 * `metadata.resourceVersion` in place, so an object without one yet (a create) gets the member where
 * the order puts it.
 */
export function persist(c: core.Core, type: resources.ResourceType, key: string, obj: JsonObject): revisions.Change {
  const slotted = Object.hasOwn(objects.metaOf(obj), 'resourceVersion')
    ? obj
    : keyorder.withMetadataMember(storedOrdering(c, type), obj, 'resourceVersion', '');
  return c.store.write(type.storage, key, slotted);
}

export function storageKey(type: resources.ResourceType, obj: JsonObject): string {
  return revisions.objectKey(type.namespaced ? objects.namespaceOf(obj) : undefined, objects.nameOf(obj));
}

/** Equality of two stored states ignoring resourceVersion and managedFields timestamps (D-META-3). */
export function sameState(a: JsonObject, b: JsonObject): boolean {
  if (a === b) return true;
  // Compared in place (no stripped copies): this runs on every update.
  const am = objects.metaOf(a);
  const bm = objects.metaOf(b);
  return (
    json.deepEqual(a, b, ['metadata']) &&
    json.deepEqual(am, bm, ['resourceVersion', 'managedFields']) &&
    sameManagedFields(am['managedFields'], bm['managedFields'])
  );
}

/** managedFields lists compared entry by entry without their `time`. */
function sameManagedFields(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) {
    const strip = (v: unknown): unknown => (Array.isArray(v) ? v.map(withoutTime) : v);
    return json.deepEqual(strip(a), strip(b));
  }
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x: unknown = a[i];
    const y: unknown = b[i];
    if (json.isObject(x) && json.isObject(y)) {
      if (!json.deepEqual(x, y, ['time'])) return false;
    } else if (!json.deepEqual(withoutTime(x), withoutTime(y))) return false;
  }
  return true;
}

function withoutTime(entry: unknown): unknown {
  const { time: _t, ...rest } = entry as JsonObject;
  return rest;
}

/** Thrown internally when the stored object changed during an async step; the caller restarts. */
export class RetryUpdate extends Error {
  readonly code = 'retry-update' as const;
}
