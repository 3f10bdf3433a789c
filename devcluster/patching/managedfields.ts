/**
 * managedFields: who owns which fields of an object (D-META-15), and how ordinary writes change it.
 *
 * Server-side apply (`apply.ts`) needs to know, per object, which manager set which leaf fields.
 * This module holds that bookkeeping: it decodes and encodes `metadata.managedFields`, turns an
 * object into the field set it consists of, diffs two objects into added/modified/removed sets
 * (the upstream comparison), and records non-apply writes (`recordUpdate`): the writer's `Update`
 * entry gains what it changed and everybody else loses it, which is what makes a later apply by
 * another manager conflict. Sets themselves live in `fieldsets.ts`.
 *
 * Caveats: no schema is available here, so every map is recursed (struct fields and map entries
 * alike) and lists are atomic unless the caller's {@link ListSemantics} says otherwise. An empty
 * list that is not atomic is owned as a whole, like an empty map.
 */
import * as fieldsets from './fieldsets.js';

/** A plain JSON object (values are narrowed at run time). */
export type JsonObject = Record<string, unknown>;

/** How the list at a path merges: atomic (the default), keyed by fields, or a set of scalars. */
export type ListType = { type: 'atomic' } | { type: 'map'; keys: readonly string[] } | { type: 'set' };

/**
 * Answers the list type for a path of map keys from the root; list items add no segment
 * (`['spec', 'template', 'spec', 'containers', 'ports']`). Built by the caller from a CRD's
 * `x-kubernetes-list-type`/`-list-map-keys` or from the built-in merge keys.
 */
export type ListSemantics = (path: readonly string[]) => ListType;

/** Every list atomic: the right answer when nothing is known about a resource. */
export const atomicLists: ListSemantics = () => ({ type: 'atomic' });

/** A `metadata.managedFields` item as it appears on the wire. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** A decoded entry: the wire entry's identity with its fields as a set. */
export interface ManagedSet {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  readonly time?: string;
  readonly subresource?: string;
  readonly set: fieldsets.FieldSet;
}

/** Which ownership domain a write belongs to (D-VERB-22: the status subresource is its own). */
export interface OwnershipScope {
  /** `status` for writes through the status subresource; absent for the main resource. */
  subresource?: string;
  /** Whether the resource has a status subresource (then the main resource never owns `status`). */
  statusSubresource: boolean;
}

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const NEVER_OWNED_META = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink'];

/**
 * The identity of an entry, as upstream builds it: apply entries are one per manager and
 * subresource whatever the apiVersion, update entries also differ by apiVersion.
 * Sorting identities sorts by manager name first.
 */
export function identity(e: Pick<ManagedSet, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({ manager: e.manager, operation: e.operation,
    apiVersion: e.operation === 'Update' ? e.apiVersion : undefined, subresource: e.subresource || undefined });
}

/**
 * Decodes `metadata.managedFields`. Like upstream, anything malformed resets the whole list
 * (returns `[]`) rather than failing the request.
 */
export function decodeEntries(raw: unknown): ManagedSet[] {
  if (!Array.isArray(raw)) return [];
  try {
    return raw.map((item: unknown): ManagedSet => {
      if (!isObject(item)) throw new fieldsets.FieldsV1Error('entry is not an object');
      const { manager, operation, apiVersion, time, fieldsV1, subresource } = item;
      if (typeof manager !== 'string' || (operation !== 'Apply' && operation !== 'Update')) throw new fieldsets.FieldsV1Error('bad entry');
      return {
        manager, operation,
        apiVersion: typeof apiVersion === 'string' ? apiVersion : '',
        ...(typeof time === 'string' ? { time } : {}),
        ...(typeof subresource === 'string' && subresource ? { subresource } : {}),
        set: fieldsV1 === undefined ? fieldsets.EMPTY : fieldsets.decode(fieldsV1),
      };
    });
  } catch (err) {
    if (err instanceof fieldsets.FieldsV1Error) return [];
    throw err;
  }
}

/**
 * Encodes entries for `metadata.managedFields`: empty sets are dropped and the order is
 * upstream's (Apply before Update, then by time, manager, apiVersion, subresource).
 */
export function encodeEntries(entries: readonly ManagedSet[]): ManagedFieldsEntry[] {
  const by = (a: string | undefined, b: string | undefined): number => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0);
  return entries
    .filter((e) => !fieldsets.isEmpty(e.set))
    .slice()
    .sort((p, q) => by(p.operation, q.operation) || by(p.time, q.time) || by(p.manager, q.manager)
      || by(p.apiVersion, q.apiVersion) || by(p.subresource, q.subresource))
    .map((e) => ({
      manager: e.manager, operation: e.operation, apiVersion: e.apiVersion,
      ...(e.time !== undefined ? { time: e.time } : {}),
      fieldsType: 'FieldsV1' as const, fieldsV1: fieldsets.encode(e.set),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    }));
}

/**
 * The path elements naming a list's items, or `undefined` when the list must be treated as
 * atomic: its type says so, an item of a map list is not an object or has none of the key
 * fields, an item of a set list is not a scalar, or two items share a name.
 */
export function itemElements(list: readonly unknown[], listType: ListType): string[] | undefined {
  if (listType.type === 'atomic') return undefined;
  const elements: string[] = [];
  for (const item of list) {
    if (listType.type === 'map') {
      if (!isObject(item)) return undefined;
      const key: JsonObject = {};
      for (const k of listType.keys) if (item[k] !== undefined) key[k] = item[k];
      if (!Object.keys(key).length) return undefined;
      elements.push(fieldsets.keyElement(key));
    } else {
      if (item !== null && typeof item === 'object') return undefined;
      elements.push(fieldsets.valueElement(item));
    }
  }
  return new Set(elements).size === elements.length ? elements : undefined;
}

/**
 * The field set an object consists of (upstream `ToFieldSet`): scalar leaves, empty maps, atomic
 * lists, and each item of a keyed or set list (plus the fields inside keyed items).
 */
export function fieldSetOf(value: unknown, semantics: ListSemantics, mapPath: readonly string[] = []): fieldsets.FieldSet {
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (!keys.length) return fieldsets.LEAF;
    return fieldsets.node(false, keys.map((k) => [fieldsets.fieldElement(k), fieldSetOf(value[k], semantics, [...mapPath, k])] as const));
  }
  if (Array.isArray(value)) {
    const elements = value.length ? itemElements(value, semantics(mapPath)) : undefined;
    if (!elements) return fieldsets.LEAF;
    return fieldsets.node(false, elements.map((el, i) => [el, fieldsets.node(true, fieldSetOf(value[i], semantics, mapPath).children)] as const));
  }
  return fieldsets.LEAF;
}

/** The difference between two versions of an object, as three field sets. */
export interface Comparison {
  readonly added: fieldsets.FieldSet;
  readonly modified: fieldsets.FieldSet;
  readonly removed: fieldsets.FieldSet;
}

/**
 * Compares two objects (upstream `Compare`): leaves that appear, change or disappear, and
 * containers that appear or disappear as a whole. Containers of different shapes count as a
 * modified leaf.
 */
export function compareObjects(before: unknown, after: unknown, semantics: ListSemantics): Comparison {
  const out = { added: [] as string[][], modified: [] as string[][], removed: [] as string[][] };
  compareAt(before, after, [], [], semantics, out);
  return { added: fieldsets.fromPaths(out.added), modified: fieldsets.fromPaths(out.modified), removed: fieldsets.fromPaths(out.removed) };
}

type Collector = { added: string[][]; modified: string[][]; removed: string[][] };

function compareAt(l: unknown, r: unknown, path: string[], mapPath: string[], sem: ListSemantics, out: Collector): void {
  if (l === undefined && r === undefined) return;
  const descend = containerChildren(l, r, mapPath, sem);
  if (!descend) {
    if (l === undefined) out.added.push(path);
    else if (r === undefined) out.removed.push(path);
    else if (!deepEqual(l, r)) out.modified.push(path);
    return;
  }
  for (const [element, lc, rc, childMapPath] of descend) compareAt(lc, rc, [...path, element], childMapPath, sem, out);
  if (path.length && l === undefined) out.added.push(path);
  else if (path.length && r === undefined) out.removed.push(path);
}

type ChildPair = [element: string, l: unknown, r: unknown, mapPath: string[]];

/** The children to recurse into when both sides are comparable containers; `undefined` for a leaf. */
function containerChildren(l: unknown, r: unknown, mapPath: string[], sem: ListSemantics): ChildPair[] | undefined {
  const lm = l === undefined || isObject(l);
  const rm = r === undefined || isObject(r);
  if (lm && rm) {
    const keys = new Set([...Object.keys((l ?? {}) as JsonObject), ...Object.keys((r ?? {}) as JsonObject)]);
    if (!keys.size) return undefined;
    return [...keys].map((k) => [fieldsets.fieldElement(k), (l as JsonObject | undefined)?.[k], (r as JsonObject | undefined)?.[k], [...mapPath, k]]);
  }
  const la = l === undefined || Array.isArray(l);
  const ra = r === undefined || Array.isArray(r);
  if (!la || !ra) return undefined;
  const ll = (l ?? []) as unknown[];
  const rl = (r ?? []) as unknown[];
  if (!ll.length && !rl.length) return undefined;
  const type = sem(mapPath);
  const le = itemElements(ll, type);
  const re = itemElements(rl, type);
  if (!le || !re) return undefined;
  const lByEl = new Map(le.map((el, i) => [el, ll[i]]));
  const rByEl = new Map(re.map((el, i) => [el, rl[i]]));
  return [...new Set([...re, ...le])].map((el) => [el, lByEl.get(el), rByEl.get(el), mapPath]);
}

/** Structural equality of JSON values (object key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The part of an object a write in `scope` may own: without `apiVersion`, `kind` and the
 * server-managed metadata; for the status subresource only `status`; for the main resource of a
 * kind with a status subresource everything but `status`. Never mutates `obj`.
 */
export function ownedView(obj: JsonObject, scope: OwnershipScope): JsonObject {
  if (scope.subresource === 'status') return obj.status === undefined ? {} : { status: obj.status };
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  if (scope.subresource === undefined && scope.statusSubresource) delete rest.status;
  if (isObject(rest.metadata)) {
    const metadata = { ...rest.metadata };
    for (const k of NEVER_OWNED_META) delete metadata[k];
    if (Object.keys(metadata).length) rest.metadata = metadata;
    else delete rest.metadata;
  }
  return rest;
}

/** Drops the never-owned `.metadata` node itself from a set (its children stay). */
export const scrub = (set: fieldsets.FieldSet): fieldsets.FieldSet => fieldsets.withoutMember(set, [fieldsets.fieldElement('metadata')]);

/**
 * The manager name of a request (D-META-15): the `fieldManager` parameter, else the
 * `User-Agent` up to its first `/` (printable characters only, at most 128), else `unknown`.
 * @example managerFromRequest(undefined, 'kubectl/v1.30.0 (linux/amd64)') === 'kubectl'
 */
export function managerFromRequest(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const prefix = [...(userAgent ?? '').split('/')[0]!].filter((ch) => /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)).join('');
  const capped = [...prefix].slice(0, 128).join('');
  return capped || 'unknown';
}

/** Options of {@link recordUpdate}. */
export interface RecordUpdateOptions extends OwnershipScope {
  /** The stored object, or `undefined` for a create. */
  before: JsonObject | undefined;
  /** The object about to be stored; its `metadata.managedFields`, if sent by the client, is honoured. */
  after: JsonObject;
  manager: string;
  apiVersion: string;
  now: string;
  listSemantics: ListSemantics;
}

/**
 * The managedFields after a non-apply write (create, update, patch): the manager's `Update`
 * entry gains every field this write added or modified; every other entry loses those fields;
 * removed fields leave all entries; empty entries disappear. The entry's time moves to `now`
 * only when it gained fields.
 *
 * The starting entries follow upstream: a client that sends `managedFields: []` resets them; a
 * client that sends a non-empty valid list replaces them (main resource only); otherwise the
 * stored ones are used. An empty result means the object carries no `managedFields`.
 */
export function recordUpdate(opts: RecordUpdateOptions): ManagedFieldsEntry[] {
  const scope: OwnershipScope = { subresource: opts.subresource, statusSubresource: opts.statusSubresource };
  const cmp = compareObjects(ownedView(opts.before ?? {}, scope), ownedView(opts.after, scope), opts.listSemantics);
  const changed = scrub(fieldsets.union(cmp.added, cmp.modified));
  const removed = scrub(cmp.removed);
  const self = { manager: opts.manager, operation: 'Update' as const, apiVersion: opts.apiVersion,
    ...(opts.subresource ? { subresource: opts.subresource } : {}) };
  const selfId = identity(self);
  let previous: ManagedSet | undefined;
  const next: ManagedSet[] = [];
  for (const entry of startingEntries(opts)) {
    if (identity(entry) === selfId) previous = entry;
    else next.push({ ...entry, set: fieldsets.difference(fieldsets.difference(entry.set, changed), removed) });
  }
  const kept = previous ? fieldsets.difference(previous.set, removed) : fieldsets.EMPTY;
  const time = !fieldsets.isEmpty(changed) ? opts.now : previous?.time;
  next.push({ ...self, ...(time !== undefined ? { time } : {}), set: fieldsets.union(kept, changed) });
  return encodeEntries(next);
}

function startingEntries(opts: RecordUpdateOptions): ManagedSet[] {
  const stored = decodeEntries(metadataOf(opts.before)?.managedFields);
  if (opts.subresource) return stored;
  const sent = metadataOf(opts.after)?.managedFields;
  if (!Array.isArray(sent)) return stored;
  if (sent.length === 0 || (sent.length === 1 && isObject(sent[0]) && !Object.keys(sent[0]).length)) return [];
  const decoded = decodeEntries(sent);
  return decoded.length ? decoded : stored;
}

/** `obj.metadata` when it is an object. */
export const metadataOf = (obj: JsonObject | undefined): JsonObject | undefined =>
  (obj && isObject(obj.metadata) ? obj.metadata : undefined);
