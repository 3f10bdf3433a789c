/**
 * What the typed client needs of a watch cache: reads of the kinds it holds, and the operator's
 * own writes reported back to it (read-your-writes).
 *
 * The cache itself lives in the engines (`core/engines/caching`), fed by the operator's watchers;
 * the client sits below them and must not import them, so it names only this interface, which the
 * cache implements. A client built with a reader answers `get()`/`list()` of a tracked, synced
 * kind from memory and tells the reader about every write's response. The helpers below are the
 * client's side of it: the 404 of a cache miss, lists filtered in memory, deletions reported.
 */

import type * as bodies from '../structs/bodies.js';
import * as labelselectors from '../structs/labelselectors.js';
import type * as references from '../structs/references.js';
import * as errors from './errors.js';

export interface CacheReader {
  /** Whether the resource is held at all (its kind is reconciled, owned or watched). */
  isTracked(resource: references.Resource): boolean;
  /** Whether a listing covering `namespace` (`null`: all namespaces) has completed at least once. */
  isSynced(resource: references.Resource, namespace: string | null): boolean;
  /** The object as held, or `undefined` if absent (the caller must not change it). */
  get(resource: references.Resource, namespace: string | null, name: string): bodies.RawBody | undefined;
  /** The objects held in a namespace (`null`: all); the caller must not change them. */
  list(resource: references.Resource, namespace: string | null): bodies.RawBody[];
  /**
   * A write's response (the object as stored by the server). Returns the response's resource
   * version when the cache holds that state or a newer one (the write is known), else `undefined`.
   */
  wrote(resource: references.Resource, body: bodies.RawBody): string | undefined;
  /** A delete whose object is gone (answered with a `Status`, or the deleted object's last state). */
  removed(resource: references.Resource, namespace: string | null, name: string, resourceVersion?: string): void;
}

/** A 404 as the API server words it (`jobs.batch "x" not found`), for a read the cache answered. */
export function notFound(resource: references.Resource, name: string, path: string): errors.ApiNotFoundError {
  const qualified = resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
  const status: errors.StatusPayload = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${qualified} "${name}" not found`,
    reason: 'NotFound',
    details: { name, ...(resource.group ? { group: resource.group } : {}), kind: resource.plural },
    code: 404,
  };
  return new errors.ApiNotFoundError(404, status, { request: errors.failedRequest('GET', path) });
}

/** `metadata.name`/`metadata.namespace` requirements of a field selector; `undefined` if it selects by anything else. */
function fieldRequirements(selector: string | undefined): { path: 'name' | 'namespace'; equal: boolean; value: string }[] | undefined {
  if (selector === undefined || selector.trim() === '') return [];
  const requirements: { path: 'name' | 'namespace'; equal: boolean; value: string }[] = [];
  for (const part of selector.split(',')) {
    const match = /^\s*metadata\.(name|namespace)\s*(==|=|!=)\s*([^\s=!,]*)\s*$/.exec(part);
    if (match === null) return undefined;
    requirements.push({ path: match[1] as 'name' | 'namespace', equal: match[2] !== '!=', value: match[3]! });
  }
  return requirements;
}

/**
 * The objects a list would return, from the cache: the label selector evaluated in memory, the
 * field selector too when it selects only by `metadata.name`/`metadata.namespace`. `undefined`
 * when the cache cannot answer it (another field, a selector the server would refuse): then the
 * request is made, and the server answers (or refuses) as always.
 */
export function cachedList(
  reader: CacheReader,
  resource: references.Resource,
  namespace: string | null,
  selectors: { readonly labels?: string; readonly fields?: string },
): bodies.RawBody[] | undefined {
  const fields = fieldRequirements(selectors.fields);
  if (fields === undefined) return undefined;
  let labels: labelselectors.LabelRequirement[];
  try {
    labels = labelselectors.parseLabelSelector(selectors.labels ?? '');
  } catch {
    return undefined;
  }
  return reader.list(resource, namespace).filter((body) => {
    const metadata = body.metadata ?? {};
    if (!labelselectors.matchesLabels(labels, metadata.labels)) return false;
    return fields.every((field) => ((metadata[field.path] ?? '') === field.value) === field.equal);
  });
}

/**
 * Reports a delete's response: a `Status`, or an object without finalizers and without a grace
 * period left, means it is gone; an object still there (finalizers pending, a graceful deletion)
 * is a write like any other.
 */
export function reportDeletion(reader: CacheReader, resource: references.Resource, namespace: string | null, name: string, response: unknown): void {
  if (errors.isStatus(response) || typeof response !== 'object' || response === null) {
    reader.removed(resource, namespace, name);
    return;
  }
  const body = response as bodies.RawBody;
  const metadata = body.metadata ?? {};
  const pending = (metadata.finalizers?.length ?? 0) > 0 || (metadata.deletionTimestamp !== undefined && (metadata.deletionGracePeriodSeconds ?? 0) > 0);
  if (pending) reader.wrote(resource, body);
  else reader.removed(resource, namespace, name, metadata.resourceVersion);
}
