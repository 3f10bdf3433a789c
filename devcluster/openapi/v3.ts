/**
 * The served `/openapi/v3` documents (D-WIRE-32): the index, which names one document per
 * group/version (and per discovery path: `api`, `apis`, `apis/<group>`, `version`) with the hash of
 * its current content, and the documents themselves — OpenAPI 3.0 with the group/version's paths
 * and the `components.schemas` they reach. Built-in documents are converted from the built-in v2
 * part (`v3paths.ts`, `v3schemas.ts`); a custom resource group/version's document is built from its
 * CRDs' parts and schemas as upstream's apiextensions-apiserver serves it.
 *
 * Lazy and cached like v2 (D-WIRE-33): built-in documents once per process and reported version;
 * a custom group/version's document until the types serving it change. The index needs every
 * document's hash, so the first index request builds them all.
 */
import type * as resources from '../api/resources.js';
import type { JsonObject } from '../json.js';
import * as openapi from '../upstream/openapi.js';
import * as builtin from './builtin.js';
import * as crdschemas from './crdschemas.js';
import * as parts from './parts.js';
import * as v2 from './v2.js';
import * as v3paths from './v3paths.js';
import * as v3schemas from './v3schemas.js';

/** The URL the index gives for a document (`/openapi/v3/apis/batch/v1?hash=…`). */
export const serverRelativeURL = (key: string, etag: string): string => `/openapi/v3/${key}?hash=${etag}`;

const builtinKeys = new WeakMap<builtin.BuiltinPart, Map<string, string[]>>();
const builtinDocs = new WeakMap<builtin.BuiltinPart, Map<string, v2.Served>>();

interface CustomDoc {
  readonly types: readonly resources.ResourceType[];
  readonly served: v2.Served;
}
const customDocs = new WeakMap<resources.Registry, Map<string, CustomDoc>>();
const indexes = new WeakMap<resources.Registry, { generation: number; version: string; index: JsonObject }>();

/** The built-in part's paths grouped by the v3 document they belong to. */
function keysOf(b: builtin.BuiltinPart): Map<string, string[]> {
  let keys = builtinKeys.get(b);
  if (!keys) {
    keys = new Map();
    for (const path of Object.keys(b.paths)) {
      const key = parts.documentKeyOf(path);
      if (!keys.has(key)) keys.set(key, []);
      keys.get(key)!.push(path);
    }
    builtinKeys.set(b, keys);
  }
  return keys;
}

const customKey = (t: resources.ResourceType): string => `apis/${t.group}/${t.version}`;

/** The index document. */
export function index(registry: resources.Registry, version: string): JsonObject {
  const cached = indexes.get(registry);
  if (cached && cached.generation === registry.generation && cached.version === version) return cached.index;
  const keys = new Set([...keysOf(builtin.builtinPart(registry)).keys(), ...v2.customTypes(registry).map(customKey)]);
  const paths: JsonObject = {};
  for (const key of [...keys].sort()) {
    const served = document(registry, version, key);
    if (served) paths[key] = { serverRelativeURL: serverRelativeURL(key, served.etag) };
  }
  const index = { paths };
  indexes.set(registry, { generation: registry.generation, version, index });
  return index;
}

/** One document by its key (`apis/batch/v1`), or undefined when none is served. */
export function document(registry: resources.Registry, version: string, key: string): v2.Served | undefined {
  const custom = v2.customTypes(registry).filter((t) => customKey(t) === key);
  if (custom.length) return customDocument(registry, key, custom);
  const b = builtin.builtinPart(registry);
  const paths = keysOf(b).get(key);
  if (!paths) return undefined;
  let docs = builtinDocs.get(b);
  if (!docs) builtinDocs.set(b, (docs = new Map()));
  const cacheKey = `${version} ${key}`;
  let served = docs.get(cacheKey);
  if (!served) {
    served = serialise(builtinDocument(b, version, paths));
    docs.set(cacheKey, served);
  }
  return served;
}

function serialise(doc: JsonObject): v2.Served {
  parts.computed.v3Documents++;
  const bytes = Buffer.from(JSON.stringify(parts.sortedKeys(doc)));
  return { bytes, etag: v2.etagOf(bytes) };
}

function builtinDocument(b: builtin.BuiltinPart, version: string, paths: readonly string[]): JsonObject {
  const v3Paths: JsonObject = {};
  const refs = new Set<string>();
  for (const path of paths) {
    const item = b.paths[path]!;
    v3Paths[path] = v3paths.pathItem(item);
  }
  parts.collectRefs(v3Paths, refs);
  return {
    components: { schemas: schemasFor(refs), securitySchemes: b.securityDefinitions },
    info: { title: 'Kubernetes', version },
    openapi: '3.0.0',
    paths: v3Paths,
    security: b.security,
  };
}

/** The v3 schemas of the built-in definitions `roots` reach. */
function schemasFor(roots: Iterable<string>): JsonObject {
  const schemas: JsonObject = {};
  for (const name of parts.closure(roots, openapi.definition)) schemas[name] = v3schemas.builtinSchema(name);
  return schemas;
}

function customDocument(registry: resources.Registry, key: string, types: readonly resources.ResourceType[]): v2.Served {
  let docs = customDocs.get(registry);
  if (!docs) customDocs.set(registry, (docs = new Map()));
  const cached = docs.get(key);
  if (cached && cached.types.length === types.length && cached.types.every((t, i) => t === types[i])) return cached.served;
  const v3Paths: JsonObject = {};
  const own: JsonObject = {};
  const refs = new Set<string>();
  for (const t of types) {
    const part = v2.crdPart(t);
    for (const [path, item] of Object.entries(part.paths)) v3Paths[path] = v3paths.pathItem(item);
    Object.assign(own, crdschemas.v3Schemas(t));
  }
  parts.collectRefs(v3Paths, refs);
  parts.collectRefs(own, refs);
  for (const name of Object.keys(own)) refs.delete(name);
  const served = serialise({
    components: { schemas: { ...schemasFor(refs), ...own } },
    info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
    openapi: '3.0.0',
    paths: v3Paths,
  });
  docs.set(key, { types, served });
  return served;
}
