/**
 * The pieces the served OpenAPI documents are assembled from, and the few operations every builder
 * of them needs. `/openapi/v2` and `/openapi/v3` are both put together from parts — the built-in part
 * cut from upstream's published document, and one part per served custom resource version — so that
 * a CRD change recomputes only its own part (D-WIRE-33). A part is plain JSON in OpenAPI v2 form;
 * `v3` converts parts, never re-derives them.
 */
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** Paths and definitions in OpenAPI v2 form (what one source contributes to a document). */
export interface V2Part {
  readonly paths: Readonly<Record<string, JsonObject>>;
  readonly definitions: Readonly<Record<string, JsonObject>>;
}

/**
 * How often each piece has been computed in this process: tests read it to check that nothing is
 * computed before it is asked for and that caches hold (D-WIRE-33).
 */
export const computed = { builtinParts: 0, crdParts: 0, v2Documents: 0, v3Documents: 0 };

export const V2_PREFIX = '#/definitions/';
export const V3_PREFIX = '#/components/schemas/';

/** The definition a `$ref` names (v2 or v3 form), or undefined. */
export function refName(ref: unknown): string | undefined {
  if (typeof ref !== 'string') return undefined;
  if (ref.startsWith(V2_PREFIX)) return ref.slice(V2_PREFIX.length);
  return ref.startsWith(V3_PREFIX) ? ref.slice(V3_PREFIX.length) : undefined;
}

/** Adds every definition named by a `$ref` anywhere in `value` to `into`. */
export function collectRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, into);
    return;
  }
  if (!json.isObject(value)) return;
  for (const [k, v] of Object.entries(value)) {
    if (k === '$ref') {
      const name = refName(v);
      if (name !== undefined) into.add(name);
    } else if (typeof v === 'object' && v !== null) collectRefs(v, into);
  }
}

/** The names of `roots` and of every definition they reach through `$ref`s, in sorted order. */
export function closure(roots: Iterable<string>, lookup: (name: string) => unknown): string[] {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    const schema = lookup(name);
    if (schema === undefined) continue;
    seen.add(name);
    const found = new Set<string>();
    collectRefs(schema, found);
    for (const f of found) if (!seen.has(f)) queue.push(f);
  }
  return [...seen].sort();
}

/** A copy of `value` whose object keys are sorted at every level (Go marshals maps this way). */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!json.isObject(value)) return value;
  const out: JsonObject = {};
  for (const k of Object.keys(value).sort()) if (value[k] !== undefined) out[k] = sortedKeys(value[k]);
  return out;
}

/** The record's entries merged from several sources, keys sorted; earlier sources win a conflict. */
export function mergeSorted<T>(sources: readonly Readonly<Record<string, T>>[]): Record<string, T> {
  const all = new Map<string, T>();
  for (const s of sources) for (const [k, v] of Object.entries(s)) if (!all.has(k)) all.set(k, v);
  const out: Record<string, T> = {};
  for (const k of [...all.keys()].sort()) out[k] = all.get(k)!;
  return out;
}

/**
 * The key of the `/openapi/v3` document a v2 path belongs to, as upstream groups them: the
 * group/version for resource paths (`api/v1`, `apis/batch/v1`), else the path's fixed segments
 * (`api`, `apis`, `apis/batch`, `version`).
 */
export function documentKeyOf(path: string): string {
  const segments = path.split('/').filter((s) => s !== '');
  if (segments[0] === 'api' && segments.length >= 2) return `api/${segments[1]}`;
  if (segments[0] === 'apis' && segments.length >= 3) return `apis/${segments[1]}/${segments[2]}`;
  return segments.filter((s) => !s.startsWith('{')).join('/');
}
