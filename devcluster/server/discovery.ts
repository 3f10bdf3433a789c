/**
 * Discovery documents: what clients read before anything else to learn which groups, versions and
 * resources the server has (D-WIRE-5..12; the OpenAPI documents live in `devcluster/openapi/`). They are rendered from
 * the live registry on every request rather than cached, so that a CRD becoming established or being
 * deleted shows up at once, as operators that watch for new resources expect. Members come in the
 * order of upstream's Go structs (D-BI-24).
 */
import type * as resources from '../api/resources.js';
import type { JsonObject } from '../json.js';

export function versionInfo(version: string): JsonObject {
  const m = /^v(\d+)\.(\d+)/.exec(version);
  return {
    major: m?.[1] ?? '1',
    minor: m?.[2] ?? '32',
    gitVersion: version,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2024-12-11T00:00:00Z',
    goVersion: 'go1.23.3',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

export function apiVersions(serverAddress: string): JsonObject {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function groupEntry(name: string, versions: string[]): JsonObject {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(registry: resources.Registry): JsonObject {
  const groups = [...registry.groups()].filter(([g]) => g !== '').sort(([a], [b]) => (a < b ? -1 : 1));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(([g, vs]) => groupEntry(g, vs)) };
}

export function apiGroup(registry: resources.Registry, group: string): JsonObject | undefined {
  const versions = registry.groups().get(group);
  if (!versions || group === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) };
}

/** Create-only kinds (reviews, bindings) are not stored, and discovery gives them no storage version hash. */
const isStored = (t: resources.ResourceType): boolean => !t.answer && !(t.verbs.length === 1 && t.verbs[0] === 'create');

function storageVersionHash(t: resources.ResourceType): string {
  let h = 2166136261;
  for (const ch of `${t.group}/${t.version}/${t.resource}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return Buffer.from(Uint32Array.of(h >>> 0, (h * 31) >>> 0).buffer).toString('base64');
}

const SUB_VERBS = ['get', 'patch', 'update'];

/** What discovery says of one subresource: the catalog's facts, else the defaults of D-WIRE-8. */
function subresourceFacts(t: resources.ResourceType, sub: string): { verbs: string[]; group: string; version: string; kind: string } {
  const info = t.subresourceInfo?.[sub];
  if (info) return { verbs: [...info.verbs], group: info.group ?? t.group, version: info.version ?? t.version, kind: info.kind };
  if (sub === 'scale') return { verbs: SUB_VERBS, group: 'autoscaling', version: 'v1', kind: 'Scale' };
  return { verbs: sub === 'finalize' ? ['update'] : SUB_VERBS, group: t.group, version: t.version, kind: t.kind };
}

function subresourceEntries(t: resources.ResourceType): JsonObject[] {
  return t.subresources.map((sub) => {
    const facts = subresourceFacts(t, sub);
    const entry: JsonObject = { name: `${t.resource}/${sub}`, singularName: '', namespaced: t.namespaced };
    if (facts.group !== t.group || facts.version !== t.version) Object.assign(entry, { group: facts.group, version: facts.version });
    return Object.assign(entry, { kind: facts.kind, verbs: facts.verbs });
  });
}

export function apiResourceList(registry: resources.Registry, group: string, version: string): JsonObject | undefined {
  const types = registry.inGroupVersion(group, version);
  if (!types.length) return undefined;
  const list: JsonObject[] = [];
  for (const t of types) {
    const entry: JsonObject = { name: t.resource, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: [...t.verbs] };
    if (t.shortNames.length) entry['shortNames'] = [...t.shortNames];
    if (t.categories.length) entry['categories'] = [...t.categories];
    if (isStored(t)) entry['storageVersionHash'] = storageVersionHash(t);
    list.push(entry, ...subresourceEntries(t));
  }
  // The core group's list has no apiVersion (as served upstream); members in Go's order.
  const body: JsonObject = { kind: 'APIResourceList' };
  if (group) body['apiVersion'] = 'v1';
  return Object.assign(body, { groupVersion: group ? `${group}/${version}` : version, resources: list });
}

/** The aggregated discovery document (D-WIRE-12) for `/api` (core) or `/apis` (all other groups). */
export function aggregated(registry: resources.Registry, core: boolean, apiVersion: 'v2' | 'v2beta1'): JsonObject {
  const groups = [...registry.groups()].filter(([g]) => (core ? g === '' : g !== '')).sort(([a], [b]) => (a < b ? -1 : 1));
  const items = groups.map(([g, versions]) => ({
    metadata: { name: g },
    versions: versions.map((v) => ({
      version: v,
      resources: registry.inGroupVersion(g, v).map((t) => {
        const r: JsonObject = {
          resource: t.resource,
          responseKind: { group: t.group, version: t.version, kind: t.kind },
          scope: t.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: t.singular,
          verbs: [...t.verbs],
        };
        if (t.shortNames.length) r['shortNames'] = [...t.shortNames];
        if (t.categories.length) r['categories'] = [...t.categories];
        if (t.subresources.length) {
          r['subresources'] = t.subresources.map((sub) => {
            const facts = subresourceFacts(t, sub);
            return { subresource: sub, responseKind: { group: facts.group, version: facts.version, kind: facts.kind }, verbs: facts.verbs };
          });
        }
        return r;
      }),
      freshness: 'Current',
    })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${apiVersion}`, metadata: {}, items };
}
