/**
 * Built-in definitions in the form upstream's OpenAPI v3 documents give them (D-WIRE-32), derived
 * from the v2 definitions: references point into `#/components/schemas/`; a reference with members
 * beside it is wrapped as `allOf: [{$ref}]` (OpenAPI 3.0 ignores a `$ref`'s siblings); IntOrString
 * and Quantity are `oneOf` their alternatives.
 *
 * Upstream's v3 documents also carry `default`s derived from Go types (the zero value of fields
 * that are not omitted when empty, `{}` for embedded structs), which the v2 document does not
 * record. They are reconstructed by rule, close to upstream but not exactly: `{}` for an object
 * reference that is required, that is a kind's `metadata`/`spec`/`status`, or that is a list item;
 * the zero value for a required string, number or boolean.
 */
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as openapi from '../upstream/openapi.js';
import * as parts from './parts.js';

const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const KIND_PARTS = new Set(['metadata', 'spec', 'status']);

const converted = new Map<string, JsonObject>();

/** A built-in definition in v3 form (converted once per process). */
export function builtinSchema(name: string): JsonObject | undefined {
  const hit = converted.get(name);
  if (hit) return hit;
  const def = openapi.publishedDefinition(name) as unknown as JsonObject | undefined;
  if (!def) return undefined;
  const out = convertDefinition(name, def);
  converted.set(name, out);
  return out;
}

function convertDefinition(name: string, def: JsonObject): JsonObject {
  if (name === INT_OR_STRING) return { description: def['description'], format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] };
  if (name === QUANTITY) return { description: def['description'], oneOf: [{ type: 'string' }, { type: 'number' }] };
  return schema(def, def['x-kubernetes-group-version-kind'] !== undefined);
}

/** Any v2 schema in v3 form, without added defaults (for custom resources and request bodies). */
export function plain(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(plain);
  if (!json.isObject(s)) return s;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(s)) out[k] = k === '$ref' ? toV3Ref(v) : plain(v);
  return wrap(out);
}

const toV3Ref = (ref: unknown): unknown =>
  typeof ref === 'string' && ref.startsWith(parts.V2_PREFIX) ? parts.V3_PREFIX + ref.slice(parts.V2_PREFIX.length) : ref;

function wrap(s: JsonObject): JsonObject {
  if (typeof s['$ref'] !== 'string' || Object.keys(s).length === 1) return s;
  const { $ref, ...rest } = s;
  return { allOf: [{ $ref }], ...rest };
}

function schema(s: JsonObject, isKind: boolean): JsonObject {
  const required = new Set(Array.isArray(s['required']) ? (s['required'] as string[]) : []);
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' && json.isObject(v)) {
      const props: JsonObject = {};
      for (const [p, sub] of Object.entries(v)) props[p] = property(sub as JsonObject, required.has(p) || (isKind && KIND_PARTS.has(p)), required.has(p));
      out[k] = props;
    } else if (k === 'items' && json.isObject(v)) out[k] = property(v, true, false);
    else if (k === 'additionalProperties' && json.isObject(v)) out[k] = property(v, false, false);
    else if (k === '$ref') out[k] = toV3Ref(v);
    else out[k] = v;
  }
  return out;
}

/** A property (or item) schema, with the default upstream's Go types would give it. */
function property(s: JsonObject, objectDefault: boolean, scalarDefault: boolean): JsonObject {
  const out = schema(s, false);
  if (out['default'] === undefined) {
    const target = parts.refName(s['$ref']);
    if (target !== undefined) {
      const def = openapi.publishedDefinition(target);
      if (objectDefault && def && (def.type === 'object' || def.properties !== undefined)) out['default'] = {};
    } else if (scalarDefault) {
      const zero = { string: '', integer: 0, number: 0, boolean: false }[s['type'] as string];
      if (zero !== undefined) out['default'] = zero;
    }
  }
  return wrap(out);
}
