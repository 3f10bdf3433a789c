/**
 * Permissions: the least-privilege RBAC rules of a generated operator.
 *
 * Derived from the CRDs (the served resources) plus what the runtime itself needs (runtime spec
 * R-LIFE-7): peering objects, CRD and namespace discovery, and posting events. Rules are split by
 * where they apply — cluster-level rules, and per-namespace rules that the generated manifests bind
 * cluster-wide (the operator serves all namespaces by default; a comment in the manifest says how
 * to bind them per namespace instead). Admission webhook configurations are left out: they are
 * needed only with managed admission, which a new project does not use. Pure: model in, rules out.
 */
import type * as modeling from './modeling.js';

/** One RBAC policy rule, with a comment saying why it is there. */
export interface Rule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly why: string;
}

/** The two rule sets of an operator. */
export interface Permissions {
  /** Rules on cluster-scoped resources. */
  readonly cluster: readonly Rule[];
  /** Rules on namespaced resources (bound cluster-wide, or per namespace). */
  readonly namespaced: readonly Rule[];
}

/** The verbs the runtime uses on the resources it serves (list+watch to observe, patch to write). */
export const SERVED_VERBS = ['list', 'watch', 'patch'] as const;

/** The permissions of an operator serving every CRD of the model. */
export function permissionsOf(model: modeling.GeneratorModel): Permissions {
  const cluster: Rule[] = [
    { apiGroups: ['kopf.dev'], resources: ['clusterkopfpeerings'], verbs: ['get', 'list', 'watch', 'patch'], why: 'peering between operator replicas (cluster-wide)' },
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['list', 'watch'], why: 'discovering the served resources' },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'], why: 'discovering namespaces to serve' },
  ];
  const namespaced: Rule[] = [
    { apiGroups: ['kopf.dev'], resources: ['kopfpeerings'], verbs: ['get', 'list', 'watch', 'patch'], why: 'peering between operator replicas (per namespace)' },
    { apiGroups: [''], resources: ['events'], verbs: ['create'], why: 'posting events about handled objects' },
  ];
  const byScope = { cluster: new Map<string, Set<string>>(), namespaced: new Map<string, Set<string>>() };
  const statusByScope = { cluster: new Map<string, Set<string>>(), namespaced: new Map<string, Set<string>>() };
  const add = (groups: Map<string, Set<string>>, group: string, resource: string): void => {
    groups.set(group, (groups.get(group) ?? new Set<string>()).add(resource));
  };
  for (const crd of model.crds) {
    const first = crd.versions[0];
    if (!first) continue;
    const scope = first.namespaced ? 'namespaced' : 'cluster';
    add(byScope[scope], crd.group, crd.plural);
    if (crd.versions.some((version) => version.statusSubresource)) add(statusByScope[scope], crd.group, `${crd.plural}/status`);
  }
  const served = (scope: 'cluster' | 'namespaced'): Rule[] => [
    ...[...byScope[scope]].map(([group, resources]) => ({
      apiGroups: [group], resources: [...resources], verbs: [...SERVED_VERBS], why: `observing and patching the served resources of ${group}`,
    })),
    ...[...statusByScope[scope]].map(([group, resources]) => ({
      apiGroups: [group], resources: [...resources], verbs: ['patch'], why: `writing status through the status subresource (${group})`,
    })),
  ];
  return { cluster: [...cluster, ...served('cluster')], namespaced: [...namespaced, ...served('namespaced')] };
}
