/**
 * A watcher with a label selector (`WatchContext.labelSelector`, R-SHARD-112): what a sharded
 * replica's watch of its own objects relies on. Against the devcluster over loopback, through the
 * real client: the listing and the watch request carry the selector, only matching objects arrive,
 * and an object relabelled out of the selector arrives as DELETED (into it: as ADDED), as the
 * Kubernetes API server sends them.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import * as watching from '../../../../runtime/cogs/client/watching.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { type Client, clientFor, eventually } from './helpers.js';

const CONFIGMAPS = references.makeResource({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap' });
const LABEL = 'shard.kopf-gen.dev/ring-a';
let NAMESPACE = 'sharded';
let namespaces = 0;

describe('watching with a label selector', () => {
  let cluster: DevCluster;
  let client: Client;
  const stoppers: AbortController[] = [];

  beforeAll(async () => {
    cluster = await DevCluster.start({ bookmarkIntervalMs: 300 });
  });
  beforeEach(async () => {
    NAMESPACE = `sharded-${++namespaces}`;
    await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  afterEach(() => {
    for (const stopper of stoppers.splice(0)) stopper.abort();
    client?.api.close();
  });

  const createMap = (name: string, owner?: string): Promise<unknown> =>
    cluster.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: NAMESPACE, ...(owner !== undefined ? { labels: { [LABEL]: owner } } : {}) },
      data: { k: 'v' },
    });
  const relabel = (name: string, owner: string | null): Promise<unknown> =>
    cluster.store.patch({ apiVersion: 'v1', kind: 'ConfigMap' }, name, { metadata: { labels: { [LABEL]: owner } } }, { namespace: NAMESPACE });

  /** Runs a watcher with `labelSelector`; returns its events as `TYPE:name` (listing events as `null:name`). */
  function start(labelSelector: string): { names(): string[]; done: Promise<void> } {
    const stopper = new AbortController();
    stoppers.push(stopper);
    const events: watching.WatchEvent[] = [];
    const ctx: watching.WatchContext = {
      api: client.api,
      settings: client.settings,
      resource: CONFIGMAPS,
      namespace: NAMESPACE,
      labelSelector,
      logger: client.logger,
    };
    const done = (async () => {
      for await (const event of watching.infiniteWatch(ctx, { signal: stopper.signal })) events.push(event);
    })().catch(() => undefined);
    return { names: () => events.map((e) => (watching.isListed(e) ? 'LISTED' : `${e.type ?? 'null'}:${e.object.metadata?.name}`)), done };
  }

  it('R-SHARD-112 lists and watches only matching objects; an object relabelled out of the selector arrives as DELETED, into it as ADDED', async () => {
    client = clientFor(cluster);
    await createMap('mine-1', 'replica-a');
    await createMap('theirs-1', 'replica-b');
    await createMap('unlabelled-1');
    const watcher = start(`${LABEL}=replica-a`);
    await eventually(() => watcher.names().includes('LISTED'), 'the listing');
    expect(watcher.names()).toEqual(['null:mine-1', 'LISTED']);

    // Both requests carried the selector.
    const requests = () => cluster.requests.filter((r) => r.resource === 'configmaps' && r.namespace === NAMESPACE && r.verb === 'watch');
    await eventually(() => requests().length === 1, 'the watch request');
    const sent = cluster.requests.filter((r) => r.resource === 'configmaps' && r.namespace === NAMESPACE && (r.verb === 'list' || r.verb === 'watch'));
    expect(sent.map((r) => r.verb)).toEqual(['list', 'watch']);
    for (const request of sent) expect(new URLSearchParams(request.query).get('labelSelector')).toBe(`${LABEL}=replica-a`);

    await createMap('theirs-2', 'replica-b');
    await createMap('mine-2', 'replica-a');
    await eventually(() => watcher.names().includes('ADDED:mine-2'), 'the new own object');
    await relabel('mine-1', 'replica-b'); // handed over: it leaves the selector
    await eventually(() => watcher.names().includes('DELETED:mine-1'), 'the object leaving the selector');
    await relabel('theirs-1', 'replica-a'); // taken over: it enters the selector
    await eventually(() => watcher.names().includes('ADDED:theirs-1'), 'the object entering the selector');
    await relabel('unlabelled-1', 'replica-b');
    await relabel('mine-2', 'replica-a'); // no change: no event
    await cluster.store.patch({ apiVersion: 'v1', kind: 'ConfigMap' }, 'mine-2', { data: { k: 'w' } }, { namespace: NAMESPACE });
    await eventually(() => watcher.names().includes('MODIFIED:mine-2'), 'the change of an own object');
    expect(watcher.names()).toEqual(['null:mine-1', 'LISTED', 'ADDED:mine-2', 'DELETED:mine-1', 'ADDED:theirs-1', 'MODIFIED:mine-2']);
  });

  it('R-SHARD-112 a set-based selector (notin) matches unlabelled objects and those of other owners, as a claimer watches', async () => {
    client = clientFor(cluster);
    await createMap('orphan', undefined);
    await createMap('gone-owner', 'replica-x');
    await createMap('live-owner', 'replica-y');
    await createMap('other-owner', 'replica-b');
    const watcher = start(`${LABEL} notin (replica-y,replica-a,replica-b)`);
    await eventually(() => watcher.names().includes('LISTED'), 'the listing');
    const listed = watcher.names().slice(0, watcher.names().indexOf('LISTED'));
    expect(listed.sort()).toEqual(['null:gone-owner', 'null:orphan']);
    await relabel('live-owner', null); // its owner's label removed: now it matches
    await eventually(() => watcher.names().includes('ADDED:live-owner'), 'the object entering the selector');
    await relabel('orphan', 'replica-a'); // claimed: it no longer matches
    await eventually(() => watcher.names().includes('DELETED:orphan'), 'the object leaving the selector');
  });
});
