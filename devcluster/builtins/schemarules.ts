/**
 * The validation rules a built-in kind's OpenAPI schema states (D-BI-21): required fields and the
 * enumerations of Kubernetes' enum types (listed in the schema's descriptions as "Possible enum
 * values"). Upstream states the same rules in each kind's hand-written validation; deriving them
 * from the schema gives every kind the field paths and reasons a real server answers with
 * (`spec.template.spec.containers: Required value`, `spec.completionMode: Unsupported value: "x":
 * supported values: "Indexed", "NonIndexed"`).
 *
 * `status` is not checked (controllers own it, and upstream's status validation is per kind), nor
 * `metadata` (validated generically by `meta/objectmeta.ts`).
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as openapi from '../upstream/openapi.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const SKIPPED_ROOT_MEMBERS = new Set(['status', 'metadata', 'apiVersion', 'kind']);

const enumCache = new Map<string, readonly string[] | null>();

/**
 * The values of an enum field, read from its description's "Possible enum values" list, or
 * undefined when the field is not an enum.
 */
export function enumValues(schema: openapi.Schema): readonly string[] | undefined {
  const text = schema.description;
  if (!text || !text.includes('Possible enum values:')) return undefined;
  let values = enumCache.get(text);
  if (values === undefined) {
    const list = text.slice(text.indexOf('Possible enum values:'));
    values = [...list.matchAll(/^ - `"((?:[^"\\]|\\.)*)"`/gm)].map((m) => m[1]!);
    if (values.length === 0) values = null;
    enumCache.set(text, values);
  }
  return values ?? undefined;
}

/** The rule violations of `obj` against the named definition (its `status` and `metadata` skipped). */
export function schemaErrors(definition: string, obj: JsonObject): FieldError[] {
  const schema = openapi.definition(definition);
  if (!schema) return [];
  const errors: FieldError[] = [];
  checkObject(obj, schema, '', errors, true);
  return errors;
}

function checkValue(v: unknown, schema: openapi.Schema, path: string, errors: FieldError[]): void {
  const values = enumValues(schema);
  if (values && typeof v === 'string' && v !== '' && !values.includes(v)) {
    errors.push(fielderrors.notSupported(path, v, [...values].sort()));
    return;
  }
  const resolved = openapi.refName(schema) !== undefined ? openapi.resolve(schema) : schema;
  if (Array.isArray(v) && resolved.items) {
    v.forEach((item, i) => checkValue(item, resolved.items!, `${path}[${i}]`, errors));
    return;
  }
  if (!json.isObject(v)) return;
  if (resolved.properties) checkObject(v, resolved, path, errors, false);
  else if (json.isObject(resolved.additionalProperties)) {
    for (const [key, member] of Object.entries(v)) checkValue(member, resolved.additionalProperties as openapi.Schema, `${path}[${key}]`, errors);
  }
}

function checkObject(v: JsonObject, schema: openapi.Schema, path: string, errors: FieldError[], root: boolean): void {
  for (const key of schema.required ?? []) {
    if (root && SKIPPED_ROOT_MEMBERS.has(key)) continue;
    if (isUnset(v[key])) errors.push(fielderrors.required(path ? `${path}.${key}` : key));
  }
  for (const [key, member] of Object.entries(v)) {
    if (root && SKIPPED_ROOT_MEMBERS.has(key)) continue;
    const property = schema.properties?.[key];
    if (property && member !== undefined && member !== null) checkValue(member, property, path ? `${path}.${key}` : key, errors);
  }
}

/** Go cannot tell an absent field from its zero value; upstream's "Required value" checks the same. */
function isUnset(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}
