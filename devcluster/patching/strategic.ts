/**
 * Strategic merge patch, the `application/strategic-merge-patch+json` patch type of built-in
 * resources (D-VERB-21).
 *
 * Maps merge as in a JSON merge patch (`merge.ts`): `null` deletes a member. Lists are replaced,
 * unless the schema (`mergekeys.ts`) gives the field a strategy: lists of objects with a merge key
 * are merged item by item (matched items merge recursively, unmatched ones are appended), and
 * primitive lists with the merge strategy form a union. kubectl sends this patch type for every
 * `apply` and `patch` of a built-in kind, with these directives:
 *
 * - `{"$patch": "delete", <key>: …}` as a list item removes the matching items;
 * - `{"$patch": "replace"}` as a list item, or as a member of a map, replaces the whole list/map;
 *   `{"$patch": "delete"}` in a map empties it;
 * - `"$setElementOrder/<field>": [...]` gives the final order of a merged list; items it does not
 *   list keep their relative order after the listed ones;
 * - `"$deleteFromPrimitiveList/<field>": [...]` removes values from a primitive list;
 * - `"$retainKeys": [...]` drops the map's members that are not listed, where the schema says
 *   `retainKeys` (pod `volumes`, Deployment `spec.strategy`); elsewhere it is ignored.
 *
 * Directives never appear in the result, not even inside values that are new to the object.
 * Errors are `malformed` (the API answers 400) for directives or lists that cannot be read, and
 * `invalid` (422) for a `$retainKeys` list that does not cover the patch's members and for lists
 * of lists, as upstream.
 */
import * as jsonvalues from './jsonvalues.js';
import type * as mergekeys from './mergekeys.js';

export type { SmpSchema, SmpStrategy } from './mergekeys.js';
export { builtinSmpSchema } from './mergekeys.js';

/** Why a strategic merge patch was rejected: `malformed` → 400, `invalid` → 422. */
export type StrategicMergeErrorCode = 'malformed' | 'invalid';

/** A rejected strategic merge patch; `code` tells the API layer which status to answer with. */
export class StrategicMergeError extends Error {
  readonly code: StrategicMergeErrorCode;

  constructor(code: StrategicMergeErrorCode, message: string) {
    super(message);
    this.name = 'StrategicMergeError';
    this.code = code;
  }
}

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';

import type { JsonObject, JsonValue } from '../json.js';
import * as json from '../json.js';
type Path = readonly string[];

/**
 * Applies a strategic merge patch to `original` and returns the patched object.
 *
 * `schema` tells, per field path, which lists merge and how (see `builtinSmpSchema`). Neither
 * input is mutated and the result shares no structure with them.
 *
 * @throws StrategicMergeError `malformed` when the patch is not an object or a directive cannot be
 *   read (unknown `$patch` value, list item without its merge key, `$setElementOrder` list that
 *   disagrees with the patch's list, a directive that is not a list); `invalid` when a
 *   `$retainKeys` list does not cover the members the patch sets, or a merged list holds lists.
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, schema: mergekeys.SmpSchema): unknown {
  if (!json.isObject(patch)) {
    throw new StrategicMergeError('malformed', 'invalid JSON document: a strategic merge patch must be a JSON object');
  }
  const base = json.isObject(original) ? (json.deepCopy(original) as JsonObject) : {};
  return new Merger(schema).mergeMap(base, patch, []);
}

/**
 * One patch application. Every method may mutate the `current` value it is given, which is always
 * the private copy made by `applyStrategicMergePatch`, and copies everything it takes from the patch.
 */
class Merger {
  constructor(private readonly schema: mergekeys.SmpSchema) {}

  /** Merges `patch` into the map `current` (`{}` when the field is new) at `path`. */
  mergeMap(current: JsonObject, patch: JsonObject, path: Path): JsonObject {
    if (jsonvalues.hasMember(patch, PATCH)) {
      const directive = patch[PATCH];
      if (directive === 'delete') return {};
      if (directive === 'replace') return this.mergeMap({}, without(patch, PATCH), path);
      throw malformed(`unknown patch type: ${render(directive)} in map: ${render(patch)}`);
    }
    if (jsonvalues.hasMember(patch, RETAIN_KEYS)) this.retainKeys(current, patch, path);
    const orders = parallelLists(patch, SET_ELEMENT_ORDER, 'setElementOrder list');
    const deletions = parallelLists(patch, DELETE_FROM_PRIMITIVE_LIST, 'primitive list');

    for (const [key, value] of Object.entries(patch)) {
      if (isDirectiveKey(key) || value === undefined) continue;
      if (value === null) {
        delete current[key];
        continue;
      }
      const existing = jsonvalues.hasMember(current, key) ? (current[key] as JsonValue) : undefined;
      json.setMember(current, key, this.mergeValue(existing, value as JsonValue, [...path, key], orders.get(key)));
    }
    for (const [field, order] of orders) {
      const list = jsonvalues.hasMember(current, field) ? current[field] : undefined;
      const strategy = this.schema([...path, field]);
      if (Array.isArray(list) && !jsonvalues.hasMember(patch, field) && isMerging(strategy)) {
        json.setMember(current, field, applyOrder(list, order, [], strategy ?? {}, [...path, field]));
      }
    }
    for (const [field, values] of deletions) {
      const list = jsonvalues.hasMember(current, field) ? current[field] : undefined;
      if (!Array.isArray(list)) continue;
      json.setMember(
        current,
        field,
        list.filter((item) => !values.some((v) => json.deepEqual(v, item))),
      );
    }
    return current;
  }

  /** Merges one patch value into the existing value of a field (`undefined` when absent). */
  private mergeValue(existing: JsonValue | undefined, value: JsonValue, path: Path, order?: JsonValue[]): JsonValue {
    if (json.isObject(value)) {
      return this.mergeMap(json.isObject(existing) ? existing : {}, value, path);
    }
    if (Array.isArray(value)) return this.mergeList(Array.isArray(existing) ? existing : [], value, path, order);
    return value;
  }

  private mergeList(current: JsonValue[], patch: JsonValue[], path: Path, order?: JsonValue[]): JsonValue[] {
    const strategy = this.schema(path);
    let merged: JsonValue[];
    if (strategy?.mergeKey !== undefined) merged = this.mergeKeyedList(current, patch, path, strategy.mergeKey);
    else if (strategy?.primitiveMerge) merged = mergePrimitiveList(current, patch, path);
    else return this.replaceList(patch, path);
    return order === undefined ? merged : applyOrder(merged, order, patch, strategy, path);
  }

  /** A list without a strategy is replaced by the patch's items, minus any list directives. */
  private replaceList(patch: JsonValue[], path: Path): JsonValue[] {
    const items: JsonValue[] = [];
    for (const item of patch) {
      if (json.isObject(item) && jsonvalues.hasMember(item, PATCH)) {
        listDirective(item, path);
        continue;
      }
      items.push(this.mergeValue(undefined, item, path));
    }
    return items;
  }

  private mergeKeyedList(current: JsonValue[], patch: JsonValue[], path: Path, key: string): JsonValue[] {
    let merged = current;
    const updates: JsonObject[] = [];
    for (const item of patch) {
      if (Array.isArray(item)) throw listsOfLists(path);
      if (!json.isObject(item)) {
        throw malformed(`${field(path)}: list items must be objects merged by "${key}", got ${render(item)}`);
      }
      if (jsonvalues.hasMember(item, PATCH)) {
        if (listDirective(item, path) === 'delete') {
          if (!jsonvalues.hasMember(item, key)) throw noMergeKey(item, key);
          merged = merged.filter((existing) => !matches(existing, key, item[key] as JsonValue));
        }
        continue;
      }
      if (!jsonvalues.hasMember(item, key)) throw noMergeKey(item, key);
      updates.push(item);
    }
    // A replace anywhere in the patch list discards every current item, including earlier deletes.
    if (patch.some((item) => json.isObject(item) && item[PATCH] === 'replace')) merged = [];
    for (const update of updates) {
      const index = merged.findIndex((existing) => matches(existing, key, update[key] as JsonValue));
      if (index >= 0) merged[index] = this.mergeMap(merged[index] as JsonObject, update, path);
      else merged.push(this.mergeMap({}, update, path));
    }
    return merged;
  }

  /** Applies `$retainKeys` to `current` where the schema allows it; validates it in any case. */
  private retainKeys(current: JsonObject, patch: JsonObject, path: Path): void {
    const listed = patch[RETAIN_KEYS];
    if (listed !== null && !(Array.isArray(listed) && listed.every((k) => typeof k === 'string'))) {
      throw malformed(`invalid patch format of retainKeys: ${render(listed)}`);
    }
    if (!this.schema(path)?.retainKeys) return;
    const keep = new Set<JsonValue>(listed ?? []);
    for (const [key, value] of Object.entries(patch)) {
      if (value === null || value === undefined || isDirectiveKey(key)) continue;
      if (!keep.has(key)) {
        throw new StrategicMergeError('invalid', `patch content doesn't match retainKeys list: ${field(path)} sets "${key}", which $retainKeys does not list`);
      }
    }
    for (const key of Object.keys(current)) if (!keep.has(key)) delete current[key];
  }
}

function mergePrimitiveList(current: JsonValue[], patch: JsonValue[], path: Path): JsonValue[] {
  const additions: JsonValue[] = [];
  for (const item of patch) {
    if (Array.isArray(item)) throw listsOfLists(path);
    if (json.isObject(item)) {
      if (!jsonvalues.hasMember(item, PATCH)) throw malformed(`${field(path)}: expected a list of scalars, got ${render(item)}`);
      if (listDirective(item, path) !== 'replace') throw malformed(`${field(path)}: "$patch": "delete" needs a merge key`);
      continue;
    }
    additions.push(item);
  }
  // The only objects left in the patch are `{"$patch": "replace"}` items: they discard the current list.
  const base = patch.some((item) => json.isObject(item)) ? [] : current;
  const union: JsonValue[] = [];
  for (const item of [...base, ...additions]) {
    if (!union.some((seen) => json.deepEqual(seen, item))) union.push(item);
  }
  return union;
}

/**
 * Orders a merged list by a `$setElementOrder` list: the listed items first, in the given order,
 * then the items it does not list in their current relative order. The patch's own list must be
 * a subsequence of the order list (as upstream checks), else the patch is malformed.
 */
function applyOrder(list: JsonValue[], order: JsonValue[], patch: JsonValue[], strategy: mergekeys.SmpStrategy, path: Path): JsonValue[] {
  const key = strategy.mergeKey;
  const identity = (item: JsonValue): JsonValue | undefined => {
    if (key === undefined) return item;
    return json.isObject(item) && jsonvalues.hasMember(item, key) ? (item[key] as JsonValue) : undefined;
  };
  const wanted = order.map((entry) => {
    const id = identity(entry);
    if (id === undefined) throw malformed(`invalid patch format of setElementOrder list: ${field(path)} entry ${render(entry)} lacks "${String(key)}"`);
    return id;
  });
  let position = 0;
  for (const item of patch) {
    if (json.isObject(item) && jsonvalues.hasMember(item, PATCH)) continue;
    const id = identity(item);
    while (position < wanted.length && !json.deepEqual(wanted[position], id)) position++;
    if (position === wanted.length) {
      throw malformed(`invalid patch format of setElementOrder list: the order of ${field(path)} in the patch does not match ${render(order)}`);
    }
    position++;
  }
  const rank = (item: JsonValue): number => {
    const id = identity(item);
    return id === undefined ? -1 : wanted.findIndex((w) => json.deepEqual(w, id));
  };
  const listed = list.filter((item) => rank(item) >= 0).sort((a, b) => rank(a) - rank(b));
  return [...listed, ...list.filter((item) => rank(item) < 0)];
}

/** Collects `<prefix>/<field>` directives of a map; each must name a field and hold a list. */
function parallelLists(patch: JsonObject, prefix: string, what: string): Map<string, JsonValue[]> {
  const lists = new Map<string, JsonValue[]>();
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(prefix)) continue;
    const name = key.slice(prefix.length + 1);
    if (key[prefix.length] !== '/' || name === '' || !Array.isArray(value)) {
      throw malformed(`invalid patch format of ${what}: ${render({ [key]: value })}`);
    }
    lists.set(name, value);
  }
  return lists;
}

/** Reads the `$patch` of a list item: `delete` or `replace`; anything else is malformed. */
function listDirective(item: JsonObject, path: Path): 'delete' | 'replace' {
  const directive = item[PATCH];
  if (directive === 'delete' || directive === 'replace') return directive;
  if (directive === 'merge') throw malformed(`${field(path)}: merging lists cannot yet be specified in the patch`);
  throw malformed(`unknown patch type: ${render(directive)} in map: ${render(item)}`);
}

function isDirectiveKey(key: string): boolean {
  return key === PATCH || key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE_LIST);
}

function isMerging(strategy: mergekeys.SmpStrategy | undefined): boolean {
  return strategy?.mergeKey !== undefined || strategy?.primitiveMerge === true;
}

function matches(item: JsonValue, key: string, value: JsonValue | undefined): boolean {
  return json.isObject(item) && jsonvalues.hasMember(item, key) && json.deepEqual(item[key], value);
}

function without(obj: JsonObject, key: string): JsonObject {
  const copy: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (k !== key) json.setMember(copy, k, v as JsonValue);
  return copy;
}

function malformed(message: string): StrategicMergeError {
  return new StrategicMergeError('malformed', message);
}

function noMergeKey(item: JsonObject, key: string): StrategicMergeError {
  return malformed(`map: ${render(item)} does not contain declared merge key: ${key}`);
}

function listsOfLists(path: Path): StrategicMergeError {
  return new StrategicMergeError('invalid', `lists of lists are not supported (${field(path)})`);
}

function field(path: Path): string {
  return path.length === 0 ? '<root>' : path.join('.');
}

function render(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}
