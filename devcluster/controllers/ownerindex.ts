/**
 * The garbage collector's view of ownership (D-VERB-33): which stored objects name a given owner
 * uid in `metadata.ownerReferences`. The index is fed every store change, so finding the
 * dependents of an owner is a map lookup rather than a scan of the whole store — clusters in
 * benchmarks hold tens of thousands of objects. It records references only; whether an owner
 * exists is decided by the collector (devcluster/controllers/gc.ts) when it acts.
 */
import * as objects from '../api/objects.js';
import type * as revisions from '../store/revisions.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** One entry of `metadata.ownerReferences` (validated on write, D-META-14). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Where a dependent is stored. */
export interface DependentLocation {
  readonly storage: string;
  readonly key: string;
}

/** The owner references of an object, skipping malformed entries (those without a uid). */
export function ownerReferencesOf(obj: JsonObject): OwnerReference[] {
  const refs = objects.metaOf(obj)['ownerReferences'];
  if (!Array.isArray(refs) || refs.length === 0) return [];
  return refs.filter((r): r is OwnerReference => json.isObject(r) && typeof r['uid'] === 'string' && r['uid'] !== '');
}

/** The distinct owner uids an object refers to. */
export function ownerUidsOf(obj: JsonObject | undefined): string[] {
  if (!obj) return [];
  const refs = ownerReferencesOf(obj);
  if (refs.length === 0) return [];
  return [...new Set(refs.map((r) => r.uid))];
}

/** Dependents by owner uid, maintained from store changes. */
export class OwnerIndex {
  private readonly byOwner = new Map<string, Map<string, DependentLocation>>();

  /**
   * Records one store change. Returns the owner uids the object referred to before or after the
   * change (empty for objects without owner references, which is the common, cheap case).
   */
  apply(change: revisions.Change): string[] {
    const before = ownerUidsOf(change.prev);
    const after = change.type === 'DELETED' ? [] : ownerUidsOf(change.object);
    if (before.length === 0 && after.length === 0) return [];
    const id = locationId(change.storage, change.key);
    for (const uid of before) {
      if (after.includes(uid)) continue;
      const deps = this.byOwner.get(uid);
      if (!deps) continue;
      deps.delete(id);
      if (deps.size === 0) this.byOwner.delete(uid);
    }
    for (const uid of after) {
      let deps = this.byOwner.get(uid);
      if (!deps) {
        deps = new Map();
        this.byOwner.set(uid, deps);
      }
      deps.set(id, { storage: change.storage, key: change.key });
    }
    return before.length === 0 ? after : after.length === 0 ? before : [...new Set([...before, ...after])];
  }

  /** A snapshot of the dependents recorded for `uid`. */
  dependents(uid: string): DependentLocation[] {
    const deps = this.byOwner.get(uid);
    return deps ? [...deps.values()] : [];
  }

  hasDependents(uid: string): boolean {
    return this.byOwner.has(uid);
  }

  /** Forgets one dependent (used when a storage was dropped without DELETED events). */
  forget(uid: string, location: DependentLocation): void {
    const deps = this.byOwner.get(uid);
    if (!deps) return;
    deps.delete(locationId(location.storage, location.key));
    if (deps.size === 0) this.byOwner.delete(uid);
  }

  /** Number of owner uids with at least one recorded dependent. */
  get owners(): number {
    return this.byOwner.size;
  }
}

const locationId = (storage: string, key: string): string => `${storage}\u0001${key}`;
