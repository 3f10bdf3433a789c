/**
 * The slice of an OpenAPI v3 structural schema that CEL validation needs, and how JSON values under
 * such a schema look to CEL.
 *
 * The CEL validator deliberately does not depend on the full `JSONSchemaProps` type of the schema
 * modules: any schema object with these optional fields is accepted. Values are converted once per
 * evaluation: JSON numbers that are integers become CEL ints (bigint) unless the schema says
 * `type: number` (CEL double), declared property names are escaped the way upstream exposes them
 * to CEL (`namespace` → `__namespace__`, `a-b` → `a__dash__b`; map keys stay as they are), objects
 * and arrays are copied, everything else passes through.
 */
import * as json from '../json.js';

/** One entry of `x-kubernetes-validations`. Fields are loosely typed: CRDs arrive as untrusted JSON. */
export interface CelValidationRule {
  readonly rule?: unknown;
  readonly message?: unknown;
  readonly messageExpression?: unknown;
  readonly reason?: unknown;
  readonly fieldPath?: unknown;
  readonly optionalOldSelf?: unknown;
}

/** The schema fields the CEL validator reads; everything else is ignored. */
export interface CelSchemaNode {
  readonly type?: string;
  readonly properties?: { readonly [name: string]: CelSchemaNode };
  readonly items?: CelSchemaNode | readonly CelSchemaNode[];
  readonly additionalProperties?: CelSchemaNode | boolean;
  readonly allOf?: readonly CelSchemaNode[];
  readonly 'x-kubernetes-validations'?: readonly CelValidationRule[];
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
}

const isNode = (value: unknown): value is CelSchemaNode => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The schema of property `name`, if declared. */
export function propertySchema(schema: CelSchemaNode | undefined, name: string): CelSchemaNode | undefined {
  const properties = schema?.properties;
  if (!isNode(properties) || !Object.hasOwn(properties, name)) return undefined;
  const child = properties[name];
  return isNode(child) ? child : undefined;
}

/** The schema of list items (single-schema form only, as structural schemas require). */
export function itemsSchema(schema: CelSchemaNode | undefined): CelSchemaNode | undefined {
  return isNode(schema?.items) ? schema.items : undefined;
}

/** The schema of map values under `additionalProperties` (`true` and `false` give none). */
export function additionalSchema(schema: CelSchemaNode | undefined): CelSchemaNode | undefined {
  return isNode(schema?.additionalProperties) ? schema.additionalProperties : undefined;
}

/** The schema for the value stored under `key` of an object: a declared property, else the map value schema. */
export function memberSchema(schema: CelSchemaNode | undefined, key: string): CelSchemaNode | undefined {
  return propertySchema(schema, key) ?? additionalSchema(schema);
}

/** The keys of a list-type=map list, or undefined for atomic and set lists. */
export function listMapKeys(schema: CelSchemaNode | undefined): readonly string[] | undefined {
  if (schema?.['x-kubernetes-list-type'] !== 'map') return undefined;
  const keys = schema['x-kubernetes-list-map-keys'];
  return Array.isArray(keys) && keys.every((k) => typeof k === 'string') ? keys : [];
}

/**
 * The type name upstream shows as the value of a failed rule (`Invalid value: "object"`): the schema's
 * `type`, or the empty string for int-or-string and untyped nodes, as upstream does.
 */
export function typeName(schema: CelSchemaNode | undefined): string {
  return typeof schema?.type === 'string' ? schema.type : '';
}

/** CEL keywords that upstream escapes as `__<word>__` when used as property names. */
const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** The name under which a declared property is visible to CEL (`self.__namespace__`, `self.a__dot__b`). */
export function escapePropertyName(name: string): string {
  if (RESERVED.has(name)) return `__${name}__`;
  return name.replace(/__/g, '__underscores__').replace(/\./g, '__dot__').replace(/-/g, '__dash__').replace(/\//g, '__slash__');
}

/**
 * Converts a JSON value under `schema` to the value CEL sees. Never mutates `value`.
 *
 * Integers (within int64) become bigint except under `type: number`; other numbers stay doubles.
 * Declared property names are escaped (see `escapePropertyName`); keys such as `__proto__` stay data.
 */
export function toCelValue(value: unknown, schema: CelSchemaNode | undefined): unknown {
  if (typeof value === 'number') {
    return schema?.type !== 'number' && Number.isInteger(value) && Math.abs(value) < 2 ** 63 ? BigInt(value) : value;
  }
  if (Array.isArray(value)) {
    const items = itemsSchema(schema);
    return value.map((item) => toCelValue(item, items));
  }
  if (json.isObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => {
        const declared = propertySchema(schema, key);
        return [declared ? escapePropertyName(key) : key, toCelValue(item, declared ?? additionalSchema(schema))];
      }),
    );
  }
  return value;
}
