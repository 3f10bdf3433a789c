/**
 * Conformance checklist C-61..C-70 (C-64 lives with the events suite): label and field selectors,
 * pagination from one snapshot, resourceVersion semantics of lists, cluster-wide lists, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Json } from './harness.js';

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

const widgetsIn = (ns: string): string => `/apis/example.com/v1/namespaces/${ns}/widgets`;
const configMapsIn = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;
const CONFIGMAPS_DEFAULT = configMapsIn('default');
const names = (list: Json): string[] => (list['items'] as Json[]).map((i) => i['metadata']['name'] as string);

describe('conformance: lists, selectors, pagination, resourceVersion', () => {
  let h: Harness;

  async function namespace(name: string): Promise<void> {
    const r = await h.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    expect(r.status).toBe(201);
  }

  async function configMap(ns: string, name: string, labels: Record<string, string> = {}): Promise<Json> {
    const r = await h.post(configMapsIn(ns), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { k: name } });
    expect(r.status).toBe(201);
    return r.json;
  }

  async function widgetIn(ns: string, name: string, size = 1): Promise<Json> {
    const r = await h.post(widgetsIn(ns), { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec: { size } });
    expect(r.status).toBe(201);
    return r.json;
  }

  beforeAll(async () => {
    h = await startHarness({ tooLargeRvWaitMs: 100 });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-61 label selectors: equality, inequality, set-based, existence and conjunctions', async () => {
    await namespace('sel');
    await configMap('sel', 'prod-web', { env: 'prod', tier: 'web' });
    await configMap('sel', 'dev', { env: 'dev' });
    await configMap('sel', 'plain');
    const cases: [string, string[]][] = [
      ['env=prod', ['prod-web']],
      ['env!=prod', ['dev', 'plain']],
      ['env in (prod,dev)', ['dev', 'prod-web']],
      ['env notin (prod)', ['dev', 'plain']],
      ['env', ['dev', 'prod-web']],
      ['!env', ['plain']],
      ['env=prod,tier=web', ['prod-web']],
      ['env==prod', ['prod-web']],
      ['', ['dev', 'plain', 'prod-web']],
    ];
    for (const [selector, expected] of cases) {
      const r = await h.get(`${configMapsIn('sel')}?labelSelector=${encodeURIComponent(selector)}`);
      expect(r.status, selector).toBe(200);
      expect(names(r.json), selector).toEqual(expected);
    }
  });

  it('C-62 a malformed label selector is a 400 BadRequest', async () => {
    for (const selector of ['env in prod', 'a=', '=b', 'a in (b', 'a==b==c']) {
      const r = await h.get(`${CONFIGMAPS_DEFAULT}?labelSelector=${encodeURIComponent(selector)}`);
      expect(r.status, selector).toBe(400);
      expect(r.json['reason']).toBe('BadRequest');
      expect(r.json['kind']).toBe('Status');
      expect(String(r.json['message']).length).toBeGreaterThan(0);
    }
  });

  it('C-63 field selectors on metadata.name and metadata.namespace; unsupported CR fields are 400', async () => {
    await namespace('fields');
    await configMap('fields', 'a');
    await configMap('fields', 'b');
    await configMap('default', 'fields-default');
    const byName = await h.get(`${configMapsIn('fields')}?fieldSelector=${encodeURIComponent('metadata.name=a')}`);
    expect(byName.status).toBe(200);
    expect(names(byName.json)).toEqual(['a']);

    const notDefault = await h.get(`/api/v1/configmaps?fieldSelector=${encodeURIComponent('metadata.namespace!=default')}`);
    expect(notDefault.status).toBe(200);
    const namespaces = (notDefault.json['items'] as Json[]).map((i) => i['metadata']['namespace']);
    expect(namespaces).toContain('fields');
    expect(namespaces).not.toContain('default');
    const all = await h.get('/api/v1/configmaps');
    expect((all.json['items'] as Json[]).some((i) => i['metadata']['namespace'] === 'default')).toBe(true);

    const bad = await h.get(`${widgetsIn('default')}?fieldSelector=${encodeURIComponent('spec.size=3')}`);
    expect(bad.status).toBe(400);
    expect(bad.json['reason']).toBe('BadRequest');
    expect(bad.json['message']).toBe('field label not supported: spec.size');
  });

  it("C-65 pagination serves every page from the first page's snapshot with remainingItemCount", async () => {
    await namespace('pages');
    for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) await widgetIn('pages', n);
    const first = await h.get(`${widgetsIn('pages')}?limit=2`);
    expect(first.status).toBe(200);
    expect(names(first.json)).toEqual(['p1', 'p2']);
    const snapshotRv = first.json['metadata']['resourceVersion'] as string;
    expect(first.json['metadata']['continue']).toEqual(expect.any(String));
    expect(first.json['metadata']['remainingItemCount']).toBe(3);

    // Changes after the first page are invisible to the following pages.
    await widgetIn('pages', 'p0');
    await widgetIn('pages', 'p6');
    expect((await h.del(`${widgetsIn('pages')}/p4`)).status).toBe(200);

    const second = await h.get(`${widgetsIn('pages')}?limit=2&continue=${encodeURIComponent(first.json['metadata']['continue'])}`);
    expect(second.status).toBe(200);
    expect(names(second.json)).toEqual(['p3', 'p4']);
    expect(second.json['metadata']['resourceVersion']).toBe(snapshotRv);
    expect(second.json['metadata']['continue']).toEqual(expect.any(String));
    expect(second.json['metadata']['remainingItemCount']).toBe(1);

    const third = await h.get(`${widgetsIn('pages')}?limit=2&continue=${encodeURIComponent(second.json['metadata']['continue'])}`);
    expect(third.status).toBe(200);
    expect(names(third.json)).toEqual(['p5']);
    expect(third.json['metadata']['resourceVersion']).toBe(snapshotRv);
    expect(third.json['metadata']['continue']).toBeUndefined();
    expect(third.json['metadata']['remainingItemCount']).toBeUndefined();

    // Tokens that do not decode, or come with a resourceVersion or resourceVersionMatch, are rejected.
    const garbage = await h.get(`${widgetsIn('pages')}?limit=2&continue=not-a-token`);
    expect(garbage.status).toBe(400);
    expect(String(garbage.json['message'])).toMatch(/^invalid continue token/);
    const token = encodeURIComponent(first.json['metadata']['continue']);
    const withRv = await h.get(`${widgetsIn('pages')}?limit=2&continue=${token}&resourceVersion=${snapshotRv}`);
    expect(withRv.status).toBe(400);
    expect(withRv.json['message']).toBe('specifying resource version is not allowed when using continue');
    const withMatch = await h.get(`${widgetsIn('pages')}?limit=2&continue=${token}&resourceVersion=${snapshotRv}&resourceVersionMatch=Exact`);
    expect(withMatch.status).toBe(422);

    // Without pagination the current state shows the later changes.
    expect(names((await h.get(widgetsIn('pages'))).json)).toEqual(['p0', 'p1', 'p2', 'p3', 'p5', 'p6']);
  });

  it('C-66 a continue token from a compacted snapshot is 410 Expired with a fresh token', async () => {
    await namespace('compacted');
    for (const n of ['c1', 'c2', 'c3']) await widgetIn('compacted', n);
    const first = await h.get(`${widgetsIn('compacted')}?limit=1`);
    expect(first.status).toBe(200);
    const token = first.json['metadata']['continue'] as string;
    await widgetIn('compacted', 'c4');
    h.cluster.compact();
    const r = await h.get(`${widgetsIn('compacted')}?limit=1&continue=${encodeURIComponent(token)}`);
    expect(r.status).toBe(410);
    expect(r.json['kind']).toBe('Status');
    expect(r.json['reason']).toBe('Expired');
    expect(r.json['code']).toBe(410);
    expect(r.json['message']).toBe(EXPIRED_CONTINUE);
    const fresh = r.json['metadata']['continue'] as string;
    expect(fresh).toEqual(expect.any(String));
    expect(fresh.length).toBeGreaterThan(0);
    // The fresh token continues from the same key at the current state.
    const rest = await h.get(`${widgetsIn('compacted')}?continue=${encodeURIComponent(fresh)}`);
    expect(rest.status).toBe(200);
    expect(names(rest.json)).toEqual(['c2', 'c3', 'c4']);
    expect(rest.json['metadata']['continue']).toBeUndefined();
  });

  it('C-67 resourceVersionMatch=Exact lists the state at that revision; 410 once compacted', async () => {
    await namespace('exact');
    await widgetIn('exact', 'e1');
    const second = await widgetIn('exact', 'e2');
    const rv = second['metadata']['resourceVersion'] as string;
    await widgetIn('exact', 'e3');
    const r = await h.get(`${widgetsIn('exact')}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(r.status).toBe(200);
    expect(names(r.json)).toEqual(['e1', 'e2']);
    expect(r.json['metadata']['resourceVersion']).toBe(rv);
    // NotOlderThan (and no match with a non-zero RV and no limit) serve the current state.
    const current = await h.get(`${widgetsIn('exact')}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
    expect(names(current.json)).toEqual(['e1', 'e2', 'e3']);

    h.cluster.compact();
    const expired = await h.get(`${widgetsIn('exact')}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(expired.status).toBe(410);
    expect(expired.json['reason']).toBe('Expired');
    expect(expired.json['message']).toBe('The resourceVersion for the provided list is too old.');
  });

  it('C-68 resourceVersionMatch without resourceVersion is 422 on resourceVersionMatch', async () => {
    const r = await h.get(`${CONFIGMAPS_DEFAULT}?resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(422);
    expect(r.json['reason']).toBe('Invalid');
    expect(r.json['message']).toMatch(/^ListOptions\.meta\.k8s\.io "" is invalid: /);
    expect(r.json['details']['group']).toBe('meta.k8s.io');
    expect(r.json['details']['kind']).toBe('ListOptions');
    expect((r.json['details']['causes'] as Json[]).map((c) => [c['reason'], c['field']])).toEqual([['FieldValueForbidden', 'resourceVersionMatch']]);
  });

  it('C-69 a list at a future resourceVersion times out with 504 ResourceVersionTooLarge', async () => {
    const current = h.cluster.revision;
    const future = current + 1000;
    const r = await h.get(`${CONFIGMAPS_DEFAULT}?resourceVersion=${future}&resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(504);
    expect(r.json['reason']).toBe('Timeout');
    expect(r.json['code']).toBe(504);
    expect(r.json['message']).toBe(`Timeout: Too large resource version: ${future}, current: ${current}`);
    expect(r.json['details']['retryAfterSeconds']).toBe(1);
    expect(r.json['details']['causes']).toEqual([{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
  });

  it('C-70 a cluster-wide list returns items of all namespaces ordered by namespace then name', async () => {
    await namespace('zz-last');
    await namespace('aa-first');
    await configMap('zz-last', 'b');
    await configMap('zz-last', 'a');
    await configMap('aa-first', 'z');
    await configMap('default', 'm');
    const r = await h.get('/api/v1/configmaps');
    expect(r.status).toBe(200);
    expect(r.json['kind']).toBe('ConfigMapList');
    const items = (r.json['items'] as Json[]).map((i) => `${i['metadata']['namespace']}/${i['metadata']['name']}`);
    expect(items).toContain('aa-first/z');
    expect(items).toContain('zz-last/a');
    expect(items).toContain('default/m');
    const sorted = [...items].sort((x, y) => {
      const [nx, mx] = x.split('/') as [string, string];
      const [ny, my] = y.split('/') as [string, string];
      return nx < ny ? -1 : nx > ny ? 1 : mx < my ? -1 : mx > my ? 1 : 0;
    });
    expect(items).toEqual(sorted);
    expect(items.indexOf('aa-first/z')).toBeLessThan(items.indexOf('default/m'));
    expect(items.indexOf('zz-last/a')).toBeLessThan(items.indexOf('zz-last/b'));
  });
});
