/**
 * The validation rules a built-in kind's schema states (D-BI-21): required fields (from the OpenAPI
 * document) and the values of enum fields (from the Go types upstream, `upstream/enums.json`: the
 * published OpenAPI v2 document lists none). Upstream states the same rules in each kind's
 * hand-written validation; deriving them gives every kind the field paths and reasons a real server
 * answers with (`spec.template.spec.containers: Required value`, `spec.completionMode: Unsupported
 * value: "x": supported values: "NonIndexed", "Indexed"`).
 *
 * `status` is not checked (controllers own it, and upstream's status validation is per kind), nor
 * `metadata` (validated generically by `meta/objectmeta.ts`). The empty string is an enum field's
 * unset value, not checked here.
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as enums from '../upstream/enums.js';
import * as openapi from '../upstream/openapi.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const SKIPPED_ROOT_MEMBERS = new Set(['status', 'metadata', 'apiVersion', 'kind']);

/** The values of an enum property of a definition, or undefined when it is not an enum. */
export function enumValues(definition: string, property: string): readonly string[] | undefined {
  return enums.valuesOf(definition, property);
}

/** The rule violations of `obj` against the named definition (its `status` and `metadata` skipped). */
export function schemaErrors(definition: string, obj: JsonObject): FieldError[] {
  const schema = openapi.definition(definition);
  if (!schema) return [];
  const errors: FieldError[] = [];
  checkObject(obj, definition, schema, '', errors, true);
  return errors;
}

function checkValue(v: unknown, schema: openapi.Schema, path: string, errors: FieldError[]): void {
  const name = openapi.refName(schema);
  const resolved = name !== undefined ? openapi.resolve(schema) : schema;
  if (Array.isArray(v) && resolved.items) {
    v.forEach((item, i) => checkValue(item, resolved.items!, `${path}[${i}]`, errors));
    return;
  }
  if (!json.isObject(v)) return;
  if (resolved.properties) checkObject(v, name, resolved, path, errors, false);
  else if (json.isObject(resolved.additionalProperties)) {
    for (const [key, member] of Object.entries(v)) checkValue(member, resolved.additionalProperties as openapi.Schema, `${path}[${key}]`, errors);
  }
}

function checkObject(v: JsonObject, definition: string | undefined, schema: openapi.Schema, path: string, errors: FieldError[], root: boolean): void {
  for (const key of schema.required ?? []) {
    if (root && SKIPPED_ROOT_MEMBERS.has(key)) continue;
    if (isUnset(v[key])) errors.push(fielderrors.required(path ? `${path}.${key}` : key));
  }
  const withEnums = definition !== undefined && enums.hasEnums(definition);
  for (const [key, member] of Object.entries(v)) {
    if (root && SKIPPED_ROOT_MEMBERS.has(key)) continue;
    const property = schema.properties?.[key];
    if (!property || member === undefined || member === null) continue;
    const at = path ? `${path}.${key}` : key;
    const values = withEnums ? enums.valuesOf(definition, key) : undefined;
    if (values) checkEnum(member, values, at, errors);
    else checkValue(member, property, at, errors);
  }
}

/** An enum field's value, or each of a list of them (`accessModes[1]`). */
function checkEnum(v: unknown, values: readonly string[], path: string, errors: FieldError[]): void {
  if (Array.isArray(v)) v.forEach((item, i) => checkEnum(item, values, `${path}[${i}]`, errors));
  else if (typeof v === 'string' && v !== '' && !values.includes(v)) errors.push(fielderrors.notSupported(path, v, values));
}

/** Go cannot tell an absent field from its zero value; upstream's "Required value" checks the same. */
function isUnset(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}
