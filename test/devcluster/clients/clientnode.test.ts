/**
 * @kubernetes/client-node 1.x against a TLS devcluster: the typed CoreV1Api, CustomObjectsApi,
 * the discovery-driven KubernetesObjectApi, Watch, and the ListWatch informer, all configured from
 * the generated kubeconfig only. Patch content types are chosen with the library's header
 * middleware (`setHeaderOptions('Content-Type', PatchStrategy.…)`), as 1.x expects.
 */
import * as k8s from '@kubernetes/client-node';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';
import { eventually } from '../../support/waiting.js';

const WIDGETS_CRD = path.resolve(import.meta.dirname, '../../../fixtures/crds/widgets.yaml');
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const NS = 'default';
const CR = { group: 'example.com', version: 'v1', namespace: NS, plural: 'widgets' };
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };

type Json = Record<string, any>;

const contentType = (strategy: k8s.PatchStrategy): ReturnType<typeof k8s.setHeaderOptions> => k8s.setHeaderOptions('Content-Type', strategy);

/** Runs `fn`, expects it to throw an ApiException, and returns the exception with its parsed Status body. */
async function apiError(fn: () => Promise<unknown>): Promise<{ code: number; status: Json }> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(k8s.ApiException);
    const e = err as k8s.ApiException<unknown>;
    const status = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as Json;
    return { code: e.code, status };
  }
  throw new Error('expected an ApiException');
}

describe('@kubernetes/client-node against a TLS devcluster', () => {
  let cluster: DevCluster;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let custom: k8s.CustomObjectsApi;

  beforeAll(async () => {
    cluster = await DevCluster.start();
    await cluster.load(WIDGETS_CRD);
    kc = new k8s.KubeConfig();
    kc.loadFromString(cluster.kubeconfig());
    core = kc.makeApiClient(k8s.CoreV1Api);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const createWidget = (name: string, spec: Json = { size: 1 }, labels?: Record<string, string>): Promise<Json> =>
    custom.createNamespacedCustomObject({ ...CR, body: { ...WIDGET, metadata: { name, labels }, spec } }) as Promise<Json>;

  describe('CoreV1Api ConfigMaps', () => {
    it('creates, reads, lists, patches (merge and strategic) and deletes a ConfigMap', async () => {
      const created = await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'cn-cm', labels: { suite: 'cn' } }, data: { a: '1' } } });
      expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);

      const read = await core.readNamespacedConfigMap({ name: 'cn-cm', namespace: NS });
      expect(read.data).toEqual({ a: '1' });
      expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);

      const list = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'suite=cn' });
      expect(list.items.map((i) => i.metadata?.name)).toEqual(['cn-cm']);
      expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata?.resourceVersion));

      const merged = await core.patchNamespacedConfigMap(
        { name: 'cn-cm', namespace: NS, body: { data: { b: '2' } } },
        contentType(k8s.PatchStrategy.MergePatch),
      );
      expect(merged.data).toEqual({ a: '1', b: '2' });
      const strategic = await core.patchNamespacedConfigMap(
        { name: 'cn-cm', namespace: NS, body: { data: { a: null } } },
        contentType(k8s.PatchStrategy.StrategicMergePatch),
      );
      expect(strategic.data).toEqual({ b: '2' });
      const jsonPatched = await core.patchNamespacedConfigMap({ name: 'cn-cm', namespace: NS, body: [{ op: 'add', path: '/data/c', value: '3' }] });
      expect(jsonPatched.data).toEqual({ b: '2', c: '3' });
      const patchTypes = cluster.requests.filter((r) => r.method === 'PATCH' && r.name === 'cn-cm').map((r) => r.headers.contentType);
      expect(patchTypes).toEqual(['application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json']);

      const status = await core.deleteNamespacedConfigMap({ name: 'cn-cm', namespace: NS });
      expect(status).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'cn-cm', kind: 'configmaps' } });
      expect(cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'cn-cm')).toBeUndefined();
    });

    it('D-WIRE-21 a missing ConfigMap is an ApiException 404 carrying the NotFound Status', async () => {
      const { code, status } = await apiError(() => core.readNamespacedConfigMap({ name: 'cn-absent', namespace: NS }));
      expect(code).toBe(404);
      expect(status).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'configmaps "cn-absent" not found',
        reason: 'NotFound',
        details: { name: 'cn-absent', kind: 'configmaps' },
        code: 404,
      });
    });

    it('D-WIRE-21 creating an existing ConfigMap is an ApiException 409 AlreadyExists', async () => {
      await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'cn-dup' } } });
      const { code, status } = await apiError(() => core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'cn-dup' } } }));
      expect(code).toBe(409);
      expect(status).toMatchObject({
        reason: 'AlreadyExists',
        message: 'configmaps "cn-dup" already exists',
        details: { name: 'cn-dup', kind: 'configmaps' },
        code: 409,
      });
    });
  });

  describe('CustomObjectsApi Widgets', () => {
    it('creates, gets, lists with a label selector, merge-patches, status-patches and deletes Widgets', async () => {
      const created = await createWidget('cn-w1', { size: 2 }, { tier: 'front' });
      await createWidget('cn-w2', { size: 3 }, { tier: 'back' });
      expect(created).toMatchObject({ ...WIDGET, metadata: { name: 'cn-w1', namespace: NS, generation: 1 }, spec: { size: 2, color: 'blue' } });

      const got = (await custom.getNamespacedCustomObject({ ...CR, name: 'cn-w1' })) as Json;
      expect(got['metadata']['uid']).toBe(created['metadata']['uid']);

      const list = (await custom.listNamespacedCustomObject({ ...CR, labelSelector: 'tier=front' })) as Json;
      expect(list).toMatchObject({ apiVersion: 'example.com/v1', kind: 'WidgetList' });
      expect((list['items'] as Json[]).map((i) => [i['kind'], i['metadata']['name']])).toEqual([['Widget', 'cn-w1']]);

      const patched = (await custom.patchNamespacedCustomObject(
        { ...CR, name: 'cn-w1', body: { spec: { size: 4 } } },
        contentType(k8s.PatchStrategy.MergePatch),
      )) as Json;
      expect(patched['spec']).toEqual({ size: 4, color: 'blue' });
      expect(patched['metadata']['generation']).toBe(2);

      const withStatus = (await custom.patchNamespacedCustomObjectStatus(
        { ...CR, name: 'cn-w1', body: { status: { phase: 'Ready' }, spec: { size: 9 } } },
        contentType(k8s.PatchStrategy.MergePatch),
      )) as Json;
      expect(withStatus['status']).toEqual({ phase: 'Ready' });
      expect(withStatus['spec']['size'], 'spec changes through /status are ignored').toBe(4);
      expect(withStatus['metadata']['generation']).toBe(2);

      const deleted = (await custom.deleteNamespacedCustomObject({ ...CR, name: 'cn-w1' })) as Json;
      expect(deleted).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'cn-w1', group: 'example.com', kind: 'widgets' } });
      const { code } = await apiError(() => custom.getNamespacedCustomObject({ ...CR, name: 'cn-w1' }));
      expect(code).toBe(404);
    });

    it('D-WIRE-21 an invalid Widget is an ApiException 422 with field causes', async () => {
      const { code, status } = await apiError(() => createWidget('cn-bad', { size: 11 }));
      expect(code).toBe(422);
      expect(status).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'Invalid',
        code: 422,
        details: { name: 'cn-bad', group: 'example.com', kind: 'Widget' },
      });
      expect(status['details']['causes']).toEqual([
        { reason: 'FieldValueInvalid', message: 'Invalid value: 11: spec.size in body should be less than or equal to 10', field: 'spec.size' },
      ]);
      expect(cluster.store.get(WIDGET, 'cn-bad')).toBeUndefined();
    });

    it('D-WIRE-21 a stale resourceVersion on replace is an ApiException 409 Conflict', async () => {
      const w = await createWidget('cn-stale');
      await custom.patchNamespacedCustomObject({ ...CR, name: 'cn-stale', body: { spec: { size: 2 } } }, contentType(k8s.PatchStrategy.MergePatch));
      const { code, status } = await apiError(() => custom.replaceNamespacedCustomObject({ ...CR, name: 'cn-stale', body: { ...w, spec: { size: 3 } } }));
      expect(code).toBe(409);
      expect(status).toMatchObject({
        reason: 'Conflict',
        code: 409,
        message:
          'Operation cannot be fulfilled on widgets.example.com "cn-stale": the object has been modified; please apply your changes to the latest version and try again',
      });
      expect((cluster.store.get(WIDGET, 'cn-stale') as Json | undefined)?.['spec']['size']).toBe(2);
    });
  });

  it('D-WIRE-5 VersionApi reads /version with every field a string', async () => {
    const version = await kc.makeApiClient(k8s.VersionApi).getCode();
    expect(version).toMatchObject({ major: '1', minor: '32', gitVersion: 'v1.32.0', platform: 'linux/amd64' });
    for (const value of Object.values(version)) expect(typeof value).toBe('string');
  });

  it('D-WIRE-19 a Lease written with Date MicroTimes reads back at microsecond precision', async () => {
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    const renewed = new Date('2024-05-01T10:00:00.123Z');
    // client-node types MicroTime as Date and serialises it with toISOString().
    await coordination.createNamespacedLease({
      namespace: NS,
      body: { metadata: { name: 'cn-lease' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: renewed as unknown as k8s.V1MicroTime } },
    });
    const sent = cluster.requests.filter((r) => r.method === 'POST' && r.resource === 'leases')[0]!;
    expect(JSON.parse(sent.body!)['spec']['renewTime']).toBe('2024-05-01T10:00:00.123Z');
    const lease = await coordination.readNamespacedLease({ name: 'cn-lease', namespace: NS });
    expect(lease.spec?.renewTime).toBe('2024-05-01T10:00:00.123000Z');
  });

  it('server-side apply through the apply-patch content type creates, then owns fields for its manager', async () => {
    const apply = (size: number): Promise<Json> =>
      custom.patchNamespacedCustomObject(
        { ...CR, name: 'cn-applied', fieldManager: 'cn-manager', body: { ...WIDGET, metadata: { name: 'cn-applied' }, spec: { size } } },
        contentType(k8s.PatchStrategy.ServerSideApply),
      ) as Promise<Json>;
    const created = await apply(3);
    expect(created['spec']).toEqual({ size: 3, color: 'blue' });
    const updated = await apply(4);
    expect(updated['spec']['size']).toBe(4);
    const managers = (updated['metadata']['managedFields'] as Json[]).map((m) => [m['manager'], m['operation']]);
    expect(managers).toEqual([['cn-manager', 'Apply']]);
    const { code, status } = await apiError(() =>
      custom.patchNamespacedCustomObject(
        { ...CR, name: 'cn-applied', fieldManager: 'cn-other', body: { ...WIDGET, metadata: { name: 'cn-applied' }, spec: { size: 5 } } },
        contentType(k8s.PatchStrategy.ServerSideApply),
      ),
    );
    expect(code).toBe(409);
    expect(status).toMatchObject({ reason: 'Conflict', code: 409, details: { causes: [{ reason: 'FieldManagerConflict', field: '.spec.size' }] } });
  });

  it('D-WIRE-11 KubernetesObjectApi resolves Widgets and ConfigMaps through legacy discovery', async () => {
    const client = k8s.KubernetesObjectApi.makeApiClient(kc);
    const mark = cluster.requests.all.length;
    const created = (await client.create({ ...WIDGET, metadata: { name: 'cn-generic', namespace: NS }, spec: { size: 5 } } as k8s.KubernetesObject)) as Json;
    expect(created['spec']).toEqual({ size: 5, color: 'blue' });
    const read = (await client.read({ ...WIDGET, metadata: { name: 'cn-generic', namespace: NS } })) as Json;
    expect(read['metadata']['uid']).toBe(created['metadata']['uid']);
    const cm = (await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cn-generic', namespace: NS },
      data: { x: 'y' },
    } as k8s.KubernetesObject)) as Json;
    expect(cm['data']).toEqual({ x: 'y' });
    const list = await client.list('example.com/v1', 'Widget', NS);
    expect(list.items.map((i) => i.metadata?.name)).toContain('cn-generic');
    const discovery = cluster.requests.all
      .slice(mark)
      .filter((r) => r.resource === undefined)
      .map((r) => r.path);
    expect(discovery).toEqual(expect.arrayContaining(['/apis/example.com/v1', '/api/v1']));
    const resourceList = cluster.requests.all.slice(mark).find((r) => r.path === '/apis/example.com/v1')!;
    expect(resourceList.code).toBe(200);
  });

  it('D-WATCH-3 Watch on widgets delivers ADDED, MODIFIED and DELETED with the object', async () => {
    const events: { type: string; name: string; size: unknown; rv: string }[] = [];
    const watch = new k8s.Watch(kc);
    let doneErr: unknown = 'not done';
    const controller = await watch.watch(
      WIDGETS,
      { labelSelector: 'watched=yes' },
      (type, obj: Json) => {
        events.push({ type, name: obj['metadata']['name'] as string, size: obj['spec']?.['size'], rv: obj['metadata']['resourceVersion'] as string });
      },
      (err) => {
        doneErr = err;
      },
    );
    try {
      await cluster.requests.waitFor((r) => r.verb === 'watch' && r.query.includes('watched%3Dyes'));
      const created = await createWidget('cn-watched', { size: 1 }, { watched: 'yes' });
      const patched = (await custom.patchNamespacedCustomObject(
        { ...CR, name: 'cn-watched', body: { spec: { size: 2 } } },
        contentType(k8s.PatchStrategy.MergePatch),
      )) as Json;
      await custom.deleteNamespacedCustomObject({ ...CR, name: 'cn-watched' });
      await eventually(() => events.length >= 3, 'three watch events');
      expect(events.map((e) => [e.type, e.name, e.size])).toEqual([
        ['ADDED', 'cn-watched', 1],
        ['MODIFIED', 'cn-watched', 2],
        ['DELETED', 'cn-watched', 2],
      ]);
      expect(events[0]!.rv).toBe(created['metadata']['resourceVersion']);
      expect(events[1]!.rv).toBe(patched['metadata']['resourceVersion']);
      expect(Number(events[2]!.rv)).toBeGreaterThan(Number(events[1]!.rv));
      expect(doneErr, 'the watch is still open').toBe('not done');
    } finally {
      controller.abort();
    }
  });

  it('D-WATCH-5 the informer cache sees Widgets and relists after a 410 Expired from dropWatches', async () => {
    await createWidget('cn-inf-1', { size: 1 }, { informed: 'yes' });
    const listFn = (): Promise<k8s.KubernetesListObject<k8s.KubernetesObject>> =>
      custom.listNamespacedCustomObject({ ...CR, labelSelector: 'informed=yes' }) as Promise<k8s.KubernetesListObject<k8s.KubernetesObject>>;
    const informer = k8s.makeInformer(kc, WIDGETS, listFn, 'informed=yes');
    const added: string[] = [];
    const deleted: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => added.push(o.metadata!.name!));
    informer.on('delete', (o) => deleted.push(o.metadata!.name!));
    informer.on('error', (e) => errors.push(e));
    const lists = (): number => cluster.requests.filter((r) => r.verb === 'list' && r.resource === 'widgets' && r.query.includes('informed%3Dyes')).length;
    const watches = (): number => cluster.requests.filter((r) => r.verb === 'watch' && r.resource === 'widgets' && r.query.includes('informed%3Dyes')).length;
    await informer.start();
    try {
      await eventually(() => watches() === 1, 'the informer watch');
      expect(informer.list(NS).map((o) => o.metadata?.name)).toEqual(['cn-inf-1']);
      await createWidget('cn-inf-2', { size: 2 }, { informed: 'yes' });
      await eventually(() => informer.get('cn-inf-2', NS) !== undefined, 'cn-inf-2 in the cache');
      expect(lists()).toBe(1);

      const dropped = cluster.dropWatches({ resource: 'widgets' }, 'expire');
      expect(dropped).toBeGreaterThanOrEqual(1);
      await eventually(() => lists() === 2 && watches() === 2, 'a relist and a new watch after 410');
      const relistWatch = cluster.requests.filter((r) => r.verb === 'watch' && r.query.includes('informed%3Dyes'))[1]!;
      expect(Number(new URLSearchParams(relistWatch.query).get('resourceVersion'))).toBeGreaterThan(0);

      await createWidget('cn-inf-3', { size: 3 }, { informed: 'yes' });
      await custom.deleteNamespacedCustomObject({ ...CR, name: 'cn-inf-1' });
      await eventually(
        () => informer.get('cn-inf-3', NS) !== undefined && informer.get('cn-inf-1', NS) === undefined,
        'the cache to follow changes after the relist',
      );
      expect(
        informer
          .list(NS)
          .map((o) => o.metadata?.name)
          .sort(),
      ).toEqual(['cn-inf-2', 'cn-inf-3']);
      expect(added).toEqual(['cn-inf-1', 'cn-inf-2', 'cn-inf-3']);
      expect(deleted).toEqual(['cn-inf-1']);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});
