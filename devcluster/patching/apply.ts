/**
 * Server-side apply (D-VERB-22), the minimal faithful subset, as pure functions over objects.
 *
 * An apply merges the manager's configuration into the live object (maps recursed, keyed and set
 * lists merged item by item, other lists replaced), removes what the manager applied last time
 * and dropped now unless someone else still owns it, and checks the result against the other
 * managers' field sets (`managedfields.ts`): a field another manager owns whose value this apply
 * changes is a conflict, unless `force` hands it over. The HTTP layer turns the conflicts into the
 * 409 of {@link conflictError}; everything else (defaults, validation, storage) happens around it.
 */
import * as statuses from '../server/statuses.js';
import * as fieldsets from './fieldsets.js';
import * as managedfields from './managedfields.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** Re-exported so that callers of apply need one import (see `managedfields.ts`). */
export type ListSemantics = managedfields.ListSemantics;
export type ListType = managedfields.ListType;
export type ManagedFieldsEntry = managedfields.ManagedFieldsEntry;
export const recordUpdate = managedfields.recordUpdate;
export const managerFromRequest = managedfields.managerFromRequest;
export const atomicLists = managedfields.atomicLists;

/** One field the apply would take from another manager. */
export interface ApplyConflict {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  readonly subresource?: string;
  /** The field as encoded path elements. */
  readonly path: fieldsets.FieldPath;
  /** The field in display form, e.g. `.spec.containers[name="c1"].image`. */
  readonly field: string;
}

/** Options of {@link applyConfiguration}. */
export interface ApplyOptions {
  /** The stored object, or `undefined` when the apply creates it. */
  live: JsonObject | undefined;
  /** The applied configuration (a partial object with apiVersion, kind and metadata.name). */
  config: JsonObject;
  manager: string;
  /** The apiVersion of the request, recorded in the entry. */
  apiVersion: string;
  force: boolean;
  /** `status` when applying through the status subresource. */
  subresource?: string;
  /** Whether the resource has a status subresource (then the main resource neither applies nor owns `status`). Default false. */
  statusSubresource?: boolean;
  /** RFC 3339 time recorded in the entry. */
  now: string;
  listSemantics: managedfields.ListSemantics;
}

export type ApplyResult = { ok: true; object: JsonObject } | { ok: false; conflicts: ApplyConflict[] };

/**
 * Applies a configuration for a manager.
 *
 * Guarantees: inputs are not mutated; on success the manager's `Apply` entry owns exactly the
 * fields of its configuration (within its ownership domain), other managers have lost the fields
 * this apply changed or removed, and entries left empty are dropped. Without `force`, any changed
 * field owned by another manager (Apply or Update, any apiVersion) fails the whole apply.
 *
 * @example
 * applyConfiguration({ live: undefined, config: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } },
 *   manager: 'a', apiVersion: 'v1', force: false, now: '2024-01-01T00:00:00Z', listSemantics: managedfields.atomicLists })
 */
export function applyConfiguration(opts: ApplyOptions): ApplyResult {
  const scope: managedfields.OwnershipScope = { subresource: opts.subresource, statusSubresource: opts.statusSubresource ?? false };
  const live = opts.live ?? skeleton(opts.config);
  const sem = opts.listSemantics;
  const entries = managedfields.decodeEntries(managedfields.metadataOf(live)?.managedFields);
  const configView = managedfields.ownedView(opts.config, scope);
  const applied = managedfields.scrub(managedfields.fieldSetOf(configView, sem));

  const selfId = managedfields.identity({ manager: opts.manager, operation: 'Apply', apiVersion: opts.apiVersion, subresource: opts.subresource });
  const previous = entries.find((e) => managedfields.identity(e) === selfId);
  const others = entries.filter((e) => e !== previous);
  const othersOwn = others.reduce((acc, e) => fieldsets.union(acc, e.set), fieldsets.EMPTY);

  let merged = mergeValues(live, configView, [], sem) as JsonObject;
  if (previous) {
    const stale = fieldsets.difference(fieldsets.difference(previous.set, applied), othersOwn);
    merged = pruneValue(merged, stale, fieldsets.union(applied, othersOwn), [], sem) as JsonObject;
  }

  const everything: managedfields.OwnershipScope = { statusSubresource: false };
  const cmp = managedfields.compareObjects(managedfields.ownedView(live, everything), managedfields.ownedView(merged, everything), sem);
  const changed = managedfields.scrub(fieldsets.union(cmp.added, cmp.modified));
  const removed = managedfields.scrub(cmp.removed);

  const conflicts: ApplyConflict[] = [];
  for (const other of others) {
    for (const path of fieldsets.paths(fieldsets.intersection(other.set, changed))) {
      conflicts.push({
        manager: other.manager,
        operation: other.operation,
        apiVersion: other.apiVersion,
        ...(other.subresource ? { subresource: other.subresource } : {}),
        path,
        field: fieldsets.formatPath(path),
      });
    }
  }
  if (conflicts.length && !opts.force) return { ok: false, conflicts: sortConflicts(conflicts) };

  const objectChanged = !fieldsets.isEmpty(changed) || !fieldsets.isEmpty(removed);
  const time = objectChanged || previous?.time === undefined ? opts.now : previous.time;
  const next: managedfields.ManagedSet[] = others.map((e) => ({ ...e, set: fieldsets.difference(fieldsets.difference(e.set, changed), removed) }));
  next.push({
    manager: opts.manager,
    operation: 'Apply',
    apiVersion: opts.apiVersion,
    time,
    ...(opts.subresource ? { subresource: opts.subresource } : {}),
    set: applied,
  });

  const encoded = managedfields.encodeEntries(next);
  const metadata: JsonObject = { ...(managedfields.metadataOf(merged) ?? {}) };
  if (encoded.length) metadata.managedFields = encoded;
  else delete metadata.managedFields;
  return { ok: true, object: { ...merged, metadata } };
}

/** The identity an applied object is created from: apiVersion, kind, name and namespace. */
function skeleton(config: JsonObject): JsonObject {
  const meta = managedfields.metadataOf(config) ?? {};
  const metadata: JsonObject = {};
  for (const k of ['name', 'namespace']) if (meta[k] !== undefined) metadata[k] = meta[k];
  return { apiVersion: config.apiVersion, kind: config.kind, metadata };
}

/** Orders conflicts by manager identity, then in set order (upstream groups messages the same way). */
function sortConflicts(conflicts: ApplyConflict[]): ApplyConflict[] {
  const id = (c: ApplyConflict): string => managedfields.identity(c);
  return conflicts
    .map((c, i) => ({ c, i }))
    .sort((a, b) => (id(a.c) < id(b.c) ? -1 : id(a.c) > id(b.c) ? 1 : a.i - b.i))
    .map(({ c }) => c);
}

/**
 * Structured merge of `rhs` into `lhs`: maps recursed, keyed and set lists merged item by item
 * (shared items follow the configuration's order, live-only items keep their place), anything
 * else replaced by `rhs`.
 */
export function mergeValues(lhs: unknown, rhs: unknown, mapPath: readonly string[], sem: managedfields.ListSemantics): unknown {
  if (rhs === undefined) return lhs;
  if (json.isObject(lhs) && json.isObject(rhs)) {
    const out: JsonObject = { ...lhs };
    for (const [k, v] of Object.entries(rhs)) json.setMember(out, k, mergeValues(Object.hasOwn(lhs, k) ? lhs[k] : undefined, v, [...mapPath, k], sem));
    return out;
  }
  if (Array.isArray(lhs) && Array.isArray(rhs)) {
    const type = sem(mapPath);
    const le = managedfields.itemElements(lhs, type);
    const re = managedfields.itemElements(rhs, type);
    if (le && re) return mergeLists(lhs, le, rhs, re, (l, r) => mergeValues(l, r, mapPath, sem));
  }
  return json.deepCopy(rhs);
}

function mergeLists(
  lhs: readonly unknown[],
  le: readonly string[],
  rhs: readonly unknown[],
  re: readonly string[],
  mergeItem: (l: unknown, r: unknown) => unknown,
): unknown[] {
  const lByEl = new Map(le.map((el, i) => [el, lhs[i]]));
  const rByEl = new Map(re.map((el, i) => [el, rhs[i]]));
  const shared = re.filter((el) => lByEl.has(el));
  const done = new Set<string>();
  const out: unknown[] = [];
  const takeRight = (el: string): void => {
    out.push(mergeItem(lByEl.get(el), rByEl.get(el)));
    done.add(el);
    if (shared[0] === el) shared.shift();
  };
  let li = 0;
  let ri = 0;
  while (li < le.length || ri < re.length) {
    const lel = le[li];
    if (lel !== undefined) {
      if (!rByEl.has(lel)) {
        out.push(lhs[li]);
        li++;
        continue;
      }
      if (done.has(lel)) {
        li++;
        continue;
      }
      if (lel === re[ri]) {
        takeRight(lel);
        li++;
        ri++;
        continue;
      }
      if (shared[0] !== lel) {
        li++;
        continue;
      } // a shared item the configuration places later
    }
    const rel = re[ri];
    if (rel === undefined) {
      li++;
      continue;
    }
    takeRight(rel);
    ri++;
  }
  return out;
}

/**
 * Removes the members of `stale` from a value, except where `keep` owns the node or anything
 * below it; containers emptied by the removal go too. Key fields of surviving list items stay.
 */
function pruneValue(
  value: unknown,
  stale: fieldsets.FieldSet,
  keep: fieldsets.FieldSet,
  mapPath: readonly string[],
  sem: managedfields.ListSemantics,
): unknown {
  if (json.isObject(value)) {
    const out: JsonObject = { ...value };
    for (const [element, st] of stale.children) {
      const pe = fieldsets.parseElement(element);
      if (pe.kind !== 'field' || !Object.hasOwn(out, pe.name)) continue;
      const kp = keep.children.get(element) ?? fieldsets.EMPTY;
      if (st.member && fieldsets.isEmpty(kp)) {
        delete out[pe.name];
        continue;
      }
      if (!st.children.size) continue;
      const before = out[pe.name];
      const after = pruneValue(before, st, kp, [...mapPath, pe.name], sem);
      if (emptied(before, after) && !kp.member) delete out[pe.name];
      else out[pe.name] = after;
    }
    return out;
  }
  if (Array.isArray(value)) {
    const type = sem(mapPath);
    const elements = managedfields.itemElements(value, type);
    if (!elements) return value;
    const keyFields = type.type === 'map' ? type.keys.map(fieldsets.fieldElement) : [];
    const out: unknown[] = [];
    elements.forEach((el, i) => {
      const st = stale.children.get(el);
      const kp = keep.children.get(el) ?? fieldsets.EMPTY;
      if (st?.member && fieldsets.isEmpty(kp)) return;
      if (!st?.children.size) {
        out.push(value[i]);
        return;
      }
      const survivors = keyFields.reduce((s, k) => fieldsets.withoutSubtree(s, [k]), st);
      out.push(pruneValue(value[i], survivors, kp, mapPath, sem));
    });
    return out;
  }
  return value;
}

const sizeOf = (v: unknown): number => (Array.isArray(v) ? v.length : json.isObject(v) ? Object.keys(v).length : -1);
const emptied = (before: unknown, after: unknown): boolean => sizeOf(before) > 0 && sizeOf(after) === 0;

/** How a conflicting manager is named in messages: `"a"`, `"m" using v1`, `"s" with subresource "status"`. */
export function describeManager(c: Pick<ApplyConflict, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  let text = JSON.stringify(c.manager);
  if (c.subresource) text += ` with subresource ${JSON.stringify(c.subresource)}`;
  if (c.operation === 'Update') text += ` using ${c.apiVersion}`;
  return text;
}

/**
 * The 409 for a failed apply (D-VERB-22, D-WIRE-21): one `FieldManagerConflict` cause per field,
 * and the message `Apply failed with 1 conflict: conflict with "a": .spec.size`, or for several,
 * one `conflicts with <manager>:` block per manager (sorted) listing `- <field>` lines.
 *
 * Caveat: like upstream, `details` carries only the causes; `resource` and `name` are accepted
 * for symmetry with the other Status builders.
 */
export function conflictError(conflicts: readonly ApplyConflict[], resource: statuses.ResourceIdent, name: string): statuses.ApiError {
  void resource;
  void name;
  const sorted = sortConflicts([...conflicts]);
  const causes = sorted.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c)}`, field: c.field }));
  let message: string;
  if (sorted.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${describeManager(sorted[0]!)}: ${sorted[0]!.field}`;
  } else {
    const lines: string[] = [];
    let current: string | undefined;
    for (const c of sorted) {
      const id = managedfields.identity(c);
      if (id !== current) {
        lines.push(`conflicts with ${describeManager(c)}:`);
        current = id;
      }
      lines.push(`- ${c.field}`);
    }
    message = `Apply failed with ${sorted.length} conflicts: ${lines.join('\n')}`;
  }
  return new statuses.ApiError(409, 'Conflict', message, { causes });
}
