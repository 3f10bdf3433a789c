/**
 * Where a catalog entry's objects live on the wire (D-WIRE-1): the core group under `/api/v1`,
 * every other group under `/apis/{group}/{version}`, namespaced kinds under
 * `/namespaces/{ns}/`. One place for the generated conformance suites, so that every suite
 * addresses a kind the same way the catalog names it.
 */
import type { ResourceEntry } from '../../../devcluster/upstream/catalog.js';

/** The namespace every namespaced sample lives in. */
export const NAMESPACE = 'default';

/** `/api/v1` or `/apis/{group}/{version}`. */
export const groupVersionPath = (e: Pick<ResourceEntry, 'group' | 'version'>): string => (e.group ? `/apis/${e.group}/${e.version}` : `/api/${e.version}`);

/** `v1` or `{group}/{version}`, as `apiVersion` and kubectl name it. */
export const apiVersionOf = (e: Pick<ResourceEntry, 'group' | 'version'>): string => (e.group ? `${e.group}/${e.version}` : e.version);

/** The collection URL of the entry (in `namespace` when the kind is namespaced). */
export function collectionUrl(e: ResourceEntry, namespace: string = NAMESPACE): string {
  return `${groupVersionPath(e)}${e.namespaced ? `/namespaces/${namespace}` : ''}/${e.resource}`;
}

/** The URL of one object of the entry, or of one of its subresources. */
export function objectUrl(e: ResourceEntry, name: string, subresource?: string, namespace: string = NAMESPACE): string {
  return `${collectionUrl(e, namespace)}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

/** `deployments.apps`, `pods`, `horizontalpodautoscalers.v2.autoscaling`: how kubectl names the entry without ambiguity. */
export function kubectlName(e: ResourceEntry, withVersion = false): string {
  if (!e.group) return e.resource;
  return withVersion ? `${e.resource}.${e.version}.${e.group}` : `${e.resource}.${e.group}`;
}

/** A label for test titles: `apps/v1 deployments`, `v1 pods`. */
export const titleOf = (e: ResourceEntry): string => `${apiVersionOf(e)} ${e.resource}`;

/** Kubernetes' version priority (D-WIRE-7), as a sort comparator: GA before beta before alpha, higher numbers first. */
export function byVersionPriority(a: string, b: string): number {
  const rank = (v: string): number[] => {
    const m = /^v(\d+)(?:(beta|alpha)(\d+))?$/.exec(v);
    return m ? [m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0, Number(m[1]), Number(m[3] ?? 0)] : [-1, 0, 0];
  };
  const [x, y] = [rank(a), rank(b)];
  return y[0]! - x[0]! || y[1]! - x[1]! || y[2]! - x[2]!;
}
