/**
 * JSON patch (RFC 6902), the `application/json-patch+json` patch type (D-VERB-19).
 *
 * Two steps with two failure classes, mirroring how the API answers:
 * - `parseJsonPatch` checks the *shape* of the request body (an array of well-formed operations);
 *   a bad shape is `malformed` (400), more than 10000 operations is `too-large` (413);
 * - `applyJsonPatch` runs the operations in order on a private deep copy; the first operation
 *   that cannot be carried out is `failed` (422) and nothing is returned, so the stored object is
 *   never half-patched.
 *
 * Kopf depends on the `test` operation: it prefixes its patches with a test of
 * `/metadata/resourceVersion` and treats a 422 as "the object changed, retry later".
 */
import * as jsonvalues from './jsonvalues.js';
import * as pointers from './pointers.js';
import * as json from '../json.js';

/** Most operations one patch may carry, as upstream (`maxJSONPatchOperations`). */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/** Why a JSON patch was rejected: `malformed` → 400, `failed` → 422, `too-large` → 413. */
export type JsonPatchErrorCode = 'malformed' | 'failed' | 'too-large';

/** A rejected JSON patch; `code` tells the API layer which status to answer with. */
export class JsonPatchError extends Error {
  readonly code: JsonPatchErrorCode;

  constructor(code: JsonPatchErrorCode, message: string) {
    super(message);
    this.name = 'JsonPatchError';
    this.code = code;
  }
}

/** `add`, `replace` and `test` carry a value. */
export interface JsonPatchValueOperation {
  readonly op: 'add' | 'replace' | 'test';
  readonly path: string;
  readonly value: json.JsonValue;
}

/** `remove` names only the location to remove. */
export interface JsonPatchRemoveOperation {
  readonly op: 'remove';
  readonly path: string;
}

/** `move` and `copy` take the value found at `from`. */
export interface JsonPatchFromOperation {
  readonly op: 'move' | 'copy';
  readonly from: string;
  readonly path: string;
}

/** One validated JSON patch operation (a union discriminated on `op`). */
export type JsonPatchOperation = JsonPatchValueOperation | JsonPatchRemoveOperation | JsonPatchFromOperation;

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * Validates a decoded request body as a JSON patch and returns its operations.
 *
 * @throws JsonPatchError `malformed` when the body is not an array, an element is not an object,
 *   `op` is unknown, `path` (or `from` for move/copy) is not a valid JSON pointer, or `value` is
 *   missing for add/replace/test; `too-large` when there are more than 10000 operations.
 */
export function parseJsonPatch(body: unknown): JsonPatchOperation[] {
  if (!Array.isArray(body)) throw new JsonPatchError('malformed', 'a JSON patch must be a JSON array of operations');
  if (body.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new JsonPatchError('too-large', `the allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${body.length}`);
  }
  return body.map((element, index) => parseOperation(element, index));
}

function parseOperation(element: unknown, index: number): JsonPatchOperation {
  const where = `operation ${index}`;
  if (!json.isObject(element)) throw new JsonPatchError('malformed', `${where} is not a JSON object`);
  const op = element['op'];
  if (typeof op !== 'string' || !OPS.has(op)) {
    throw new JsonPatchError('malformed', `${where}: unknown op ${JSON.stringify(op ?? null)}`);
  }
  const path = requirePointer(element, 'path', where);
  switch (op) {
    case 'remove':
      return { op, path };
    case 'move':
    case 'copy':
      return { op, from: requirePointer(element, 'from', where), path };
    default: {
      if (!jsonvalues.hasMember(element, 'value') || element['value'] === undefined) {
        throw new JsonPatchError('malformed', `${where}: "${op}" requires a value`);
      }
      return { op: op as JsonPatchValueOperation['op'], path, value: json.deepCopy(element['value'] as json.JsonValue) };
    }
  }
}

function requirePointer(element: json.JsonObject, key: 'path' | 'from', where: string): string {
  const pointer = element[key];
  if (typeof pointer !== 'string') throw new JsonPatchError('malformed', `${where}: "${key}" must be a string`);
  if (pointers.parseJsonPointer(pointer) === undefined) {
    throw new JsonPatchError('malformed', `${where}: "${key}" is not a JSON pointer: ${JSON.stringify(pointer)}`);
  }
  return pointer;
}

/**
 * Applies `ops` in order to a deep copy of `doc` and returns the patched copy.
 *
 * Any failing operation aborts the whole patch: a `test` whose value differs (deep equality;
 * `"5"` ≠ `5`), `remove`/`replace`/`move`/`copy`/`test` of a missing location, `add` under a
 * missing parent or into a scalar, an array index out of range, or a `move` into its own child.
 * `doc` and `ops` are never mutated, and the result shares no structure with either.
 *
 * @throws JsonPatchError `failed` for the first operation that cannot be carried out.
 */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let current = json.deepCopy(doc as json.JsonValue);
  ops.forEach((operation, index) => {
    current = applyOperation(current, operation, index);
  });
  return current;
}

function applyOperation(doc: json.JsonValue, operation: JsonPatchOperation, index: number): json.JsonValue {
  const fail = (reason: string): never => {
    throw new JsonPatchError('failed', `operation ${index} (${operation.op} ${operation.path}): ${reason}`);
  };
  const path = tokensOf(operation.path, fail);
  switch (operation.op) {
    case 'add':
      return add(doc, path, json.deepCopy(operation.value), fail);
    case 'remove':
      if (path.length === 0) fail('cannot remove the whole document');
      remove(doc, path, fail);
      return doc;
    case 'replace':
      if (path.length === 0) return json.deepCopy(operation.value);
      get(doc, path, fail);
      return add(doc, path, json.deepCopy(operation.value), fail, true);
    case 'test':
      if (!json.deepEqual(get(doc, path, fail), operation.value)) fail('test failed: the value differs');
      return doc;
    case 'copy':
      return add(doc, path, json.deepCopy(get(doc, tokensOf(operation.from, fail), fail)), fail);
    case 'move': {
      const from = tokensOf(operation.from, fail);
      if (pointers.isProperPrefix(from, path)) fail('cannot move a value into one of its own children');
      const value = get(doc, from, fail);
      if (from.length === path.length && from.every((token, i) => token === path[i])) return doc;
      remove(doc, from, fail);
      return add(doc, path, value, fail);
    }
  }
}

type Fail = (reason: string) => never;

function tokensOf(pointer: string, fail: Fail): string[] {
  return pointers.parseJsonPointer(pointer) ?? fail(`not a JSON pointer: ${JSON.stringify(pointer)}`);
}

/** Reads the value at `path`, failing when any step is missing. */
function get(doc: json.JsonValue, path: readonly string[], fail: Fail): json.JsonValue {
  let node = doc;
  for (const token of path) node = child(node, token, fail);
  return node;
}

function child(node: json.JsonValue, token: string, fail: Fail): json.JsonValue {
  if (Array.isArray(node)) {
    const i = pointers.parseArrayIndex(token);
    if (i === undefined || i >= node.length) fail(`array index ${JSON.stringify(token)} is out of range`);
    return node[i as number] as json.JsonValue;
  }
  if (json.isObject(node) && jsonvalues.hasMember(node, token)) return node[token] as json.JsonValue;
  return fail(`no value at ${JSON.stringify(token)}`);
}

/**
 * Inserts `value` at `path` (RFC 6902 "add"; with `replacing`, overwrites an array item instead
 * of inserting before it). Mutates `doc`, which is always the private copy; returns the new root.
 */
function add(doc: json.JsonValue, path: readonly string[], value: json.JsonValue, fail: Fail, replacing = false): json.JsonValue {
  if (path.length === 0) return value;
  const parent = get(doc, path.slice(0, -1), fail);
  const last = path[path.length - 1] as string;
  if (Array.isArray(parent)) {
    const i = last === '-' && !replacing ? parent.length : pointers.parseArrayIndex(last);
    const limit = replacing ? parent.length - 1 : parent.length;
    if (i === undefined || i > limit) fail(`array index ${JSON.stringify(last)} is out of range`);
    parent.splice(i as number, replacing ? 1 : 0, value);
  } else if (json.isObject(parent)) {
    json.setMember(parent, last, value);
  } else {
    fail('the parent is not an object or an array');
  }
  return doc;
}

/** Removes the value at `path` from `doc` (the private copy), failing when it is missing. */
function remove(doc: json.JsonValue, path: readonly string[], fail: Fail): void {
  const parent = get(doc, path.slice(0, -1), fail);
  const last = path[path.length - 1] as string;
  child(parent, last, fail);
  if (Array.isArray(parent)) parent.splice(pointers.parseArrayIndex(last) as number, 1);
  else delete (parent as json.JsonObject)[last];
}
