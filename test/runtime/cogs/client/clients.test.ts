/**
 * The typed client against the devcluster over loopback, through the real HTTP client: every verb,
 * pagination and selectors, preconditions and propagation, server-side apply with its conflicts,
 * watches, status writes, the API's errors as typed exceptions, the namespace rules checked before
 * any request, and the reuse of keep-alive connections.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import {
  ApiConflictError,
  ApiNotFoundError,
  ApiUnprocessableError,
  ApiClientError,
  KubeClient,
  Patch,
  builtins,
  connect,
  resource,
  type ConfigMap,
  type KubernetesObject,
} from '../../../../runtime/index.js';
import { ClientUsageError } from '../../../../runtime/cogs/client/errors.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');

interface Widget extends KubernetesObject {
  spec: { size: number; replicas?: number; mode?: 'a' | 'b'; color?: string; tags?: string[] };
  status?: { phase?: string; replicas?: number };
}
const Widgets = resource<Widget>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true, statusSubresource: true });

let cluster: DevCluster;
let client: KubeClient;

beforeAll(async () => {
  cluster = await DevCluster.start({ tls: false });
  await cluster.load(fs.readFileSync(path.join(ROOT, 'fixtures/crds/widgets.yaml'), 'utf8'));
  client = await connect({ connection: { server: cluster.url, token: cluster.token } });
});
afterAll(async () => {
  await client.close();
  await cluster.stop();
});

function requestCount(): number {
  return cluster.requests.all.length;
}

describe('the typed client: reading and writing', () => {
  it('creates, gets, replaces, patches and deletes a ConfigMap, typed by builtins.ConfigMaps', async () => {
    const created = await client.create(builtins.ConfigMaps, { metadata: { name: 'crud', namespace: 'default' }, data: { a: '1' } });
    expect(created).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'crud', namespace: 'default' }, data: { a: '1' } });
    expect(created.metadata?.uid).toBeTruthy();

    const read = await client.get(builtins.ConfigMaps, 'crud', { namespace: 'default' });
    expect(read.data).toEqual({ a: '1' });

    const replaced = await client.replace(builtins.ConfigMaps, { ...read, data: { b: '2' } });
    expect(replaced.data).toEqual({ b: '2' });
    // A stale resourceVersion: the API's conflict, as the runtime's error class.
    await expect(client.replace(builtins.ConfigMaps, { ...read, data: { c: '3' } })).rejects.toBeInstanceOf(ApiConflictError);

    const merged = await client.patch(builtins.ConfigMaps, 'crud', { data: { b: null, c: '3' } }, { namespace: 'default' });
    expect(merged.data).toEqual({ c: '3' });
    const patch = new Patch<ConfigMap>();
    patch.metadata.labels['app'] = 'web';
    const viaPatch = await client.patch(builtins.ConfigMaps, 'crud', patch, { namespace: 'default' });
    expect(viaPatch.metadata?.labels).toEqual({ app: 'web' });
    const jsonPatched = await client.patch(builtins.ConfigMaps, 'crud', [{ op: 'add', path: '/data/d', value: '4' }], { namespace: 'default' });
    expect(jsonPatched.data).toEqual({ c: '3', d: '4' });
    expect(cluster.requests.filter((r) => r.method === 'PATCH' && r.name === 'crud').map((r) => r.headers.contentType)).toEqual([
      'application/merge-patch+json',
      'application/merge-patch+json',
      'application/json-patch+json',
    ]);

    await client.delete(builtins.ConfigMaps, 'crud', { namespace: 'default' });
    await expect(client.get(builtins.ConfigMaps, 'crud', { namespace: 'default' })).rejects.toBeInstanceOf(ApiNotFoundError);
  });

  it('lists with label and field selectors, page by page with limit/continue, and iterates over all pages', async () => {
    for (let i = 0; i < 5; i += 1) {
      await client.create(builtins.ConfigMaps, {
        metadata: { name: `page-${i}`, namespace: 'default', labels: { suite: 'paging', parity: i % 2 ? 'odd' : 'even' } },
      });
    }
    const odd = await client.list(builtins.ConfigMaps, { namespace: 'default', labelSelector: { suite: 'paging', parity: 'odd' } });
    expect(odd.items.map((item) => item.metadata?.name)).toEqual(['page-1', 'page-3']);
    expect(odd.items[0]).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    const byField = await client.list(builtins.ConfigMaps, { namespace: 'default', labelSelector: 'suite=paging', fieldSelector: 'metadata.name=page-4' });
    expect(byField.items.map((item) => item.metadata?.name)).toEqual(['page-4']);

    const first = await client.list(builtins.ConfigMaps, { namespace: 'default', labelSelector: 'suite=paging', limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.continue).toBeTruthy();
    // The devcluster does not count the remaining items (a real API server may).
    expect([undefined, 3]).toContain(first.remainingItemCount);
    const second = await client.list(builtins.ConfigMaps, { namespace: 'default', labelSelector: 'suite=paging', limit: 2, continue: first.continue });
    expect(second.items.map((item) => item.metadata?.name)).toEqual(['page-2', 'page-3']);

    const pages: string[][] = [];
    for await (const page of client.pages(builtins.ConfigMaps, { namespace: 'default', labelSelector: 'suite=paging', limit: 2 })) {
      pages.push(page.items.map((item) => item.metadata!.name!));
    }
    expect(pages).toEqual([['page-0', 'page-1'], ['page-2', 'page-3'], ['page-4']]);
    const names: string[] = [];
    for await (const item of client.iterate(builtins.ConfigMaps, { namespace: 'default', labelSelector: 'suite=paging', limit: 3 }))
      names.push(item.metadata!.name!);
    expect(names).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);

    // Across all namespaces when none is given.
    const everywhere = await client.list(builtins.ConfigMaps, { labelSelector: 'suite=paging' });
    expect(everywhere.items).toHaveLength(5);
  });

  it('a dry run answers as if written and writes nothing', async () => {
    const answered = await client.create(builtins.ConfigMaps, { metadata: { name: 'dry', namespace: 'default' } }, { dryRun: true });
    expect(answered.metadata?.name).toBe('dry');
    expect(cluster.requests.filter((r) => r.method === 'POST' && r.query.includes('dryRun=All'))).toHaveLength(1);
    await expect(client.get(builtins.ConfigMaps, 'dry', { namespace: 'default' })).rejects.toBeInstanceOf(ApiNotFoundError);
  });
});

describe('the typed client: deletion', () => {
  it('preconditions that do not hold fail with a conflict (409), and the object stays', async () => {
    const created = await client.create(builtins.ConfigMaps, { metadata: { name: 'guarded', namespace: 'default' } });
    const failing = client.delete(builtins.ConfigMaps, 'guarded', { namespace: 'default', preconditions: { uid: 'not-its-uid' } });
    await expect(failing).rejects.toBeInstanceOf(ApiConflictError);
    await expect(failing).rejects.toMatchObject({ status: 409 });
    await client.get(builtins.ConfigMaps, 'guarded', { namespace: 'default' });
    await client.delete(builtins.ConfigMaps, 'guarded', {
      namespace: 'default',
      preconditions: { uid: created.metadata!.uid!, resourceVersion: created.metadata!.resourceVersion! },
    });
    await expect(client.get(builtins.ConfigMaps, 'guarded', { namespace: 'default' })).rejects.toBeInstanceOf(ApiNotFoundError);
  });

  it('propagation: Orphan keeps the dependents, Background lets the garbage collector delete them', async () => {
    for (const [policy, survives] of [
      ['Orphan', true],
      ['Background', false],
    ] as const) {
      const owner = await client.create(builtins.ConfigMaps, { metadata: { name: `owner-${policy.toLowerCase()}`, namespace: 'default' } });
      const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata!.name!, uid: owner.metadata!.uid! }];
      await client.create(builtins.ConfigMaps, { metadata: { name: `child-${policy.toLowerCase()}`, namespace: 'default', ownerReferences } });
      await client.delete(builtins.ConfigMaps, owner.metadata!.name!, { namespace: 'default', propagationPolicy: policy });
      await cluster.settle();
      const child = client.get(builtins.ConfigMaps, `child-${policy.toLowerCase()}`, { namespace: 'default' });
      if (survives)
        expect((await child).metadata?.ownerReferences ?? []).toEqual([]); // orphaned: no owner left
      else await expect(child).rejects.toBeInstanceOf(ApiNotFoundError);
    }
    const bodies = cluster.requests.filter((r) => r.method === 'DELETE' && r.name?.startsWith('owner-') === true).map((r) => JSON.parse(r.body!) as unknown);
    expect(bodies).toEqual([
      { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Orphan' },
      { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' },
    ]);
  });
});

describe('the typed client: server-side apply', () => {
  it("applies as a field manager, fails on another manager's fields with a conflict, and takes them over with force", async () => {
    const applied = await client.apply(Widgets, { metadata: { name: 'ssa', namespace: 'default' }, spec: { size: 2, mode: 'a' } }, { fieldManager: 'first' });
    expect(applied.spec).toMatchObject({ size: 2, mode: 'a' });
    expect(applied.metadata?.managedFields?.map((entry) => [entry.manager, entry.operation])).toContainEqual(['first', 'Apply']);
    const request = cluster.requests.filter((r) => r.method === 'PATCH' && r.name === 'ssa').at(-1)!;
    expect(request.headers.contentType).toBe('application/apply-patch+yaml');
    expect(request.query).toContain('fieldManager=first');

    const conflict = client.apply(Widgets, { metadata: { name: 'ssa', namespace: 'default' }, spec: { size: 3 } }, { fieldManager: 'second' });
    await expect(conflict).rejects.toBeInstanceOf(ApiConflictError);
    const forced = await client.apply(Widgets, { metadata: { name: 'ssa', namespace: 'default' }, spec: { size: 3 } }, { fieldManager: 'second', force: true });
    expect(forced.spec.size).toBe(3);
    await expect(client.apply(Widgets, { metadata: { name: 'ssa', namespace: 'default' } }, { fieldManager: '' })).rejects.toBeInstanceOf(ClientUsageError);
  });
});

describe('the typed client: status subresource', () => {
  it('patches, replaces and applies the status through the subresource; the main resource ignores status', async () => {
    await client.create(Widgets, { metadata: { name: 'status', namespace: 'default' }, spec: { size: 1 } });
    const ignored = await client.patch(Widgets, 'status', { status: { phase: 'ignored' } }, { namespace: 'default' });
    expect(ignored.status?.phase).toBeUndefined();
    const patched = await client.patch(Widgets, 'status', { status: { phase: 'Running' } }, { namespace: 'default', subresource: 'status' });
    expect(patched.status?.phase).toBe('Running');
    const replaced = await client.replace(Widgets, { ...patched, status: { phase: 'Done', replicas: 1 } }, { subresource: 'status' });
    expect(replaced.status).toEqual({ phase: 'Done', replicas: 1 });
    const applied = await client.apply(
      Widgets,
      { metadata: { name: 'status', namespace: 'default' }, status: { replicas: 2 } },
      { fieldManager: 'status-owner', subresource: 'status', force: true },
    );
    expect(applied.status?.replicas).toBe(2);
    expect(cluster.requests.filter((r) => r.name === 'status' && r.subresource === 'status').map((r) => r.method)).toEqual(['PATCH', 'PUT', 'PATCH']);
  });
});

describe('the typed client: errors', () => {
  it("an invalid body gets the API's Status as ApiUnprocessableError (422), naming the field", async () => {
    const failing = client.create(Widgets, { metadata: { name: 'invalid', namespace: 'default' }, spec: { size: 0 } });
    await expect(failing).rejects.toBeInstanceOf(ApiUnprocessableError);
    const error = await failing.then(
      () => undefined,
      (e: unknown) => e as ApiUnprocessableError,
    );
    if (error === undefined) throw new Error('the create should fail');
    expect(error.code).toBe('ApiUnprocessable');
    expect(error.reason).toBe('Invalid');
    expect(error.details?.causes?.map((cause) => cause.field)).toContain('spec.size');
  });

  it("a malformed request gets the API's 400 as an ApiClientError", async () => {
    await client.create(builtins.ConfigMaps, { metadata: { name: 'bad-patch', namespace: 'default' } });
    const failing = client.patch(builtins.ConfigMaps, 'bad-patch', [{ op: 'remove', path: 'no-leading-slash' }], { namespace: 'default' });
    await expect(failing).rejects.toBeInstanceOf(ApiClientError);
    await expect(failing).rejects.toMatchObject({ status: expect.any(Number) as unknown });
    const status = await failing.catch((e: unknown) => (e as ApiClientError).status);
    expect([400, 422]).toContain(status);
  });

  it('namespace mistakes are refused before any request, naming the resource', async () => {
    const before = requestCount();
    await expect(client.get(builtins.ConfigMaps, 'x')).rejects.toThrow(
      'configmaps.v1 is namespaced: give a namespace (the namespace option or metadata.namespace).',
    );
    await expect(client.create(builtins.ConfigMaps, { metadata: { name: 'x' } })).rejects.toBeInstanceOf(ClientUsageError);
    await expect(client.get(builtins.Namespaces, 'default', { namespace: 'default' })).rejects.toThrow(
      'namespaces.v1 is cluster-scoped: it takes no namespace, got "default".',
    );
    await expect(client.create(builtins.Namespaces, { metadata: { name: 'x', namespace: 'default' } })).rejects.toBeInstanceOf(ClientUsageError);
    await expect(client.create(builtins.ConfigMaps, { metadata: { name: 'x', namespace: 'a' } }, { namespace: 'b' })).rejects.toThrow(
      'configmaps.v1: the namespace option "b" differs from the body\'s metadata.namespace "a".',
    );
    await expect(client.list(builtins.Nodes, { namespace: 'default' })).rejects.toBeInstanceOf(ClientUsageError);
    await expect(client.patch(builtins.ConfigMaps, 'x', { data: {} }, { namespace: 'default', type: 'json' })).rejects.toBeInstanceOf(ClientUsageError);
    expect(requestCount()).toBe(before);
    // The namespace comes from the body when not given.
    const created = await client.create(builtins.ConfigMaps, { metadata: { name: 'from-body', namespace: 'default' } });
    expect(created.metadata?.namespace).toBe('default');
    // Cluster-scoped resources work without one.
    expect((await client.get(builtins.Namespaces, 'default')).metadata?.name).toBe('default');
  });
});

describe('the typed client: watching', () => {
  it('yields typed events with selectors until the signal aborts', async () => {
    const stop = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const event of client.watch(builtins.ConfigMaps, { namespace: 'default', labelSelector: { watched: 'yes' }, signal: stop.signal })) {
        seen.push(`${event.type} ${event.object.metadata?.name} ${JSON.stringify(event.object.data ?? {})}`);
        if (seen.length === 3) stop.abort(new Error('enough'));
      }
    })();
    await cluster.requests.waitFor((r) => r.resource === 'configmaps' && r.query.includes('watch=true') && r.query.includes('labelSelector=watched%3Dyes'));
    await client.create(builtins.ConfigMaps, { metadata: { name: 'unwatched', namespace: 'default' } });
    await client.create(builtins.ConfigMaps, { metadata: { name: 'watched', namespace: 'default', labels: { watched: 'yes' } } });
    await client.patch(builtins.ConfigMaps, 'watched', { data: { a: '1' } }, { namespace: 'default' });
    await client.delete(builtins.ConfigMaps, 'watched', { namespace: 'default' });
    await expect(watching).rejects.toThrow('enough');
    expect(seen).toEqual(['ADDED watched {}', 'MODIFIED watched {"a":"1"}', 'DELETED watched {"a":"1"}']);
  });

  it('resumes from a resource version: only later changes arrive', async () => {
    const listing = await client.list(builtins.ConfigMaps, { namespace: 'default' });
    const created = client.create(builtins.ConfigMaps, { metadata: { name: 'later', namespace: 'default' } });
    await created;
    const stop = new AbortController();
    for await (const event of client.watch(builtins.ConfigMaps, { namespace: 'default', resourceVersion: listing.resourceVersion, signal: stop.signal })) {
      expect([event.type, event.object.metadata?.name, event.object.kind]).toEqual(['ADDED', 'later', 'ConfigMap']);
      break; // ends the watch connection
    }
  });
});

describe('the typed client: connections', () => {
  it('sequential calls reuse one keep-alive connection', async () => {
    let connections = 0;
    const proxy = net.createServer((socket) => {
      connections += 1;
      const upstream = net.connect(cluster.port, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as net.AddressInfo).port;
    const viaProxy = await connect({ connection: { server: `http://127.0.0.1:${port}`, token: cluster.token } });
    try {
      await viaProxy.create(builtins.ConfigMaps, { metadata: { name: 'reuse', namespace: 'default' } });
      for (let i = 0; i < 30; i += 1) await viaProxy.patch(builtins.ConfigMaps, 'reuse', { data: { i: String(i) } }, { namespace: 'default' });
      expect((await viaProxy.get(builtins.ConfigMaps, 'reuse', { namespace: 'default' })).data).toEqual({ i: '29' });
      expect(connections).toBeLessThanOrEqual(2);
    } finally {
      await viaProxy.close();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('connect() reads an explicit kubeconfig; a missing one fails at once with a LoginError naming it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-client-'));
    const file = cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
    await using scripted = await connect({ kubeconfig: file });
    expect((await scripted.get(builtins.Namespaces, 'default')).metadata?.name).toBe('default');
    await expect(connect({ kubeconfig: path.join(dir, 'absent') })).rejects.toMatchObject({
      code: 'LoginError',
      message: expect.stringContaining(`The kubeconfig ${path.join(dir, 'absent')} does not exist.`) as unknown,
    });
    await expect(connect({ connection: { server: cluster.url }, kubeconfig: file })).rejects.toMatchObject({ code: 'ConnectionOptionsError' });
  });

  it("a closed client refuses calls; the operator's own client refuses close()", async () => {
    const scripted = await connect({ connection: { server: cluster.url, token: cluster.token } });
    await scripted.close();
    await expect(scripted.get(builtins.Namespaces, 'default')).rejects.toThrow('The client is closed.');
    const borrowed = new KubeClient({ request: () => Promise.resolve({}), watch: () => Promise.reject(new Error('no watching here')) });
    await expect(borrowed.close()).rejects.toBeInstanceOf(ClientUsageError);
  });
});
