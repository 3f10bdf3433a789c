/**
 * Per-object in-memory records (Kopf's `ResourceMemory`): what the operator must remember about an
 * object between processing cycles but must never write to it — either because it belongs to this
 * process only (running daemons and timers, error throttling, index errors) or because it would be
 * meaningless after a restart (the patch the operator waits to see come back).
 *
 * One `ObjectMemory` holds the object's memo (R-MEMO-2); whether it was first seen in the initial
 * listing and has been fully handled once since, which is how resuming is told from changing
 * (R-CAUSE-2); the resource version it waits for to be consistent again (R-QUEUE-4); JSON-patch
 * functions carried over after a conflict (R-PATCH-3); its error-throttling state (R-QUEUE-8); and,
 * only for objects that have them, its daemons and timers and its indexing errors. The record is
 * created on first sight and dropped on the object's DELETED event (daemons still exiting keep their
 * own reference to it).
 */
import type * as spawning from '../engines/spawning.js';
import type * as indexing from '../engines/indexing.js';
import * as memos from '../intents/memos.js';
import * as throttling from '../actions/throttling.js';

export class ObjectMemory {
  /** The per-object memo: a shallow copy of the operator memo (R-MEMO-2). */
  readonly memo: object;
  /** First seen through the initial listing (`type: null`), not through ADDED/MODIFIED. */
  readonly noticedByListing: boolean;
  /** All selected change handlers finished at least once in this process (R-CAUSE-2). */
  fullyHandledOnce = false;
  /** The resource version of our last PATCH response, and until when to wait for it (ms). */
  expectedVersion: string | null = null;
  expectedUntil: number | null = null;
  /** JSON-patch transformation functions left over after a 422 conflict (R-PATCH-3). */
  leftoverFns: ((body: object) => void)[] = [];
  readonly throttler = new throttling.Throttler();
  /** Daemons and timers of this object (created by the spawning engine on first use). */
  daemons: spawning.DaemonsMemory | undefined;
  /** Indexing errors of this object (created by the indexing engine on first failure). */
  indexing: indexing.IndexingMemory | undefined;

  constructor(memo: object, noticedByListing: boolean) {
    this.memo = memo;
    this.noticedByListing = noticedByListing;
  }

  /** The object is "initial" while it came from the listing and is not yet fully handled once. */
  get initial(): boolean {
    return this.noticedByListing && !this.fullyHandledOnce;
  }
}

/** All object memories of one operator, by object key. */
export class Memories {
  private readonly records = new Map<string, ObjectMemory>();

  constructor(private readonly operatorMemo: object) {}

  /** The memory of an object, created on first sight. */
  recall(key: string, options: { readonly listing: boolean }): ObjectMemory {
    let memory = this.records.get(key);
    if (!memory) {
      memory = new ObjectMemory(memos.copyMemo(this.operatorMemo), options.listing);
      this.records.set(key, memory);
    }
    return memory;
  }

  /** Drops the memory of a deleted object (its memo goes with it). */
  forget(key: string): void {
    this.records.delete(key);
  }

  get size(): number {
    return this.records.size;
  }

  /** All remembered objects' memories. */
  values(): IterableIterator<ObjectMemory> {
    return this.records.values();
  }
}
