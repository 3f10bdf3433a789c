/**
 * The typed client with a watch cache (R-CACHE-109, R-CACHE-111, R-CACHE-112), against the
 * devcluster over loopback: reads of a synced cached kind make no request and answer what the
 * server would (label selectors evaluated in memory select what the server selects; a miss is the
 * server's 404); paged lists, other field selectors, unsynced kinds and `{ cache: false }` go to the
 * server; every write's response reaches the cache, so a read right after it returns it although
 * nothing feeds the cache from a watch here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import { KubeClient } from '../../../../runtime/cogs/client/clients.js';
import { ApiNotFoundError } from '../../../../runtime/cogs/client/errors.js';
import { matchesLabels, parseLabelSelector, LabelSelectorError } from '../../../../runtime/cogs/structs/labelselectors.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { WatchCache } from '../../../../runtime/core/engines/caching.js';
import { builtins } from '../../../../runtime/index.js';
import { clientFor } from './helpers.js';

const CONFIGMAPS = references.makeResource({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap' });
const SECRETS = references.makeResource({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret' });

let cluster: DevCluster;
let raw: ReturnType<typeof clientFor>;

beforeAll(async () => {
  cluster = await DevCluster.start({ tls: false });
  raw = clientFor(cluster);
  const plain = new KubeClient(raw.api);
  const labelled: [string, Record<string, string>][] = [
    ['web-1', { app: 'web', tier: 'front' }],
    ['web-2', { app: 'web', tier: 'back', canary: 'yes' }],
    ['db-1', { app: 'db', tier: 'back' }],
    ['bare', {}],
  ];
  for (const name of ['sel', 'rw']) await plain.create(builtins.Namespaces, { metadata: { name } });
  for (const [name, labels] of labelled) await plain.create(builtins.ConfigMaps, { metadata: { name, namespace: 'sel', labels } });
});
afterAll(async () => {
  await cluster.stop();
});

/** A cache of ConfigMaps in `namespace` (or all), listed once through the API as a watcher would. */
async function syncedCache(namespace: string | null): Promise<WatchCache> {
  const cache = new WatchCache();
  cache.track(CONFIGMAPS);
  const listing = await raw.api.list(CONFIGMAPS, namespace);
  for (const object of listing.items) cache.observe(CONFIGMAPS, namespace, { type: null, object });
  cache.listed(CONFIGMAPS, namespace, listing.resourceVersion);
  return cache;
}

const count = (): number => cluster.requests.all.length;
const names = (items: readonly { metadata?: { name?: string } }[]): string[] => items.map((item) => item.metadata!.name!).sort();

describe('R-CACHE-109: label selectors in memory', () => {
  it('R-CACHE-109: equality, inequality, set-based, existence and absence; requirements are ANDed', () => {
    const labels = { app: 'web', tier: 'back' };
    const match = (selector: string): boolean => matchesLabels(parseLabelSelector(selector), labels);
    expect(match('')).toBe(true);
    expect(match('app=web')).toBe(true);
    expect(match('app==web,tier=back')).toBe(true);
    expect(match('app=web,tier=front')).toBe(false);
    expect(match('app!=db')).toBe(true);
    expect(match('canary!=yes')).toBe(true); // absent keys satisfy !=
    expect(match('tier in (front, back)')).toBe(true);
    expect(match('tier notin (back)')).toBe(false);
    expect(match('canary notin (yes)')).toBe(true);
    expect(match('app')).toBe(true);
    expect(match('!canary')).toBe(true);
    expect(match('!app')).toBe(false);
    expect(match('app in (web),!canary,tier')).toBe(true);
  });

  it('R-CACHE-109: malformed selectors are refused', () => {
    for (const bad of ['app in ()', 'a b', '=web', 'app=web=x', 'in (a)x']) expect(() => parseLabelSelector(bad), bad).toThrow(LabelSelectorError);
  });

  it('R-CACHE-109: a cached list selects exactly what the server selects', async () => {
    const cache = await syncedCache('sel');
    const client = new KubeClient(raw.api, { cache });
    const selectors = ['app=web', 'app!=web', 'tier in (back)', 'tier notin (back)', 'canary', '!canary', 'app=web,tier=back', 'app in (web,db),!canary'];
    for (const labelSelector of selectors) {
      const fromCache = await client.list(builtins.ConfigMaps, { namespace: 'sel', labelSelector });
      const fromServer = await client.list(builtins.ConfigMaps, { namespace: 'sel', labelSelector, cache: false });
      expect(names(fromCache.items), labelSelector).toEqual(names(fromServer.items));
      expect(fromServer.items.length, labelSelector).toBeGreaterThan(0);
    }
  });
});

describe('R-CACHE-111: reads of a synced cached kind make no request', () => {
  it('R-CACHE-111: get and list answer from the cache, with apiVersion and kind, as copies', async () => {
    const cache = await syncedCache(null);
    const client = new KubeClient(raw.api, { cache });
    const before = count();
    const one = await client.get(builtins.ConfigMaps, 'web-1', { namespace: 'sel' });
    const all = await client.list(builtins.ConfigMaps, { namespace: 'sel', labelSelector: { app: 'web' } });
    const byName = await client.list(builtins.ConfigMaps, { fieldSelector: 'metadata.name=db-1,metadata.namespace=sel' });
    expect(count()).toBe(before);
    expect(one).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-1', labels: { app: 'web' } } });
    expect(names(all.items)).toEqual(['web-1', 'web-2']);
    expect(names(byName.items)).toEqual(['db-1']);
    one.metadata!.labels!.app = 'changed'; // the caller's copy
    expect(cache.get(CONFIGMAPS, 'sel', 'web-1')?.metadata?.labels?.app).toBe('web');
  });

  it("R-CACHE-111: a miss is the server's own ApiNotFoundError, with the same words", async () => {
    const client = new KubeClient(raw.api, { cache: await syncedCache(null) });
    const before = count();
    const cached = await client.get(builtins.ConfigMaps, 'absent', { namespace: 'sel' }).catch((error: unknown) => error);
    expect(count()).toBe(before);
    const requested = await client.get(builtins.ConfigMaps, 'absent', { namespace: 'sel', cache: false }).catch((error: unknown) => error);
    expect(count()).toBe(before + 1);
    expect(cached).toBeInstanceOf(ApiNotFoundError);
    expect(requested).toBeInstanceOf(ApiNotFoundError);
    expect((cached as ApiNotFoundError).detail).toBe((requested as ApiNotFoundError).detail);
    expect((cached as ApiNotFoundError).reason).toBe('NotFound');
    expect((cached as ApiNotFoundError).status).toBe(404);
  });

  it('R-CACHE-111: { cache: false }, pages, other field selectors, unsynced namespaces and untracked kinds make a request each', async () => {
    const client = new KubeClient(raw.api, { cache: await syncedCache('sel') });
    const cases: [string, () => Promise<unknown>][] = [
      ['cache: false (get)', () => client.get(builtins.ConfigMaps, 'web-1', { namespace: 'sel', cache: false })],
      ['cache: false (list)', () => client.list(builtins.ConfigMaps, { namespace: 'sel', cache: false })],
      ['limit', () => client.list(builtins.ConfigMaps, { namespace: 'sel', limit: 2 })],
      // The server refuses this one (ConfigMaps select by name and namespace only): its answer, not the cache's.
      ['another field', () => client.list(builtins.ConfigMaps, { namespace: 'sel', fieldSelector: 'metadata.uid=x' }).catch((error: unknown) => error)],
      ['another namespace', () => client.list(builtins.ConfigMaps, { namespace: 'default' })],
      ['all namespaces', () => client.list(builtins.ConfigMaps)],
      ['an untracked kind', () => client.list(builtins.Secrets, { namespace: 'sel' })],
    ];
    for (const [what, call] of cases) {
      const before = count();
      await call();
      expect(count(), what).toBe(before + 1);
    }
    expect(SECRETS.plural).toBe('secrets');
  });
});

describe("R-CACHE-112: the operator's own writes reach the cache", () => {
  it('R-CACHE-112: a read right after create, patch, replace, apply or delete returns what was written, with no request and no watch', async () => {
    const cache = await syncedCache('rw');
    const client = new KubeClient(raw.api, { cache });
    await client.list(builtins.ConfigMaps, { namespace: 'rw' });
    const created = await client.create(builtins.ConfigMaps, { metadata: { name: 'mine', namespace: 'rw' }, data: { a: '1' } });
    let before = count();
    expect((await client.get(builtins.ConfigMaps, 'mine', { namespace: 'rw' })).metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
    expect(count()).toBe(before);

    const patched = await client.patch(builtins.ConfigMaps, 'mine', { data: { a: '2' } }, { namespace: 'rw' });
    const replaced = await client.replace(builtins.ConfigMaps, { ...patched, data: { a: '3' } });
    const applied = await client.apply(
      builtins.ConfigMaps,
      { metadata: { name: 'mine', namespace: 'rw' }, data: { b: '4' } },
      { fieldManager: 'test', force: true },
    );
    before = count();
    const read = await client.get(builtins.ConfigMaps, 'mine', { namespace: 'rw' });
    expect(count()).toBe(before);
    expect(read.metadata?.resourceVersion).toBe(applied.metadata?.resourceVersion);
    expect(Number(read.metadata?.resourceVersion)).toBeGreaterThan(Number(replaced.metadata?.resourceVersion));
    expect(read.data).toEqual(applied.data);

    await client.create(builtins.ConfigMaps, { metadata: { name: 'dry', namespace: 'rw' } }, { dryRun: true });
    await client.delete(builtins.ConfigMaps, 'mine', { namespace: 'rw' });
    before = count();
    await expect(client.get(builtins.ConfigMaps, 'mine', { namespace: 'rw' })).rejects.toBeInstanceOf(ApiNotFoundError);
    await expect(client.get(builtins.ConfigMaps, 'dry', { namespace: 'rw' })).rejects.toBeInstanceOf(ApiNotFoundError); // a dry run stores nothing
    expect(count()).toBe(before);
    // The watch's late echo of the object as it was before the delete does not bring it back.
    cache.observe(CONFIGMAPS, 'rw', { type: 'MODIFIED', object: applied as never });
    await expect(client.get(builtins.ConfigMaps, 'mine', { namespace: 'rw' })).rejects.toBeInstanceOf(ApiNotFoundError);
  });
});
