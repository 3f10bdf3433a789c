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
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as fieldsets from './fieldsets.js';

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

const NEVER_OWNED_META = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
];

/**
 * The identity of an entry, as upstream builds it: apply entries are one per manager and
 * subresource whatever the apiVersion, update entries also differ by apiVersion.
 * Sorting identities sorts by manager name first.
 */
export function identity(e: Pick<ManagedSet, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({
    manager: e.manager,
    operation: e.operation,
    apiVersion: e.operation === 'Update' ? e.apiVersion : undefined,
    subresource: e.subresource || undefined,
  });
}

/**
 * Decodes `metadata.managedFields`. Like upstream, anything malformed resets the whole list
 * (returns `[]`) rather than failing the request.
 */
export function decodeEntries(raw: unknown): ManagedSet[] {
  if (!Array.isArray(raw)) return [];
  try {
    return raw.map((item: unknown): ManagedSet => {
      if (!json.isObject(item)) throw new fieldsets.FieldsV1Error('entry is not an object');
      const { manager, operation, apiVersion, time, fieldsV1, subresource } = item;
      if (typeof manager !== 'string' || (operation !== 'Apply' && operation !== 'Update')) throw new fieldsets.FieldsV1Error('bad entry');
      return {
        manager,
        operation,
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
const byText = (a: string | undefined, b: string | undefined): number => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0);
const entryOrder = (p: ManagedSet, q: ManagedSet): number =>
  byText(p.operation, q.operation) ||
  byText(p.time, q.time) ||
  byText(p.manager, q.manager) ||
  byText(p.apiVersion, q.apiVersion) ||
  byText(p.subresource, q.subresource);

export function encodeEntries(entries: readonly ManagedSet[]): ManagedFieldsEntry[] {
  return entries
    .filter((e) => !fieldsets.isEmpty(e.set))
    .sort(entryOrder)
    .map(encodeEntry);
}

function encodeEntry(e: ManagedSet): ManagedFieldsEntry {
  return {
    manager: e.manager,
    operation: e.operation,
    apiVersion: e.apiVersion,
    ...(e.time !== undefined ? { time: e.time } : {}),
    fieldsType: 'FieldsV1' as const,
    fieldsV1: fieldsets.encode(e.set),
    ...(e.subresource ? { subresource: e.subresource } : {}),
  };
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
      if (!json.isObject(item)) return undefined;
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
  if (json.isObject(value)) {
    const keys = Object.keys(value);
    if (!keys.length) return fieldsets.LEAF;
    return fieldsets.node(
      false,
      keys.map((k) => [fieldsets.fieldElement(k), fieldSetOf(value[k], semantics, [...mapPath, k])] as const),
    );
  }
  if (Array.isArray(value)) {
    const elements = value.length ? itemElements(value, semantics(mapPath)) : undefined;
    if (!elements) return fieldsets.LEAF;
    return fieldsets.node(
      false,
      elements.map((el, i) => [el, fieldsets.node(true, fieldSetOf(value[i], semantics, mapPath).children)] as const),
    );
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
  return compareNode(before, after, [], semantics, true);
}

// The comparison is built bottom-up, one node per container that differs, rather than as lists of
// paths inserted one by one: a write compares the whole object, so this runs on every request.
const UNCHANGED: Comparison = { added: fieldsets.EMPTY, modified: fieldsets.EMPTY, removed: fieldsets.EMPTY };
const ADDED_LEAF: Comparison = { added: fieldsets.LEAF, modified: fieldsets.EMPTY, removed: fieldsets.EMPTY };
const MODIFIED_LEAF: Comparison = { added: fieldsets.EMPTY, modified: fieldsets.LEAF, removed: fieldsets.EMPTY };
const REMOVED_LEAF: Comparison = { added: fieldsets.EMPTY, modified: fieldsets.EMPTY, removed: fieldsets.LEAF };
const NO_KEYS: readonly string[] = [];
const isEnumerableOwn = (obj: object, key: string): boolean => Object.prototype.propertyIsEnumerable.call(obj, key);

/**
 * Compares `l` and `r` at one path. `mapPath` holds the map keys from the root (list items add
 * none); it is a shared stack, copied only when handed to the list semantics. The root itself is
 * never a member of the result.
 */
function compareNode(l: unknown, r: unknown, mapPath: string[], sem: ListSemantics, root: boolean): Comparison {
  if (l === undefined && r === undefined) return UNCHANGED;
  const lMap = l === undefined || json.isObject(l);
  const rMap = r === undefined || json.isObject(r);
  if (lMap && rMap) {
    const lo = l as JsonObject | undefined;
    const ro = r as JsonObject | undefined;
    const lKeys = lo === undefined ? NO_KEYS : Object.keys(lo);
    const rKeys = ro === undefined ? NO_KEYS : Object.keys(ro);
    if (!lKeys.length && !rKeys.length) return compareLeaf(l, r, root);
    const children = new ChildComparisons();
    for (const k of lKeys) {
      mapPath.push(k);
      children.add(fieldsets.fieldElement(k), compareNode(lo![k], ro?.[k], mapPath, sem, false));
      mapPath.pop();
    }
    for (const k of rKeys) {
      if (lo !== undefined && isEnumerableOwn(lo, k)) continue;
      mapPath.push(k);
      children.add(fieldsets.fieldElement(k), compareNode(lo?.[k], ro![k], mapPath, sem, false));
      mapPath.pop();
    }
    return children.result(l, r, root);
  }
  const lList = l === undefined || Array.isArray(l);
  const rList = r === undefined || Array.isArray(r);
  if (!lList || !rList) return compareLeaf(l, r, root);
  const ll = (l ?? []) as unknown[];
  const rl = (r ?? []) as unknown[];
  if (!ll.length && !rl.length) return compareLeaf(l, r, root);
  const type = sem(mapPath.slice());
  const le = itemElements(ll, type);
  const re = itemElements(rl, type);
  if (!le || !re) return compareLeaf(l, r, root);
  const lByEl = new Map(le.map((el, i) => [el, ll[i]]));
  const rByEl = new Map(re.map((el, i) => [el, rl[i]]));
  const children = new ChildComparisons();
  for (const el of new Set([...re, ...le])) children.add(el, compareNode(lByEl.get(el), rByEl.get(el), mapPath, sem, false));
  return children.result(l, r, root);
}

function compareLeaf(l: unknown, r: unknown, root: boolean): Comparison {
  if (root) return UNCHANGED;
  if (l === undefined) return ADDED_LEAF;
  if (r === undefined) return REMOVED_LEAF;
  return json.deepEqual(l, r) ? UNCHANGED : MODIFIED_LEAF;
}

/** The children of one container node, split by kind of change. */
class ChildComparisons {
  private added: [string, fieldsets.FieldSet][] | undefined;
  private modified: [string, fieldsets.FieldSet][] | undefined;
  private removed: [string, fieldsets.FieldSet][] | undefined;

  add(element: string, c: Comparison): void {
    if (c === UNCHANGED) return;
    if (!fieldsets.isEmpty(c.added)) (this.added ??= []).push([element, c.added]);
    if (!fieldsets.isEmpty(c.modified)) (this.modified ??= []).push([element, c.modified]);
    if (!fieldsets.isEmpty(c.removed)) (this.removed ??= []).push([element, c.removed]);
  }

  /** A container that appears is added as a whole, one that disappears removed as a whole. */
  result(l: unknown, r: unknown, root: boolean): Comparison {
    const addedSelf = !root && l === undefined;
    const removedSelf = !root && l !== undefined && r === undefined;
    if (!addedSelf && !removedSelf && !this.added && !this.modified && !this.removed) return UNCHANGED;
    return {
      added: fieldsets.node(addedSelf, this.added ?? NO_CHILD_SETS),
      modified: this.modified ? fieldsets.node(false, this.modified) : fieldsets.EMPTY,
      removed: fieldsets.node(removedSelf, this.removed ?? NO_CHILD_SETS),
    };
  }
}

const NO_CHILD_SETS: readonly (readonly [string, fieldsets.FieldSet])[] = [];

/**
 * The part of an object a write in `scope` may own: without `apiVersion`, `kind` and the
 * server-managed metadata; for the status subresource only `status`; for the main resource of a
 * kind with a status subresource everything but `status`. Never mutates `obj`.
 */
export function ownedView(obj: JsonObject, scope: OwnershipScope): JsonObject {
  if (scope.subresource === 'status') return obj.status === undefined ? {} : { status: obj.status };
  // Plain copies by loop: object rest/spread with excluded keys is slow and this runs per write.
  const dropStatus = scope.subresource === undefined && scope.statusSubresource;
  const rest: JsonObject = {};
  for (const k of Object.keys(obj)) {
    if (k === 'apiVersion' || k === 'kind' || (dropStatus && k === 'status')) continue;
    if (k === 'metadata' && json.isObject(obj.metadata)) {
      const metadata = ownableMetadata(obj.metadata);
      if (metadata) rest.metadata = metadata;
      continue;
    }
    copyMember(rest, k, obj[k]);
  }
  return rest;
}

/** `metadata` without the never-owned members, or `undefined` when nothing is left. */
function ownableMetadata(meta: JsonObject): JsonObject | undefined {
  const out: JsonObject = {};
  let any = false;
  for (const k of Object.keys(meta)) {
    if (NEVER_OWNED_META.includes(k)) continue;
    copyMember(out, k, meta[k]);
    any = true;
  }
  return any ? out : undefined;
}

/** `obj[key] = value` as an own data property, also for the key `__proto__` (as spread copies do). */
function copyMember(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
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
  const untouched = fieldsets.isEmpty(changed) && fieldsets.isEmpty(removed);
  let previous: ManagedSet | undefined;
  const next: ManagedSet[] = [];
  for (const entry of startingEntries(opts)) {
    if (isUpdateEntryOf(entry, opts.manager, opts.apiVersion, opts.subresource)) previous = entry;
    else if (untouched) next.push(entry);
    else next.push({ ...entry, set: fieldsets.difference(fieldsets.difference(entry.set, changed), removed) });
  }
  const kept = previous ? fieldsets.difference(previous.set, removed) : fieldsets.EMPTY;
  const time = !fieldsets.isEmpty(changed) ? opts.now : previous?.time;
  const self: ManagedSet = { manager: opts.manager, operation: 'Update', apiVersion: opts.apiVersion, set: fieldsets.union(kept, changed) };
  if (opts.subresource) (self as { subresource?: string }).subresource = opts.subresource;
  if (time !== undefined) (self as { time?: string }).time = time;
  next.push(self);
  return encodeEntries(next);
}

/** Whether `entry` has the identity of the `Update` entry of this manager, apiVersion and subresource (see {@link identity}). */
function isUpdateEntryOf(entry: ManagedSet, manager: string, apiVersion: string, subresource: string | undefined): boolean {
  return (
    entry.operation === 'Update' &&
    entry.manager === manager &&
    entry.apiVersion === apiVersion &&
    (entry.subresource || undefined) === (subresource || undefined)
  );
}

function startingEntries(opts: RecordUpdateOptions): ManagedSet[] {
  const stored = decodeEntries(metadataOf(opts.before)?.managedFields);
  if (opts.subresource) return stored;
  const sent = metadataOf(opts.after)?.managedFields;
  if (!Array.isArray(sent)) return stored;
  if (sent.length === 0 || (sent.length === 1 && json.isObject(sent[0]) && !Object.keys(sent[0]).length)) return [];
  // A list equal to the stored one (sent back by a PUT, kept by a patch) decodes like it.
  const storedRaw = metadataOf(opts.before)?.managedFields;
  const decoded = sent === storedRaw || json.deepEqual(sent, storedRaw) ? stored : decodeEntries(sent);
  return decoded.length ? decoded : stored;
}

/** `obj.metadata` when it is an object. */
export const metadataOf = (obj: JsonObject | undefined): JsonObject | undefined => (obj && json.isObject(obj.metadata) ? obj.metadata : undefined);
