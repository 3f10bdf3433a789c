/**
 * The built-in part of the served OpenAPI documents: upstream's published Kubernetes 1.32 document
 * (`upstream/swagger.json`) cut down to what this devcluster serves (D-WIRE-30). Upstream publishes
 * every API group with every alpha API switched on; a vanilla cluster's `/openapi/v2` lists only the
 * group/versions and resources it serves, and so does this one: the paths of served built-in
 * resources (and their served subresources), the discovery paths of served groups, `/version/`, and
 * the definitions those paths reach. Media types of CBOR, which a 1.32 server does not speak by
 * default, are left out of `produces`/`consumes`.
 *
 * The cut depends only on which built-in types the registry serves, which never changes in a
 * cluster; it is computed on first use and shared by every devcluster of the process that serves
 * the same set.
 */
import type * as resources from '../api/resources.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as openapi from '../upstream/openapi.js';
import * as parts from './parts.js';

/** The built-in part plus the document-level members upstream's document carries. */
export interface BuiltinPart extends parts.V2Part {
  readonly parameters: Readonly<Record<string, JsonObject>>;
  readonly security: readonly JsonObject[];
  readonly securityDefinitions: Readonly<Record<string, JsonObject>>;
}

const cache = new Map<string, BuiltinPart>();

/** Definitions custom resource paths refer to; always kept so CRD parts can point at them. */
const SHARED_DEFINITIONS = [
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
  'io.k8s.api.autoscaling.v1.Scale',
];

const CBOR = new Set(['application/cbor', 'application/cbor-seq', 'application/apply-patch+cbor']);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/** The built-in part for the built-in types `registry` serves. */
export function builtinPart(registry: resources.Registry): BuiltinPart {
  const served = registry
    .all()
    .filter((t) => t.builtin)
    .map((t) => `${t.group}/${t.version}/${t.resource}:${t.subresources.join(',')}`)
    .sort()
    .join(' ');
  let part = cache.get(served);
  if (!part) {
    part = cut(registry);
    cache.set(served, part);
  }
  return part;
}

function cut(registry: resources.Registry): BuiltinPart {
  parts.computed.builtinParts++;
  const doc = openapi.document() as unknown as JsonObject & { paths: Record<string, JsonObject>; parameters: Record<string, JsonObject> };
  const paths: Record<string, JsonObject> = {};
  for (const [path, item] of Object.entries(doc.paths)) if (isServed(registry, path)) paths[path] = withoutCbor(item);
  const usedParameters = new Set<string>();
  collectParameterRefs(paths, usedParameters);
  const parameters: Record<string, JsonObject> = {};
  for (const name of [...usedParameters].sort()) if (doc.parameters[name]) parameters[name] = doc.parameters[name]!;
  const roots = new Set<string>(SHARED_DEFINITIONS);
  parts.collectRefs(paths, roots);
  parts.collectRefs(parameters, roots);
  const definitions: Record<string, JsonObject> = {};
  for (const name of parts.closure(roots, openapi.publishedDefinition)) definitions[name] = openapi.publishedDefinition(name) as unknown as JsonObject;
  return {
    paths,
    definitions,
    parameters,
    security: (doc['security'] as JsonObject[] | undefined) ?? [],
    securityDefinitions: (doc['securityDefinitions'] as Record<string, JsonObject> | undefined) ?? {},
  };
}

/** Whether the devcluster serves what a path of upstream's document describes. */
function isServed(registry: resources.Registry, path: string): boolean {
  if (path === '/api/' || path === '/apis/' || path === '/version/') return true;
  const segments = path.split('/').filter((s) => s !== '');
  let group: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 2) {
    group = '';
    rest = segments.slice(1);
  } else if (segments[0] === 'apis' && segments.length >= 2) {
    group = segments[1]!;
    rest = segments.slice(2);
    if (rest.length === 0) return registry.all().some((t) => t.builtin && t.group === group);
  } else return false;
  const version = rest[0]!;
  rest = rest.slice(1);
  if (rest.length === 0) return registry.inGroupVersion(group, version).some((t) => t.builtin);
  if (rest[0] === 'watch') rest = rest.slice(1);
  if (rest[0] === 'namespaces' && rest[1] === '{namespace}' && rest.length > 2) rest = rest.slice(2);
  const type = registry.find(group, version, rest[0]!);
  if (!type?.builtin) return false;
  return rest.length < 3 || type.subresources.includes(rest[2]!);
}

function withoutCbor(item: JsonObject): JsonObject {
  const out: JsonObject = { ...item };
  for (const method of METHODS) {
    const op = item[method];
    if (!json.isObject(op)) continue;
    const copy: JsonObject = { ...op };
    for (const key of ['produces', 'consumes']) {
      const list = op[key];
      if (Array.isArray(list)) copy[key] = list.filter((m) => !CBOR.has(m as string));
    }
    out[method] = copy;
  }
  return out;
}

function collectParameterRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectParameterRefs(v, into);
    return;
  }
  if (!json.isObject(value)) return;
  const ref = value['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/parameters/')) into.add(ref.slice('#/parameters/'.length));
  for (const v of Object.values(value)) if (typeof v === 'object' && v !== null) collectParameterRefs(v, into);
}

/** The published parameter a `#/parameters/…` reference names (for converting to v3). */
export function parameter(name: string): JsonObject | undefined {
  const all = (openapi.document() as unknown as { parameters: Record<string, JsonObject> }).parameters;
  return Object.hasOwn(all, name) ? all[name] : undefined;
}
