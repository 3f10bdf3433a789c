/**
 * The garbage collector (D-VERB-33..36). It watches every store change, keeps the ownership index
 * of ./ownerindex.ts up to date, and queues work on the controller loop (./loop.ts) when an owner
 * disappears, when a dependent is created with owners to confirm, or when an owner is marked with
 * the `foregroundDeletion` or `orphan` finalizer. All its writes are ordinary API writes through
 * ./internal.ts (admission included, D-ADM-1), so dependents' own finalizers are honoured.
 *
 * An owner reference is satisfied when an object of the referenced kind (looked up among the
 * served types by group/version/kind, falling back to any served version of the group/kind) with
 * that name and uid exists in the dependent's namespace, or cluster-scoped. A reference whose kind
 * is no longer served (its CRD is gone) counts as dangling: no such owner can exist.
 */
import type * as core from '../api/core.js';
import * as deleting from '../api/deleting.js';
import * as objects from '../api/objects.js';
import type * as options from '../api/options.js';
import type * as resources from '../api/resources.js';
import * as revisions from '../store/revisions.js';
import * as internal from './internal.js';
import type * as loop from './loop.js';
import * as ownerindex from './ownerindex.js';
import type { JsonObject } from '../json.js';

const MANAGER = 'generic-garbage-collector';
const PATCH_ATTEMPTS = 5;

/** How the collector sees one owner reference of a dependent. */
export type ReferenceState = 'solid' | 'dangling' | 'waiting';

/** A dependent kept changing while the collector tried to orphan it; the owner keeps its `orphan` finalizer. */
export class OrphaningError extends Error {
  readonly code = 'gc-orphaning-conflict' as const;
}

const isMarked = (obj: JsonObject): boolean => objects.metaOf(obj)['deletionTimestamp'] !== undefined;
const hasFinalizer = (obj: JsonObject, f: string): boolean => objects.finalizersOf(obj).includes(f);

export class GarbageCollector {
  private readonly index = new ownerindex.OwnerIndex();
  /** Owners marked with `foregroundDeletion`, by uid: re-checked whenever one of their dependents changes. */
  private readonly waitingOwners = new Map<string, ownerindex.DependentLocation>();
  private kinds: { generation: number; exact: Map<string, resources.ResourceType>; loose: Map<string, resources.ResourceType> } | undefined;

  constructor(
    private readonly c: core.Core,
    private readonly queue: loop.ControllerLoop,
  ) {
    c.store.subscribe((change) => this.onChange(change));
  }

  private onChange(change: revisions.Change): void {
    const touched = this.index.apply(change);
    const obj = change.object;
    const uid = objects.uidOf(obj);
    const here = { storage: change.storage, key: change.key };

    if (change.type === 'DELETED') {
      this.waitingOwners.delete(uid);
      if (uid && this.index.hasDependents(uid)) this.queue.enqueue(`gc:owner-gone:${uid}`, () => this.collectDependentsOf(uid));
    } else if (isMarked(obj)) {
      if (hasFinalizer(obj, deleting.FOREGROUND)) {
        this.waitingOwners.set(uid, here);
        this.enqueueForeground(uid, here);
      } else {
        this.waitingOwners.delete(uid);
      }
      if (hasFinalizer(obj, deleting.ORPHAN)) this.queue.enqueue(`gc:orphan:${uid}`, () => this.orphan(uid, here));
    }

    if (touched.length === 0) return;
    // A dependent changed: owners waiting for their blocking dependents look again.
    for (const owner of touched) {
      const waiting = this.waitingOwners.get(owner);
      if (waiting) this.enqueueForeground(owner, waiting);
    }
    if (change.type === 'DELETED' || !this.c.options.gcDeleteOrphansOnCreate) return;
    const before = ownerindex.ownerUidsOf(change.prev);
    const gained = change.type === 'ADDED' || ownerindex.ownerUidsOf(obj).some((u) => !before.includes(u));
    if (gained) this.queue.enqueue(`gc:dependent:${change.storage}:${change.key}`, () => this.attemptToDelete(here));
  }

  private enqueueForeground(uid: string, at: ownerindex.DependentLocation): void {
    this.queue.enqueue(`gc:foreground:${uid}`, () => this.foreground(uid, at));
  }

  /** The served type of an owner reference, or undefined when no such kind is served. */
  private typeOf(ref: ownerindex.OwnerReference): resources.ResourceType | undefined {
    const registry = this.c.registry;
    if (!this.kinds || this.kinds.generation !== registry.generation) {
      const exact = new Map<string, resources.ResourceType>();
      const loose = new Map<string, resources.ResourceType>();
      for (const t of registry.all()) {
        exact.set(`${t.group}/${t.version}/${t.kind}`, t);
        if (!loose.has(`${t.group}/${t.kind}`)) loose.set(`${t.group}/${t.kind}`, t);
      }
      this.kinds = { generation: registry.generation, exact, loose };
    }
    const apiVersion = String(ref.apiVersion);
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    return this.kinds.exact.get(`${group}/${version}/${ref.kind}`) ?? this.kinds.loose.get(`${group}/${ref.kind}`);
  }

  /** Classifies one owner reference of a dependent living in `namespace` (D-VERB-33). */
  referenceState(ref: ownerindex.OwnerReference, namespace: string | undefined): ReferenceState {
    const type = this.typeOf(ref);
    if (!type) return 'dangling';
    if (type.namespaced && !namespace) return 'dangling';
    const owner = this.c.store.get(type.storage, revisions.objectKey(type.namespaced ? namespace : undefined, ref.name));
    if (!owner || objects.uidOf(owner) !== ref.uid) return 'dangling';
    return isMarked(owner) && hasFinalizer(owner, deleting.FOREGROUND) ? 'waiting' : 'solid';
  }

  private async collectDependentsOf(uid: string): Promise<void> {
    for (const dep of this.index.dependents(uid)) await this.attemptToDelete(dep);
  }

  /**
   * Looks at one dependent: deletes it when all its owners are gone or waiting for their dependents,
   * or drops the dangling and waiting references when another owner still holds it.
   */
  private async attemptToDelete(at: ownerindex.DependentLocation): Promise<void> {
    for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt++) {
      const dep = this.c.store.get(at.storage, at.key);
      if (!dep) return;
      const refs = ownerindex.ownerReferencesOf(dep);
      if (refs.length === 0) return;
      const type = this.c.registry.anyOfStorage(at.storage);
      if (!type) return;
      const namespace = objects.namespaceOf(dep);
      const states = refs.map((r) => this.referenceState(r, namespace));
      if (states.includes('solid')) {
        if (states.every((s) => s === 'solid')) return;
        const kept = refs.filter((_, i) => states[i] === 'solid');
        if (await this.setOwnerReferences(type, dep, kept)) return;
        continue; // the dependent changed meanwhile: look again
      }
      if (isMarked(dep)) return; // already on its way out
      const blocking = refs.some((r, i) => states[i] === 'waiting' && r.blockOwnerDeletion === true);
      const policy: options.PropagationPolicy = hasFinalizer(dep, deleting.ORPHAN)
        ? 'Orphan'
        : hasFinalizer(dep, deleting.FOREGROUND) || blocking
          ? 'Foreground'
          : 'Background';
      await internal.remove(this.c, type, namespace, objects.nameOf(dep), MANAGER, policy);
      return;
    }
  }

  /** Foreground deletion: removes the dependents, then `foregroundDeletion` once none blocks. */
  private async foreground(uid: string, at: ownerindex.DependentLocation): Promise<void> {
    const owner = this.c.store.get(at.storage, at.key);
    if (!owner || objects.uidOf(owner) !== uid || !isMarked(owner) || !hasFinalizer(owner, deleting.FOREGROUND)) return;
    for (const dep of this.index.dependents(uid)) await this.attemptToDelete(dep);
    const blocked = this.index.dependents(uid).some((dep) => {
      const obj = this.c.store.get(dep.storage, dep.key);
      if (!obj) {
        this.index.forget(uid, dep);
        return false;
      }
      return ownerindex.ownerReferencesOf(obj).some((r) => r.uid === uid && r.blockOwnerDeletion === true);
    });
    if (blocked) return; // looked at again as those dependents change or go
    await this.dropFinalizer(uid, at, deleting.FOREGROUND);
  }

  /** Orphan deletion: every dependent loses its reference to the owner, then the owner loses `orphan`. */
  private async orphan(uid: string, at: ownerindex.DependentLocation): Promise<void> {
    const owner = this.c.store.get(at.storage, at.key);
    if (!owner || objects.uidOf(owner) !== uid || !isMarked(owner) || !hasFinalizer(owner, deleting.ORPHAN)) return;
    for (const dep of this.index.dependents(uid)) {
      let done = false;
      for (let attempt = 0; attempt < PATCH_ATTEMPTS && !done; attempt++) {
        const obj = this.c.store.get(dep.storage, dep.key);
        const type = this.c.registry.anyOfStorage(dep.storage);
        const refs = obj ? ownerindex.ownerReferencesOf(obj) : [];
        if (!obj || !type || !refs.some((r) => r.uid === uid)) {
          if (!obj || !type) this.index.forget(uid, dep);
          done = true;
          break;
        }
        done = await this.setOwnerReferences(
          type,
          obj,
          refs.filter((r) => r.uid !== uid),
        );
      }
      if (!done) throw new OrphaningError(`could not remove the owner reference ${uid} from ${dep.storage} ${dep.key}: it kept changing`);
    }
    await this.dropFinalizer(uid, at, deleting.ORPHAN);
  }

  /** Replaces a dependent's owner references, guarded by its resourceVersion; false on a conflict. */
  private setOwnerReferences(type: resources.ResourceType, obj: JsonObject, refs: ownerindex.OwnerReference[]): Promise<boolean> {
    return internal.patch(
      this.c,
      type,
      objects.namespaceOf(obj),
      objects.nameOf(obj),
      { metadata: { ownerReferences: refs.length ? refs : null, resourceVersion: objects.rvOf(obj) } },
      MANAGER,
    );
  }

  /** Removes one GC finalizer from an owner; a conflicting write re-queues the owner through onChange. */
  private async dropFinalizer(uid: string, at: ownerindex.DependentLocation, finalizer: string): Promise<void> {
    const owner = this.c.store.get(at.storage, at.key);
    const type = this.c.registry.anyOfStorage(at.storage);
    if (!owner || !type || objects.uidOf(owner) !== uid || !hasFinalizer(owner, finalizer)) return;
    const remaining = objects.finalizersOf(owner).filter((f) => f !== finalizer);
    await internal.patch(
      this.c,
      type,
      objects.namespaceOf(owner),
      objects.nameOf(owner),
      { metadata: { finalizers: remaining.length ? remaining : null, resourceVersion: objects.rvOf(owner) } },
      MANAGER,
    );
  }
}

/** Starts the garbage collector on a cluster's store (D-GEN-5). */
export function startGarbageCollector(c: core.Core, queue: loop.ControllerLoop): GarbageCollector {
  return new GarbageCollector(c, queue);
}
