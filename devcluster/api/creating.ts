/**
 * Creating objects: the one path by which an object comes into existence, whichever request asks
 * for it — a POST to a collection, a PUT of a missing object for the kinds that create on update
 * (D-VERB-15), or a server-side apply of a missing object. Keeping it single is what gives every new
 * object the same metadata rules (generated names, uid, resourceVersion, timestamps, D-META-1..10),
 * the same admission and validation, and the same namespace checks (D-VERB-9..12).
 */
import * as names from '../meta/names.js';
import * as statuses from '../server/statuses.js';
import * as converting from './converting.js';
import type * as core from './core.js';
import * as objects from './objects.js';
import * as writes from './writes.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** Namespace existence and lifecycle checks for creating namespaced objects (D-VERB-11). */
export function checkNamespace(c: core.Core, req: core.WriteRequest, name: string): void {
  if (!req.type.namespaced || !req.namespace) return;
  const ns = c.store.get('namespaces', req.namespace);
  if (!ns) throw statuses.namespaceNotFound(req.namespace);
  const phase = json.isObject(ns['status']) ? (ns['status'] as JsonObject)['phase'] : undefined;
  if (phase === 'Terminating') {
    throw statuses.forbidden(
      `${statuses.qualifiedResource(writes.identOf(req.type))} "${name}" is forbidden: unable to create new content in namespace ${req.namespace} because it is being terminated`,
      {
        name,
        group: req.type.group,
        kind: req.type.resource,
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${req.namespace} is being terminated`, field: 'metadata.namespace' }],
      },
    );
  }
}

/**
 * Creates an object from a decoded body. `prepared` bodies (from PUT/apply) have already passed
 * identity checks and schema normalisation.
 */
export async function create(
  c: core.Core,
  req: core.WriteRequest,
  body: unknown,
  opts: { prepared?: boolean; keepManagedFields?: boolean } = {},
): Promise<{ object: JsonObject; code: number }> {
  let obj = writes.requireObject(body);
  const requestedManagedFields = objects.metaOf(obj)['managedFields'];
  if (!opts.prepared) {
    obj = writes.checkIdentity(req, obj, {});
    const rv = objects.metaOf(obj)['resourceVersion'];
    // `null` decodes to the empty string upstream, so only a present non-empty value counts as set.
    if (rv !== undefined && rv !== null && rv !== '') throw new statuses.ApiError(500, '', 'resourceVersion should not be set on objects to be created');
    obj = writes.normalizeBody(req, obj);
  }
  const displayName = objects.nameOf(obj) || String(objects.metaOf(obj)['generateName'] ?? '');
  checkNamespace(c, req, displayName);
  req.type.strategy.admitCreate?.(obj);

  // System metadata is cleared before mutating admission (webhooks see no uid, D-ADM-9).
  obj = objects.withMeta(obj, (m) => {
    for (const k of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'resourceVersion', 'generation']) delete m[k];
  });
  const mutated = await c.admission.mutate(
    {
      operation: 'CREATE',
      type: req.type,
      subresource: undefined,
      namespace: req.namespace,
      name: objects.nameOf(obj) || undefined,
      object: obj,
      oldObject: undefined,
      dryRun: req.dryRun,
      options: writes.admissionOptions('CreateOptions', req),
      user: req.user,
    },
    req.warnings,
  );
  if (mutated && mutated !== obj) obj = writes.redefault(req, mutated);
  // Strategies see the stored form, as on update (field renames of events.k8s.io, D-BI-4).
  if (req.type.strategy.toStorage) obj = req.type.strategy.toStorage(obj);

  const ctx = writes.strategyContext(c);
  const generateFrom = objects.metaOf(obj)['generateName'];
  const attempts = !objects.nameOf(obj) && typeof generateFrom === 'string' && generateFrom ? 8 : 1;
  for (let attempt = 1; ; attempt++) {
    let candidate = objects.withMeta(obj, (m) => {
      if (!m['name'] && typeof generateFrom === 'string' && generateFrom) m['name'] = names.generateName(generateFrom, ctx.random);
      m['uid'] = ctx.uid();
      m['creationTimestamp'] = objects.formatTime(c.clock.now());
    });
    if (req.type.strategy.prepareForCreate) candidate = req.type.strategy.prepareForCreate(candidate, ctx);
    candidate = writes.applyGeneration(req.type, candidate, undefined);
    writes.validate(c, req, candidate, undefined);
    if (!opts.keepManagedFields) candidate = writes.recordManager(c, req, undefined, candidate, requestedManagedFields);
    candidate = writes.arrange(c, req.type, objects.withMeta(candidate, objects.compactMeta));

    await c.admission.validate(
      {
        operation: 'CREATE',
        type: req.type,
        subresource: undefined,
        namespace: req.namespace,
        name: objects.nameOf(candidate),
        object: objects.toExternal(req.type, candidate),
        oldObject: undefined,
        dryRun: req.dryRun,
        options: writes.admissionOptions('CreateOptions', req),
        user: req.user,
      },
      req.warnings,
    );

    // A CRD with a conversion webhook stores the object converted by it (D-CONV-405); a failed
    // conversion stores nothing.
    const stored = converting.callsOut(req.type) ? writes.arrange(c, req.type, await converting.forStorage(req.type, candidate)) : candidate;
    const key = writes.storageKey(req.type, stored);
    if (c.store.get(req.type.storage, key)) {
      if (attempt < attempts) continue;
      throw statuses.alreadyExists(writes.identOf(req.type), objects.nameOf(stored));
    }
    if (req.dryRun) {
      return {
        object: objects.withMeta(stored, (m) => {
          delete m['resourceVersion'];
        }),
        code: 201,
      };
    }
    const change = writes.persist(c, req.type, key, stored);
    return { object: change.object, code: 201 };
  }
}
