/**
 * List semantics of a CRD schema: how lists at a given field path merge.
 *
 * Patch strategies and server-side apply need to know whether a list is atomic (replaced as a
 * whole), a set of scalars, or a map keyed by some item fields. For custom resources this comes
 * from `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`; a list without them is atomic,
 * as upstream treats it.
 */

import * as schemas from './schemas.js';

export type ListSemantics = { type: 'atomic' } | { type: 'map'; keys: readonly string[] } | { type: 'set' };

/** Resolves a property path to a schema node; list items add no path segment. */
function resolve(schema: schemas.JSONSchemaProps | undefined, path: readonly string[]): schemas.JSONSchemaProps | undefined {
  let node = schema;
  for (const segment of path) {
    while (node && node.type === 'array' && node.items) node = node.items;
    node = schemas.propertySchema(node, segment);
    if (!node) return undefined;
  }
  return node;
}

/**
 * Returns a lookup from property paths (names from the root, e.g. `['spec', 'ports']`) to the
 * semantics of the list found there. Paths that are not lists, or unknown, report `atomic`.
 *
 * @example
 * listSemanticsOf(schema)(['spec', 'ports']) // → { type: 'map', keys: ['name'] }
 */
export function listSemanticsOf(schema: schemas.JSONSchemaProps | undefined): (path: readonly string[]) => ListSemantics {
  const cache = new Map<string, ListSemantics>();
  return (path) => {
    const cacheKey = JSON.stringify(path);
    const hit = cache.get(cacheKey);
    if (hit) return hit;
    const node = resolve(schema, path);
    let semantics: ListSemantics = { type: 'atomic' };
    const listType = node?.['x-kubernetes-list-type'];
    if (listType === 'set') semantics = { type: 'set' };
    if (listType === 'map') semantics = { type: 'map', keys: [...(node?.['x-kubernetes-list-map-keys'] ?? [])] };
    cache.set(cacheKey, semantics);
    return semantics;
  };
}
