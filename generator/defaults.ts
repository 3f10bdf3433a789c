/**
 * Default values checked against their own schema, as the API server checks them when it accepts a
 * CRD.
 *
 * The server validates every `default` against the schema of the node that declares it and
 * refuses a default with fields the schema does not know (it would prune them, and a default must
 * already be pruned). The generator types defaulted fields as always present in what the server
 * returns, so a default the server refuses must stop generation instead of becoming a type.
 *
 * Only what is cheap and certain is checked: the JSON type (with `nullable`, int-or-string and
 * preserve-unknown-fields), `enum`, the `required` fields of nested objects, unknown fields, and
 * the same again for every nested property, list item and map value of the default. Formats,
 * patterns, bounds, combinators and CEL rules are left to the server. A `default: null` is no
 * default at all (the server drops it when it reads the CRD), so it is not checked here either.
 */
import * as json from './json.js';
import * as schemas from './schemas.js';

/** What is wrong with a default value, and where (the rendered JSON path inside the default). */
export interface DefaultProblem {
  readonly path: string;
  readonly detail: string;
}

/** Embedded resources keep these fields even when their schema does not declare them. */
const RESOURCE_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * The first problem of a value (a default, or a part of one) against a schema node, or `undefined`
 * when the API server would accept it. `path` is where the value sits (e.g. `….default`).
 */
export function valueProblem(value: unknown, node: schemas.Schema, path: string): DefaultProblem | undefined {
  if (value === null) {
    return schemas.own(node, 'nullable') === true ? undefined : { path, detail: 'is null, but the field is not nullable' };
  }
  const typeProblem = typeMismatch(value, node);
  if (typeProblem !== undefined) return { path, detail: typeProblem };
  const enumeration = schemas.own(node, 'enum');
  if (Array.isArray(enumeration) && !enumeration.some((allowed) => json.sameJson(allowed, value))) {
    return { path, detail: `${JSON.stringify(value)} is not one of the enum values ${enumeration.map((allowed) => JSON.stringify(allowed)).join(', ')}` };
  }
  if (Array.isArray(value)) {
    const items = schemas.itemsOf(node);
    if (items === undefined) return undefined;
    for (const [index, item] of value.entries()) {
      const problem = valueProblem(item, items, schemas.childPath(path, index));
      if (problem) return problem;
    }
    return undefined;
  }
  if (schemas.isRecord(value)) return objectProblem(value, node, path);
  return undefined;
}

/** Why a value does not have the node's JSON type, or `undefined` when it does. */
export function typeMismatch(value: unknown, node: schemas.Schema): string | undefined {
  if (schemas.flag(node, schemas.INT_OR_STRING)) {
    return Number.isInteger(value) || typeof value === 'string' ? undefined : `must be an integer or a string, not ${describe(value)}`;
  }
  const type = schemas.typeOf(node);
  if (type === undefined || hasType(value, type)) return undefined;
  return `must be of type ${type}, not ${describe(value)}`;
}

function objectProblem(value: schemas.Schema, node: schemas.Schema, path: string): DefaultProblem | undefined {
  for (const name of schemas.requiredOf(node)) {
    if (!Object.hasOwn(value, name)) return { path, detail: `misses the required field ${JSON.stringify(name)}` };
  }
  const properties = new Map(schemas.propertiesOf(node));
  const additional = schemas.own(node, 'additionalProperties');
  const open = additional === true || schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS);
  const embedded = schemas.flag(node, schemas.EMBEDDED_RESOURCE);
  for (const [key, child] of Object.entries(value)) {
    const childPath = schemas.childPath(path, key);
    const schema = properties.get(key) ?? (schemas.isRecord(additional) ? additional : undefined);
    if (schema !== undefined) {
      const problem = valueProblem(child, schema, childPath);
      if (problem) return problem;
    } else if (!open && !(embedded && RESOURCE_FIELDS.has(key))) {
      return { path: childPath, detail: 'is not in the schema: the API server would prune it, and defaults must not hold unknown fields' };
    }
  }
  return undefined;
}

function hasType(value: unknown, type: schemas.SchemaType): boolean {
  switch (type) {
    case 'object':
      return schemas.isRecord(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
  }
}

/** The JSON type of a value, for messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (schemas.isRecord(value)) return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${JSON.stringify(value)}`;
}
