/**
 * delete and deletecollection (D-VERB-23..29): preconditions, propagation policies (which add the
 * garbage collector's finalizers), graceful deletion of Pods, marking objects that still have
 * finalizers, and immediate removal otherwise. The garbage collector and the namespace/CRD
 * controllers delete through the same function, so their deletions behave like a client's.
 */
import * as statuses from '../server/statuses.js';
import * as converting from './converting.js';
import type * as core from './core.js';
import * as objects from './objects.js';
import type * as options from './options.js';
import * as writes from './writes.js';
import type { JsonObject } from '../json.js';

export const FOREGROUND = 'foregroundDeletion';
export const ORPHAN = 'orphan';

export interface DeleteResult {
  /** The object as marked, or the last state if it was removed. */
  object: JsonObject;
  /** Whether the object is gone (removed) rather than marked. */
  removed: boolean;
}

export async function remove(c: core.Core, req: core.WriteRequest, opts: options.DeleteOptions): Promise<DeleteResult> {
  const type = req.type;
  const ident = writes.identOf(type);
  const name = req.name!;
  const key = writes.storageKey(type, { metadata: { name, namespace: req.namespace } });
  for (let attempt = 0; attempt < 16; attempt++) {
    const stored = c.store.get(type.storage, key);
    if (!stored) throw statuses.notFound(ident, name);
    const meta = objects.metaOf(stored);
    if (opts.preconditions.uid !== undefined && opts.preconditions.uid !== meta['uid']) {
      throw statuses.conflict(
        ident,
        name,
        `the UID in the precondition (${opts.preconditions.uid}) does not match the UID in record (${String(meta['uid'])}). The object might have been deleted and then recreated`,
      );
    }
    if (opts.preconditions.resourceVersion !== undefined && opts.preconditions.resourceVersion !== meta['resourceVersion']) {
      throw statuses.conflict(
        ident,
        name,
        `the ResourceVersion in the precondition (${opts.preconditions.resourceVersion}) does not match the ResourceVersion in record (${String(meta['resourceVersion'])}). The object might have been modified`,
      );
    }
    await c.admission.validate(
      {
        operation: 'DELETE',
        type,
        subresource: undefined,
        namespace: req.namespace,
        name,
        object: undefined,
        oldObject: objects.toExternal(type, await converting.oneInVersion(type, stored)),
        dryRun: req.dryRun,
        options: {
          kind: 'DeleteOptions',
          apiVersion: 'meta.k8s.io/v1',
          ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
          ...(req.dryRun ? { dryRun: ['All'] } : {}),
        },
        user: req.user,
      },
      req.warnings,
    );
    if (c.store.get(type.storage, key) !== stored) continue; // changed during admission: start over

    const now = objects.formatTime(c.clock.now());
    const custom = type.strategy.markForDeletion?.(stored, now);
    if (custom === 'conflict') {
      throw statuses.conflict(
        ident,
        name,
        'The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.',
      );
    }
    if (custom) return persistMark(c, req, key, custom);

    const finalizers = withPolicyFinalizers(objects.finalizersOf(stored), opts.propagationPolicy);
    const alreadyMarked = meta['deletionTimestamp'] !== undefined;
    if (alreadyMarked) {
      const graceNow = Number(meta['deletionGracePeriodSeconds'] ?? 0);
      const shorter = opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < graceNow;
      if (shorter && opts.gracePeriodSeconds === 0 && finalizers.length === 0) return persistRemoval(c, req, key, stored);
      if (!sameList(finalizers, objects.finalizersOf(stored)) || shorter) {
        const marked = objects.withMeta(stored, (m) => {
          m['finalizers'] = finalizers;
          if (shorter) {
            m['deletionGracePeriodSeconds'] = opts.gracePeriodSeconds;
            m['deletionTimestamp'] = objects.formatTime(c.clock.now() + opts.gracePeriodSeconds! * 1000);
          }
        });
        return persistMark(c, req, key, marked);
      }
      return { object: stored, removed: false };
    }
    const grace = type.strategy.gracePeriod?.(stored, opts.gracePeriodSeconds) ?? 0;
    if (finalizers.length === 0 && grace === 0) return persistRemoval(c, req, key, stored);
    const marked = objects.withMeta(stored, (m) => {
      m['deletionTimestamp'] = grace > 0 ? objects.formatTime(c.clock.now() + grace * 1000) : now;
      m['deletionGracePeriodSeconds'] = grace;
      if (finalizers.length) m['finalizers'] = finalizers;
      if (typeof m['generation'] === 'number' && m['generation'] > 0) m['generation'] = m['generation'] + 1;
    });
    return persistMark(c, req, key, marked);
  }
  throw statuses.conflict(ident, name);
}

function withPolicyFinalizers(existing: string[], policy: options.PropagationPolicy | undefined): string[] {
  let out = [...existing];
  if (policy === 'Foreground') {
    out = out.filter((f) => f !== ORPHAN);
    if (!out.includes(FOREGROUND)) out.push(FOREGROUND);
  } else if (policy === 'Orphan') {
    out = out.filter((f) => f !== FOREGROUND);
    if (!out.includes(ORPHAN)) out.push(ORPHAN);
  } else if (policy === 'Background') {
    out = out.filter((f) => f !== FOREGROUND && f !== ORPHAN);
  }
  return out;
}

const sameList = (a: string[], b: string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

function persistMark(c: core.Core, req: core.WriteRequest, key: string, marked: JsonObject): DeleteResult {
  const arranged = writes.arrange(c, req.type, marked);
  if (req.dryRun) return { object: arranged, removed: false };
  return { object: writes.persist(c, req.type, key, arranged).object, removed: false };
}

function persistRemoval(c: core.Core, req: core.WriteRequest, key: string, stored: JsonObject): DeleteResult {
  if (req.dryRun) return { object: stored, removed: true };
  return { object: c.store.write(req.type.storage, key, undefined).object, removed: true };
}

/** The response body of a delete (D-VERB-27). */
export function deleteResponse(req: core.WriteRequest, result: DeleteResult): JsonObject {
  const external = objects.toExternal(req.type, result.object);
  if (!result.removed || req.type.strategy.deleteReturnsObject) return external;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: objects.nameOf(result.object), group: req.type.group || undefined, kind: req.type.resource, uid: objects.uidOf(result.object) },
  };
}

/** deletecollection: every matching object as an individual delete; returns the matched objects. */
export async function removeCollection(c: core.Core, req: core.WriteRequest, matched: JsonObject[], opts: options.DeleteOptions): Promise<JsonObject[]> {
  for (const obj of matched) {
    try {
      await remove(c, { ...req, name: objects.nameOf(obj), namespace: objects.namespaceOf(obj) }, opts);
    } catch (err) {
      if (err instanceof statuses.ApiError && err.code === 404) continue;
      throw err;
    }
  }
  return matched;
}
