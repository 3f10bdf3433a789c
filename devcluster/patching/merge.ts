/**
 * JSON merge patch (RFC 7386), the `application/merge-patch+json` patch type (D-VERB-20).
 *
 * This is the simplest of the patch algorithms and the vocabulary the others share: objects merge
 * member by member, `null` deletes a member, and everything else (arrays included) replaces. The
 * strategic merge patch (`strategic.ts`) follows the same rules for maps and only differs for
 * lists; JSON patch (`jsonpatch.ts`) is unrelated.
 *
 * Checking that a request body is an object (400 otherwise) is the caller's job: RFC 7386 itself
 * defines a non-object patch as "replace the target", which is what `applyMergePatch` does.
 */
import * as jsonvalues from './jsonvalues.js';
import * as json from '../json.js';

/**
 * Applies a JSON merge patch to `target` and returns the patched value (RFC 7386, section 2).
 *
 * - a patch that is not an object replaces the target entirely (arrays are never merged);
 * - an object patch turns a non-object target into `{}` first, then for each member: `null`
 *   removes the member, any other value is merged into the member recursively.
 *
 * Neither argument is mutated and the result shares no structure with them.
 *
 * @example
 * applyMergePatch({ spec: { mode: 'a', size: 3 } }, { spec: { mode: null, size: 4 } })
 * // → { spec: { size: 4 } }
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  return mergeInto(target, patch);
}

function mergeInto(target: unknown, patch: unknown): json.JsonValue {
  if (!json.isObject(patch)) return json.deepCopy(patch as json.JsonValue);
  const current: json.JsonObject = json.isObject(target) ? target : {};
  const result: json.JsonObject = {};
  // Members keep the target's order; members new to the target follow in the patch's order.
  for (const key of Object.keys(current)) {
    const value = current[key];
    const change = jsonvalues.hasMember(patch, key) ? patch[key] : undefined;
    if (change === undefined) {
      if (value !== undefined) json.setMember(result, key, json.deepCopy(value));
    } else if (change !== null) json.setMember(result, key, mergeInto(value, change));
  }
  for (const key of Object.keys(patch)) {
    const change = patch[key];
    if (jsonvalues.hasMember(current, key) || change === null || change === undefined) continue;
    json.setMember(result, key, mergeInto(undefined, change));
  }
  return result;
}
