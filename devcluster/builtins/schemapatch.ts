/**
 * How a built-in kind's fields merge, read from its upstream OpenAPI schema (D-BI-22): the
 * strategic-merge-patch strategy of each list (`x-kubernetes-patch-strategy`,
 * `x-kubernetes-patch-merge-key`, the Go types' `patchStrategy`/`patchMergeKey` tags) and the
 * server-side-apply list semantics (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`).
 *
 * Paths are map keys from the object root; list items add no segment and map values add their key
 * (the convention of `patching/mergekeys.ts`). Answers are cached per path.
 */
import type * as managedfields from '../patching/managedfields.js';
import type * as strategic from '../patching/strategic.js';
import * as openapi from '../upstream/openapi.js';
import * as json from '../json.js';

/** The schema at `path` under the named definition, or undefined. */
function schemaAt(definition: string, path: readonly string[]): openapi.Schema | undefined {
  let node: openapi.Schema | undefined = openapi.definition(definition);
  for (const segment of path) {
    if (!node) return undefined;
    node = openapi.resolve(node);
    while (node.type === 'array' && node.items) node = openapi.resolve(node.items);
    if (node.properties && Object.hasOwn(node.properties, segment)) node = node.properties[segment];
    else if (json.isObject(node.additionalProperties)) node = node.additionalProperties as openapi.Schema;
    else return undefined;
  }
  return node;
}

function cached<T>(answer: (path: readonly string[]) => T): (path: readonly string[]) => T {
  const cache = new Map<string, T>();
  return (path) => {
    const key = path.join('\u0000');
    if (!cache.has(key)) cache.set(key, answer(path));
    return cache.get(key)!;
  };
}

/** The strategic-merge schema of the named definition. */
export function smpSchemaOf(definition: string): strategic.SmpSchema {
  return cached((path) => {
    const node = schemaAt(definition, path);
    const strategy = node?.['x-kubernetes-patch-strategy'];
    if (!node || !strategy) return undefined;
    const parts = strategy.split(',');
    const out: strategic.SmpStrategy = {};
    const mergeKey = node['x-kubernetes-patch-merge-key'];
    if (parts.includes('merge')) {
      const items = node.items ? openapi.resolve(node.items) : undefined;
      if (mergeKey) Object.assign(out, { mergeKey });
      else if (items && items.type !== 'object' && !items.properties) Object.assign(out, { primitiveMerge: true });
    }
    if (parts.includes('retainKeys')) Object.assign(out, { retainKeys: true });
    return Object.keys(out).length ? out : undefined;
  });
}

/** The server-side-apply list semantics of the named definition. */
export function listSemanticsOf(definition: string): managedfields.ListSemantics {
  return cached((path): managedfields.ListType => {
    const node = schemaAt(definition, path);
    const type = node?.['x-kubernetes-list-type'];
    if (type === 'set') return { type: 'set' };
    if (type === 'map') return { type: 'map', keys: [...(node?.['x-kubernetes-list-map-keys'] ?? [])] };
    const mergeKey = node?.['x-kubernetes-patch-merge-key'];
    if (mergeKey && node?.['x-kubernetes-patch-strategy']?.includes('merge')) return { type: 'map', keys: [mergeKey] };
    return { type: 'atomic' };
  });
}
