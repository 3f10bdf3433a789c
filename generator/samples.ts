/**
 * Samples: a small object that a CRD's schema accepts, for the generated tests and the README.
 *
 * The generated test of a kind creates one object and waits for the create handler's effect, so
 * the object must pass the API server's validation: every required field present, enums, bounds
 * and lengths respected. This module builds such a value from the schema, filling only required
 * fields (fields with defaults are left to the API server). It is a best effort — patterns, formats
 * beyond `date-time` and CEL rules are not solved — and the generated test says where to adjust it.
 */
import * as schemas from './schemas.js';

const MAX_DEPTH = 32;

/** A sample value for a schema node. */
export function sampleValue(node: schemas.Schema, depth = 0): unknown {
  const enumeration = schemas.own(node, 'enum');
  if (Array.isArray(enumeration) && enumeration.length > 0) return enumeration.find((value) => value !== null) ?? enumeration[0];
  if (schemas.flag(node, schemas.INT_OR_STRING)) return 1;
  switch (schemas.typeOf(node)) {
    case 'string':
      return sampleString(node);
    case 'integer':
      return sampleNumber(node, true);
    case 'number':
      return sampleNumber(node, false);
    case 'boolean':
      return false;
    case 'array': {
      const items = schemas.itemsOf(node);
      const count = numberOf(node, 'minItems') ?? 0;
      if (!items || count === 0 || depth > MAX_DEPTH) return [];
      return Array.from({ length: count }, (_, index) => distinct(sampleValue(items, depth + 1), index));
    }
    case 'object':
      return sampleObject(node, depth);
    default:
      return {};
  }
}

/** A sample object for an object node: its required properties, sampled (defaults left out). */
export function sampleObject(node: schemas.Schema, depth = 0): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  if (depth > MAX_DEPTH) return result;
  const required = new Set(schemas.requiredOf(node));
  for (const [name, child] of schemas.propertiesOf(node)) {
    if (!required.has(name) || schemas.hasDefault(child)) continue;
    Object.defineProperty(result, name, { value: sampleValue(child, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  const additional = schemas.additionalSchemaOf(node);
  const minimum = numberOf(node, 'minProperties') ?? 0;
  for (let index = Object.keys(result).length; index < minimum; index += 1) {
    result[`key${index}`] = additional ? sampleValue(additional, depth + 1) : 'value';
  }
  return result;
}

function sampleString(node: schemas.Schema): string {
  const format = schemas.own(node, 'format');
  if (format === 'date-time') return '2024-01-01T00:00:00Z';
  if (format === 'date') return '2024-01-01';
  if (format === 'duration') return '1m';
  if (format === 'byte') return 'ZXhhbXBsZQ==';
  const minimum = numberOf(node, 'minLength') ?? 0;
  const maximum = numberOf(node, 'maxLength') ?? Number.POSITIVE_INFINITY;
  let text = 'example';
  while (text.length < minimum) text += 'x';
  return text.slice(0, Math.max(minimum, Math.min(text.length, maximum)));
}

function sampleNumber(node: schemas.Schema, integer: boolean): number {
  const minimum = numberOf(node, 'minimum');
  const maximum = numberOf(node, 'maximum');
  let value = 1;
  if (minimum !== undefined) value = schemas.own(node, 'exclusiveMinimum') === true ? minimum + 1 : Math.max(minimum, value);
  if (maximum !== undefined && value > maximum) value = schemas.own(node, 'exclusiveMaximum') === true ? maximum - 1 : maximum;
  return integer ? Math.ceil(value) : value;
}

function numberOf(node: schemas.Schema, key: string): number | undefined {
  const value = schemas.own(node, key);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Makes list items differ where that is cheap (list-type: set rejects duplicates). */
function distinct(value: unknown, index: number): unknown {
  if (index === 0) return value;
  if (typeof value === 'string') return `${value}${index}`;
  if (typeof value === 'number') return value + index;
  return value;
}
