/**
 * What a change in the watch cache triggers (R-RECONCILE-202, -203, -211): the reconcile calls of
 * the objects it concerns — the object itself for the handlers of its resource, the controller
 * owner of a child for the handlers that own the child's kind, and whatever `map` returns for the
 * handlers that watch the kind.
 *
 * Both the old and the new state count: a child that changed owners (or was removed) concerns the
 * owner it had as much as the one it has. A change the current reconcile call made itself (its
 * patch, its client's writes: `origin: 'write'` inside `reconciliation.calling`) triggers nothing
 * for that same handler and object; every other change does.
 */

import * as dicts from '../../cogs/structs/dicts.js';
import type * as bodies from '../../cogs/structs/bodies.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';
import type * as handlers from '../intents/handlers.js';
import type * as registries from '../intents/registry.js';
import type * as selectors from '../intents/selectors.js';
import type * as caching from './caching.js';
import * as reconciliation from './reconciliation.js';
import type * as reconciling from './reconciling.js';

/** What the mapping needs: the handlers, and the served resources a selector selects. */
export interface TriggerScope {
  readonly registry: registries.OperatorRegistry;
  /** The cached (discovered, tracked) resources a reconciled resource's selector selects. */
  readonly resolve: (selector: selectors.Selector) => readonly references.Resource[];
  readonly logger: loggers.Logger;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function bodiesOf(change: caching.CacheChange): bodies.RawBody[] {
  return [change.new, change.old].filter((body): body is bodies.RawBody => body !== undefined);
}

/** The targets of the controller owners of a child, for one handler owning its kind. */
function owners(scope: TriggerScope, handler: handlers.ReconcileHandler, child: bodies.RawBody): reconciling.Target[] {
  const refs = child.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return [];
  const ref = refs.find((owner) => owner?.controller === true);
  if (ref === undefined || typeof ref.apiVersion !== 'string' || typeof ref.name !== 'string') return [];
  const childNamespace = child.metadata?.namespace ?? null;
  return scope.resolve(handler.selector).flatMap((resource) => {
    if (resource.kind !== ref.kind || resource.group !== groupOf(ref.apiVersion)) return [];
    if (resource.namespaced && childNamespace === null) return [];
    return [{ handler, resource, namespace: resource.namespaced ? childNamespace : null, name: ref.name }];
  });
}

/** The targets a `watches` map returns for one object. */
function mapped(scope: TriggerScope, handler: handlers.ReconcileHandler, relation: handlers.ReconcileRelation, body: bodies.RawBody): reconciling.Target[] {
  let result: unknown;
  try {
    result = relation.map(body);
  } catch (error) {
    scope.logger.error(`The map of ${relation.resource.plural} of the reconcile handler '${handler.id}' has failed.`, { error });
    return [];
  }
  if (result === undefined || result === null) return [];
  const refs = (Array.isArray(result) ? result : [result]) as unknown[];
  const own = body.metadata?.namespace ?? null;
  return refs.flatMap((ref) => {
    if (!dicts.isObject(ref) || typeof ref['name'] !== 'string' || ref['name'] === '') return [];
    const namespace = typeof ref['namespace'] === 'string' ? ref['namespace'] : own;
    return scope.resolve(handler.selector).flatMap((resource) => {
      if (resource.namespaced && namespace === null) return [];
      return [{ handler, resource, namespace: resource.namespaced ? namespace : null, name: ref['name'] as string }];
    });
  });
}

function same(a: reconciling.Target, b: reconciling.Target): boolean {
  return (
    a.handler === b.handler && references.resourceName(a.resource) === references.resourceName(b.resource) && a.namespace === b.namespace && a.name === b.name
  );
}

/** The reconcile calls a change of the cache triggers, without duplicates and without the current call's own. */
export function triggersOf(scope: TriggerScope, change: caching.CacheChange): reconciling.Target[] {
  const { registry } = scope;
  const targets: reconciling.Target[] = [];
  const object = change.new ?? change.old;
  const name = object?.metadata?.name;
  if (typeof name === 'string') {
    for (const handler of registry.reconcileHandlersOf(change.resource)) {
      targets.push({ handler, resource: change.resource, namespace: change.resource.namespaced ? (object?.metadata?.namespace ?? null) : null, name });
    }
  }
  for (const handler of registry.reconcileHandlersOwning(change.resource)) {
    for (const body of bodiesOf(change)) targets.push(...owners(scope, handler, body));
  }
  for (const [handler, relations] of registry.reconcileHandlersWatching(change.resource)) {
    for (const relation of relations) for (const body of bodiesOf(change)) targets.push(...mapped(scope, handler, relation, body));
  }
  const current = change.origin === 'write' ? reconciliation.calling.getStore() : undefined;
  const unique: reconciling.Target[] = [];
  for (const target of targets) {
    if (current !== undefined && same(current.target, target)) {
      const version = change.new?.metadata?.resourceVersion;
      if (typeof version === 'string' && target.resource.plural === change.resource.plural) current.written.add(version);
      continue;
    }
    if (!unique.some((other) => same(other, target))) unique.push(target);
  }
  return unique;
}

/** The resource version a change gives the target's own object (`undefined` if it concerns another object). */
export function ownVersionOf(change: caching.CacheChange, target: reconciling.Target): string | undefined {
  if (references.resourceName(change.resource) !== references.resourceName(target.resource)) return undefined;
  const body = change.new;
  if (body?.metadata?.name !== target.name || (body.metadata?.namespace ?? null) !== target.namespace) return undefined;
  return body.metadata?.resourceVersion;
}
