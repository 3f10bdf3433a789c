import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../../devcluster/testing.js';
import * as api from '../../../../runtime/cogs/client/api.js';
import * as errors from '../../../../runtime/cogs/client/errors.js';
import * as scanning from '../../../../runtime/cogs/client/scanning.js';
import * as references from '../../../../runtime/cogs/structs/references.js';
import { type Client, clientFor } from './helpers.js';

const WIDGETS_CRD = path.resolve(import.meta.dirname, '../../../../fixtures/crds/widgets.yaml');
const KOPF_CRD = path.resolve(import.meta.dirname, '../../../../fixtures/crds/kopfexamples.yaml');

const GADGETS_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.toys.example.org' },
  spec: {
    group: 'toys.example.org',
    scope: 'Cluster',
    names: { plural: 'gadgets', kind: 'Gadget', categories: ['toys'] },
    versions: ['v1', 'v2beta1'].map((name) => ({
      name,
      served: true,
      storage: name === 'v1',
      schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    })),
  },
};

describe('splitLines and listingOf', () => {
  it('R-WATCH-2 splits lines across chunk boundaries without a length limit', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    async function* chunks(): AsyncGenerator<Buffer> {
      yield Buffer.from('{"a":1}\n{"b":');
      yield Buffer.from(`"${big.slice(0, 1000)}`);
      yield Buffer.from(`${big.slice(1000)}"}\n\n`);
      yield Buffer.from('{"c":3}');
    }
    const lines: string[] = [];
    for await (const line of api.splitLines(chunks())) lines.push(line);
    expect(lines).toEqual(['{"a":1}', `{"b":"${big}"}`, '{"c":3}']);
  });

  it('R-WATCH-1 fills kind and apiVersion of listed items from the list', () => {
    const listing = api.listingOf({
      kind: 'WidgetList',
      apiVersion: 'example.com/v1',
      metadata: { resourceVersion: '42' },
      items: [{ metadata: { name: 'a' } }, { kind: 'Other', apiVersion: 'x/v9', metadata: { name: 'b' } }],
    });
    expect(listing.resourceVersion).toBe('42');
    expect(listing.items).toEqual([
      { kind: 'Widget', apiVersion: 'example.com/v1', metadata: { name: 'a' } },
      { kind: 'Other', apiVersion: 'x/v9', metadata: { name: 'b' } },
    ]);
  });

  it('R-RES-7 parses sub-resources and falls back to the lowercased kind for an empty singular', () => {
    const [resource, ...rest] = scanning.parseResourceList('g', 'v1', false, {
      resources: [
        { name: 'things', singularName: '', kind: 'Thing', namespaced: true, verbs: ['get', 'list'], shortNames: ['th'], categories: ['all'] },
        { name: 'things/status', kind: 'Thing', namespaced: true, verbs: ['get'] },
        { name: 'things/scale', kind: 'Scale', namespaced: true, verbs: ['get'] },
      ],
    });
    expect(rest).toEqual([]);
    expect(resource).toEqual({
      group: 'g',
      version: 'v1',
      plural: 'things',
      kind: 'Thing',
      singular: 'thing',
      shortcuts: ['th'],
      categories: ['all'],
      subresources: ['status', 'scale'],
      namespaced: true,
      preferred: false,
      verbs: ['get', 'list'],
    });
  });
});

for (const tls of [true, false]) {
  describe(`HttpKubeApi against an ${tls ? 'HTTPS' : 'HTTP'} devcluster`, () => {
    let cluster: DevCluster;
    let client: Client;
    beforeAll(async () => {
      cluster = await DevCluster.start({ tls });
      await cluster.load([WIDGETS_CRD, KOPF_CRD, GADGETS_CRD]);
      client = clientFor(cluster);
    });
    afterAll(async () => {
      client?.api.close();
      await cluster?.stop();
    });

    const find = (resources: references.Resource[], group: string, plural: string, version?: string): references.Resource | undefined =>
      resources.find((r) => r.group === group && r.plural === plural && (version === undefined || r.version === version));

    it('R-RES-7 scans core and custom resources with their attributes', async () => {
      const resources = await client.api.scanResources(null);
      expect(find(resources, '', 'pods')).toMatchObject({ version: 'v1', kind: 'Pod', singular: 'pod', namespaced: true, preferred: true });
      expect(find(resources, '', 'pods')?.subresources).toContain('status');
      expect(find(resources, '', 'namespaces')).toMatchObject({ namespaced: false });
      expect(find(resources, 'example.com', 'widgets')).toEqual({
        group: 'example.com',
        version: 'v1',
        plural: 'widgets',
        kind: 'Widget',
        singular: 'widget',
        shortcuts: ['wd'],
        categories: [],
        subresources: expect.arrayContaining(['status', 'scale']),
        namespaced: true,
        preferred: true,
        verbs: expect.arrayContaining(['get', 'list', 'watch', 'patch', 'create']),
      });
      expect(find(resources, 'kopf.dev', 'kopfexamples')).toMatchObject({
        kind: 'KopfExample',
        shortcuts: ['kopfexes', 'kopfex', 'kexes', 'kex'],
        subresources: ['status'],
      });
      const gadgets = resources.filter((r) => r.group === 'toys.example.org');
      expect(gadgets.map((r) => r.version).sort()).toEqual(['v1', 'v2beta1']);
      expect(gadgets.filter((r) => r.preferred)).toHaveLength(1);
      expect(gadgets[0]).toMatchObject({ namespaced: false, categories: ['toys'], singular: 'gadget' });
      expect(find(resources, 'apiextensions.k8s.io', 'customresourcedefinitions')).toBeDefined();
    });

    it('R-RES-7 scans only the requested groups', async () => {
      cluster.requests.clear();
      const resources = await client.api.scanResources(['example.com']);
      expect(new Set(resources.map((r) => r.group))).toEqual(new Set(['example.com']));
      const paths = cluster.requests.all.map((r) => r.path);
      expect(paths).toEqual(['/apis', '/apis/example.com/v1']);
      cluster.requests.clear();
      const core = await client.api.scanResources(['']);
      expect(core.every((r) => r.group === '')).toBe(true);
      expect(cluster.requests.all.map((r) => r.path)).toEqual(['/api', '/api/v1']);
    });

    it('R-RES-7 a 404 on a group/version is an empty group', async () => {
      const fault = cluster.faults.add({ path: /^\/apis\/example\.com\/v1$/, action: { respond: { code: 404 } } });
      try {
        const resources = await client.api.scanResources(['example.com', 'kopf.dev']);
        expect(resources.filter((r) => r.group === 'example.com')).toEqual([]);
        expect(find(resources, 'kopf.dev', 'kopfexamples')).toBeDefined();
      } finally {
        fault.remove();
      }
    });

    it('R-RES-10 creates, gets, lists and patches objects with merge and JSON patches', async () => {
      const resources = await client.api.scanResources(['example.com']);
      const widgets = find(resources, 'example.com', 'widgets')!;
      const created = await client.api.create(widgets, 'default', {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w1' },
        spec: { size: 1 },
      });
      expect(created.metadata?.uid).toBeTruthy();
      expect(cluster.requests.all.at(-1)).toMatchObject({ method: 'POST', path: '/apis/example.com/v1/namespaces/default/widgets' });

      const got = await client.api.get(widgets, 'default', 'w1');
      expect(got).toMatchObject({ kind: 'Widget', spec: { size: 1, color: 'blue' } });

      const merged = await client.api.patch(widgets, 'default', 'w1', { spec: { size: 2 } });
      expect(merged).toMatchObject({ spec: { size: 2 } });
      expect(cluster.requests.all.at(-1)?.headers.contentType).toBe('application/merge-patch+json');

      const patched = await client.api.patch(widgets, 'default', 'w1', [{ op: 'replace', path: '/spec/size', value: 3 }], { type: 'json' });
      expect(patched).toMatchObject({ spec: { size: 3 } });
      expect(cluster.requests.all.at(-1)?.headers.contentType).toBe('application/json-patch+json');

      const status = await client.api.patch(widgets, 'default', 'w1', { status: { phase: 'Ready' }, spec: { size: 9 } }, { subresource: 'status' });
      expect(status).toMatchObject({ status: { phase: 'Ready' }, spec: { size: 3 } });
      expect(cluster.requests.all.at(-1)?.path).toBe('/apis/example.com/v1/namespaces/default/widgets/w1/status');

      const everywhere = await client.api.list(widgets, null);
      expect(cluster.requests.all.at(-1)?.path).toBe('/apis/example.com/v1/widgets');
      expect(everywhere.items.map((item) => [item.kind, item.apiVersion, item.metadata?.name])).toEqual([['Widget', 'example.com/v1', 'w1']]);
      expect(Number(everywhere.resourceVersion)).toBeGreaterThan(0);
    });

    it('patching an absent object fails with ApiNotFoundError', async () => {
      const widgets = references.makeResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget' });
      await expect(client.api.patch(widgets, 'default', 'absent', { spec: {} })).rejects.toBeInstanceOf(errors.ApiNotFoundError);
    });
  });
}
