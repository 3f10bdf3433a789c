/**
 * The bootstrap RBAC policy of an RBAC devcluster (D-AUTH-17): the few ClusterRoles and
 * ClusterRoleBindings of upstream's default policy that every cluster has and that the rest of the
 * devcluster relies on — `cluster-admin` bound to `system:masters`, `system:discovery` and
 * `system:basic-user` bound to `system:authenticated`, `system:public-info-viewer` bound to both
 * `system:authenticated` and `system:unauthenticated`. They carry upstream's bootstrapping label and
 * auto-update annotation, and grant exactly the discovery paths and self reviews that the rule
 * mode grants by default (D-AUTH-7, D-AUTH-11), so both modes agree on what every user may do.
 *
 * Upstream's many other default roles (`admin`, `edit`, `view`, the controllers' and nodes') are
 * not created: nothing in the devcluster runs as them.
 */
import type { JsonObject } from '../json.js';
import * as authorization from './authorization.js';
import * as users from './users.js';

const API_VERSION = 'rbac.authorization.k8s.io/v1';
const METADATA = {
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
  annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
};

function clusterRole(name: string, rules: JsonObject[]): JsonObject {
  return { apiVersion: API_VERSION, kind: 'ClusterRole', metadata: { name, ...structuredClone(METADATA) }, rules };
}

function clusterRoleBinding(name: string, groups: readonly string[]): JsonObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterRoleBinding',
    metadata: { name, ...structuredClone(METADATA) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((group) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group })),
  };
}

/** The objects, roles before bindings, as they are created at start. */
export function bootstrapPolicy(): JsonObject[] {
  const selfReviews = Object.entries(authorization.SELF_REVIEWS).map(([group, resources]) => ({
    verbs: ['create'],
    apiGroups: [group],
    resources: [...resources],
  }));
  return [
    clusterRole('cluster-admin', [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]),
    clusterRole('system:discovery', [{ verbs: ['get'], nonResourceURLs: [...authorization.DISCOVERY_PATHS] }]),
    clusterRole('system:basic-user', selfReviews),
    clusterRole('system:public-info-viewer', [{ verbs: ['get'], nonResourceURLs: [...authorization.PUBLIC_INFO_PATHS] }]),
    clusterRoleBinding('cluster-admin', [users.MASTERS_GROUP]),
    clusterRoleBinding('system:discovery', [users.AUTHENTICATED_GROUP]),
    clusterRoleBinding('system:basic-user', [users.AUTHENTICATED_GROUP]),
    clusterRoleBinding('system:public-info-viewer', [users.AUTHENTICATED_GROUP, users.UNAUTHENTICATED_GROUP]),
  ];
}
