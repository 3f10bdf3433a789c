/**
 * Defaulting of custom objects from `default` values in a structural schema (D-CRD-10).
 *
 * Applied to request bodies after pruning (`pruning`), again after mutating admission, and to
 * objects read from storage with the storage version's schema, so a default added to a CRD shows
 * up in reads of existing objects without a write. The algorithm is upstream's: walk top-down;
 * for each object node, every declared property with a default that is missing (or `null` while
 * not nullable) gets a deep copy of the default; then recurse into the present children, including
 * the ones just inserted (a default of `{}` for `spec` thereby enables the defaults below `spec`).
 * Under `additionalProperties` and array `items` only `null` values are replaced. Nothing is
 * inserted inside nodes that are absent.
 */

import * as schemas from './schemas.js';
import * as json from '../json.js';

/**
 * Returns a defaulted copy of `obj`; the input is not modified.
 *
 * @example
 * applyDefaults({ spec: { size: 1 } }, widgetSchema) // → { spec: { size: 1, color: 'blue' } }
 */
export function applyDefaults(obj: unknown, schema: schemas.JSONSchemaProps | undefined): unknown {
  const copy = json.deepCopy(obj);
  defaultInPlace(copy, schema);
  return copy;
}

/** True for a `null` whose schema is not nullable but has a default to replace it with. */
function isNonNullableNull(value: unknown, s: schemas.JSONSchemaProps | undefined): s is schemas.JSONSchemaProps {
  return value === null && s !== undefined && s.nullable !== true && schemas.hasDefault(s);
}

function defaultInPlace(x: unknown, s: schemas.JSONSchemaProps | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], s.items)) x[i] = json.deepCopy(s.items.default);
      defaultInPlace(x[i], s.items);
    }
    return;
  }
  if (!json.isObject(x)) return;
  for (const [key, prop] of Object.entries(s.properties ?? {})) {
    if (!schemas.hasDefault(prop)) continue;
    if (!Object.hasOwn(x, key) || isNonNullableNull(x[key], prop)) {
      json.setMember(x, key, json.deepCopy(prop.default));
    }
  }
  const additional = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  for (const key of Object.keys(x)) {
    const declared = s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    if (declared) {
      defaultInPlace(x[key], declared);
    } else if (additional) {
      if (isNonNullableNull(x[key], additional)) json.setMember(x, key, json.deepCopy(additional.default));
      defaultInPlace(x[key], additional);
    }
  }
}
