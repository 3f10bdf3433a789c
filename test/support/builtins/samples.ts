/**
 * A minimal valid object of every built-in kind, for the conformance suites generated from the
 * catalog: the members the kind's OpenAPI schema requires, filled with placeholder values of the
 * right type (strings `x`, numbers 1, the first value of an enum, times, quantities), then the
 * meaningful values of `overrides.ts` for the kinds whose validation needs them. A kind added to
 * the catalog gets a sample without anyone writing one, and the suites cover it.
 */
import type { JsonObject } from '../../../devcluster/json.js';
import type { ResourceEntry } from '../../../devcluster/upstream/catalog.js';
import * as openapi from '../../../devcluster/upstream/openapi.js';
import { OVERRIDES, STATUS_OVERRIDES } from './overrides.js';
import { NAMESPACE, apiVersionOf, titleOf } from './urls.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
/** The members of a kind's root that samples set themselves (or leave to the server). */
const ROOT_MEMBERS = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/** A sample object, typed as loosely as the suites' HTTP bodies (the conformance harness's `Json`). */
export type Sample = { [key: string]: any };

/** The label every sample carries, for the suites' label selectors. */
export const SAMPLE_LABEL = 'conformance';

/** The values an enum field takes, from its description's "Possible enum values" list (upstream's convention). */
export function enumValuesOf(schema: openapi.Schema): string[] {
  const text = schema.description ?? '';
  const at = text.indexOf('Possible enum values:');
  if (at < 0) return [];
  return [...text.slice(at).matchAll(/^ - `"((?:[^"\\]|\\.)*)"`/gm)].map((m) => m[1]!);
}

/** A placeholder value of `schema`'s type: only the required members of objects, one item in lists. */
export function placeholder(schema: openapi.Schema): unknown {
  const ref = openapi.refName(schema);
  if (ref === `${META}Time`) return '2024-05-01T10:00:00Z';
  if (ref === `${META}MicroTime`) return '2024-05-01T10:00:00.000000Z';
  if (ref === 'io.k8s.apimachinery.pkg.api.resource.Quantity') return '1';
  if (ref === 'io.k8s.apimachinery.pkg.util.intstr.IntOrString') return 1;
  if (ref !== undefined) {
    const target = openapi.resolve(schema);
    return target.type === undefined && !target.properties ? {} : placeholder(target);
  }
  const values = enumValuesOf(schema);
  if (values.length) return values[0];
  switch (schema.type) {
    case 'string':
      return schema.format === 'byte' ? 'eA==' : schema.format === 'date-time' ? '2024-05-01T10:00:00Z' : 'x';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return schema.items ? [placeholder(schema.items)] : [];
    default:
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object' && !schema.properties) {
        return { conformance: placeholder(schema.additionalProperties) };
      }
      return requiredMembers(schema);
  }
}

/** The required members of an object schema, each with a placeholder. */
function requiredMembers(schema: openapi.Schema, root = false): JsonObject {
  const out: JsonObject = {};
  for (const key of schema.required ?? []) {
    if (root && ROOT_MEMBERS.has(key)) continue;
    const property = schema.properties?.[key];
    if (property) out[key] = placeholder(property) as JsonObject[string];
  }
  return out;
}

/** A name for the sample of `e` used by the test `purpose`, unique across the catalog (`crud-apps-v1`, `crud-events-v1`). */
export function sampleName(e: ResourceEntry, purpose: string): string {
  return `${purpose}-${e.group.split('.')[0] || 'core'}-${e.version}`;
}

/** A minimal valid object of `e` named `name` with `labels` (an override may rename it: read `metadata.name` back). */
export function sampleObject(e: ResourceEntry, name: string, labels: Record<string, string> = {}): Sample {
  const schema = openapi.definition(e.definition);
  if (!schema) throw new Error(`no OpenAPI definition ${e.definition} for ${titleOf(e)}`);
  const own = OVERRIDES[titleOf(e)]?.(name) ?? {};
  const { metadata: ownMetadata, ...ownMembers } = own as { metadata?: JsonObject } & JsonObject;
  // A review's metadata must be empty (but for a local review's namespace): upstream refuses a named one.
  const metadata: JsonObject = isReview(e)
    ? { ...(e.namespaced ? { namespace: NAMESPACE } : {}) }
    : { name, ...(e.namespaced ? { namespace: NAMESPACE } : {}), labels: { ...labels }, ...(ownMetadata ?? {}) };
  return { apiVersion: apiVersionOf(e), kind: e.kind, metadata, ...requiredMembers(schema, true), ...ownMembers };
}

/** The access, rules, token and self reviews: answered, never stored, with their own validation (D-AUTH-11). */
export const isReview = (e: ResourceEntry): boolean => e.group === 'authorization.k8s.io' || e.group === 'authentication.k8s.io';

/** Whether the catalog entry offers `verb`. */
export const offers = (e: ResourceEntry, verb: string): boolean => e.verbs.includes(verb);

/** Kinds that can only be created: reviews and bindings, whose create answers and stores nothing. */
export const isCreateOnly = (e: ResourceEntry): boolean => e.verbs.length === 1 && e.verbs[0] === 'create';

/** Kinds with the full set of object verbs (create, get, list, watch, update, patch, delete). */
export const isObjectKind = (e: ResourceEntry): boolean => ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete'].every((v) => offers(e, v));

/** The schema of the kind's `status`, or undefined when it has none. */
function statusSchemaOf(e: ResourceEntry): openapi.Schema | undefined {
  const status = openapi.definition(e.definition)?.properties?.['status'];
  return status ? openapi.resolve(status) : undefined;
}

/**
 * A status a controller could write for `e`: its required members, plus a `Conformance`
 * condition when the status has conditions, else its first scalar member, else its first member
 * with something in it (the table of `STATUS_OVERRIDES` for the few kinds where none says anything).
 */
export function statusSample(e: ResourceEntry): Sample {
  const own = STATUS_OVERRIDES[titleOf(e)];
  if (own) return own;
  const schema = statusSchemaOf(e);
  if (!schema) throw new Error(`${titleOf(e)} has no status in its schema`);
  const out = requiredMembers(schema);
  const conditions = schema.properties?.['conditions'];
  if (conditions?.items) {
    const condition = placeholder(conditions.items) as JsonObject;
    out['conditions'] = [{ ...condition, type: 'Conformance', status: 'True', reason: 'Testing', message: 'conformance' }];
    return out;
  }
  const members = Object.entries(schema.properties ?? {}).map(([key, property]) => [key, placeholder(property)] as const);
  const scalar = members.find(([, value]) => value !== null && typeof value !== 'object');
  const filled = members.find(([, value]) => value !== null && typeof value === 'object' && Object.keys(value).length > 0);
  const [key, value] = scalar ?? filled ?? [];
  if (key !== undefined) return { ...out, [key]: value as JsonObject[string] };
  throw new Error(`${titleOf(e)}: no member of its status to write; add it to STATUS_OVERRIDES`);
}

/**
 * A copy of `spec` with one scalar changed (the first number plus one, else the first boolean
 * flipped), or undefined when it has neither: what a status write must not apply.
 */
export function changedSpec(spec: unknown): unknown {
  let done = false;
  const change = (v: unknown, want: 'number' | 'boolean'): unknown => {
    if (done) return v;
    if (typeof v === want) {
      done = true;
      return want === 'number' ? (v as number) + 1 : !v;
    }
    if (Array.isArray(v)) return v.map((item) => change(item, want));
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, change(item, want)]));
    return v;
  };
  const numbered = change(spec, 'number');
  if (done) return numbered;
  const flipped = change(spec, 'boolean');
  return done ? flipped : undefined;
}
