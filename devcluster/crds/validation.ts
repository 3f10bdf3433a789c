/**
 * Validation of custom objects against a version's OpenAPI v3 schema (D-CRD-11).
 *
 * Runs after pruning and defaulting (`pruning`, `defaulting`) and returns every violation at once,
 * as field errors whose types and body texts follow upstream's schema validator (the table of
 * D-CRD-11): type and format mismatches are `FieldValueTypeInvalid` with the JSON type name (or the
 * value) shown, `required` is `FieldValueRequired`, `enum` is `FieldValueNotSupported`, `maxLength`
 * is `FieldValueTooLong`, `maxItems`/`maxProperties` are `FieldValueTooMany`, list-type duplicates
 * are `FieldValueDuplicate`, everything else is `FieldValueInvalid` with a `<path> in body should …`
 * detail. The root `metadata` belongs to the ObjectMeta validator elsewhere; only the schema's own
 * constraints on `metadata.name`/`metadata.generateName` are checked here. CEL rules
 * (`x-kubernetes-validations`) are evaluated by a separate module.
 */

import * as fielderrors from '../meta/fielderrors.js';
import * as formats from './formats.js';
import * as jsonvalues from './jsonvalues.js';
import * as patterns from './patterns.js';
import * as schemas from './schemas.js';
import * as json from '../json.js';

export interface ValidateOptions {
  /** Treat `obj` as a resource root: `apiVersion`, `kind` and `metadata` are left to other validators. Default `true`. */
  readonly root?: boolean;
  /**
   * Prefix for the reported field paths (messages keep the path relative to `obj`). Used when
   * validating a schema's `default`, whose errors are reported under `…properties[x].default`.
   */
  readonly basePath?: string;
}

interface Walk {
  readonly errors: fielderrors.FieldError[];
  readonly base: string;
}

/**
 * Validates `obj` against `schema` and returns all violations (empty when valid).
 *
 * @example
 * validateCustomObject({ spec: { size: 11 } }, widgetSchema).map(fielderrors.renderError)
 * // → ['spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10']
 */
export function validateCustomObject(obj: unknown, schema: schemas.JSONSchemaProps | undefined, opts: ValidateOptions = {}): fielderrors.FieldError[] {
  const walk: Walk = { errors: [], base: opts.basePath ?? '' };
  if (schema) validateNode(obj, schema, '', walk, opts.root ?? true);
  return walk.errors;
}

/** The reported field path: the base path joined with the path relative to the validated value. */
function fieldOf(walk: Walk, rel: string): string {
  if (!walk.base) return rel;
  if (!rel) return walk.base;
  return rel.startsWith('[') ? walk.base + rel : `${walk.base}.${rel}`;
}

/** `spec.x in body`, or just `in body` for the validated value itself. */
function subject(rel: string): string {
  return rel ? `${rel} in body` : 'in body';
}

/** Numbers as Go's `%v` prints a float64 (`10`, `1.5`, `1e-05`, `1e+21`). */
function goNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(n);
}

function typeMatches(type: string, actual: string): boolean {
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return type === actual;
}

function validateNode(value: unknown, s: schemas.JSONSchemaProps, rel: string, walk: Walk, root = false): void {
  const field = fieldOf(walk, rel);
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (value === null || value === undefined) {
    if (s.nullable === true) return;
    if (s.type) walk.errors.push(fielderrors.typeInvalid(field, 'null', `${subject(rel)} must be of type ${s.type}: "null"`));
    else if (intOrString) walk.errors.push(fielderrors.typeInvalid(field, 'null', `${subject(rel)} must be of type integer,string: "null"`));
    return;
  }
  const actual = jsonvalues.jsonTypeOf(value);
  if (s.type && !typeMatches(s.type, actual)) {
    walk.errors.push(fielderrors.typeInvalid(field, actual, `${subject(rel)} must be of type ${s.type}: "${actual}"`));
    return;
  }
  if (!s.type && intOrString && actual !== 'integer' && actual !== 'string') {
    walk.errors.push(fielderrors.typeInvalid(field, actual, `${subject(rel)} must be of type integer,string: "${actual}"`));
    return;
  }
  if (typeof value === 'string' && s.format && !formats.conformsToFormat(s.format, value)) {
    walk.errors.push(fielderrors.typeInvalid(field, value, `${subject(rel)} must be of type ${s.format}: ${JSON.stringify(value)}`));
  }
  if (Array.isArray(s.enum) && !s.enum.some((allowed) => json.deepEqual(allowed, value))) {
    walk.errors.push(fielderrors.notSupported(field, value, s.enum));
  }
  if (typeof value === 'number') checkNumber(value, s, rel, walk);
  if (typeof value === 'string') checkString(value, s, rel, walk);
  if (Array.isArray(value)) checkArray(value, s, rel, walk);
  if (json.isObject(value)) checkObject(value, s, rel, walk, root);
  checkCombinators(value, s, rel, walk);
}

function checkNumber(value: number, s: schemas.JSONSchemaProps, rel: string, walk: Walk): void {
  const field = fieldOf(walk, rel);
  if (typeof s.maximum === 'number') {
    if (s.exclusiveMaximum === true ? value >= s.maximum : value > s.maximum) {
      const relation = s.exclusiveMaximum === true ? 'less than' : 'less than or equal to';
      walk.errors.push(fielderrors.invalid(field, value, `${subject(rel)} should be ${relation} ${goNumber(s.maximum)}`));
    }
  }
  if (typeof s.minimum === 'number') {
    if (s.exclusiveMinimum === true ? value <= s.minimum : value < s.minimum) {
      const relation = s.exclusiveMinimum === true ? 'greater than' : 'greater than or equal to';
      walk.errors.push(fielderrors.invalid(field, value, `${subject(rel)} should be ${relation} ${goNumber(s.minimum)}`));
    }
  }
  if (typeof s.multipleOf === 'number' && s.multipleOf > 0 && !Number.isInteger(value / s.multipleOf)) {
    walk.errors.push(fielderrors.invalid(field, value, `${subject(rel)} should be a multiple of ${goNumber(s.multipleOf)}`));
  }
}

function checkString(value: string, s: schemas.JSONSchemaProps, rel: string, walk: Walk): void {
  const field = fieldOf(walk, rel);
  const length = [...value].length;
  if (typeof s.maxLength === 'number' && length > s.maxLength) {
    walk.errors.push(fielderrors.tooLong(field, `may not be more than ${s.maxLength} bytes`));
  }
  if (typeof s.minLength === 'number' && length < s.minLength) {
    walk.errors.push(fielderrors.invalid(field, value, `${subject(rel)} should be at least ${s.minLength} chars long`));
  }
  if (typeof s.pattern === 'string' && !patterns.matchesPattern(s.pattern, value)) {
    walk.errors.push(fielderrors.invalid(field, value, `${subject(rel)} should match '${s.pattern}'`));
  }
}

function checkArray(value: unknown[], s: schemas.JSONSchemaProps, rel: string, walk: Walk): void {
  const field = fieldOf(walk, rel);
  if (typeof s.maxItems === 'number' && value.length > s.maxItems) {
    walk.errors.push(fielderrors.tooMany(field, value.length, `must have at most ${s.maxItems} items`));
  }
  if (typeof s.minItems === 'number' && value.length < s.minItems) {
    walk.errors.push(fielderrors.invalid(field, value.length, `${subject(rel)} should have at least ${s.minItems} items`));
  }
  if (s.uniqueItems === true && value.some((item, i) => value.findIndex((other) => json.deepEqual(other, item)) !== i)) {
    walk.errors.push(fielderrors.invalid(field, '', `${subject(rel)} shouldn't contain duplicates`));
  }
  if (s.items) {
    const items = s.items;
    value.forEach((item, i) => validateNode(item, items, jsonvalues.indexPath(rel, i), walk));
  }
  checkListType(value, s, rel, walk);
}

/** `x-kubernetes-list-type: set` items must be unique; `map` items must have unique key tuples. */
function checkListType(value: unknown[], s: schemas.JSONSchemaProps, rel: string, walk: Walk): void {
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    value.forEach((item, i) => {
      if (value.slice(0, i).some((earlier) => json.deepEqual(earlier, item))) {
        walk.errors.push(fielderrors.duplicate(fieldOf(walk, jsonvalues.indexPath(rel, i)), item));
      }
    });
  } else if (listType === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    if (keys.length === 0) return;
    const seen: json.JsonObject[] = [];
    value.forEach((item, i) => {
      if (!json.isObject(item)) return;
      const tuple: json.JsonObject = {};
      for (const key of keys) {
        const fallback = s.items?.properties?.[key]?.default;
        const keyValue = item[key] ?? fallback;
        if (keyValue !== undefined) tuple[key] = keyValue;
      }
      if (seen.some((earlier) => json.deepEqual(earlier, tuple))) {
        walk.errors.push(fielderrors.duplicate(fieldOf(walk, jsonvalues.indexPath(rel, i)), tuple));
      } else {
        seen.push(tuple);
      }
    });
  }
}

function checkObject(value: json.JsonObject, s: schemas.JSONSchemaProps, rel: string, walk: Walk, root: boolean): void {
  const field = fieldOf(walk, rel);
  const count = Object.keys(value).length;
  if (typeof s.maxProperties === 'number' && count > s.maxProperties) {
    walk.errors.push(fielderrors.tooMany(field, count, `must have at most ${s.maxProperties} items`));
  }
  if (typeof s.minProperties === 'number' && count < s.minProperties) {
    walk.errors.push(fielderrors.invalid(field, count, `${subject(rel)} should have at least ${s.minProperties} properties`));
  }
  for (const name of s.required ?? []) {
    if (!Object.hasOwn(value, name)) {
      walk.errors.push(fielderrors.required(fieldOf(walk, jsonvalues.childPath(rel, name))));
    }
  }
  if (s['x-kubernetes-embedded-resource'] === true) checkEmbeddedResource(value, rel, walk);
  for (const [key, child] of Object.entries(value)) {
    const childRel = jsonvalues.childPath(rel, key);
    const childSchema = schemas.propertySchema(s, key);
    if (root && (key === 'apiVersion' || key === 'kind')) continue;
    if (root && key === 'metadata') {
      if (childSchema && json.isObject(child)) checkRootMetadataNames(child, childSchema, childRel, walk);
      continue;
    }
    if (childSchema) validateNode(child, childSchema, childRel, walk);
  }
}

/** At the root only the schema's constraints on `metadata.name` and `metadata.generateName` apply. */
function checkRootMetadataNames(meta: json.JsonObject, s: schemas.JSONSchemaProps, rel: string, walk: Walk): void {
  for (const key of ['name', 'generateName']) {
    const propSchema = s.properties?.[key];
    if (propSchema && meta[key] !== undefined) validateNode(meta[key], propSchema, jsonvalues.childPath(rel, key), walk);
  }
}

/** `apiVersion` and `kind` of an embedded resource are required strings; its `metadata` must be a map. */
function checkEmbeddedResource(value: json.JsonObject, rel: string, walk: Walk): void {
  for (const key of ['apiVersion', 'kind']) {
    const field = fieldOf(walk, jsonvalues.childPath(rel, key));
    const item = value[key];
    if (item === undefined) walk.errors.push(fielderrors.required(field, 'must not be empty'));
    else if (typeof item !== 'string') walk.errors.push(fielderrors.invalid(field, item, 'must be a string'));
    else if (item === '') walk.errors.push(fielderrors.invalid(field, item, 'must not be empty'));
  }
  const meta = value.metadata;
  if (meta === undefined) return;
  const metaField = fieldOf(walk, jsonvalues.childPath(rel, 'metadata'));
  if (!json.isObject(meta)) {
    walk.errors.push(fielderrors.invalid(metaField, meta, 'must be an object'));
    return;
  }
  for (const key of ['labels', 'annotations']) {
    const map = meta[key];
    if (map === undefined || map === null) continue;
    if (!json.isObject(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      walk.errors.push(fielderrors.invalid(`${metaField}.${key}`, map, 'must be a map of string keys to string values'));
    }
  }
}

/** Succeeds when `value` passes `s` (used by anyOf/oneOf/not). */
function passes(value: unknown, s: schemas.JSONSchemaProps, rel: string, walk: Walk): boolean {
  const probe: Walk = { errors: [], base: walk.base };
  validateNode(value, s, rel, probe);
  return probe.errors.length === 0;
}

function checkCombinators(value: unknown, s: schemas.JSONSchemaProps, rel: string, walk: Walk): void {
  const field = fieldOf(walk, rel);
  const shown = jsonvalues.jsonTypeOf(value);
  for (const sub of s.allOf ?? []) validateNode(value, sub, rel, walk);
  if (s.anyOf && s.anyOf.length > 0 && !s.anyOf.some((sub) => passes(value, sub, rel, walk))) {
    walk.errors.push(fielderrors.invalid(field, shown, `${subject(rel)} must validate at least one schema (anyOf)`));
  }
  if (s.oneOf && s.oneOf.length > 0) {
    const valid = s.oneOf.filter((sub) => passes(value, sub, rel, walk)).length;
    if (valid !== 1) {
      const found = valid > 1 ? `. Found ${valid} valid alternatives` : '';
      walk.errors.push(fielderrors.invalid(field, shown, `${subject(rel)} must validate one and only one schema (oneOf)${found}`));
    }
  }
  if (s.not && passes(value, s.not, rel, walk)) {
    walk.errors.push(fielderrors.invalid(field, shown, `${subject(rel)} must not validate the schema (not)`));
  }
}
