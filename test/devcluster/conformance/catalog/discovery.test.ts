/**
 * Conformance checklist C-140 (devcluster reference section 13, "Built-ins"), generated from the
 * catalog: every built-in resource appears in both discovery forms — the legacy resource lists
 * (`/api/v1`, `/apis/{g}/{v}`, D-WIRE-8) and the aggregated documents (`/api`, `/apis` with the
 * aggregated Accept, D-WIRE-12) — with the catalog's scope, kind, singular name, verbs, short
 * names, categories and subresources (verbs and kinds), and nothing else is served. A kind added
 * to the catalog is covered without a test being written for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entries, type ResourceEntry } from '../../../../devcluster/upstream/catalog.js';
import { byVersionPriority, groupVersionPath, titleOf } from '../../../support/builtins/urls.js';
import { isCreateOnly } from '../../../support/builtins/samples.js';
import { startHarness, type Harness, type Json } from '../harness.js';

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const CATALOG = entries();

/** What a legacy resource list says of a subresource: `{resource}/{sub}` with its verbs and kind (group/version when they differ). */
function legacySubresource(e: ResourceEntry, s: ResourceEntry['subresources'][number]): Json {
  const entry: Json = { name: `${e.resource}/${s.name}`, singularName: '', namespaced: e.namespaced, kind: s.kind, verbs: [...s.verbs] };
  if (s.group !== undefined && (s.group !== e.group || s.version !== e.version)) Object.assign(entry, { group: s.group, version: s.version });
  return entry;
}

const sorted = (values: readonly string[] | undefined): string[] => [...(values ?? [])].sort();

describe('C-140 discovery of every built-in resource matches the catalog', () => {
  let h: Harness;
  const legacy = new Map<string, Json[]>();
  const aggregated: Json[] = [];

  beforeAll(async () => {
    h = await startHarness({ widgets: false });
    for (const path of new Set(CATALOG.map(groupVersionPath))) {
      const r = await h.get(path);
      if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.text}`);
      legacy.set(path, r.json['resources'] as Json[]);
    }
    for (const path of ['/api', '/apis']) {
      const r = await h.get(path, `${AGGREGATED},application/json`);
      if (r.headers.get('content-type') !== AGGREGATED) throw new Error(`GET ${path} did not answer the aggregated form: ${r.headers.get('content-type')}`);
      aggregated.push(...(r.json['items'] as Json[]));
    }
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('D-BI-1 the served groups and versions are exactly those of the catalog, each version preferred as upstream prefers it', async () => {
    const groups = (await h.get('/apis')).json['groups'] as Json[];
    const expected = [...new Set(CATALOG.filter((e) => e.group).map((e) => e.group))].sort();
    expect(groups.map((g) => g['name']).sort()).toEqual(expected);
    for (const g of groups) {
      const versions = [...new Set(CATALOG.filter((e) => e.group === g['name']).map((e) => e.version))];
      expect(sorted(g['versions'].map((v: Json) => v['version'])), g['name']).toEqual(sorted(versions));
      expect(g['preferredVersion']['version'], g['name']).toBe(versions.sort(byVersionPriority)[0]);
    }
  });

  it('D-BI-1 D-WIRE-8 the legacy resource lists hold exactly the catalog resources and their subresources', () => {
    for (const [path, resources] of legacy) {
      const served = resources.map((r) => r['name'] as string).sort();
      const catalogued = CATALOG.filter((e) => groupVersionPath(e) === path).flatMap((e) => [
        e.resource,
        ...e.subresources.map((s) => `${e.resource}/${s.name}`),
      ]);
      expect(served, path).toEqual(catalogued.sort());
    }
  });

  describe.each(CATALOG.map((e) => [titleOf(e), e] as const))('%s', (_, e) => {
    it('D-WIRE-8 its legacy discovery entry has the scope, kind, names, verbs and categories of the catalog', () => {
      const entry = legacy.get(groupVersionPath(e))?.find((r) => r['name'] === e.resource);
      expect(entry, `${e.resource} in ${groupVersionPath(e)}`).toBeDefined();
      expect({ ...entry, verbs: sorted(entry!['verbs']), storageVersionHash: undefined }).toEqual({
        name: e.resource,
        singularName: e.singular,
        namespaced: e.namespaced,
        kind: e.kind,
        verbs: sorted(e.verbs),
        ...(e.shortNames.length ? { shortNames: [...e.shortNames] } : {}),
        ...(e.categories.length ? { categories: [...e.categories] } : {}),
        storageVersionHash: undefined,
      });
      // Only stored kinds have a storage version; the create-only ones (reviews, bindings) have none.
      expect(typeof entry!['storageVersionHash']).toBe(isCreateOnly(e) ? 'undefined' : 'string');
    });

    if (e.subresources.length) {
      it('D-WIRE-8 its subresources are listed with their verbs and kinds', () => {
        const served = legacy.get(groupVersionPath(e))!.filter((r) => (r['name'] as string).startsWith(`${e.resource}/`));
        const normalised = served.map((r) => ({ ...r, verbs: sorted(r['verbs']) }));
        expect(normalised).toEqual(expect.arrayContaining(e.subresources.map((s) => ({ ...legacySubresource(e, s), verbs: sorted(s.verbs) }))));
        expect(served).toHaveLength(e.subresources.length);
      });
    }

    it('D-WIRE-12 its aggregated discovery entry has the same facts', () => {
      const group = aggregated.find((g) => (g['metadata']['name'] ?? '') === e.group);
      const version = group?.['versions'].find((v: Json) => v['version'] === e.version);
      const entry = version?.['resources'].find((r: Json) => r['resource'] === e.resource) as Json | undefined;
      expect(entry, `${e.resource} in the aggregated ${e.group || 'core'} ${e.version}`).toBeDefined();
      const subresources = (entry!['subresources'] ?? []) as Json[];
      expect({ ...entry, verbs: sorted(entry!['verbs']), subresources: undefined }).toEqual({
        resource: e.resource,
        responseKind: { group: e.group, version: e.version, kind: e.kind },
        scope: e.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: e.singular,
        verbs: sorted(e.verbs),
        ...(e.shortNames.length ? { shortNames: [...e.shortNames] } : {}),
        ...(e.categories.length ? { categories: [...e.categories] } : {}),
        subresources: undefined,
      });
      expect(subresources.map((s): Json => ({ ...s, verbs: sorted(s['verbs']) })).sort((a, b) => (a['subresource'] < b['subresource'] ? -1 : 1))).toEqual(
        [...e.subresources]
          .sort((a, b) => (a.name < b.name ? -1 : 1))
          .map((s) => ({
            subresource: s.name,
            responseKind: { group: s.group ?? e.group, version: s.version ?? e.version, kind: s.kind },
            verbs: sorted(s.verbs),
          })),
      );
    });
  });
});
