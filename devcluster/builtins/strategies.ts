/**
 * Building blocks shared by the built-in kinds' strategies: the plain strategy every kind starts
 * from, the status-subresource handling of Pods, Services and Deployments, and small typed-field
 * helpers (reading nested maps and lists, normalising Time/MicroTime fields, rejecting undecodable
 * values with 400 the way upstream's decoder does).
 *
 * The per-kind modules beside this one (pods.ts, services.ts, …) build their strategies from these;
 * catalog.ts assembles the served types. This module imports nothing from them, so there are no
 * import cycles.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as times from '../meta/times.js';
import * as strategic from '../patching/strategic.js';
import * as statuses from '../server/statuses.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** A plain strategy for stored-only kinds; options override the defaults. */
export function plainStrategy(kind: string, overrides: Partial<resources.Strategy> = {}): resources.Strategy {
  return {
    nameRule: 'subdomain',
    putCreates: false,
    requireResourceVersion: false,
    deleteReturnsObject: false,
    smpSchema: strategic.builtinSmpSchema(kind),
    ...overrides,
  };
}

/**
 * Status-subresource handling of the built-ins (D-SUB-3, with the documented simplification that
 * `/status` writes replace only `status`): the main endpoint keeps the stored status.
 */
export const statusSubresource: Pick<resources.Strategy, 'prepareForUpdate' | 'prepareForSubresource'> = {
  prepareForUpdate(obj, old) {
    return keepStatus(obj, old);
  },
  prepareForSubresource(sub, obj, old) {
    if (sub !== 'status') return old;
    const out: JsonObject = { ...old, metadata: { ...objects.metaOf(old) } };
    if (obj['status'] === undefined) delete out['status'];
    else out['status'] = obj['status'];
    return out;
  },
};

/** A copy of `obj` whose `status` is the stored one (absent when the stored object has none). */
export function keepStatus(obj: JsonObject, old: JsonObject): JsonObject {
  const out = { ...obj };
  if (old['status'] === undefined) delete out['status'];
  else out['status'] = old['status'];
  return out;
}

/** The member `key` of `obj` when it is an object, else `{}` (never the caller's object when absent). */
export function mapOf(obj: unknown, key: string): JsonObject {
  if (!json.isObject(obj)) return {};
  const v = obj[key];
  return json.isObject(v) ? v : {};
}

/** The member `key` of `obj` when it is a list, else `[]`. */
export function listOf(obj: unknown, key: string): unknown[] {
  if (!json.isObject(obj)) return [];
  const v = obj[key];
  return Array.isArray(v) ? v : [];
}

/** The member `key` of `obj` when it is a string, else `''`. */
export function stringOf(obj: unknown, key: string): string {
  if (!json.isObject(obj)) return '';
  const v = obj[key];
  return typeof v === 'string' ? v : '';
}

/** Whether `v` is an integer number. */
export const isInteger = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/**
 * The 400 upstream answers when a body cannot be decoded into the kind's Go type
 * (`Secret in version "v1" cannot be handled as a Secret: <why>`).
 */
export function undecodable(kind: string, version: string, why: string): statuses.ApiError {
  return statuses.badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${why}`);
}

/**
 * Returns a copy of `obj` with the time value at `path` (a list of keys) normalised to a `Time`
 * (second precision) or `MicroTime` (microsecond precision), D-WIRE-19. `null` and `''` remove the
 * field; an unparsable value → 400 naming `kind`.
 */
export function normalizeTimeAt(obj: JsonObject, path: readonly string[], micro: boolean, kind: string, version = 'v1'): JsonObject {
  const parent = getIn(obj, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if (!json.isObject(parent) || !(last in parent)) return obj;
  const raw = parent[last];
  let value: string | undefined;
  if (raw !== null && raw !== undefined && raw !== '') {
    value = micro ? times.normalizeMicroTime(raw) : times.normalizeTime(raw);
    if (value === undefined) {
      const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
      throw undecodable(
        kind,
        version,
        `parsing time ${JSON.stringify(text)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(text)} as an RFC 3339 time`,
      );
    }
  }
  return setIn(obj, path, value);
}

/**
 * Rejects non-integer values at the given paths with 400, as upstream's decoder does for typed
 * integer fields (D-WIRE-19 "strings that should be numbers → 400"). `path` entries may use `*`
 * for every element of a list; `prefix` is where `obj` sits in the object (for the message).
 */
export function requireIntegers(obj: JsonObject, paths: readonly string[], kind: string, version = 'v1', prefix = ''): void {
  for (const path of paths) {
    for (const { value, where } of valuesAt(obj, path.split('.'), prefix)) {
      if (value === undefined || value === null || isInteger(value)) continue;
      const got = typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : Array.isArray(value) ? 'array' : typeof value;
      throw undecodable(kind, version, `json: cannot unmarshal ${got} into Go struct field ${kind}.${where} of type int32`);
    }
  }
}

function valuesAt(obj: unknown, parts: string[], where: string): { value: unknown; where: string }[] {
  if (parts.length === 0) return [{ value: obj, where }];
  const [head, ...rest] = parts;
  if (head === '*') {
    return Array.isArray(obj) ? obj.flatMap((item) => valuesAt(item, rest, where)) : [];
  }
  if (!json.isObject(obj)) return [];
  return valuesAt(obj[head!], rest, where ? `${where}.${head}` : head!);
}

function getIn(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (!json.isObject(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

/** A copy of `obj` with `path` set to `value` (removed when undefined); parents must exist. */
function setIn(obj: JsonObject, path: readonly string[], value: unknown): JsonObject {
  const [head, ...rest] = path;
  const out = { ...obj };
  if (rest.length === 0) {
    if (value === undefined) delete out[head!];
    else out[head!] = value;
    return out;
  }
  out[head!] = setIn(out[head!] as JsonObject, rest, value);
  return out;
}

/** Whether two values differ (deep comparison). */
export const changed = (a: unknown, b: unknown): boolean => !json.deepEqual(a, b);
