/**
 * The vocabulary of Kubernetes structural schemas, as the generator's stages read them.
 *
 * A CRD's `openAPIV3Schema` arrives as plain JSON data (whatever the YAML parser produced), so
 * every stage needs the same small set of narrowing helpers: "is this a mapping", "what are this
 * node's properties", "is this node int-or-string". Keeping them here means validating.ts,
 * modeling.ts and the emitters agree on what a node means, and none of them reaches into raw
 * objects with ad-hoc casts.
 *
 * JSON paths are rendered the way the errors show them:
 * `spec.versions[0].schema.openAPIV3Schema.properties["rbd-mirror"]` — dotted identifiers,
 * `[i]` for list indices and `["…"]` for keys that are not identifiers.
 */

/** One schema node: a JSON mapping (never mutated by the generator). */
export type Schema = { readonly [key: string]: unknown };

/** The `type` values a structural schema may use. */
export const SCHEMA_TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean'] as const;
export type SchemaType = (typeof SCHEMA_TYPES)[number];

/** The value-validation combinators ("junctors") of OpenAPI v3. */
export const JUNCTORS = ['allOf', 'anyOf', 'oneOf', 'not'] as const;

/** Whether a value is a JSON mapping (not null, not an array). */
export function isRecord(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property of a node (never one inherited from `Object.prototype`). */
export function own(node: Schema, key: string): unknown {
  return Object.hasOwn(node, key) ? node[key] : undefined;
}

/** The node's `type` if it is one of the structural types, else `undefined`. */
export function typeOf(node: Schema): SchemaType | undefined {
  const type = own(node, 'type');
  return (SCHEMA_TYPES as readonly unknown[]).includes(type) ? (type as SchemaType) : undefined;
}

/** The node's `properties` as entries, in document order (empty when absent). */
export function propertiesOf(node: Schema): [string, Schema][] {
  const properties = own(node, 'properties');
  if (!isRecord(properties)) return [];
  return Object.entries(properties).filter((entry): entry is [string, Schema] => isRecord(entry[1]));
}

/** Whether the node declares at least one property. */
export function hasProperties(node: Schema): boolean {
  const properties = own(node, 'properties');
  return isRecord(properties) && Object.keys(properties).length > 0;
}

/** The node's `items` schema, if it is a single schema. */
export function itemsOf(node: Schema): Schema | undefined {
  const items = own(node, 'items');
  return isRecord(items) ? items : undefined;
}

/** The node's `additionalProperties` when it is a schema (not a boolean). */
export function additionalSchemaOf(node: Schema): Schema | undefined {
  const additional = own(node, 'additionalProperties');
  return isRecord(additional) ? additional : undefined;
}

/** The node's `required` list (strings only; empty when absent). */
export function requiredOf(node: Schema): string[] {
  const required = own(node, 'required');
  return Array.isArray(required) ? required.filter((name): name is string => typeof name === 'string') : [];
}

/** Whether a boolean flag (an extension such as `x-kubernetes-int-or-string`) is set to `true`. */
export function flag(node: Schema, key: string): boolean {
  return own(node, key) === true;
}

export const INT_OR_STRING = 'x-kubernetes-int-or-string';
export const PRESERVE_UNKNOWN_FIELDS = 'x-kubernetes-preserve-unknown-fields';
export const EMBEDDED_RESOURCE = 'x-kubernetes-embedded-resource';
export const VALIDATIONS = 'x-kubernetes-validations';
export const LIST_TYPE = 'x-kubernetes-list-type';
export const LIST_MAP_KEYS = 'x-kubernetes-list-map-keys';
export const MAP_TYPE = 'x-kubernetes-map-type';

/**
 * Whether the node has a `default` value. `default: null` is no default: the API server drops it
 * when it reads the CRD, so such a field is never filled in.
 */
export function hasDefault(node: Schema): boolean {
  return Object.hasOwn(node, 'default') && node['default'] !== undefined && node['default'] !== null;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Appends a key or an index to a rendered JSON path. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (IDENTIFIER.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

/** Renders a list of keys and indices as a JSON path. */
export function renderPath(segments: readonly (string | number)[]): string {
  return segments.reduce<string>((path, segment) => childPath(path, segment), '');
}
