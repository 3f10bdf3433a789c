import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import { Toggle } from '../../../../runtime/cogs/aio/toggles.js';
import type * as api from '../../../../runtime/cogs/client/api.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as watching from '../../../../runtime/cogs/client/watching.js';
import type * as settings from '../../../../runtime/cogs/configs/settings.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { flushed } from '../../../support/waiting.js';
import { type Client, clientFor, eventually } from './helpers.js';

const CONFIGMAPS = references.makeResource({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap' });

/** A watcher running in the background, collecting what it yields. */
interface Running {
  readonly events: watching.WatchEvent[];
  readonly done: Promise<unknown>;
  stop(): Promise<void>;
  names(): string[];
}

let namespaceCounter = 0;

for (const tls of [false, true]) {
  describe(`watching against an ${tls ? 'HTTPS' : 'HTTP'} devcluster`, () => {
    let cluster: DevCluster;
    let client: Client;
    let running: Running | undefined;
    let namespace: string;

    beforeAll(async () => {
      cluster = await DevCluster.start({ tls, bookmarkIntervalMs: 300 });
    });
    afterAll(async () => {
      await cluster?.stop();
    });
    afterEach(async () => {
      await running?.stop();
      running = undefined;
      client?.api.close();
      cluster.faults.clear();
    });

    async function setup(configure?: (s: settings.OperatorSettings) => void, names: string[] = []): Promise<void> {
      namespace = `watched-${++namespaceCounter}`;
      await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      for (const name of names) await createMap(name);
      client = clientFor(cluster, {
        configure: (s) => {
          s.watching.reconnectBackoff = 0.01;
          configure?.(s);
        },
      });
    }

    const createMap = (name: string, ns: string = namespace): Promise<unknown> =>
      cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { k: 'v' } });

    const context = (overrides: Partial<watching.WatchContext> = {}): watching.WatchContext => ({
      api: client.api,
      settings: client.settings,
      resource: CONFIGMAPS,
      namespace,
      logger: client.logger,
      ...overrides,
    });

    function start(options: { paused?: Toggle; ctx?: watching.WatchContext } = {}): Running {
      const controller = new AbortController();
      const events: watching.WatchEvent[] = [];
      const done = (async () => {
        for await (const event of watching.infiniteWatch(options.ctx ?? context(), { paused: options.paused, signal: controller.signal })) events.push(event);
      })();
      done.catch(() => undefined);
      running = {
        events,
        done,
        async stop() {
          controller.abort();
          await done.catch(() => undefined);
        },
        names: () => events.map((e) => (watching.isListed(e) ? 'LISTED' : `${e.type ?? 'null'}:${e.object.metadata?.name}`)),
      };
      return running;
    }

    /** The client's API with every watch line passed through `onLine` first (which may add lines before it). */
    const tapped = (onLine: (line: api.WatchLine) => api.WatchLine[]): api.KubeReader & api.KubeWatcher => ({
      scanResources: (groups, options) => client.api.scanResources(groups, options),
      list: (resource, ns, options) => client.api.list(resource, ns, options),
      get: (resource, ns, name, options) => client.api.get(resource, ns, name, options),
      async watch(resource, ns, options) {
        const lines = await client.api.watch(resource, ns, options);
        return (async function* () {
          for await (const line of lines) yield* onLine(line);
        })();
      },
    });

    const lists = (): number => cluster.requests.filter((r) => r.verb === 'list' && r.resource === 'configmaps' && r.namespace === namespace).length;
    const watches = (): URLSearchParams[] =>
      cluster.requests.filter((r) => r.verb === 'watch' && r.resource === 'configmaps' && r.namespace === namespace).map((r) => new URLSearchParams(r.query));
    const lastRv = (events: watching.WatchEvent[]): string | undefined => {
      const last = events.filter((e): e is Exclude<watching.WatchEvent, watching.Listed> => !watching.isListed(e)).at(-1);
      return last?.object.metadata?.resourceVersion;
    };

    it('R-WATCH-1 R-WATCH-2 lists with type null events and a listed marker, then watches from the list version', async () => {
      await setup(
        (s) => {
          s.watching.serverTimeout = 30;
        },
        ['a', 'b'],
      );
      cluster.requests.keepResponses = true;
      const watcher = start();
      await eventually(() => watches().length === 1, 'the watch request');
      cluster.requests.keepResponses = false;
      const listed = cluster.requests.filter((r) => r.verb === 'list' && r.namespace === namespace)[0]!;
      const listRv = (JSON.parse(listed.responseBody!) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      expect(listRv).toMatch(/^\d+$/);
      expect(watcher.names()).toEqual(['null:a', 'null:b', 'LISTED']);
      const first = watcher.events[0] as Exclude<watching.WatchEvent, watching.Listed>;
      expect(first.object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', data: { k: 'v' } });
      const request = cluster.requests.filter((r) => r.verb === 'watch' && r.namespace === namespace)[0]!;
      expect(request.path).toBe(`/api/v1/namespaces/${namespace}/configmaps`);
      expect(request.query).toBe(`watch=true&allowWatchBookmarks=true&resourceVersion=${listRv}&timeoutSeconds=30`);
      await createMap('c');
      await cluster.store.patch({ apiVersion: 'v1', kind: 'ConfigMap' }, 'c', { data: { k: 'w' } }, { namespace });
      await cluster.store.delete({ apiVersion: 'v1', kind: 'ConfigMap' }, 'c', { namespace });
      await eventually(() => watcher.events.length === 6, 'the watch events');
      expect(watcher.names()).toEqual(['null:a', 'null:b', 'LISTED', 'ADDED:c', 'MODIFIED:c', 'DELETED:c']);
      expect(lists()).toBe(1);
    });

    it('R-WATCH-1 emits the listed marker even for an empty collection', async () => {
      await setup();
      const watcher = start();
      await eventually(() => watcher.events.length === 1, 'the marker');
      expect(watcher.events).toEqual([watching.LISTED]);
    });

    it('R-WATCH-3 bookmarks are not emitted but move the resource version used by the next watch', async () => {
      await setup(undefined, ['a']);
      const bookmarks: number[] = [];
      const api = tapped((line) => {
        if (line.type === 'BOOKMARK') bookmarks.push(Number((line.object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion));
        return [line];
      });
      const watcher = start({ ctx: context({ api }) });
      await eventually(() => watches().length === 1, 'the watch request');
      await createMap('elsewhere', 'default');
      const target = cluster.revision;
      await eventually(() => cluster.watchEvents.some((e) => e.type === 'BOOKMARK' && Number(e.rv) >= target), 'a bookmark', 3000);
      // No wait for the watcher to read it: ending the stream ends it after the lines already
      // written, so the bookmark arrives before the end of its stream.
      cluster.dropWatches({ resource: 'configmaps', namespace }, 'end');
      await eventually(() => watches().length === 2, 'the second watch request');
      expect(Number(watches()[1]!.get('resourceVersion'))).toBeGreaterThanOrEqual(target);
      expect(watcher.names()).toEqual(['null:a', 'LISTED']);
      expect(lists()).toBe(1);
    });

    it('R-WATCH-3 an ERROR 410 restarts the stream with a full re-list', async () => {
      await setup(undefined, ['a']);
      const watcher = start();
      await eventually(() => watches().length === 1, 'the watch request');
      await createMap('b');
      await eventually(() => watcher.events.length === 3, 'the added event');
      cluster.dropWatches({ resource: 'configmaps', namespace }, 'expire');
      await eventually(() => lists() === 2 && watcher.events.length === 6, 'the re-listing');
      expect(watcher.names()).toEqual(['null:a', 'LISTED', 'ADDED:b', 'null:a', 'null:b', 'LISTED']);
      expect(client.logger.messages('debug')).toContain(`Restarting the watch-stream for configmaps.v1 in '${namespace}'.`);
    });

    it('R-WATCH-4 a broken connection reconnects from the last seen version without re-listing', async () => {
      await setup(undefined, ['a']);
      const watcher = start();
      await eventually(() => watches().length === 1, 'the watch request');
      await createMap('b');
      await eventually(() => watcher.events.length === 3, 'the added event');
      const seen = lastRv(watcher.events);
      cluster.dropWatches({ resource: 'configmaps', namespace }, 'abort');
      await eventually(() => watches().length === 2, 'the reconnection');
      expect(watches()[1]!.get('resourceVersion')).toBe(seen);
      await createMap('c');
      await eventually(() => watcher.events.length === 4, 'the next event');
      expect(watcher.names()).toEqual(['null:a', 'LISTED', 'ADDED:b', 'ADDED:c']);
      expect(lists()).toBe(1);
    });

    it('R-WATCH-4 a client-side timeout is swallowed and the watch resumes from the last version', async () => {
      await setup(
        (s) => {
          s.watching.clientTimeout = 0.3;
        },
        ['a'],
      );
      const watcher = start();
      await eventually(() => watches().length >= 2, 'a reconnection after the client timeout');
      expect(watches()[1]!.get('resourceVersion')).toBe(watches()[0]!.get('resourceVersion'));
      expect(lists()).toBe(1);
      expect(watcher.names()).toEqual(['null:a', 'LISTED']);
    });

    it('R-WATCH-4 a watch that cannot connect is retried after the back-off from the same version', async () => {
      await setup(undefined, ['a']);
      cluster.faults.add({ resource: 'configmaps', namespace, watch: true, times: 2, action: { reset: 'before' } });
      const watcher = start();
      await eventually(() => watches().length === 3, 'the third watch attempt');
      const versions = watches().map((q) => q.get('resourceVersion'));
      expect(new Set(versions).size).toBe(1);
      await createMap('b');
      await eventually(() => watcher.events.length === 3, 'the added event');
      expect(lists()).toBe(1);
    });

    it('R-WATCH-4 a listing failing with 429 after the retries is repeated after the reconnect back-off', async () => {
      await setup(
        (s) => {
          s.networking.errorBackoffs = [];
        },
        ['a'],
      );
      cluster.faults.add({ resource: 'configmaps', namespace, verb: 'list', times: 2, action: { respond: { code: 429 } } });
      const watcher = start();
      await eventually(() => watcher.events.length === 2, 'the listing');
      expect(lists()).toBe(3);
      expect(watcher.names()).toEqual(['null:a', 'LISTED']);
      expect(client.logger.messages('error').filter((m) => m.includes('escalating'))).toHaveLength(2);
    });

    it('R-WATCH-4 other listing errors fail the watcher', async () => {
      await setup((s) => {
        s.networking.errorBackoffs = [];
      });
      cluster.faults.add({ resource: 'configmaps', namespace, verb: 'list', times: 1, action: { respond: { code: 403 } } });
      const watcher = start();
      await expect(watcher.done).rejects.toBeInstanceOf(errors.ApiForbiddenError);
    });

    it('R-WATCH-5 an inactive stream is dropped and re-established without re-listing', async () => {
      await setup((s) => {
        s.watching.inactivityTimeout = 0.2;
      });
      const watcher = start();
      await eventually(() => watches().length >= 3, 'two reconnections');
      expect(lists()).toBe(1);
      expect(client.logger.messages('debug')).toContain(`Watch-stream for configmaps.v1 in '${namespace}' is inactive, reconnecting.`);
      await createMap('late');
      await eventually(() => watcher.events.length === 2, 'the event after reconnecting');
      expect(watcher.names()).toEqual(['LISTED', 'ADDED:late']);
    });

    it('R-WATCH-6 a pause closes the stream; nothing is listed or watched until resumed; then a full re-list', async () => {
      await setup(undefined, ['a']);
      const paused = new Toggle(false);
      let opened = 0;
      let closed = 0;
      const watcher = start({ paused, ctx: context({ observer: { opened: () => void opened++, closed: () => void closed++ } }) });
      // The client's connection, not the server's request: paused before its response arrived (a
      // busy machine), the watch request is abandoned with no open connection to close.
      await eventually(() => opened === 1, 'the watch connection');
      paused.turnOn();
      // The signal: the watcher says it pauses, after it has let go of its connection; from then on
      // it waits for the toggle alone, so nothing it does can follow from the change below.
      await eventually(() => client.logger.messages('debug').some((m) => m.startsWith('Pausing the watch-stream')), 'the pause');
      await eventually(() => closed === 1, 'the connection closed');
      await createMap('b');
      await flushed();
      expect(lists()).toBe(1);
      expect(watches()).toHaveLength(1);
      expect(watcher.names()).toEqual(['null:a', 'LISTED']);
      paused.turnOff();
      await eventually(() => watcher.events.length === 5, 'the re-listing');
      expect(watcher.names()).toEqual(['null:a', 'LISTED', 'null:a', 'null:b', 'LISTED']);
      expect(lists()).toBe(2);
    });

    it('R-WATCH-6 a watcher started while paused waits before listing', async () => {
      await setup(undefined, ['a']);
      const paused = new Toggle(true);
      const watcher = start({ paused });
      // The watcher logs that it pauses before it would list anything: it now waits for the toggle.
      await eventually(() => client.logger.messages('debug').includes(`Pausing the watch-stream for configmaps.v1 in '${namespace}'.`), 'the pause');
      expect(lists()).toBe(0);
      paused.turnOff();
      await eventually(() => watcher.events.length === 2, 'the listing');
      expect(client.logger.messages('debug')).toContain(`Pausing the watch-stream for configmaps.v1 in '${namespace}'.`);
    });

    it('R-WATCH-3 an ERROR other than 410 makes the iterator throw', async () => {
      await setup(undefined, ['a']);
      cluster.faults.add({ resource: 'configmaps', namespace, watch: true, times: 1, action: { watch: { error: 500, errorAfterEvents: 0 } } });
      const watcher = start();
      const error = await watcher.done.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(errors.WatchingError);
      expect((error as errors.WatchingError).message).toMatch(/^Error in the watch-stream: \{.*"code":500/);
      expect((error as errors.WatchingError).payload?.code).toBe(500);
      expect(watcher.names()).toEqual(['null:a', 'LISTED']);
    });

    it('R-WATCH-3 unknown event types are ignored with a warning', async () => {
      await setup(undefined, ['a']);
      let injected = false;
      const wrapped = tapped((line) => {
        if (injected) return [line];
        injected = true;
        return [{ type: 'SURPRISE', object: { metadata: { name: 'x' } } }, line];
      });
      const watcher = start({ ctx: context({ api: wrapped }) }); // injected before the first line (a bookmark)
      await eventually(() => client.logger.messages('warning').length === 1, 'the warning');
      expect(client.logger.messages('warning')[0]).toMatch(/^Ignoring an unsupported event type: .*SURPRISE/);
      await createMap('b');
      await eventually(() => watcher.events.length === 3, 'the next event');
      expect(watcher.names()).toEqual(['null:a', 'LISTED', 'ADDED:b']);
    });

    it('the watcher ends when its signal aborts', async () => {
      await setup();
      let opened = 0;
      let closed = 0;
      const watcher = start({ ctx: context({ observer: { opened: () => void opened++, closed: () => void closed++ } }) });
      // The signal: the watcher holds its connection (the server having the request is not enough:
      // the response may not have reached the client yet, and a watcher stopped then opened nothing).
      await eventually(() => opened === 1, 'the watch connection');
      await watcher.stop();
      await expect(watcher.done).resolves.toBeUndefined();
      // The watcher has let go of its connection: it says so before it ends.
      expect(closed).toBe(1);
      expect(client.logger.messages('debug')).toContain(`Stopping the watch-stream for configmaps.v1 in '${namespace}'.`);
    });

    it('R-WATCH-2 watches cluster-wide with the cluster URL', async () => {
      await setup();
      const watcher = start({ ctx: context({ namespace: null }) });
      await eventually(() => watcher.events.some((e) => watching.isListed(e)), 'the listing');
      await eventually(() => cluster.requests.filter((r) => r.verb === 'watch' && r.path === '/api/v1/configmaps').length > 0, 'the watch');
      expect(cluster.requests.filter((r) => r.verb === 'list' && r.path === '/api/v1/configmaps').length).toBeGreaterThan(0);
    });
  });
}
