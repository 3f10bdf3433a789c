/**
 * Real clients against a TLS devcluster in RBAC mode (D-AUTH-16..18, D-AUTH-9, D-AUTH-10): kubectl
 * 1.32 applies RBAC manifests as the admin, asks `auth can-i --as` for a service account, creates
 * that account's token with `kubectl create token` and works with it; @kubernetes/client-node
 * runs with a kubeconfig holding a service-account token from `cluster.auth.serviceAccountToken`.
 */
import * as k8s from '@kubernetes/client-node';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';
import { requireKubectl } from '../../support/kubectl.js';
import * as kubectl from './kubectl.js';

const BIN = requireKubectl();

const MANIFESTS = `
apiVersion: v1
kind: Namespace
metadata: {name: apps}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: op, namespace: apps}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cm-editor, namespace: apps}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: op-cm, namespace: apps}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-editor}
subjects:
- {kind: ServiceAccount, name: op, namespace: apps}
`;

describe('kubectl and client-node against an RBAC devcluster', () => {
  let cluster: DevCluster;
  let admin: kubectl.KubectlTarget;
  let workDir: string;

  beforeAll(async () => {
    cluster = await DevCluster.start({ authorization: 'rbac' });
    workDir = kubectl.makeWorkDir('kubectl-rbac-');
    admin = { kubeconfig: cluster.writeKubeconfig(path.join(workDir, 'admin')), workDir };
    kubectl.expectSuccess(await kubectl.run(BIN, admin, ['apply', '-f', '-'], { input: MANIFESTS }), 'kubectl apply');
  });
  afterAll(async () => {
    await cluster?.stop();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('D-AUTH-18 `kubectl auth can-i --as` a service account answers from its RoleBinding', async () => {
    const as = ['--as', 'system:serviceaccount:apps:op'];
    const yes = kubectl.expectSuccess(await kubectl.run(BIN, admin, ['auth', 'can-i', 'list', 'configmaps', '-n', 'apps', ...as]), 'can-i');
    expect(yes.stdout.trim()).toBe('yes');
    const no = await kubectl.run(BIN, admin, ['auth', 'can-i', 'list', 'configmaps', '-n', 'other', ...as]);
    expect(no.code).toBe(1);
    expect(no.stdout.trim()).toBe('no');
    const deleting = await kubectl.run(BIN, admin, ['auth', 'can-i', 'delete', 'configmaps', '-n', 'apps', ...as]);
    expect(deleting.stdout.trim()).toBe('no');
  });

  it('D-AUTH-9 a token from `kubectl create token` authenticates as the service account, which RBAC then limits', async () => {
    const created = kubectl.expectSuccess(await kubectl.run(BIN, admin, ['create', 'token', 'op', '-n', 'apps']), 'kubectl create token');
    const token = created.stdout.trim();
    const sa: kubectl.KubectlTarget = { kubeconfig: path.join(workDir, 'op'), workDir };
    fs.writeFileSync(sa.kubeconfig, cluster.kubeconfig({ token, namespace: 'apps' }), { mode: 0o600 });

    const whoami = kubectl.expectSuccess(await kubectl.run(BIN, sa, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']), 'whoami');
    expect(whoami.stdout).toBe('system:serviceaccount:apps:op');
    kubectl.expectSuccess(await kubectl.run(BIN, sa, ['create', 'configmap', 'made-by-op']), 'create configmap');
    kubectl.expectSuccess(await kubectl.run(BIN, sa, ['get', 'configmap', 'made-by-op']), 'get configmap');
    const refused = await kubectl.run(BIN, sa, ['get', 'configmaps', '-n', 'other']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'Error from server (Forbidden): configmaps is forbidden: User "system:serviceaccount:apps:op" cannot list resource "configmaps" in API group "" in the namespace "other"',
    );
    const list = kubectl.expectSuccess(await kubectl.run(BIN, sa, ['auth', 'can-i', '--list']), 'can-i --list');
    expect(list.stdout).toMatch(/^configmaps\s+\[\]\s+\[\]\s+\[get list watch create patch\]$/m);
  });

  it('D-AUTH-16 client-node with a service-account token is allowed what its Role grants and gets the 403 of D-AUTH-6 otherwise', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cluster.kubeconfig({ token: cluster.auth.serviceAccountToken({ namespace: 'apps', name: 'op' }) }));
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const listed = await core.listNamespacedConfigMap({ namespace: 'apps' });
    expect(listed.items.map((i) => i.metadata?.name)).toContain('made-by-op');
    const error = await core.listNamespacedConfigMap({ namespace: 'other' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(k8s.ApiException);
    const apiError = error as k8s.ApiException<string>;
    expect(apiError.code).toBe(403);
    expect(JSON.parse(apiError.body)['message']).toBe(
      'configmaps is forbidden: User "system:serviceaccount:apps:op" cannot list resource "configmaps" in API group "" in the namespace "other"',
    );
    await expect(core.deleteNamespacedConfigMap({ namespace: 'apps', name: 'made-by-op' })).rejects.toMatchObject({ code: 403 });
  });
});
