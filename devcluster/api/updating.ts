/**
 * update (PUT, D-VERB-13..17) and patch (D-VERB-18..22), on the main resource and on the status
 * subresource (D-SUB-1..3). Both are one "guaranteed update" loop, as in the upstream registry:
 * load the current object, compute the new one, run admission and validation, and persist only if
 * nobody wrote in the meantime — otherwise start over (requests without an RV precondition) or
 * answer 409. Sharing the loop is what keeps optimistic concurrency identical for every kind of write.
 */
import * as apply from '../patching/apply.js';
import * as jsonpatch from '../patching/jsonpatch.js';
import * as merge from '../patching/merge.js';
import * as strategic from '../patching/strategic.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as negotiation from '../server/negotiation.js';
import * as statuses from '../server/statuses.js';
import * as converting from './converting.js';
import type * as core from './core.js';
import * as creating from './creating.js';
import * as objects from './objects.js';
import * as resources from './resources.js';
import * as writes from './writes.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** How the new state is derived from the current one (PUT body or a patch). */
export type Mutation =
  | { kind: 'replace'; body: JsonObject }
  | { kind: 'patch'; type: 'merge-patch' | 'json-patch' | 'strategic-merge-patch'; patch: unknown }
  | { kind: 'apply'; config: JsonObject; force: boolean };

export interface UpdateResult {
  object: JsonObject;
  code: number;
}

const MAX_RETRIES = 16;

export async function update(c: core.Core, req: core.WriteRequest, mutation: Mutation): Promise<UpdateResult> {
  const name = req.name!;
  if (mutation.kind === 'patch' && mutation.type === 'strategic-merge-patch' && !req.type.strategy.smpSchema) {
    throw statuses.unsupportedMediaType(acceptedPatchTypes(req.type));
  }
  let body: JsonObject | undefined;
  if (mutation.kind === 'replace') {
    body = writes.checkIdentity(req, mutation.body, { urlName: name });
    body = writes.normalizeBody(req, body);
  }
  const jsonOps = mutation.kind === 'patch' && mutation.type === 'json-patch' ? parseJsonPatch(mutation.patch) : undefined;
  if (mutation.kind === 'patch' && mutation.type === 'merge-patch' && !json.isObject(mutation.patch)) {
    throw statuses.badRequest('the patch is not a JSON object: json: cannot unmarshal into Go value of type map[string]interface {}');
  }
  for (let attempt = 0; ; attempt++) {
    try {
      return await attemptUpdate(c, req, mutation, body, jsonOps);
    } catch (err) {
      if (err instanceof writes.RetryUpdate && attempt < MAX_RETRIES) continue;
      throw err;
    }
  }
}

function parseJsonPatch(patch: unknown): jsonpatch.JsonPatchOperation[] {
  try {
    return jsonpatch.parseJsonPatch(patch);
  } catch (err) {
    if (err instanceof jsonpatch.JsonPatchError) {
      if (err.code === 'too-large') throw statuses.tooLarge('The allowed number of operations in a JSON patch is 10000');
      throw statuses.badRequest(`the server rejected our request due to an error in our request: ${err.message}`);
    }
    throw err;
  }
}

export function acceptedPatchTypes(type: resources.ResourceType): string[] {
  const types: string[] = [
    negotiation.PATCH_MEDIA_TYPES['json-patch'],
    negotiation.PATCH_MEDIA_TYPES['merge-patch'],
    negotiation.PATCH_MEDIA_TYPES['apply-patch'],
  ];
  if (type.strategy.smpSchema) types.push(negotiation.PATCH_MEDIA_TYPES['strategic-merge-patch']);
  return types;
}

async function attemptUpdate(
  c: core.Core,
  req: core.WriteRequest,
  mutation: Mutation,
  body: JsonObject | undefined,
  jsonOps: jsonpatch.JsonPatchOperation[] | undefined,
): Promise<UpdateResult> {
  const type = req.type;
  const ident = writes.identOf(type);
  const name = req.name!;
  const key = writes.storageKey(type, { metadata: { name, namespace: req.namespace } });
  const storedBefore = c.store.get(type.storage, key);

  if (!storedBefore) {
    if (req.subresource) throw statuses.notFound(ident, name);
    if (mutation.kind === 'replace' && type.strategy.putCreates) {
      const rv = objects.rvOf(body!);
      if (rv) throw statuses.conflict(ident, name);
      const created = await creating.create(c, req, body, { prepared: true });
      return { object: created.object, code: 201 };
    }
    if (mutation.kind === 'apply') return applyCreate(c, req, mutation);
    throw statuses.notFound(ident, name);
  }

  // With a conversion webhook the write happens in the request's version (D-CONV-405): `old` is the
  // stored object converted to it, and the result is converted back to the storage version last.
  const old = await converting.oneInVersion(type, storedBefore);
  const current = objects.toExternal(type, old);
  const currentRv = objects.rvOf(storedBefore);
  // The candidate new state, in the external form of this type.
  let next: JsonObject;
  let hadPrecondition = false;
  let requestedManagedFields: unknown;
  switch (mutation.kind) {
    case 'replace': {
      next = body!;
      requestedManagedFields = objects.metaOf(next)['managedFields'];
      const rv = objects.rvOf(next);
      if (rv) {
        hadPrecondition = true;
        if (rv !== currentRv) throw statuses.conflict(ident, name);
      } else if (type.strategy.requireResourceVersion) {
        throw statuses.invalid(ident, name, [fielderrors.invalid('metadata.resourceVersion', 0, 'must be specified for an update')], { byResource: true });
      } else
        next = objects.withMeta(next, (m) => {
          m['resourceVersion'] = currentRv;
        });
      break;
    }
    case 'patch': {
      next = patchObject(current, mutation, jsonOps, type);
      next = writes.checkIdentity(req, next, { urlName: name });
      requestedManagedFields = objects.metaOf(next)['managedFields'];
      const rv = objects.rvOf(next);
      if (rv !== currentRv) {
        hadPrecondition = true;
        if (rv) throw statuses.conflict(ident, name);
      }
      next = writes.normalizeBody(req, next);
      break;
    }
    case 'apply': {
      const result = apply.applyConfiguration({
        live: current,
        config: mutation.config,
        manager: req.fieldManager,
        apiVersion: resources.apiVersionOf(type),
        force: mutation.force,
        subresource: req.subresource,
        now: objects.formatTime(c.clock.now()),
        listSemantics: type.strategy.listSemantics ?? (() => ({ type: 'atomic' })),
        statusSubresource: resources.hasStatus(type),
      });
      if (!result.ok) throw apply.conflictError(result.conflicts, ident, name);
      next = writes.normalizeBody(req, writes.checkIdentity(req, result.object, { urlName: name }));
      requestedManagedFields = objects.metaOf(next)['managedFields'];
      const rv = objects.rvOf(next);
      if (rv && rv !== currentRv) throw statuses.conflict(ident, name);
      break;
    }
  }

  const ctx = writes.strategyContext(c);
  let candidate = type.strategy.toStorage ? type.strategy.toStorage(next) : next;
  candidate = carrySystemMeta(candidate, storedBefore, ident, name);
  if (req.subresource) {
    if (!type.strategy.prepareForSubresource) throw statuses.notFound(ident, name);
    candidate = type.strategy.prepareForSubresource(req.subresource, candidate, old, ctx);
  } else if (type.strategy.prepareForUpdate) {
    candidate = type.strategy.prepareForUpdate(candidate, old, ctx);
  }

  const candidateExternal = objects.toExternal(type, candidate);
  const mutated = await c.admission.mutate(
    {
      operation: 'UPDATE',
      type,
      subresource: req.subresource,
      namespace: req.namespace,
      name,
      object: candidateExternal,
      oldObject: current,
      dryRun: req.dryRun,
      options: writes.admissionOptions('UpdateOptions', req),
      user: req.user,
    },
    req.warnings,
  );
  // Without mutating webhooks the chain hands back the object it was given.
  if (mutated && mutated !== candidateExternal && !json.deepEqual(mutated, objects.toExternal(type, candidate))) {
    candidate = writes.redefault(req, type.strategy.toStorage ? type.strategy.toStorage(mutated) : mutated);
    candidate = carrySystemMeta(candidate, storedBefore, ident, name);
  }
  candidate = writes.applyGeneration(type, candidate, old);
  writes.validate(c, req, candidate, old);
  if (mutation.kind !== 'apply') candidate = writes.recordManager(c, req, old, candidate, requestedManagedFields);
  candidate = writes.arrange(c, type, objects.withMeta(candidate, objects.compactMeta));

  await c.admission.validate(
    {
      operation: 'UPDATE',
      type,
      subresource: req.subresource,
      namespace: req.namespace,
      name,
      object: objects.toExternal(type, candidate),
      oldObject: current,
      dryRun: req.dryRun,
      options: writes.admissionOptions('UpdateOptions', req),
      user: req.user,
    },
    req.warnings,
  );

  const unchanged = writes.sameState(candidate, old);
  if (converting.callsOut(type) && !unchanged) candidate = writes.arrange(c, type, await converting.forStorage(type, candidate));
  // Step 14: the stored object must still be the one we started from.
  const storedNow = c.store.get(type.storage, key);
  if (storedNow !== storedBefore) {
    if (hadPrecondition || !storedNow) throw statuses.conflict(ident, name);
    throw new writes.RetryUpdate();
  }
  if (unchanged) return { object: storedBefore, code: 200 };

  const beingDeleted = objects.metaOf(storedBefore)['deletionTimestamp'] !== undefined;
  const grace = Number(objects.metaOf(storedBefore)['deletionGracePeriodSeconds'] ?? 0);
  const finalRemoval = beingDeleted && grace === 0 && objects.finalizersOf(candidate).length === 0 && (type.strategy.readyForRemoval?.(candidate) ?? true);
  if (req.dryRun) return { object: candidate, code: 200 };
  if (finalRemoval) {
    // D-VERB-17: the object goes away; watchers see one DELETED with the last stored state.
    const change = c.store.write(type.storage, key, undefined);
    return {
      object: objects.withMeta(candidate, (m) => {
        m['resourceVersion'] = String(change.rev);
      }),
      code: 200,
    };
  }
  const change = writes.persist(c, type, key, candidate);
  return { object: change.object, code: 200 };
}

/** Applies a merge/JSON/strategic patch to the external form of the current object. */
function patchObject(
  current: JsonObject,
  mutation: Extract<Mutation, { kind: 'patch' }>,
  jsonOps: jsonpatch.JsonPatchOperation[] | undefined,
  type: resources.ResourceType,
): JsonObject {
  let result: unknown;
  switch (mutation.type) {
    case 'merge-patch':
      result = merge.applyMergePatch(current, mutation.patch);
      break;
    case 'json-patch':
      try {
        result = jsonpatch.applyJsonPatch(current, jsonOps!);
      } catch (err) {
        if (err instanceof jsonpatch.JsonPatchError) throw statuses.jsonPatchRejected();
        throw err;
      }
      break;
    case 'strategic-merge-patch':
      try {
        result = strategic.applyStrategicMergePatch(current, mutation.patch, type.strategy.smpSchema!);
      } catch (err) {
        if (err instanceof strategic.StrategicMergeError) {
          if (err.code === 'invalid')
            throw statuses.invalid(writes.identOf(type), objects.nameOf(current), [fielderrors.invalid('', mutation.patch, err.message)]);
          throw statuses.badRequest(err.message);
        }
        throw err;
      }
      break;
  }
  if (!json.isObject(result)) throw statuses.badRequest('the patch produced a value that is not an object');
  return result;
}

/**
 * System metadata the client cannot change on update (D-META-1/4/6): uid (empty → filled, different → 422),
 * creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds.
 */
function carrySystemMeta(obj: JsonObject, old: JsonObject, ident: statuses.ResourceIdent, name: string): JsonObject {
  const oldMeta = objects.metaOf(old);
  const meta = objects.metaOf(obj);
  const uid = meta['uid'];
  if (uid !== undefined && uid !== '' && uid !== oldMeta['uid']) {
    throw statuses.invalid(ident, name, [fielderrors.invalid('metadata.uid', uid, 'field is immutable')]);
  }
  if (oldMeta['deletionTimestamp'] === undefined && meta['deletionTimestamp'] !== undefined) {
    throw statuses.invalid(ident, name, [fielderrors.invalid('metadata.deletionTimestamp', meta['deletionTimestamp'], 'field is immutable')]);
  }
  return objects.withMeta(obj, (m) => {
    m['uid'] = oldMeta['uid'];
    m['creationTimestamp'] = oldMeta['creationTimestamp'];
    for (const k of ['deletionTimestamp', 'deletionGracePeriodSeconds']) {
      if (oldMeta[k] === undefined) delete m[k];
      else m[k] = oldMeta[k];
    }
    delete m['selfLink'];
  });
}

/** Server-side apply of a missing object creates it (D-VERB-22). */
async function applyCreate(c: core.Core, req: core.WriteRequest, mutation: Extract<Mutation, { kind: 'apply' }>): Promise<UpdateResult> {
  const result = apply.applyConfiguration({
    live: undefined,
    config: mutation.config,
    manager: req.fieldManager,
    apiVersion: resources.apiVersionOf(req.type),
    force: mutation.force,
    now: objects.formatTime(c.clock.now()),
    listSemantics: req.type.strategy.listSemantics ?? (() => ({ type: 'atomic' })),
    statusSubresource: resources.hasStatus(req.type),
  });
  if (!result.ok) throw apply.conflictError(result.conflicts, writes.identOf(req.type), req.name!);
  let obj = writes.checkIdentity(req, result.object, { urlName: req.name });
  obj = writes.normalizeBody(req, obj);
  const created = await creating.create(c, req, obj, { prepared: true, keepManagedFields: true });
  return { object: created.object, code: 201 };
}
