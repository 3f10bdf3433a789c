/**
 * The watch cache in a real operator serving the devcluster over loopback (R-CACHE-105..108,
 * R-CACHE-111, R-CACHE-112): an operator with a reconcile handler owning ConfigMaps builds the
 * cache, its watchers feed it, its `client` reads ConfigMaps from it without a request (counted
 * in the devcluster's request log), reads its own writes while the watch is held by a pause, and
 * sees the changes missed meanwhile once the re-listing after the pause is done. ConfigMaps have
 * no cause handlers: they get no per-object queue state.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { DevCluster } from '../../../../devcluster/testing.js';
import type { KubeClient } from '../../../../runtime/cogs/client/clients.js';
import { ApiNotFoundError } from '../../../../runtime/cogs/client/errors.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import * as inventory from '../../../../runtime/core/reactor/inventory.js';
import { builtins, connect } from '../../../../runtime/index.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';

const CONFIGMAPS = references.makeResource({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap' });

let cluster: DevCluster;
let op: fx.RunningOperator;
let other: KubeClient;

beforeEach(async () => {
  cluster = await fx.startCluster();
  const registry = new OperatorRegistry();
  on.reconcile('kopfexamples.v1.kopf.dev', { registry, owns: [builtins.ConfigMaps] }, function reconcile_example() {
    return undefined;
  });
  op = await fx.startOperator({ cluster, registry, waitForWatch: 'configmaps' });
  other = await connect({ connection: { server: cluster.url, token: cluster.token } });
});
afterEach(async () => {
  await op?.stop();
  await other?.close();
  await cluster?.stop();
});

/** The reads of ConfigMaps the cluster has answered (gets and lists; watches aside, whoever sent them). */
const requests = (): number => cluster.requests.all.filter((r) => r.resource === 'configmaps' && (r.verb === 'get' || r.verb === 'list')).length;

function cacheOf(running: fx.RunningOperator) {
  const cache = running.context.cache;
  if (cache === undefined) throw new Error('The operator has no watch cache.');
  return cache;
}

describe('the watch cache of an operator with reconcile handlers', () => {
  it("R-CACHE-111: the operator's client gets and lists a cached kind with no request; { cache: false } makes one", async () => {
    const cache = cacheOf(op);
    await cache.synced(CONFIGMAPS, 'default', AbortSignal.timeout(10_000));
    await other.create(builtins.ConfigMaps, { metadata: { name: 'seen', namespace: 'default', labels: { app: 'x' } }, data: { a: '1' } });
    await fx.eventually(() => cache.get(CONFIGMAPS, 'default', 'seen') !== undefined, 'the ConfigMap to reach the cache');
    const client = op.context.client!;

    const before = requests();
    const got = await client.get(builtins.ConfigMaps, 'seen', { namespace: 'default' });
    const listed = await client.list(builtins.ConfigMaps, { namespace: 'default', labelSelector: 'app=x' });
    const missing = await client.get(builtins.ConfigMaps, 'never', { namespace: 'default' }).catch((error: unknown) => error);
    expect(requests()).toBe(before);
    expect(got.data).toEqual({ a: '1' });
    expect(listed.items.map((item) => item.metadata?.name)).toEqual(['seen']);
    expect(missing).toBeInstanceOf(ApiNotFoundError);

    await client.get(builtins.ConfigMaps, 'seen', { namespace: 'default', cache: false });
    expect(requests()).toBe(before + 1);
    await client.list(builtins.ConfigMaps, { namespace: 'default', cache: false });
    expect(requests()).toBe(before + 2);
  });

  it('R-CACHE-112: a read right after an own write returns that write while the watch is held; R-CACHE-105: the re-listing brings what was missed', async () => {
    const cache = cacheOf(op);
    const client = op.context.client!;
    await cache.synced(CONFIGMAPS, 'default', AbortSignal.timeout(10_000));
    const created = await client.create(builtins.ConfigMaps, { metadata: { name: 'mine', namespace: 'default' }, data: { v: '1' } });
    await other.create(builtins.ConfigMaps, { metadata: { name: 'doomed', namespace: 'default' } });
    await fx.eventually(() => cache.get(CONFIGMAPS, 'default', 'doomed') !== undefined, 'the other ConfigMap to reach the cache');

    // Hold the watch: the operator pauses, its watchers close their streams (R-WATCH-6).
    const hold = op.context.paused!.makeToggle(true, 'held by the test');
    const configmapStreams = () => op.context.streams!.snapshots().filter((stream) => stream.description.startsWith('configmaps'));
    await fx.eventually(
      () => configmapStreams().length > 0 && configmapStreams().every((stream) => stream.paused && !stream.open),
      'the ConfigMaps watch to pause',
    );

    const patched = await client.patch(builtins.ConfigMaps, 'mine', { data: { v: '2' } }, { namespace: 'default' });
    expect(Number(patched.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));
    await other.patch(builtins.ConfigMaps, 'mine', { data: { v: '3' } }, { namespace: 'default' }); // someone else, unseen while held
    await other.delete(builtins.ConfigMaps, 'doomed', { namespace: 'default' });
    const before = requests();
    const read = await client.get(builtins.ConfigMaps, 'mine', { namespace: 'default' });
    expect(requests()).toBe(before);
    expect(read.metadata?.resourceVersion).toBe(patched.metadata?.resourceVersion);
    expect(read.data).toEqual({ v: '2' });
    expect(cache.get(CONFIGMAPS, 'default', 'doomed')).toBeDefined(); // not seen yet

    hold.turnOff();
    await fx.eventually(() => (cache.get(CONFIGMAPS, 'default', 'mine')?.data as { v?: string } | undefined)?.v === '3', 'the change missed while held');
    await fx.eventually(() => cache.get(CONFIGMAPS, 'default', 'doomed') === undefined, 'the deletion missed while held');
  });

  it('R-CACHE-107/108: a kind watched only for reconcile handlers has no queue state; the census counts the cached objects', async () => {
    const cache = cacheOf(op);
    await cache.synced(CONFIGMAPS, 'default', AbortSignal.timeout(10_000));
    const base = inventory.takeCensus(op.context).cached;
    for (const name of ['c1', 'c2', 'c3']) await other.create(builtins.ConfigMaps, { metadata: { name, namespace: 'default' } });
    await fx.eventually(() => inventory.takeCensus(op.context).cached === base + 3, 'three more cached objects');
    const queued = [...op.context.queues!.byResource().keys()].map((resource) => resource.plural);
    expect(queued).toEqual([]); // neither the owned ConfigMaps nor the reconciled kind: no cause handlers here
    const census = inventory.takeCensus(op.context);
    expect(census.memories).toBe(0);
    expect(census.streams).toBe(0);
    expect(census.queuedEvents).toBe(0);
    for (const name of ['c1', 'c2', 'c3']) await other.delete(builtins.ConfigMaps, name, { namespace: 'default' });
    await fx.eventually(() => inventory.takeCensus(op.context).cached === base, 'the cached objects to go');
  });

  it('R-CACHE-106: an operator without reconcile handlers has no cache, and its client asks the server', async () => {
    expect(op.context.cache).toBeDefined();
    const plain = await fx.startOperator({ cluster, registry: kopfOnlyRegistry(), waitForWatch: 'kopfexamples' });
    try {
      expect(plain.context.cache).toBeUndefined();
      const before = requests();
      await plain.context.client!.list(builtins.ConfigMaps, { namespace: 'default' });
      expect(requests()).toBe(before + 1);
    } finally {
      await plain.stop();
    }
  });
});

function kopfOnlyRegistry(): OperatorRegistry {
  const registry = new OperatorRegistry();
  on.event('kopfexamples.v1.kopf.dev', { registry }, function event_fn() {
    return undefined;
  });
  return registry;
}
