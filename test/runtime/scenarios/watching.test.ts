/**
 * Scenario A-33 (simulation): robustness of the list-watch stream (R-WATCH-1..5) — the watch
 * request's parameters, bookmarks, `410 Gone`, inactivity, and a fatal `ERROR` event stopping the
 * operator. The devcluster's watch faults and stream drops stand in for the misbehaving server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DevCluster, RequestRecord } from '../../../devcluster/testing.js';
import { Calls } from '../../../fixtures/operators/calls.js';
import * as watching from '../../../fixtures/operators/a33-watching.js';
import * as settingsModule from '../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import * as h from '../../support/scenarios.js';

function params(request: RequestRecord): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(request.query));
}

describe('the watch-stream', () => {
  let cluster: DevCluster;

  beforeAll(async () => {
    cluster = await h.startCluster({ bookmarkIntervalMs: 200 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('A-33 the inactivity timeout is 70 seconds by default', () => {
    expect(new settingsModule.OperatorSettings().watching.inactivityTimeout).toBe(70);
  });

  it('A-33 watches from the listed version, follows bookmarks, re-lists after 410, reconnects when inactive, fails on other errors', async () => {
    cluster.requests.keepResponses = true;
    const calls = new Calls();
    const isWatch = (r: RequestRecord): boolean => r.resource === 'kopfexamples' && r.verb === 'watch';
    const isList = (r: RequestRecord): boolean => r.resource === 'kopfexamples' && r.verb === 'list';
    const since = cluster.requests.all.length;
    const op = await h.startOperator(cluster, {
      registry: watching.register(new OperatorRegistry(), calls),
      configure: (settings) => {
        settings.watching.inactivityTimeout = 1;
      },
    });

    // The watch request continues from the list's version, with bookmarks.
    const list = cluster.requests.all.slice(since).find(isList)!;
    const listed = JSON.parse(list.responseBody!) as { metadata: { resourceVersion: string } };
    const first = cluster.requests.all.slice(since).find(isWatch)!;
    expect(params(first)).toMatchObject({ watch: 'true', allowWatchBookmarks: 'true', resourceVersion: listed.metadata.resourceVersion, timeoutSeconds: '10' });

    const created = await h.apply(cluster, h.referenceObject());
    // The operator's stream of kopfexamples: the one that carried the object's ADDED event.
    const createdRv = String((created['metadata'] as Record<string, unknown>)['resourceVersion']);
    await op.output.waitFor('Creation is processed:');
    const stream = cluster.watchEvents.find((e) => e.type === 'ADDED' && e.rv === createdRv)!.stream;
    await op.output.waitFor('Something has changed, but we are not interested');

    // Bookmarks move the version the next watch starts from; handlers never see them.
    for (let i = 0; cluster.revision < 50; i++) {
      await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `filler-${i}`, namespace: 'default' }, data: {} });
    }
    const revision = cluster.revision;
    // A bookmark on that stream (or on a later one, should the operator have reconnected meanwhile).
    const bookmarked = (): boolean => cluster.watchEvents.some((e) => e.stream >= stream && e.type === 'BOOKMARK' && Number(e.rv) >= revision);
    await h.eventually(bookmarked, 'a bookmark on the watch of kopfexamples');
    // No wait for the operator to read it: ending the stream ends it after the lines already
    // written, so the bookmark arrives before the end of its stream.
    let mark = cluster.requests.all.length;
    cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    const afterBookmark = await cluster.requests.waitFor((r) => isWatch(r) && cluster.requests.all.indexOf(r) >= mark);
    expect(Number(params(afterBookmark)['resourceVersion'])).toBeGreaterThanOrEqual(revision);
    expect(calls.of('event_fn').map((call) => call.args['type'])).not.toContain('BOOKMARK');

    // 410 Gone: a new listing; the listed object changes nothing (noop).
    const noops = op.output.count('Something has changed, but we are not interested');
    cluster.faults.add({ resource: 'kopfexamples', watch: true, times: 1, action: { watch: { error: 410 } } });
    mark = cluster.requests.all.length;
    cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    await op.output.waitFor('Restarting the watch-stream for kopfexamples');
    const relisted = await cluster.requests.waitFor((r) => isList(r) && cluster.requests.all.indexOf(r) >= mark);
    await op.output.waitFor('Something has changed, but we are not interested', { times: noops + 1 });
    expect(calls.count('create_fn')).toBe(1);
    expect(calls.of('event_fn').map((call) => call.args['type'])).toEqual(['ADDED', 'MODIFIED', null]);

    // Silence: the stream is dropped after the inactivity timeout and re-established from the last version.
    // (The watch that follows the re-listing is open before it is dropped.)
    await cluster.requests.waitFor((r) => isWatch(r) && cluster.requests.all.indexOf(r) > cluster.requests.all.indexOf(relisted));
    cluster.faults.add({ resource: 'kopfexamples', watch: true, times: 1, action: { watch: { stall: true } } });
    mark = cluster.requests.all.length;
    cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    const stalled = await cluster.requests.waitFor((r) => isWatch(r) && cluster.requests.all.indexOf(r) >= mark);
    await op.output.waitFor('Watch-stream for kopfexamples.v1.kopf.dev cluster-wide is inactive, reconnecting.', { timeoutMs: 5000 });
    const resumed = await cluster.requests.waitFor((r) => isWatch(r) && cluster.requests.all.indexOf(r) > cluster.requests.all.indexOf(stalled));
    expect(params(resumed)['resourceVersion']).toBe(params(stalled)['resourceVersion']);
    expect(resumed.time - stalled.time).toBeGreaterThanOrEqual(900);
    expect(cluster.requests.all.slice(mark).filter(isList)).toEqual([]);

    // Any other ERROR: the watcher fails and the whole operator stops with a failure.
    cluster.faults.add({ resource: 'kopfexamples', watch: true, times: 1, action: { watch: { error: 500 } } });
    cluster.dropWatches({ resource: 'kopfexamples' }, 'end');
    await op.output.waitFor(/^Watcher for kopfexamples\.v1\.kopf\.dev@.* has failed/);
    await op.stop();
    expect(op.exitCode).toBe(1);
    expect(op.exception).toBeInstanceOf(Error);
    expect(op.output.count('Creation is processed: 1 succeeded; 0 failed.')).toBe(1);
    await h.purge(cluster);
  });
});
