/**
 * The `fieldPath` of a validation rule: a relative JSON path (`.spec.host`, `.labels['app.kz/x']`)
 * that says where a failure is reported instead of the node carrying the rule.
 *
 * Parsed once at compile time against the node's schema, as upstream validates it on CRD writes:
 * `.name` and `['name']` select a declared property, or a map key when the schema only has
 * `additionalProperties`; list indices are not allowed. The result is a list of segments that
 * `cel.ts` appends to the node's field path with the usual `a.b` / `a[key]` rendering.
 */
import * as celschemas from './cel-schemas.js';

/** One step of a field path: a property (`.name`) or a map key (`[name]`). */
export interface PathSegment {
  readonly name: string;
  readonly asMapKey: boolean;
}

/** A fieldPath that does not parse or does not refer to a field of the schema. */
export class FieldPathError extends Error {
  readonly code = 'InvalidFieldPath' as const;
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };

function unquote(quoted: string): string {
  return quoted.replace(/\\(.)/g, (_all, c: string) => {
    const replacement = ESCAPES[c];
    if (replacement === undefined) throw new FieldPathError(`invalid escape char \\${c}`);
    return replacement;
  });
}

/** Splits a path into tokens: `.`, `[`, `]`, single-quoted strings and bare names. */
function tokenize(path: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i]!;
    if (c === '.' || c === '[' || c === ']') {
      tokens.push(c);
      i++;
    } else if (c === "'") {
      let end = i + 1;
      while (end < path.length && !(path[end] === "'" && path[end - 1] !== '\\')) end++;
      if (end >= path.length) throw new FieldPathError('unterminated string literal');
      tokens.push(path.slice(i, end + 1));
      i = end + 1;
    } else {
      let end = i;
      while (end < path.length && !'.[]'.includes(path[end]!)) end++;
      tokens.push(path.slice(i, end));
      i = end;
    }
  }
  return tokens;
}

/**
 * Resolves `fieldPath` against `schema` (the schema of the node carrying the rule).
 *
 * @throws FieldPathError when the path is malformed or names no declared field.
 */
export function parseFieldPath(fieldPath: string, schema: celschemas.CelSchemaNode): PathSegment[] {
  const tokens = tokenize(fieldPath);
  const segments: PathSegment[] = [];
  let current: celschemas.CelSchemaNode | undefined = schema;
  const step = (name: string): void => {
    if (current?.properties && typeof current.properties === 'object') {
      const next = celschemas.propertySchema(current, name);
      if (!next) throw new FieldPathError(`does not refer to a valid field: ${name}`);
      segments.push({ name, asMapKey: false });
      current = next;
    } else if (celschemas.additionalSchema(current)) {
      segments.push({ name, asMapKey: true });
      current = celschemas.additionalSchema(current);
    } else {
      throw new FieldPathError(`does not refer to a valid field: ${name}`);
    }
  };
  if (tokens.length === 0) throw new FieldPathError('empty field path');
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '.') {
      const name = tokens[++i];
      if (name === undefined || '.[]'.includes(name)) throw new FieldPathError('unexpected end of JSON path');
      step(name);
    } else if (token === '[') {
      const quoted = tokens[++i];
      if (quoted === undefined || quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'")) {
        throw new FieldPathError(`expected single quoted string but got ${quoted ?? 'end of path'}`);
      }
      step(unquote(quoted.slice(1, -1)));
      if (tokens[++i] !== ']') throw new FieldPathError(`expected ] but got ${tokens[i] ?? 'end of path'}`);
    } else {
      throw new FieldPathError(`expected [ or . but got: ${token}`);
    }
  }
  return segments;
}
