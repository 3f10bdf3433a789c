/**
 * The RBAC authorization mode (D-AUTH-16..18) and impersonation (D-AUTH-10): the matching rules of
 * upstream's RBAC authorizer on their own, then a devcluster started with `authorization: "rbac"`
 * over plain HTTP, where service accounts get tokens and stored Roles, ClusterRoles and bindings
 * decide what they may do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as rbac from '../../../devcluster/auth/rbac.js';
import * as rbacrules from '../../../devcluster/auth/rbacrules.js';
import type * as rules from '../../../devcluster/auth/rules.js';
import * as users from '../../../devcluster/auth/users.js';
import { DevCluster } from '../../../devcluster/testing.js';

type Json = Record<string, any>;

const pods = (verb: string, extra: Partial<rules.ResourceAttributes> = {}): rules.ResourceAttributes => ({
  kind: 'resource',
  verb,
  apiGroup: '',
  resource: 'pods',
  namespace: 'apps',
  ...extra,
});

describe('RBAC rule matching (upstream RuleAllows)', () => {
  it('D-AUTH-16 resources: res is the main resource only, res/sub one subresource, * everything, */sub that subresource anywhere', () => {
    const allows = (resources: string[], attributes: rules.ResourceAttributes): boolean =>
      rbacrules.ruleAllows({ verbs: ['get'], apiGroups: [''], resources }, attributes);
    expect(allows(['pods'], pods('get'))).toBe(true);
    expect(allows(['pods'], pods('get', { subresource: 'status' }))).toBe(false);
    expect(allows(['pods/status'], pods('get', { subresource: 'status' }))).toBe(true);
    expect(allows(['pods/status'], pods('get'))).toBe(false);
    expect(allows(['pods/*'], pods('get', { subresource: 'status' }))).toBe(false);
    expect(allows(['*/status'], pods('get', { subresource: 'status' }))).toBe(true);
    expect(allows(['*/status'], pods('get'))).toBe(false);
    expect(allows(['*'], pods('get', { subresource: 'log' }))).toBe(true);
    expect(allows(['services'], pods('get'))).toBe(false);
  });

  it('D-AUTH-16 verbs and apiGroups are exact or *, resourceNames restrict by name and never match nameless requests', () => {
    expect(rbacrules.ruleAllows({ verbs: ['*'], apiGroups: ['*'], resources: ['pods'] }, pods('delete', { apiGroup: 'x' }))).toBe(true);
    expect(rbacrules.ruleAllows({ verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, pods('get'))).toBe(false);
    const named: rbacrules.PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], resourceNames: ['p1'] };
    expect(rbacrules.ruleAllows(named, pods('get', { name: 'p1' }))).toBe(true);
    expect(rbacrules.ruleAllows(named, pods('get', { name: 'p2' }))).toBe(false);
    expect(rbacrules.ruleAllows(named, pods('list'))).toBe(false);
  });

  it('D-AUTH-16 nonResourceURLs are exact, * or a prefix ending in *, and never match resource requests', () => {
    const rule: rbacrules.PolicyRule = { verbs: ['get'], nonResourceURLs: ['/metrics', '/debug/*'] };
    const path = (p: string): rules.NonResourceAttributes => ({ kind: 'nonResource', verb: 'get', path: p });
    expect(rbacrules.ruleAllows(rule, path('/metrics'))).toBe(true);
    expect(rbacrules.ruleAllows(rule, path('/metrics/x'))).toBe(false);
    expect(rbacrules.ruleAllows(rule, path('/debug/pprof'))).toBe(true);
    expect(rbacrules.ruleAllows(rule, pods('get'))).toBe(false);
    expect(rbacrules.ruleAllows({ verbs: ['get'], apiGroups: ['*'], resources: ['*'] }, path('/metrics'))).toBe(false);
  });

  it('D-AUTH-16 subjects: users by name, groups by membership, service accounts by their user name (namespace defaulting to the binding’s)', () => {
    const sa = users.authenticatedUser({ username: 'system:serviceaccount:apps:op', groups: users.serviceAccountGroups('apps') });
    expect(rbacrules.subjectMatches({ kind: 'ServiceAccount', name: 'op' }, sa, 'apps')).toBe(true);
    expect(rbacrules.subjectMatches({ kind: 'ServiceAccount', name: 'op' }, sa, 'other')).toBe(false);
    expect(rbacrules.subjectMatches({ kind: 'ServiceAccount', name: 'op' }, sa, '')).toBe(false);
    expect(rbacrules.subjectMatches({ kind: 'ServiceAccount', name: 'op', namespace: 'apps' }, sa, '')).toBe(true);
    expect(rbacrules.subjectMatches({ kind: 'Group', name: 'system:serviceaccounts:apps' }, sa, '')).toBe(true);
    expect(rbacrules.subjectMatches({ kind: 'User', name: 'system:serviceaccount:apps:op' }, sa, '')).toBe(true);
    expect(rbacrules.subjectMatches({ kind: 'User', name: 'op' }, sa, '')).toBe(false);
  });
});

interface Reply {
  status: number;
  json: Json;
}

async function call(cluster: DevCluster, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const all: Record<string, string> = { authorization: `Bearer ${token}`, ...headers };
  if (body !== undefined) all['content-type'] = 'application/json';
  const res = await fetch(cluster.url + path, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
}

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const role = (namespace: string, name: string, rules: Json[]): Json => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name, namespace },
  rules,
});
const clusterRole = (name: string, rules: Json[], extra: Json = {}): Json => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name, ...(extra['labels'] ? { labels: extra['labels'] } : {}) },
  rules,
  ...(extra['aggregationRule'] ? { aggregationRule: extra['aggregationRule'] } : {}),
});
const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', name: string, roleRef: Json, subjects: Json[], namespace?: string): Json => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: namespace ? { name, namespace } : { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
  subjects,
});

describe('a devcluster with authorization: "rbac"', () => {
  let cluster: DevCluster;
  let admin: string;
  let op: string;

  const asAdmin = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const r = await call(cluster, method, path, admin, body);
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.json)}`).toBeLessThan(300);
    return r;
  };

  beforeAll(async () => {
    cluster = await DevCluster.start({ tls: false, authorization: 'rbac' });
    admin = cluster.token;
    for (const ns of ['apps', 'other']) await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await cluster.store.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'op', namespace: 'apps' } });
    await cluster.store.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'helper', namespace: 'apps' } });
    for (const ns of ['apps', 'other']) {
      for (const name of ['a', 'b']) await cluster.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns } });
    }
    op = cluster.auth.serviceAccountToken({ namespace: 'apps', name: 'op' });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('D-AUTH-16 authorization "rbac" enforces authentication, and refuses auth "none"', async () => {
    expect(cluster.auth.mode).toBe('enforced');
    expect(cluster.auth.authorizer.mode).toBe('rbac');
    expect((await fetch(`${cluster.url}/api/v1/namespaces`)).status).toBe(401);
    await expect(DevCluster.start({ tls: false, authorization: 'rbac', auth: 'none' })).rejects.toThrow(/authorization "rbac" needs auth "enforced"/);
  });

  it('D-AUTH-17 the bootstrap roles exist and grant discovery and self reviews to every authenticated user', async () => {
    const names = (await asAdmin('GET', `${RBAC}/clusterroles`)).json['items'].map((i: Json) => i.metadata.name);
    expect(names).toEqual(['cluster-admin', 'system:basic-user', 'system:discovery', 'system:public-info-viewer']);
    expect((await call(cluster, 'GET', '/apis', op)).status).toBe(200);
    expect((await call(cluster, 'GET', '/version', op)).status).toBe(200);
    const review = await call(cluster, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', op, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'list', resource: 'configmaps', namespace: 'apps' } },
    });
    expect(review.status).toBe(201);
    expect(review.json['status']).toEqual({ allowed: false });
  });

  it('D-AUTH-16 a service account without bindings is refused with the 403 of D-AUTH-6; the admin (system:masters) is always allowed', async () => {
    const r = await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', op);
    expect(r.status).toBe(403);
    expect(r.json['message']).toBe(
      'configmaps is forbidden: User "system:serviceaccount:apps:op" cannot list resource "configmaps" in API group "" in the namespace "apps"',
    );
    expect((await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', admin)).status).toBe(200);
  });

  it('D-AUTH-16 a Role bound by a RoleBinding allows in its namespace only; resourceNames restrict by name', async () => {
    await asAdmin(
      'POST',
      `${RBAC}/namespaces/apps/roles`,
      role('apps', 'cm-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }]),
    );
    await asAdmin(
      'POST',
      `${RBAC}/namespaces/apps/roles`,
      role('apps', 'cm-a', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['update', 'delete'], resourceNames: ['a'] }]),
    );
    await asAdmin(
      'POST',
      `${RBAC}/namespaces/apps/rolebindings`,
      binding('RoleBinding', 'op-reads', { kind: 'Role', name: 'cm-reader' }, [{ kind: 'ServiceAccount', name: 'op' }], 'apps'),
    );
    await asAdmin(
      'POST',
      `${RBAC}/namespaces/apps/rolebindings`,
      binding('RoleBinding', 'op-a', { kind: 'Role', name: 'cm-a' }, [{ kind: 'ServiceAccount', name: 'op', namespace: 'apps' }], 'apps'),
    );
    expect((await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', op)).status).toBe(200);
    expect((await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps/a', op)).status).toBe(200);
    expect((await call(cluster, 'GET', '/api/v1/namespaces/other/configmaps', op)).status).toBe(403);
    expect((await call(cluster, 'GET', '/api/v1/configmaps', op)).status).toBe(403);
    expect((await call(cluster, 'DELETE', '/api/v1/namespaces/apps/configmaps/b', op)).status).toBe(403);
    const deleted = await call(cluster, 'DELETE', '/api/v1/namespaces/apps/configmaps/a', op);
    expect(deleted.status).toBe(200);
    const helper = cluster.auth.serviceAccountToken({ namespace: 'apps', name: 'helper' });
    expect((await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', helper)).status).toBe(403);
  });

  it('D-AUTH-16 a RoleBinding to a ClusterRole grants it in the binding’s namespace; a ClusterRoleBinding everywhere; group subjects match', async () => {
    await asAdmin('POST', `${RBAC}/clusterroles`, clusterRole('lease-user', [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['*'] }]));
    await asAdmin(
      'POST',
      `${RBAC}/namespaces/other/rolebindings`,
      binding('RoleBinding', 'leases', { kind: 'ClusterRole', name: 'lease-user' }, [{ kind: 'ServiceAccount', name: 'op', namespace: 'apps' }], 'other'),
    );
    expect((await call(cluster, 'GET', '/apis/coordination.k8s.io/v1/namespaces/other/leases', op)).status).toBe(200);
    expect((await call(cluster, 'GET', '/apis/coordination.k8s.io/v1/namespaces/apps/leases', op)).status).toBe(403);
    expect((await call(cluster, 'GET', '/apis/coordination.k8s.io/v1/leases', op)).status).toBe(403);

    await asAdmin('POST', `${RBAC}/clusterroles`, clusterRole('ns-reader', [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }]));
    await asAdmin(
      'POST',
      `${RBAC}/clusterrolebindings`,
      binding('ClusterRoleBinding', 'all-sa-read-ns', { kind: 'ClusterRole', name: 'ns-reader' }, [{ kind: 'Group', name: 'system:serviceaccounts:apps' }]),
    );
    expect((await call(cluster, 'GET', '/api/v1/namespaces', op)).status).toBe(200);
    expect((await call(cluster, 'GET', '/api/v1/namespaces/other', op)).status).toBe(200);
    // A subresource needs its own rule.
    expect((await call(cluster, 'GET', '/api/v1/namespaces/other/status', op)).status).toBe(403);
  });

  it('D-AUTH-16 a binding whose role does not exist allows nothing, and the 403 says which role is missing', async () => {
    await asAdmin(
      'POST',
      `${RBAC}/namespaces/apps/rolebindings`,
      binding('RoleBinding', 'dangling', { kind: 'Role', name: 'nope' }, [{ kind: 'ServiceAccount', name: 'helper' }], 'apps'),
    );
    const helper = cluster.auth.serviceAccountToken({ namespace: 'apps', name: 'helper' });
    const r = await call(cluster, 'GET', '/api/v1/namespaces/apps/secrets', helper);
    expect(r.status).toBe(403);
    expect(r.json['message']).toBe(
      'secrets is forbidden: User "system:serviceaccount:apps:helper" cannot list resource "secrets" in API group "" in the namespace "apps": RBAC: role.rbac.authorization.k8s.io "nope" not found',
    );
    await asAdmin('DELETE', `${RBAC}/namespaces/apps/rolebindings/dangling`);
  });

  it('D-AUTH-16 ClusterRole aggregation: an aggregating role grants the rules of the roles its selectors match, as they come and go', async () => {
    await asAdmin(
      'POST',
      `${RBAC}/clusterroles`,
      clusterRole('aggregate', [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate': 'true' } }] } }),
    );
    await asAdmin(
      'POST',
      `${RBAC}/clusterrolebindings`,
      binding('ClusterRoleBinding', 'op-aggregate', { kind: 'ClusterRole', name: 'aggregate' }, [{ kind: 'ServiceAccount', name: 'op', namespace: 'apps' }]),
    );
    expect((await call(cluster, 'GET', '/api/v1/namespaces/other/secrets', op)).status).toBe(403);
    await asAdmin(
      'POST',
      `${RBAC}/clusterroles`,
      clusterRole('secrets-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }], { labels: { 'example.com/aggregate': 'true' } }),
    );
    expect((await call(cluster, 'GET', '/api/v1/namespaces/other/secrets', op)).status).toBe(200);
    await asAdmin('DELETE', `${RBAC}/clusterroles/secrets-reader`);
    expect((await call(cluster, 'GET', '/api/v1/namespaces/other/secrets', op)).status).toBe(403);
  });

  it('D-AUTH-16 the RBAC objects are indexed once per change, not scanned per request', async () => {
    const authorizer = cluster.auth.authorizer.rbac!;
    await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', op);
    const before = authorizer.builds;
    for (let i = 0; i < 20; i++) await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', op);
    expect(authorizer.builds).toBe(before);
    await asAdmin('POST', `${RBAC}/namespaces/apps/roles`, role('apps', 'unused', []));
    for (let i = 0; i < 5; i++) await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', op);
    expect(authorizer.builds).toBe(before + 1);
    // Other writes leave the index alone.
    await asAdmin('POST', '/api/v1/namespaces/apps/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
    await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', op);
    expect(authorizer.builds).toBe(before + 1);
  });

  it('D-AUTH-16 the rule list still comes first: a deny rule refuses even the admin', async () => {
    cluster.auth.authorizer.setRules([{ effect: 'deny', users: [users.ADMIN_USER], verbs: ['delete'], resources: ['namespaces'], reason: 'not today' }]);
    try {
      const r = await call(cluster, 'DELETE', '/api/v1/namespaces/other', admin);
      expect(r.status).toBe(403);
      expect(r.json['message']).toMatch(/cannot delete resource "namespaces" in API group "" at the cluster scope: not today$/);
    } finally {
      cluster.auth.authorizer.setRules([]);
    }
  });

  it('D-AUTH-18 access reviews answer from RBAC: allowed with the binding as reason, or not', async () => {
    const sar = (spec: Json): Json => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec });
    const allowed = await asAdmin(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      sar({
        user: 'system:serviceaccount:apps:op',
        groups: users.serviceAccountGroups('apps'),
        resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: 'apps' },
      }),
    );
    expect(allowed.json['status']).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "op-reads/apps" of Role "cm-reader" to ServiceAccount "op/apps"',
    });
    const refused = await asAdmin(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      sar({ user: 'system:serviceaccount:apps:op', resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: 'other' } }),
    );
    expect(refused.json['status']).toEqual({ allowed: false });
    // A SubjectAccessReview is itself authorized: the service account may not create one.
    expect(
      (
        await call(
          cluster,
          'POST',
          '/apis/authorization.k8s.io/v1/subjectaccessreviews',
          op,
          sar({ user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } }),
        )
      ).status,
    ).toBe(403);
  });

  it('D-AUTH-18 a rules review lists the RBAC rules bound in the namespace after the bootstrap grants', async () => {
    const r = await call(cluster, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', op, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'apps' },
    });
    expect(r.status).toBe(201);
    const status = r.json['status'];
    expect(status['incomplete']).toBe(false);
    expect(status['resourceRules']).toContainEqual({ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps'] });
    expect(status['resourceRules']).toContainEqual({ verbs: ['update', 'delete'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] });
    expect(status['resourceRules']).toContainEqual({ verbs: ['get', 'list'], apiGroups: [''], resources: ['namespaces'] });
    expect(status['resourceRules']).not.toContainEqual(expect.objectContaining({ resources: ['leases'] }));
    expect(status['nonResourceRules']).toContainEqual(
      expect.objectContaining({ verbs: ['get'], nonResourceURLs: expect.arrayContaining(['/apis', '/version']) }),
    );
  });

  it('D-AUTH-10 impersonation: the admin acts as the service account; the service account may not impersonate', async () => {
    const as = { 'impersonate-user': 'system:serviceaccount:apps:op' };
    expect((await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', admin, undefined, as)).status).toBe(200);
    const refused = await call(cluster, 'GET', '/api/v1/namespaces/other/configmaps', admin, undefined, as);
    expect(refused.status).toBe(403);
    expect(refused.json['message']).toMatch(/^configmaps is forbidden: User "system:serviceaccount:apps:op" cannot list/);
    const whoami = await call(
      cluster,
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      admin,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      as,
    );
    expect(whoami.json['status']['userInfo']).toEqual({
      username: 'system:serviceaccount:apps:op',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:apps', 'system:authenticated'],
    });
    const denied = await call(cluster, 'GET', '/api/v1/namespaces/apps/configmaps', op, undefined, { 'impersonate-user': 'alice' });
    expect(denied.status).toBe(403);
    expect(denied.json['message']).toBe(
      'users "alice" is forbidden: User "system:serviceaccount:apps:op" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const groupOnly = await call(cluster, 'GET', '/api/v1/namespaces', admin, undefined, { 'impersonate-group': 'devs' });
    expect(groupOnly.status).toBe(400);
  });
});

describe('RbacAuthorizer over a fake store', () => {
  it('D-AUTH-16 unsupported role references and bindings of unknown subject kinds allow nothing', () => {
    const objects: Record<string, Json[]> = {
      [rbac.STORAGES.clusterRoles]: [],
      [rbac.STORAGES.roles]: [],
      [rbac.STORAGES.clusterRoleBindings]: [
        binding('ClusterRoleBinding', 'odd', { kind: 'Something', name: 'x' }, [{ kind: 'User', name: 'alice' }]),
        binding('ClusterRoleBinding', 'robot', { kind: 'ClusterRole', name: 'x' }, [{ kind: 'Robot', name: 'alice' }]),
      ],
      [rbac.STORAGES.roleBindings]: [],
    };
    const authorizer = new rbac.RbacAuthorizer({ list: (storage) => objects[storage] ?? [], subscribe: () => () => undefined });
    const alice = users.authenticatedUser({ username: 'alice' });
    expect(authorizer.authorize(pods('get'), alice)).toEqual({ allowed: false, reason: 'RBAC: unsupported role reference kind: "Something"' });
  });
});
