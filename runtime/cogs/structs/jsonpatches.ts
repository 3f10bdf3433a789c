/**
 * JSON-Patch (RFC 6902) and JSON merge-patch (RFC 7386) arithmetic on plain JSON bodies.
 *
 * The patch accumulator (`patches`) turns its transformation functions into JSON-Patch operations
 * by applying them to a copy of the freshest body and diffing the result against that body; this
 * module holds that diff, the merge-patch application it needs first, and the small helpers the
 * client's patching step uses (the resource-version `test`, the split of `/status` operations).
 *
 * Maps are diffed per key; arrays are replaced as whole values — except `metadata.finalizers`, where
 * appends and removals become index operations so that concurrent finalizers of other controllers
 * are never overwritten (R-FINAL-3/5).
 */

import * as dicts from './dicts.js';

/** One RFC 6902 JSON-Patch operation. */
export type JsonPatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: dicts.JsonValue }
  | { readonly op: 'remove'; readonly path: string };

/**
 * Applies a JSON merge-patch (RFC 7386) to a value and returns the result; inputs are not mutated.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!dicts.isObject(patch)) return dicts.deepCopy(patch);
  const result: Record<string, unknown> = dicts.isObject(target) ? dicts.deepCopy(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (value !== undefined) dicts.setOwn(result, key, applyMergePatch(dicts.getOwn(result, key), value));
  }
  return result;
}

/** Escapes one key for a JSON pointer (RFC 6901). */
export function escapePointerKey(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointer(path: dicts.FieldPath): string {
  return path.map((key) => `/${escapePointerKey(key)}`).join('');
}

function isFinalizersPath(path: dicts.FieldPath): boolean {
  return path.length === 2 && path[0] === 'metadata' && path[1] === 'finalizers';
}

function diffFinalizers(old: readonly unknown[], now: readonly unknown[], path: dicts.FieldPath): JsonPatchOperation[] {
  const ptr = pointer(path);
  if (now.length === 0) return [{ op: 'remove', path: ptr }];
  const wanted = [...now];
  const keep = old.map((item) => {
    const index = wanted.findIndex((candidate) => dicts.deepEqual(candidate, item));
    if (index < 0) return false;
    wanted.splice(index, 1);
    return true;
  });
  const ops: JsonPatchOperation[] = [];
  const current: unknown[] = [];
  let index = 0;
  old.forEach((item, i) => {
    if (keep[i]) {
      current.push(item);
      index += 1;
    } else {
      ops.push({ op: 'remove', path: `${ptr}/${index}` });
    }
  });
  if (!current.every((item, i) => dicts.deepEqual(item, now[i]))) {
    return [{ op: 'replace', path: ptr, value: now as dicts.JsonValue }];
  }
  for (let i = current.length; i < now.length; i += 1) {
    ops.push({ op: 'add', path: `${ptr}/${i}`, value: now[i] as dicts.JsonValue });
  }
  return ops;
}

/**
 * The JSON-Patch operations that turn `old` into `now` (both JSON bodies; neither is mutated).
 *
 * @example
 * diffAsJsonPatch({ metadata: { finalizers: ['a'] } }, { metadata: { finalizers: ['a', 'b'] } })
 * // [{ op: 'add', path: '/metadata/finalizers/1', value: 'b' }]
 */
export function diffAsJsonPatch(old: unknown, now: unknown): JsonPatchOperation[] {
  return diffJson(old, now, []);
}

function diffJson(old: unknown, now: unknown, path: dicts.FieldPath): JsonPatchOperation[] {
  if (dicts.deepEqual(old, now)) return [];
  if (dicts.isObject(old) && dicts.isObject(now)) {
    const ops: JsonPatchOperation[] = [];
    for (const [key, value] of Object.entries(old)) {
      if (value !== undefined) ops.push(...diffJson(value, now[key], [...path, key]));
    }
    for (const [key, value] of Object.entries(now)) {
      if (value !== undefined && old[key] === undefined) ops.push(...diffJson(undefined, value, [...path, key]));
    }
    return ops;
  }
  if (isFinalizersPath(path) && Array.isArray(old) && Array.isArray(now)) return diffFinalizers(old, now, path);
  if (isFinalizersPath(path) && Array.isArray(old) && (now === undefined || now === null)) {
    return [{ op: 'remove', path: pointer(path) }];
  }
  if (old === undefined) return [{ op: 'add', path: pointer(path), value: now as dicts.JsonValue }];
  if (now === undefined || now === null) return [{ op: 'remove', path: pointer(path) }];
  return [{ op: 'replace', path: pointer(path), value: now as dicts.JsonValue }];
}

/** The `test` operation guarding a JSON-Patch by the body's resource version (R-PATCH-2). */
export function resourceVersionTest(body: unknown): JsonPatchOperation {
  const rv = dicts.resolve(body, ['metadata', 'resourceVersion'], null) as dicts.JsonValue;
  return { op: 'test', path: '/metadata/resourceVersion', value: rv };
}

/** Splits JSON-Patch operations into the object's and the `/status` subresource's (R-PATCH-2). */
export function splitJsonPatch(
  ops: readonly JsonPatchOperation[],
  options: { readonly statusSubresource: boolean },
): { readonly main: JsonPatchOperation[]; readonly status: JsonPatchOperation[] } {
  if (!options.statusSubresource) return { main: [...ops], status: [] };
  const isStatus = (op: JsonPatchOperation): boolean => op.path === '/status' || op.path.startsWith('/status/');
  return { main: ops.filter((op) => !isStatus(op)), status: ops.filter(isStatus) };
}
