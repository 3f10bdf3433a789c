import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import * as watching from '../../../../runtime/cogs/client/watching.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import * as observation from '../../../../runtime/core/reactor/observation.js';
import * as orchestration from '../../../../runtime/core/reactor/orchestration.js';
import { on } from '../../../../runtime/on.js';
import { type Background, type Client, RecordingLogger, background, clientFor, eventually } from './observing.js';
import { flushed } from '../../../support/waiting.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const WIDGETS_CRD = fs.readFileSync(path.join(ROOT, 'fixtures/crds/widgets.yaml'), 'utf8');
const KOPF_CRD = fs.readFileSync(path.resolve(ROOT, 'fixtures/crds/kopfexamples.yaml'), 'utf8');
const CRDS_REF = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
const NAMESPACE_REF = { apiVersion: 'v1', kind: 'Namespace' };
const names = (list: Iterable<references.Resource>): string[] => [...list].map(references.resourceName).sort();

describe('isNamespaceDeleted', () => {
  const ns = (extra: Record<string, unknown> = {}, conditions?: unknown[]): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'ns1', ...extra },
    ...(conditions ? { status: { conditions } } : {}),
  });
  const pending = { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: pods has 1' };
  const done = { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted' };
  const table: Array<[what: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', body: Record<string, unknown>, deleted: boolean]> = [
    ['a DELETED event', 'DELETED', ns(), true],
    ['a live namespace', 'MODIFIED', ns(), false],
    ['a deletion timestamp without conditions', 'MODIFIED', ns({ deletionTimestamp: '2024-01-01T00:00:00Z' }), false],
    ['a deletion timestamp with only False conditions', 'MODIFIED', ns({ deletionTimestamp: '2024-01-01T00:00:00Z' }, [done]), true],
    ['a deletion timestamp with a True condition', 'MODIFIED', ns({ deletionTimestamp: '2024-01-01T00:00:00Z' }, [done, pending]), false],
    ['False conditions without a deletion timestamp', 'MODIFIED', ns({}, [done]), false],
  ];
  for (const [what, type, object, deleted] of table) {
    it(`R-SCOPE-3 ${what} ${deleted ? 'counts' : 'does not count'} as deleted`, () => {
      expect(observation.isNamespaceDeleted({ type, object: object as never })).toBe(deleted);
    });
  }

  it('R-SCOPE-3 logs every True condition of a terminating namespace at debug level', () => {
    const logger = new RecordingLogger();
    observation.isNamespaceDeleted({ type: 'MODIFIED', object: ns({ deletionTimestamp: '2024-01-01T00:00:00Z' }, [done, pending]) as never }, logger);
    expect(logger.records).toEqual([
      { level: 'debug', message: "Namespace 'ns1' termination pending: SomeResourcesRemain: Some resources are remaining: pods has 1" },
    ]);
  });
});

/** An operator's observation and orchestration, with watchers recorded by `spawn`. */
interface Running {
  readonly picture: observation.Insights;
  readonly client: Client;
  /** `+plural@ns` when a watcher starts, `-plural@ns` when it is aborted. */
  readonly log: string[];
  /** Live watchers as `plural@ns` (`-` for cluster-wide). */
  readonly live: Set<string>;
  /** `ns/name` of every object a watcher has seen. */
  readonly handled: Set<string>;
  readonly tasks: Background[];
  stop(): Promise<void>;
}

describe('observation against a devcluster', () => {
  let cluster: DevCluster | undefined;
  let running: Running | undefined;

  afterEach(async () => {
    await running?.stop();
    running = undefined;
    await cluster?.stop();
    cluster = undefined;
  });

  async function start(options: { auth?: 'enforced'; load?: string[]; namespaces?: string[] } = {}): Promise<DevCluster> {
    cluster = await DevCluster.start({ tls: false, auth: options.auth });
    for (const name of options.namespaces ?? []) await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    if (options.load?.length) await cluster.load(options.load);
    return cluster;
  }

  /** A token for a non-admin user `operator`, subject to the given deny rules (everything else allowed). */
  function operatorToken(c: DevCluster, rules: Array<{ verbs: string[]; resources: string[] }>): string {
    c.auth.addToken({ token: 'operator-token', username: 'operator' });
    c.auth.authorizer.setRules(rules.map((rule) => ({ effect: 'deny' as const, users: ['operator'], ...rule })));
    return 'operator-token';
  }

  function run(
    c: DevCluster,
    options: {
      registry: OperatorRegistry;
      clusterwide?: boolean;
      namespaces?: observation.NamespacePattern[];
      token?: string;
      scanningDisabled?: boolean;
      watch?: boolean;
    },
  ): Running {
    const client = clientFor(c, {
      token: options.token,
      configure: (s) => {
        s.scanning.disabled = options.scanningDisabled ?? false;
      },
    });
    const picture = new observation.Insights({ registry: options.registry, logger: client.logger });
    const log: string[] = [];
    const live = new Set<string>();
    const handled = new Set<string>();
    const spawn: orchestration.Spawn = async (resource, namespace, signal) => {
      const name = `${resource.plural}@${namespace ?? '-'}`;
      log.push(`+${name}`);
      live.add(name);
      try {
        if (options.watch) {
          const ctx = { api: client.api, settings: client.settings, logger: client.logger, resource, namespace };
          for await (const event of watching.infiniteWatch(ctx, { signal })) {
            if (!watching.isListed(event)) handled.add(`${event.object.metadata?.namespace}/${event.object.metadata?.name}`);
          }
        } else {
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        }
      } finally {
        live.delete(name);
        log.push(`-${name}`);
      }
    };
    const common = { api: client.api, settings: client.settings, insights: picture, logger: client.logger };
    const tasks = [
      background((signal) => observation.observeResources({ ...common, signal })),
      background((signal) =>
        observation.observeNamespaces({ ...common, signal, clusterwide: options.clusterwide ?? false, namespaces: options.namespaces ?? [] }),
      ),
      background((signal) => orchestration.orchestrate({ insights: picture, spawn, signal })),
    ];
    running = {
      picture,
      client,
      log,
      live,
      handled,
      tasks,
      async stop() {
        await Promise.all(tasks.map((task) => task.stop()));
        client.api.close();
      },
    };
    return running;
  }

  const discoveryGroups = (c: DevCluster): string[] =>
    [...new Set(c.requests.all.map((r) => /^\/apis\/([^/]+)\/[^/]+$/.exec(r.path)?.[1]).filter((g): g is string => g !== undefined))].sort();

  it('R-RES-7 scans only the needed groups and watches the CRDs selected by the handlers', async () => {
    const c = await start({ load: [WIDGETS_CRD, KOPF_CRD] });
    const registry = new OperatorRegistry();
    on.event(['example.com', 'widgets'], { registry }, function widgets() {});
    on.create(['kopf.dev', 'v1', 'kopfexamples'], { registry }, function kopfexamples() {});
    const r = run(c, { registry, clusterwide: true });
    await r.picture.ready.waitFor(true);
    expect(names(r.picture.watched)).toEqual(['kopfexamples.v1.kopf.dev', 'widgets.v1.example.com']);
    expect(discoveryGroups(c)).toEqual(['admissionregistration.k8s.io', 'apiextensions.k8s.io', 'example.com', 'kopf.dev']);
    expect(c.requests.filter((r) => r.path === '/api' || r.path === '/api/v1')).toHaveLength(2);
    await eventually(() => r.live.size === 2, 'watchers');
    expect([...r.live].sort()).toEqual(['kopfexamples@-', 'widgets@-']);
  });

  it('R-RES-8 a CRD created at run time becomes watched, a deleted one stops being watched', async () => {
    const c = await start({ load: [WIDGETS_CRD] });
    const registry = new OperatorRegistry();
    on.event('widgets', { registry }, function widgets() {});
    on.event('kopfexamples', { registry }, function kopfexamples() {});
    const r = run(c, { registry, clusterwide: true });
    await eventually(() => r.live.has('widgets@-'), 'the widgets watcher');
    expect(r.client.logger.messages('warning')).toEqual(["Unresolved resources cannot be served (try creating their CRDs): Selector(any_name='kopfexamples')"]);
    await c.requests.waitFor((req) => req.resource === 'customresourcedefinitions' && req.verb === 'watch');
    const scansOf = (group: string): number =>
      c.requests.filter((req) => req.path.startsWith(`/apis/${group}/`) && req.verb !== 'watch' && req.resource === undefined).length;
    expect(scansOf('example.com')).toBe(1); // the listing of existing CRDs causes no re-scan

    await c.load(KOPF_CRD);
    await eventually(() => r.live.has('kopfexamples@-'), 'the kopfexamples watcher');
    expect(scansOf('example.com')).toBe(1); // only the changed CRD's group is re-scanned
    expect(scansOf('kopf.dev')).toBeGreaterThan(0); // absent at startup: scanned only on the CRD's events

    await c.store.delete(CRDS_REF, 'widgets.example.com');
    await eventually(() => !r.live.has('widgets@-'), 'the widgets watcher to stop');
    expect(names(r.picture.watched)).toEqual(['kopfexamples.v1.kopf.dev']);
    expect(r.log).toEqual(['+widgets@-', '+kopfexamples@-', '-widgets@-']);
    expect(r.tasks.some((task) => task.settled())).toBe(false);
  });

  it('R-RES-8 forbidden CRD watching logs a warning and keeps the startup picture', async () => {
    const c = await start({ auth: 'enforced', load: [WIDGETS_CRD] });
    const token = operatorToken(c, [{ verbs: ['list', 'watch'], resources: ['customresourcedefinitions'] }]);
    const registry = new OperatorRegistry();
    on.event('widgets', { registry }, function widgets() {});
    const r = run(c, { registry, clusterwide: true, token });
    await eventually(() => r.client.logger.messages('warning').length > 0, 'the warning');
    expect(r.client.logger.messages('warning')).toEqual([
      'Not enough permissions to watch for resources: changes (creation/deletion/updates) will not be noticed; ' +
        'the resources are only refreshed on operator restarts.',
    ]);
    expect(names(r.picture.watched)).toEqual(['widgets.v1.example.com']);
    await eventually(() => r.live.has('widgets@-'), 'the widgets watcher');
    expect(r.tasks.some((task) => task.settled())).toBe(false);
  });

  it('R-RES-8 R-SCOPE-3 scanning.disabled watches neither CRDs nor namespaces and serves only plain names', async () => {
    const c = await start({ load: [WIDGETS_CRD], namespaces: ['myapp-live', 'myapp-dev'] });
    const registry = new OperatorRegistry();
    on.event('widgets', { registry }, function widgets() {});
    const r = run(c, { registry, namespaces: ['myapp-live', 'myapp-*'], scanningDisabled: true });
    await eventually(() => r.live.size === 1, 'the watcher');
    // Watchers are spawned only once the resources and namespaces are known: any listing of them would have come first.
    expect([...r.live]).toEqual(['widgets@myapp-live']);
    expect(c.requests.filter((req) => req.resource === 'customresourcedefinitions' || req.resource === 'namespaces')).toEqual([]);
    expect(r.client.logger.messages('warning')).toEqual([]);
  });

  it("R-SCOPE-2 R-SCOPE-3 A-36 -n 'myapp-*,!*-pr-*,*-pr-123' serves matching namespaces as they come and go", async () => {
    const initial = ['myapp-live', 'myapp-pr-123', 'myapp-pr-456', 'otherapp-pr-123'];
    const c = await start({ load: [WIDGETS_CRD], namespaces: initial });
    for (const ns of initial) await c.store.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { size: 1 } });
    const registry = new OperatorRegistry();
    on.event(['example.com', 'widgets'], { registry }, function widgets() {});
    const r = run(c, { registry, namespaces: ['myapp-*,!*-pr-*,*-pr-123'], watch: true });
    await eventually(() => r.handled.size === 2, 'the objects of the served namespaces');
    expect([...r.handled].sort()).toEqual(['myapp-live/w', 'myapp-pr-123/w']);
    expect([...r.picture.namespaces].sort()).toEqual(['myapp-live', 'myapp-pr-123']);

    await c.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'myapp-dev' } });
    await c.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'myapp-pr-789' } });
    await c.store.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'myapp-dev' }, spec: { size: 1 } });
    await eventually(() => r.handled.has('myapp-dev/w'), 'the object in the new namespace');
    expect(r.live.has('widgets@myapp-pr-789')).toBe(false);

    await c.store.delete(NAMESPACE_REF, 'myapp-live');
    await eventually(() => !r.live.has('widgets@myapp-live'), 'the watcher of the deleted namespace to stop');
    expect([...r.live].sort()).toEqual(['widgets@myapp-dev', 'widgets@myapp-pr-123']);
    expect(r.log.filter((line) => line.endsWith('@myapp-live'))).toEqual(['+widgets@myapp-live', '-widgets@myapp-live']);
    expect([...r.handled].filter((key) => key.startsWith('myapp-pr-456/') || key.startsWith('otherapp-'))).toEqual([]);
  });

  it("R-SCOPE-2 A-36 -n '!*-pr-*,*pr-123' serves everything but the other pull requests", async () => {
    const initial = ['myapp-live', 'myapp-pr-123', 'myapp-pr-456', 'otherapp-pr-123'];
    const c = await start({ namespaces: initial });
    const r = run(c, { registry: new OperatorRegistry(), namespaces: ['!*-pr-*,*pr-123'] });
    await r.picture.readyNamespaces.waitFor(true);
    const served = [...r.picture.namespaces];
    expect(served).toEqual(expect.arrayContaining(['myapp-live', 'myapp-pr-123', 'otherapp-pr-123', 'default']));
    expect(served).not.toContain('myapp-pr-456');
  });

  it('R-SCOPE-3 a terminating namespace stays served while any of its conditions is True', async () => {
    const c = await start({ load: [WIDGETS_CRD], namespaces: ['term-1'] });
    const registry = new OperatorRegistry();
    on.event(['example.com', 'widgets'], { registry }, function widgets() {});
    const r = run(c, { registry, namespaces: ['term-*'] });
    await eventually(() => r.live.has('widgets@term-1'), 'the watcher');
    await c.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: 'term-1', finalizers: ['example.com/hold'] } });
    await c.store.delete(NAMESPACE_REF, 'term-1');
    await eventually(
      () => r.client.logger.messages('debug').some((m) => m.startsWith("Namespace 'term-1' termination pending: SomeFinalizersRemain: ")),
      'the pending termination',
    );
    expect(r.picture.namespaces.has('term-1')).toBe(true);
    expect(r.live.has('widgets@term-1')).toBe(true);

    await c.store.patch({ apiVersion: 'v1', kind: 'ConfigMap' }, 'held', { metadata: { finalizers: null } }, { namespace: 'term-1' });
    await eventually(() => !r.picture.namespaces.has('term-1'), 'the namespace to go');
    await eventually(() => !r.live.has('widgets@term-1'), 'the watcher to stop');
  });

  it('R-SCOPE-4 A-36 forbidden namespace listing falls back to the plain names', async () => {
    const c = await start({ auth: 'enforced', load: [WIDGETS_CRD], namespaces: ['myapp-live', 'myapp-dev'] });
    const token = operatorToken(c, [{ verbs: ['list'], resources: ['namespaces'] }]);
    const registry = new OperatorRegistry();
    on.event(['example.com', 'widgets'], { registry }, function widgets() {});
    const r = run(c, { registry, namespaces: ['myapp-live', 'myapp-*'], token });
    await eventually(() => r.live.size > 0, 'the watcher');
    expect(r.client.logger.messages('warning')).toEqual([
      "Not enough permissions to list namespaces. Falling back to a list of namespaces which are assumed to exist: ['myapp-live']",
    ]);
    expect([...r.picture.namespaces]).toEqual(['myapp-live']);
    expect([...r.live]).toEqual(['widgets@myapp-live']);
    expect(r.tasks.some((task) => task.settled())).toBe(false);
  });

  it('R-SCOPE-4 forbidden namespace watching keeps the initial list', async () => {
    const c = await start({ auth: 'enforced', namespaces: ['myapp-live'] });
    const token = operatorToken(c, [{ verbs: ['watch'], resources: ['namespaces'] }]);
    const r = run(c, { registry: new OperatorRegistry(), namespaces: ['myapp-*'], token });
    await eventually(() => r.client.logger.messages('warning').length > 0, 'the warning');
    expect(r.client.logger.messages('warning')).toEqual([
      'Not enough permissions to watch for namespaces: changes (deletion/creation) will not be noticed; ' +
        'the namespaces are only refreshed on operator restarts.',
    ]);
    await c.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'myapp-dev' } });
    // Nothing can bring the new namespace in: the one watch of namespaces was refused, and after
    // its warning the observer only waits for the stop.
    const namespaceWatches = c.requests.filter((q) => q.resource === 'namespaces' && q.verb === 'watch');
    expect(namespaceWatches.map((q) => q.code)).toEqual([403]);
    await flushed();
    expect([...r.picture.namespaces]).toEqual(['myapp-live']);
  });

  it('R-SCOPE-5 R-SCOPE-6 cluster-wide mode serves null and never observes namespaces', async () => {
    const c = await start({ load: [WIDGETS_CRD] });
    const registry = new OperatorRegistry();
    on.event(['example.com', 'widgets'], { registry }, function widgets() {});
    on.event(['v1', 'namespaces'], { registry }, function namespacesHandler() {});
    const r = run(c, { registry, clusterwide: true });
    await eventually(() => r.live.size === 2, 'the watchers');
    expect([...r.picture.namespaces]).toEqual([null]);
    expect([...r.live].sort()).toEqual(['namespaces@-', 'widgets@-']);
    expect(c.requests.filter((req) => req.resource === 'namespaces')).toEqual([]);
  });

  it('R-SCOPE-6 cluster-scoped resources are watched once in namespaced mode', async () => {
    const c = await start({ load: [WIDGETS_CRD], namespaces: ['a-1', 'a-2'] });
    const registry = new OperatorRegistry();
    on.event(['example.com', 'widgets'], { registry }, function widgets() {});
    on.event(['v1', 'namespaces'], { registry }, function namespacesHandler() {});
    const r = run(c, { registry, namespaces: ['a-*'] });
    await eventually(() => r.live.size === 3, 'the watchers');
    expect([...r.live].sort()).toEqual(['namespaces@-', 'widgets@a-1', 'widgets@a-2']);
  });
});
