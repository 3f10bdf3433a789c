/**
 * Structural-schema rules for CRD version schemas (D-CRD-6).
 *
 * A CRD is only accepted when each version's `openAPIV3Schema` is *structural*: every field has a
 * type outside of the logic junctors (`allOf`, `anyOf`, `oneOf`, `not`), `properties` and
 * `additionalProperties` do not mix, root `metadata` constrains at most `name` and `generateName`,
 * and so on. Pruning, defaulting and validation of custom objects (`pruning`, `defaulting`,
 * `validation`) rely on these invariants. This module also applies upstream's other per-node
 * schema checks (unsupported keywords, `x-kubernetes-*` extension consistency, valid `pattern`
 * regular expressions, list-type rules) and checks every `default`: it must validate against its
 * own schema and survive pruning unchanged, and it may not sit inside the root `metadata`.
 *
 * Field paths are rendered the way upstream renders them: `properties[name]` for property steps,
 * e.g. `spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type`.
 * `x-kubernetes-validations` are accepted; only their shape is checked here (CEL compilation is
 * done elsewhere and never rejects a CRD), plus the one compile-time failure the emulator can be
 * sure upstream has too: a literal regular expression Go rejects.
 */

import * as fielderrors from '../meta/fielderrors.js';
import * as celcompiling from './cel-compiling.js';
import * as junctors from './junctors.js';
import * as patterns from './patterns.js';
import * as pruning from './pruning.js';
import type * as schemas from './schemas.js';
import * as validation from './validation.js';
import * as json from '../json.js';

type Level = 'root' | 'item' | 'field';

/** The types a structural schema may name (upstream's supported values, in its order). */
const SCHEMA_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

interface Place {
  /** Below the root `metadata`, where defaults are forbidden. */
  readonly insideRootMeta: boolean;
}

const RULE_REASONS = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'];
const UNSUPPORTED_KEYWORDS: readonly [string, string][] = [
  ['id', 'id is not supported'],
  ['additionalItems', 'additionalItems is not supported'],
  ['patternProperties', 'patternProperties is not supported'],
  ['definitions', 'definitions is not supported'],
  ['dependencies', 'dependencies is not supported'],
  ['$ref', '$ref is not supported'],
  ['$schema', '$schema is not supported'],
];

const prop = (path: string, name: string): string => `${path}.properties[${name}]`;
const sub = (path: string, key: string): string => `${path}.${key}`;

/**
 * Checks a version's `openAPIV3Schema` located at `path` (e.g.
 * `spec.versions[0].schema.openAPIV3Schema`) and returns every violation.
 */
export function validateStructuralSchema(schema: unknown, path: string): fielderrors.FieldError[] {
  const errors: fielderrors.FieldError[] = [];
  checkNode(schema, path, 'root', { insideRootMeta: false }, errors);
  return errors;
}

function checkNode(node: unknown, path: string, level: Level, place: Place, errors: fielderrors.FieldError[]): void {
  if (!json.isObject(node)) {
    errors.push(fielderrors.invalid(path, node, 'must be a schema object'));
    return;
  }
  const s = node as schemas.JSONSchemaProps & json.JsonObject;
  const type = typeof s.type === 'string' ? s.type : '';
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'];
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const properties = json.isObject(s.properties) ? (s.properties as Record<string, unknown>) : undefined;
  const hasProperties = properties !== undefined && Object.keys(properties).length > 0;

  checkKeywords(s, path, errors);

  // type
  if (embedded && type !== 'object') {
    if (!type) errors.push(fielderrors.required(sub(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else errors.push(fielderrors.invalid(sub(path, 'type'), type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!type && !intOrString && preserve !== true) {
    const detail =
      level === 'root'
        ? 'must not be empty at the root'
        : level === 'item'
          ? 'must not be empty for specified array items'
          : 'must not be empty for specified object fields';
    errors.push(fielderrors.required(sub(path, 'type'), detail));
  }
  if (type && type !== 'null' && !SCHEMA_TYPES.includes(type)) errors.push(fielderrors.notSupported(sub(path, 'type'), type, SCHEMA_TYPES));
  if (level === 'root' && type && type !== 'object') errors.push(fielderrors.invalid(sub(path, 'type'), type, 'must be object at the root'));
  if (intOrString && type) errors.push(fielderrors.invalid(sub(path, 'type'), type, 'must be empty if x-kubernetes-int-or-string is true'));
  if (type === 'array' && s.items === undefined) errors.push(fielderrors.required(sub(path, 'items'), 'must be specified'));

  // additionalProperties
  if (s.additionalProperties !== undefined) {
    if (s.additionalProperties === false) errors.push(fielderrors.forbidden(sub(path, 'additionalProperties'), 'additionalProperties cannot be set to false'));
    else if (hasProperties && s.additionalProperties !== true) {
      errors.push(fielderrors.forbidden(sub(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    }
    if (level === 'root') errors.push(fielderrors.forbidden(sub(path, 'additionalProperties'), 'must not be used at the root'));
    if (embedded) errors.push(fielderrors.forbidden(sub(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  }

  // extensions
  if (preserve !== undefined && preserve !== true) {
    errors.push(fielderrors.invalid(sub(path, 'x-kubernetes-preserve-unknown-fields'), preserve, 'must be true or undefined'));
  }
  if (intOrString && preserve === true) {
    errors.push(fielderrors.invalid(sub(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  if (intOrString && embedded)
    errors.push(fielderrors.invalid(sub(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (embedded && preserve !== true && !hasProperties) {
    errors.push(
      fielderrors.required(sub(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'),
    );
  }
  checkListExtensions(s, path, type, errors);
  checkValidationRules(s['x-kubernetes-validations'], path, errors);

  // apiVersion, kind and metadata at a resource root (the root or an embedded resource)
  if (properties && (level === 'root' || embedded)) checkResourceFields(properties, path, level, errors);

  // value validations under the logic junctors
  errors.push(...junctors.validateJunctors(s, path));

  if (typeof s.pattern === 'string') checkPattern(s.pattern, path, errors);
  checkDefault(s, path, place, errors);

  // children
  if (properties) {
    for (const [name, child] of Object.entries(properties)) {
      const insideRootMeta = place.insideRootMeta || (level === 'root' && name === 'metadata');
      checkNode(child, prop(path, name), 'field', { insideRootMeta }, errors);
    }
  } else if (s.properties !== undefined) {
    errors.push(fielderrors.invalid(sub(path, 'properties'), s.properties, 'must be a map of schemas'));
  }
  if (Array.isArray(s.items)) {
    errors.push(fielderrors.forbidden(sub(path, 'items'), 'items must be a schema object and not an array'));
  } else if (s.items !== undefined) {
    checkNode(s.items, sub(path, 'items'), 'item', { insideRootMeta: place.insideRootMeta }, errors);
  }
  if (json.isObject(s.additionalProperties)) {
    checkNode(s.additionalProperties, sub(path, 'additionalProperties'), 'field', { insideRootMeta: place.insideRootMeta }, errors);
  }
}

/** Keywords upstream rejects in CRD schemas. */
function checkKeywords(s: json.JsonObject, path: string, errors: fielderrors.FieldError[]): void {
  for (const [keyword, detail] of UNSUPPORTED_KEYWORDS) {
    if (s[keyword] !== undefined) errors.push(fielderrors.forbidden(sub(path, keyword), detail));
  }
  if (s.type === 'null') errors.push(fielderrors.forbidden(sub(path, 'type'), 'type cannot be set to null'));
  if (s.uniqueItems === true) {
    errors.push(fielderrors.forbidden(sub(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  }
}

function checkResourceFields(properties: Record<string, unknown>, path: string, level: Level, errors: fielderrors.FieldError[]): void {
  for (const name of ['kind', 'apiVersion']) {
    const field = properties[name];
    if (json.isObject(field) && field.type !== 'string') {
      errors.push(fielderrors.invalid(`${prop(path, name)}.type`, field.type ?? '', 'must be string'));
    }
  }
  const metadata = properties.metadata;
  if (!json.isObject(metadata)) return;
  if (metadata.type !== 'object') errors.push(fielderrors.invalid(`${prop(path, 'metadata')}.type`, metadata.type ?? '', 'must be object'));
  if (level !== 'root') return;
  const allowed = new Set(['type', 'properties', 'default']);
  const metaProps = json.isObject(metadata.properties) ? Object.keys(metadata.properties) : [];
  const onlyNames = metaProps.every((name) => name === 'name' || name === 'generateName');
  const otherKeys = Object.keys(metadata).some((key) => !allowed.has(key) && metadata[key] !== undefined);
  if (!onlyNames || otherKeys) {
    errors.push(
      fielderrors.forbidden(prop(path, 'metadata'), 'must not specify anything other than name and generateName, but metadata is implicitly specified'),
    );
  }
}

function checkListExtensions(s: schemas.JSONSchemaProps, path: string, type: string, errors: fielderrors.FieldError[]): void {
  const listType = s['x-kubernetes-list-type'];
  const mapKeys = s['x-kubernetes-list-map-keys'];
  const items = json.isObject(s.items) ? (s.items as schemas.JSONSchemaProps) : undefined;
  if (listType !== undefined) {
    if (!['atomic', 'set', 'map'].includes(listType)) {
      errors.push(fielderrors.notSupported(sub(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
    } else if (type !== 'array') {
      errors.push(fielderrors.invalid(sub(path, 'x-kubernetes-list-type'), listType, 'must only be used if type is array'));
    }
  }
  if (listType === 'map') {
    if (!Array.isArray(mapKeys) || mapKeys.length === 0) {
      errors.push(fielderrors.required(sub(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    }
    if (items && items.type !== 'object') {
      errors.push(fielderrors.invalid(sub(path, 'items.type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    }
    if (items && Array.isArray(mapKeys)) checkMapKeys(items, mapKeys, path, errors);
  } else if (mapKeys !== undefined && (!Array.isArray(mapKeys) || mapKeys.length > 0)) {
    errors.push(fielderrors.forbidden(sub(path, 'x-kubernetes-list-map-keys'), 'must be empty if x-kubernetes-list-type is not map'));
  }
  if (listType === 'set' && items) {
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      errors.push(
        fielderrors.invalid(
          sub(path, 'items.x-kubernetes-map-type'),
          items['x-kubernetes-map-type'] ?? '',
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    }
    if (items.type === 'array' && (items['x-kubernetes-list-type'] ?? 'atomic') !== 'atomic') {
      errors.push(
        fielderrors.invalid(
          sub(path, 'items.x-kubernetes-list-type'),
          items['x-kubernetes-list-type'],
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    }
  }
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (mapType !== 'atomic' && mapType !== 'granular') {
      errors.push(fielderrors.notSupported(sub(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
    } else if (type !== 'object') {
      errors.push(fielderrors.invalid(sub(path, 'x-kubernetes-map-type'), mapType, 'must only be used if type is object'));
    }
  }
}

function checkMapKeys(items: schemas.JSONSchemaProps, keys: readonly unknown[], path: string, errors: fielderrors.FieldError[]): void {
  const itemProps = items.properties ?? {};
  const required = new Set(items.required ?? []);
  for (const key of keys) {
    const keySchema = typeof key === 'string' && Object.hasOwn(itemProps, key) ? itemProps[key] : undefined;
    if (typeof key !== 'string' || !keySchema) {
      errors.push(fielderrors.invalid(sub(path, 'x-kubernetes-list-map-keys'), keys, 'entries must all be names of item properties'));
      return;
    }
    if (keySchema.type === 'array' || keySchema.type === 'object') {
      errors.push(
        fielderrors.invalid(`${prop(sub(path, 'items'), key)}.type`, keySchema.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"),
      );
    }
    if (!required.has(key) && keySchema.default === undefined) {
      errors.push(
        fielderrors.required(
          `${prop(sub(path, 'items'), key)}.default`,
          'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
        ),
      );
    }
  }
}

/**
 * `x-kubernetes-validations` are accepted unless malformed, or unless upstream is sure to refuse a
 * rule when it builds its program (a literal regular expression Go rejects; the value shown is the
 * rule object, which upstream prints in Go syntax).
 */
function checkValidationRules(rules: unknown, path: string, errors: fielderrors.FieldError[]): void {
  if (rules === undefined) return;
  const rulesPath = sub(path, 'x-kubernetes-validations');
  if (!Array.isArray(rules)) {
    errors.push(fielderrors.invalid(rulesPath, rules, 'must be a list of validation rules'));
    return;
  }
  rules.forEach((rule, i) => {
    const rulePath = `${rulesPath}[${i}]`;
    if (!json.isObject(rule)) {
      errors.push(fielderrors.invalid(rulePath, rule, 'must be a validation rule object'));
      return;
    }
    if (typeof rule.rule !== 'string' || rule.rule.trim() === '') errors.push(fielderrors.required(`${rulePath}.rule`));
    else {
      const refused = celcompiling.refusedRule(rule.rule);
      if (refused !== undefined) errors.push(fielderrors.invalid(`${rulePath}.rule`, rule, refused));
    }
    if (rule.reason !== undefined && !RULE_REASONS.includes(String(rule.reason))) {
      errors.push(fielderrors.notSupported(`${rulePath}.reason`, rule.reason, RULE_REASONS));
    }
  });
}

/** Reports a `pattern` that does not compile or uses constructs RE2 lacks. */
function checkPattern(pattern: string, path: string, errors: fielderrors.FieldError[]): void {
  const compiled = patterns.compilePattern(pattern);
  if (!compiled.ok) {
    errors.push(fielderrors.invalid(sub(path, 'pattern'), pattern, `must be a valid regular expression, but isn't: ${compiled.reason}`));
  }
}

/** Defaults: not inside the root metadata; valid against their schema; unchanged by pruning. */
function checkDefault(s: schemas.JSONSchemaProps, path: string, place: Place, errors: fielderrors.FieldError[]): void {
  if (s.default === undefined || s.default === null) return;
  const defaultPath = sub(path, 'default');
  if (place.insideRootMeta) {
    errors.push(fielderrors.forbidden(defaultPath, 'must not be set inside metadata'));
    return;
  }
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const pruned = pruning.pruneObject(s.default, s, { root: embedded });
  if (pruned.unknownFields.length > 0) {
    errors.push(fielderrors.invalid(defaultPath, s.default, 'must not have unknown fields'));
    return;
  }
  errors.push(...validation.validateCustomObject(s.default, s, { root: false, basePath: defaultPath }));
}
