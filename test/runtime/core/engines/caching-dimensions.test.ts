/**
 * The watch cache's report of a write's version (R-CACHE-801) and its declared dimensions with the
 * wait for all of them (R-CACHE-802), with plain values: what `wrote()` returns when it stores the
 * response, when the watch's echo came first, and when it holds nothing; what `syncedEverywhere()`
 * waits for when a kind is watched per namespace.
 */
import { describe, expect, it } from 'vitest';

import type * as bodies from '../../../../runtime/cogs/structs/bodies.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { WatchCache } from '../../../../runtime/core/engines/caching.js';
import { flushed } from '../../../support/waiting.js';

const JOBS = references.makeResource({ group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job' });

function job(name: string, resourceVersion: string, namespace = 'ns1'): bodies.RawBody {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace, uid: `uid-${name}`, resourceVersion } };
}

describe('R-CACHE-801: wrote() reports the version it holds', () => {
  it('R-CACHE-801: the version when stored now, or when the echo came first; undefined when nothing is held', () => {
    const cache = new WatchCache();
    cache.track(JOBS, 'ns1');
    const changes: string[] = [];
    cache.subscribe((change) => changes.push(`${change.new?.metadata?.resourceVersion}:${change.origin}`));
    cache.listed(JOBS, 'ns1');
    expect(cache.wrote(JOBS, job('a', '5'))).toBe('5');
    // The echo of the next write comes before its response: the response changes nothing, but is reported.
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '6') });
    expect(cache.wrote(JOBS, job('a', '6'))).toBe('6');
    // A newer state is held already (someone else's write came after ours): ours is still reported.
    cache.observe(JOBS, 'ns1', { type: 'MODIFIED', object: job('a', '8') });
    expect(cache.wrote(JOBS, job('a', '7'))).toBe('7');
    expect(cache.get(JOBS, 'ns1', 'a')?.metadata?.resourceVersion).toBe('8');
    expect(changes).toEqual(['5:write', '6:watch', '8:watch']);
    // Nothing held: a namespace no watcher covers, an untracked kind.
    expect(cache.wrote(JOBS, job('b', '9', 'elsewhere'))).toBeUndefined();
    const pods = references.makeResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod' });
    expect(cache.wrote(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns1', resourceVersion: '3' } })).toBeUndefined();
  });
});

describe('R-CACHE-802: declared dimensions and the wait for all of them', () => {
  it('R-CACHE-802: syncedEverywhere() waits for every declared namespace, not for a cluster-wide listing', async () => {
    const cache = new WatchCache();
    const signal = new AbortController().signal;
    let done = false;
    const waiting = cache.syncedEverywhere(JOBS, signal).then(() => (done = true));
    cache.track(JOBS, 'ns1');
    cache.track(JOBS, 'ns2');
    cache.listed(JOBS, 'ns1');
    await flushed();
    expect(done).toBe(false);
    expect(cache.isSynced(JOBS, null)).toBe(false);
    cache.listed(JOBS, 'ns2');
    await waiting;
    expect(done).toBe(true);
    // A new namespace, declared and not yet listed, is waited for again.
    cache.track(JOBS, 'ns3');
    let again = false;
    const second = cache.syncedEverywhere(JOBS, signal).then(() => (again = true));
    await flushed();
    expect(again).toBe(false);
    // Its watcher stops for good before listing: the namespace no longer counts.
    cache.forget(JOBS, 'ns3');
    await second;
    expect(again).toBe(true);
  });

  it('R-CACHE-802: a cluster-wide dimension is one dimension; the wait rejects with the signal', async () => {
    const cache = new WatchCache();
    cache.track(JOBS, null);
    const aborter = new AbortController();
    const waiting = cache.syncedEverywhere(JOBS, aborter.signal);
    aborter.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    cache.listed(JOBS, null);
    await cache.syncedEverywhere(JOBS, new AbortController().signal);
    expect(cache.isSynced(JOBS, 'any')).toBe(true);
  });
});
