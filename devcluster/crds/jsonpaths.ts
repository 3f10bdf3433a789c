/**
 * The small JSONPath dialect of CRD printer columns and scale subresource paths.
 *
 * CRDs point at fields with kubectl-style JSONPath expressions such as `.spec.replicas`,
 * `.spec.containers[0].image` or `.status.conditions[?(@.type=="Ready")].status`. The devcluster
 * evaluates the useful subset: field steps (`.name`, `['name']`), indices (`[0]`, `[-1]`), wildcards
 * (`[*]`, `.*`) and equality filters on a sub-path (`[?(@.a.b=="x")]`, `!=`, or bare existence).
 * Expressions outside this subset evaluate to no results rather than failing, so an exotic column
 * shows an empty cell instead of breaking a Table response.
 */

import * as json from '../json.js';

/** One parsed step of an expression. */
export type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'wildcard' }
  | { kind: 'filter'; path: string[]; op: '==' | '!=' | 'exists'; value?: unknown };

const parsed = new Map<string, Step[] | undefined>();

/** Parses an expression into steps, or `undefined` when it is outside the supported subset. */
export function parseJsonPath(expression: string): Step[] | undefined {
  if (parsed.has(expression)) return parsed.get(expression);
  let steps: Step[] | undefined;
  try {
    steps = parse(expression);
  } catch {
    steps = undefined;
  }
  if (parsed.size > 1000) parsed.clear();
  parsed.set(expression, steps);
  return steps;
}

/**
 * Evaluates `expression` against `value` and returns every match (empty when nothing matches or
 * the expression is unsupported).
 *
 * @example
 * evaluateJsonPath({ spec: { size: 3 } }, '.spec.size') // → [3]
 */
export function evaluateJsonPath(value: unknown, expression: string): unknown[] {
  const steps = parseJsonPath(expression);
  if (!steps) return [];
  let current: unknown[] = [value];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const node of current) apply(step, node, next);
    current = next;
  }
  return current;
}

function apply(step: Step, node: unknown, out: unknown[]): void {
  switch (step.kind) {
    case 'field':
      if (json.isObject(node) && Object.hasOwn(node, step.name)) out.push(node[step.name]);
      return;
    case 'index':
      if (Array.isArray(node)) {
        const i = step.index < 0 ? node.length + step.index : step.index;
        if (i >= 0 && i < node.length) out.push(node[i]);
      }
      return;
    case 'wildcard':
      if (Array.isArray(node)) out.push(...node);
      else if (json.isObject(node)) out.push(...Object.values(node));
      return;
    case 'filter': {
      const items = Array.isArray(node) ? node : json.isObject(node) ? Object.values(node) : [];
      for (const item of items) {
        const found = lookup(item, step.path);
        const keep =
          step.op === 'exists'
            ? found.ok
            : step.op === '=='
              ? found.ok && json.deepEqual(found.value, step.value)
              : !found.ok || !json.deepEqual(found.value, step.value);
        if (keep) out.push(item);
      }
      return;
    }
  }
}

function lookup(node: unknown, path: readonly string[]): { ok: boolean; value?: unknown } {
  let current = node;
  for (const name of path) {
    if (!json.isObject(current) || !Object.hasOwn(current, name)) return { ok: false };
    current = current[name];
  }
  return { ok: true, value: current };
}

function parse(input: string): Step[] | undefined {
  let text = input.trim();
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1).trim();
  if (text.startsWith('$')) text = text.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '.') {
      if (text[i + 1] === '.') return undefined; // recursive descent is not supported
      let j = i + 1;
      while (j < text.length && text[j] !== '.' && text[j] !== '[') j++;
      const name = text.slice(i + 1, j);
      if (name === '*') steps.push({ kind: 'wildcard' });
      else if (name) steps.push({ kind: 'field', name });
      else if (j < text.length && text[j] !== '[') return undefined;
      i = j;
    } else if (ch === '[') {
      const close = findClose(text, i);
      if (close < 0) return undefined;
      const inner = text.slice(i + 1, close).trim();
      const step = parseBracket(inner);
      if (!step) return undefined;
      steps.push(step);
      i = close + 1;
    } else {
      return undefined;
    }
  }
  return steps;
}

/** Index of the `]` closing the bracket at `open`, honouring quotes and parentheses. */
function findClose(text: string, open: number): number {
  let quote = '';
  let depth = 0;
  for (let i = open + 1; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ']' && depth === 0) return i;
  }
  return -1;
}

function parseLiteral(text: string): { ok: boolean; value?: unknown } {
  const t = text.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return { ok: true, value: t.slice(1, -1) };
  if (t === 'true' || t === 'false') return { ok: true, value: t === 'true' };
  if (t === 'null') return { ok: true, value: null };
  if (/^-?\d+(\.\d+)?$/.test(t)) return { ok: true, value: Number(t) };
  return { ok: false };
}

function parseBracket(inner: string): Step | undefined {
  if (inner === '*') return { kind: 'wildcard' };
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  const quoted = parseLiteral(inner);
  if (quoted.ok && typeof quoted.value === 'string') return { kind: 'field', name: quoted.value };
  const filter = /^\?\(\s*@((?:\.[^.\s=!<>()]+)+)\s*(?:(==|!=)\s*(.+?))?\s*\)$/.exec(inner);
  if (!filter) return undefined;
  const path = filter[1]!.slice(1).split('.');
  if (!filter[2]) return { kind: 'filter', path, op: 'exists' };
  const literal = parseLiteral(filter[3]!);
  if (!literal.ok) return undefined;
  return { kind: 'filter', path, op: filter[2] as '==' | '!=', value: literal.value };
}
