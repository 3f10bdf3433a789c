/**
 * The watch cache (R-CACHE-101..110) with plain values: what it holds after watch events, listings,
 * re-listings and the operator's own writes; its owner index; its sync state and waiters; and the
 * changes its listeners hear — exactly one per change of what it holds.
 */
import { describe, expect, it } from 'vitest';

import type * as bodies from '../../../../runtime/cogs/structs/bodies.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { type CacheChange, isNewer, WatchCache } from '../../../../runtime/core/engines/caching.js';

const JOBS = references.makeResource({ group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job' });
const NODES = references.makeResource({ group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false });

function job(name: string, resourceVersion: string, extra: { owner?: string; namespace?: string; labels?: Record<string, string> } = {}): bodies.RawBody {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: extra.namespace ?? 'ns1',
      uid: `uid-${name}`,
      resourceVersion,
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.owner
        ? { ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'CronJob', name: 'owner', uid: extra.owner, controller: true, blockOwnerDeletion: true }] }
        : {}),
    },
  };
}

/** A cache tracking jobs, with its changes recorded as `old→new` resource versions (`-` for absent). */
function cacheWithLog(): { cache: WatchCache; log: string[]; changes: CacheChange[] } {
  const cache = new WatchCache();
  cache.track(JOBS);
  const log: string[] = [];
  const changes: CacheChange[] = [];
  cache.subscribe((change) => {
    changes.push(change);
    const name = (change.new ?? change.old)?.metadata?.name;
    log.push(`${name}:${change.old?.metadata?.resourceVersion ?? '-'}→${change.new?.metadata?.resourceVersion ?? '-'}:${change.origin}`);
  });
  return { cache, log, changes };
}

const versionOf = (body: bodies.RawBody | undefined): string | undefined => body?.metadata?.resourceVersion;

describe('R-CACHE-101: resource versions order what the cache holds', () => {
  it('R-CACHE-101: compares decimal versions as integers, else the later arrival wins', () => {
    expect(isNewer('10', '9')).toBe(true);
    expect(isNewer('9', '10')).toBe(false);
    expect(isNewer('10', '10')).toBe(false);
    expect(isNewer('007', '7')).toBe(false);
    expect(isNewer('123456789012345678901234567890', '123456789012345678901234567889')).toBe(true);
    expect(isNewer('abc', '10')).toBe(true);
    expect(isNewer('5', undefined)).toBe(true);
  });

  it('R-CACHE-101: an older or equal version from the watch is no change and does not replace what is held', () => {
    const { cache, log } = cacheWithLog();
    cache.observe(JOBS, 'ns1', { type: 'ADDED', object: job('a', '10') });
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '9') });
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '10') });
    expect(versionOf(cache.get(JOBS, 'ns1', 'a'))).toBe('10');
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '11') });
    expect(versionOf(cache.get(JOBS, 'ns1', 'a'))).toBe('11');
    expect(log).toEqual(['a:-→10:watch', 'a:10→11:watch']);
  });

  it('R-CACHE-101: untracked resources are neither stored nor heard', () => {
    const { cache, log } = cacheWithLog();
    cache.observe(NODES, null, { type: 'ADDED', object: { metadata: { name: 'n', resourceVersion: '1' } } });
    expect(cache.isTracked(NODES)).toBe(false);
    expect(cache.get(NODES, null, 'n')).toBeUndefined();
    expect(log).toEqual([]);
  });
});

describe('R-CACHE-102: deletions and tombstones', () => {
  it('R-CACHE-102: a DELETED event removes the object (one change, new undefined)', () => {
    const { cache, log } = cacheWithLog();
    cache.observe(JOBS, 'ns1', { type: 'ADDED', object: job('a', '1') });
    cache.observe(JOBS, 'ns1', { type: 'DELETED', object: job('a', '2') });
    expect(cache.get(JOBS, 'ns1', 'a')).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(log).toEqual(['a:-→1:watch', 'a:1→-:watch']);
  });

  it('R-CACHE-102: an own delete leaves a tombstone: a stale event cannot bring the object back, a newer one can', () => {
    const { cache, log } = cacheWithLog();
    cache.observe(JOBS, 'ns1', { type: null, object: job('a', '5') });
    cache.listed(JOBS, 'ns1');
    cache.removed(JOBS, 'ns1', 'a');
    expect(cache.get(JOBS, 'ns1', 'a')).toBeUndefined();
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '5') }); // the lagging watch
    expect(cache.get(JOBS, 'ns1', 'a')).toBeUndefined();
    cache.observe(JOBS, 'ns1', { type: 'DELETED', object: job('a', '6') }); // the deletion's own event: no change
    cache.observe(JOBS, 'ns1', { type: 'ADDED', object: job('a', '7') }); // re-created by someone
    expect(versionOf(cache.get(JOBS, 'ns1', 'a'))).toBe('7');
    expect(log).toEqual(['a:-→5:watch', 'a:5→-:write', 'a:-→7:watch']);
    expect(cache.size).toBe(1);
  });
});

describe('R-CACHE-103: read-your-writes', () => {
  it("R-CACHE-103: a write's response replaces an older version; the watch's echo of it is no change; a stale event does not roll it back", () => {
    const { cache, log } = cacheWithLog();
    cache.observe(JOBS, 'ns1', { type: null, object: job('a', '1') });
    cache.listed(JOBS, 'ns1');
    cache.wrote(JOBS, job('a', '3'));
    expect(versionOf(cache.get(JOBS, 'ns1', 'a'))).toBe('3');
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '2') }); // someone else's, before ours
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '3') }); // our own, echoed
    expect(versionOf(cache.get(JOBS, 'ns1', 'a'))).toBe('3');
    cache.wrote(JOBS, job('a', '2')); // an older response (e.g. of a slower, earlier request)
    expect(versionOf(cache.get(JOBS, 'ns1', 'a'))).toBe('3');
    expect(log).toEqual(['a:-→1:watch', 'a:1→3:write']);
  });

  it('R-CACHE-103: writes into a namespace no watcher covers are not kept (nothing would update them)', () => {
    const { cache, log } = cacheWithLog();
    cache.listed(JOBS, 'ns1');
    cache.wrote(JOBS, job('b', '1', { namespace: 'ns2' }));
    expect(cache.get(JOBS, 'ns2', 'b')).toBeUndefined();
    expect(log).toEqual([]);
  });
});

describe('R-CACHE-104: the owner index', () => {
  it('R-CACHE-104: ownedBy() returns the objects whose controller owner has the uid, kept as owners change and objects go', () => {
    const { cache } = cacheWithLog();
    cache.observe(JOBS, 'ns1', { type: null, object: job('a', '1', { owner: 'o1' }) });
    cache.observe(JOBS, 'ns1', { type: null, object: job('b', '2', { owner: 'o1' }) });
    cache.observe(JOBS, 'ns1', { type: null, object: job('c', '3', { owner: 'o2' }) });
    cache.observe(JOBS, 'ns1', { type: null, object: job('d', '4') });
    cache.listed(JOBS, 'ns1');
    const names = (uid: string): string[] =>
      cache
        .ownedBy(JOBS, uid)
        .map((body) => body.metadata!.name!)
        .sort();
    expect(names('o1')).toEqual(['a', 'b']);
    expect(names('o2')).toEqual(['c']);
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('b', '5', { owner: 'o2' }) }); // adopted by o2
    cache.observe(JOBS, 'ns1', { type: 'DELETED', object: job('a', '6', { owner: 'o1' }) });
    expect(names('o1')).toEqual([]);
    expect(names('o2')).toEqual(['b', 'c']);
    cache.removed(JOBS, 'ns1', 'c');
    expect(names('o2')).toEqual(['b']);
  });

  it('R-CACHE-104: an ownerReference without controller: true is not indexed', () => {
    const { cache } = cacheWithLog();
    const body = job('a', '1', { owner: 'o1' });
    (body.metadata!.ownerReferences![0] as { controller?: boolean }).controller = false;
    cache.observe(JOBS, 'ns1', { type: 'ADDED', object: body });
    expect(cache.ownedBy(JOBS, 'o1')).toEqual([]);
  });
});

describe('R-CACHE-105: listings, re-listings and sync state', () => {
  it('R-CACHE-105: a dimension is synced after its first listing; a cluster-wide one covers every namespace; synced() waits for it', async () => {
    const { cache } = cacheWithLog();
    const controller = new AbortController();
    const waiting = cache.synced(JOBS, 'ns1', controller.signal);
    let done = false;
    void waiting.then(() => (done = true));
    expect(cache.isSynced(JOBS, 'ns1')).toBe(false);
    cache.listed(JOBS, 'ns2');
    await Promise.resolve();
    expect(done).toBe(false);
    expect(cache.isSynced(JOBS, 'ns1')).toBe(false);
    expect(cache.isSynced(JOBS, null)).toBe(false);
    cache.listed(JOBS, null);
    await waiting;
    expect(cache.isSynced(JOBS, 'ns1')).toBe(true);
    expect(cache.isSynced(JOBS, null)).toBe(true);
  });

  it('R-CACHE-105: synced() rejects with the signal’s reason when it aborts first', async () => {
    const { cache } = cacheWithLog();
    const controller = new AbortController();
    const waiting = cache.synced(JOBS, 'ns1', controller.signal);
    controller.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
  });

  it('R-CACHE-105: a re-listing drops what it did not contain, one change each; what it contained unchanged is no change', () => {
    const { cache, log } = cacheWithLog();
    for (const name of ['a', 'b', 'c']) cache.observe(JOBS, 'ns1', { type: null, object: job(name, '1') });
    cache.observe(JOBS, 'ns2', { type: null, object: job('z', '1', { namespace: 'ns2' }) });
    cache.listed(JOBS, 'ns1');
    cache.listed(JOBS, 'ns2');
    log.length = 0;
    // The watch of ns1 broke (410); meanwhile b was deleted and c changed: the re-listing of ns1.
    cache.observe(JOBS, 'ns1', { type: null, object: job('a', '1') });
    cache.observe(JOBS, 'ns1', { type: null, object: job('c', '4') });
    cache.listed(JOBS, 'ns1', '4');
    expect(log.sort()).toEqual(['b:1→-:watch', 'c:1→4:watch']);
    expect(cache.list(JOBS, 'ns1').map((body) => body.metadata!.name)).toEqual(['a', 'c']);
    expect(cache.list(JOBS, 'ns2').map((body) => body.metadata!.name)).toEqual(['z']); // other dimensions keep theirs
    expect(cache.list(JOBS, null)).toHaveLength(3);
  });

  it('R-CACHE-105: an empty re-listing drops everything of its dimension', () => {
    const { cache, log } = cacheWithLog();
    cache.observe(JOBS, 'ns1', { type: null, object: job('a', '1') });
    cache.listed(JOBS, 'ns1');
    cache.listed(JOBS, 'ns1', '9');
    expect(cache.list(JOBS, 'ns1')).toEqual([]);
    expect(log).toEqual(['a:-→1:watch', 'a:1→-:watch']);
  });

  it("R-CACHE-105: an own write newer than the listing's snapshot survives the listing that could not contain it", () => {
    const { cache } = cacheWithLog();
    cache.listed(JOBS, 'ns1', '5');
    cache.wrote(JOBS, job('new', '12')); // created while the re-listing (snapshot at 10) was handed out
    cache.observe(JOBS, 'ns1', { type: null, object: job('a', '3') });
    cache.listed(JOBS, 'ns1', '10');
    expect(versionOf(cache.get(JOBS, 'ns1', 'new'))).toBe('12');
    cache.wrote(JOBS, job('old', '8'));
    cache.listed(JOBS, 'ns1', '10'); // older than the snapshot and not in it: gone
    expect(cache.get(JOBS, 'ns1', 'old')).toBeUndefined();
  });

  it('R-CACHE-105: a stopped dimension is forgotten: no longer synced, its objects no longer held, nothing heard', () => {
    const { cache, log } = cacheWithLog();
    cache.observe(JOBS, 'ns1', { type: null, object: job('a', '1') });
    cache.listed(JOBS, 'ns1');
    log.length = 0;
    cache.forget(JOBS, 'ns1');
    expect(cache.isSynced(JOBS, 'ns1')).toBe(false);
    expect(cache.get(JOBS, 'ns1', 'a')).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(log).toEqual([]);
  });

  it('R-CACHE-105: cluster-scoped resources are held under the cluster-wide dimension', () => {
    const cache = new WatchCache();
    cache.track(NODES);
    cache.observe(NODES, null, { type: null, object: { metadata: { name: 'n1', resourceVersion: '1' } } });
    cache.listed(NODES, null);
    expect(cache.get(NODES, null, 'n1')?.metadata?.name).toBe('n1');
    expect(cache.list(NODES, null)).toHaveLength(1);
    cache.forget(NODES, null);
    expect(cache.size).toBe(0);
  });
});

describe('R-CACHE-110: listeners', () => {
  it('R-CACHE-110: are called synchronously, once per real change, with the old and new bodies; a failing listener harms nobody', () => {
    const { cache, changes } = cacheWithLog();
    cache.subscribe(() => {
      throw new Error('boom');
    });
    cache.observe(JOBS, 'ns1', { type: 'ADDED', object: job('a', '1') });
    expect(changes).toHaveLength(1); // already, synchronously
    cache.observe(JOBS, 'ns1', { type: 'ADDED', object: job('a', '1') });
    cache.observe(JOBS, 'ns1', { type: null, object: job('a', '1') });
    cache.listed(JOBS, 'ns1');
    expect(changes).toHaveLength(1);
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '2') });
    expect(changes).toHaveLength(2);
    expect(changes[1]).toMatchObject({ resource: JOBS, origin: 'watch' });
    expect(versionOf(changes[1]!.old)).toBe('1');
    expect(versionOf(changes[1]!.new)).toBe('2');
  });

  it('R-CACHE-110: an unsubscribed listener hears nothing more', () => {
    const cache = new WatchCache();
    cache.track(JOBS);
    let heard = 0;
    const unsubscribe = cache.subscribe(() => heard++);
    cache.observe(JOBS, 'ns1', { type: 'ADDED', object: job('a', '1') });
    unsubscribe();
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '2') });
    expect(heard).toBe(1);
  });
});
