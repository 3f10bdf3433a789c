/**
 * Discovery of served resources (R-RES-7): `GET /api`, `/api/<version>`, `/apis` and
 * `/apis/<group>/<version>`, turned into `references.Resource` values.
 *
 * Only the requested groups are scanned (all when the filter is `null`); a 404 on a group/version
 * is an empty group (it may have just been removed). Sub-resources come from the `<plural>/<sub>`
 * entries; an empty singular falls back to the lowercased kind. Core `v1` is always preferred.
 * The fetching is a parameter so the parsing stays testable; `api` passes its `request`.
 */

import type * as references from '../structs/references.js';
import * as dicts from '../structs/dicts.js';
import * as errors from './errors.js';

/** Fetches a discovery document (JSON) by path. */
export type DiscoveryFetch = (path: string) => Promise<unknown>;

interface ApiResourceEntry {
  readonly name?: string;
  readonly singularName?: string;
  readonly kind?: string;
  readonly namespaced?: boolean;
  readonly verbs?: readonly string[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
}

const record = (value: unknown): Record<string, unknown> => (dicts.isObject(value) ? value : {});
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/**
 * Parses an `APIResourceList` into resources of one group/version.
 *
 * @example
 * parseResourceList('', 'v1', true, { resources: [{ name: 'pods', kind: 'Pod', namespaced: true, verbs: ['list'] }] });
 */
export function parseResourceList(group: string, version: string, preferred: boolean, list: unknown): references.Resource[] {
  const entries = (Array.isArray(record(list)['resources']) ? (record(list)['resources'] as unknown[]) : []).map((e) => record(e) as ApiResourceEntry);
  const subresources = new Map<string, string[]>();
  for (const entry of entries) {
    const [plural, sub] = String(entry.name ?? '').split('/', 2);
    if (plural && sub) subresources.set(plural, [...(subresources.get(plural) ?? []), sub]);
  }
  const resources: references.Resource[] = [];
  for (const entry of entries) {
    const name = String(entry.name ?? '');
    if (!name || name.includes('/')) continue;
    const kind = String(entry.kind ?? '');
    resources.push(
      Object.freeze({
        group,
        version,
        plural: name,
        kind,
        singular: entry.singularName || kind.toLowerCase(),
        shortcuts: Object.freeze(strings(entry.shortNames)),
        categories: Object.freeze(strings(entry.categories)),
        subresources: Object.freeze(subresources.get(name) ?? []),
        namespaced: entry.namespaced === true,
        preferred,
        verbs: Object.freeze(strings(entry.verbs)),
      }),
    );
  }
  return resources;
}

async function fetchOrEmpty(fetch: DiscoveryFetch, path: string): Promise<unknown> {
  try {
    return await fetch(path);
  } catch (error) {
    if (error instanceof errors.ApiNotFoundError) return {};
    throw error;
  }
}

/**
 * Scans the API server for the resources of the given groups (`''` is the core group); `null`
 * scans every group.
 */
export async function scanResources(fetch: DiscoveryFetch, groups: Iterable<string> | null): Promise<references.Resource[]> {
  const wanted = groups === null ? null : new Set(groups);
  const resources: references.Resource[] = [];
  if (wanted === null || wanted.has('')) {
    const versions = strings(record(await fetchOrEmpty(fetch, '/api'))['versions']);
    for (const version of versions) {
      const list = await fetchOrEmpty(fetch, `/api/${version}`);
      resources.push(...parseResourceList('', version, version === 'v1' || versions.length === 1, list));
    }
  }
  if (wanted === null || [...wanted].some((group) => group !== '')) {
    const groupList = record(await fetchOrEmpty(fetch, '/apis'));
    const entries = Array.isArray(groupList['groups']) ? groupList['groups'].map(record) : [];
    for (const entry of entries) {
      const name = String(entry['name'] ?? '');
      if (!name || (wanted !== null && !wanted.has(name))) continue;
      const preferred = String(record(entry['preferredVersion'])['version'] ?? '');
      const versions = (Array.isArray(entry['versions']) ? entry['versions'] : []).map((v) => String(record(v)['version'] ?? '')).filter(Boolean);
      for (const version of versions) {
        const list = await fetchOrEmpty(fetch, `/apis/${name}/${version}`);
        resources.push(...parseResourceList(name, version, version === preferred, list));
      }
    }
  }
  return resources;
}
