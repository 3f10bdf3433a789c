/**
 * Small helpers for plain JSON values, shared by the CRD schema modules.
 *
 * Pruning, defaulting and validation all walk decoded request bodies (`unknown` trees of objects,
 * arrays and scalars). Beside the narrowing and the equality of `../json.ts` (enum, uniqueItems,
 * pruning stability of defaults; the modules never mutate their inputs, they copy with
 * `json.deepCopy`) they need the JSON type name of a value as upstream prints it in messages, and
 * the field paths of those messages.
 */

/** The JSON type name used in validation messages: `null`, `boolean`, `integer`, `number`, `string`, `array`, `object`. */
export function jsonTypeOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** Joins a dotted field path and a property name (`spec` + `size` → `spec.size`). */
export function childPath(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

/** Appends a list index to a field path (`spec.tags` + 0 → `spec.tags[0]`). */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
