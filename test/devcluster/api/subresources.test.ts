/**
 * The action subresources over HTTP (D-BI-17): `pods/eviction` with and without disruption
 * budgets, `pods/binding` and `bindings`, `pods/ephemeralcontainers`, `serviceaccounts/token`
 * (and the token authenticating when auth is enforced), and `certificatesigningrequests/approval`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../testing/index.js';
import { startHarness, type Harness, type Json } from '../conformance/harness.js';

const PODS = '/api/v1/namespaces/default/pods';
const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

const pod = (name: string, labels: Record<string, string> = {}, spec: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec },
});
const eviction = (name: string, extra: Json = {}): Json => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name }, ...extra });
const SUCCESS = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };

describe('action subresources (D-BI-17)', () => {
  let h: Harness;
  beforeAll(async () => {
    // Pod termination off: a gracefully deleted Pod stays visible (with the condition the eviction added).
    h = await startHarness({ widgets: false, controllers: { podTermination: false } });
  });
  afterAll(async () => {
    await h.stop();
  });

  const createPod = async (body: Json): Promise<Json> => {
    const r = await h.post(PODS, body);
    expect(r.status, r.text).toBe(201);
    return r.json;
  };
  /** A Pod a kubelet would run: bound to a node and Running, Ready or not. */
  const runningPod = async (name: string, labels: Record<string, string>, ready = true): Promise<void> => {
    await createPod(pod(name, labels));
    await h.post(`${PODS}/${name}/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: 'node-1' } });
    const conditions = [{ type: 'Ready', status: ready ? 'True' : 'False' }];
    const r = await h.patch(`${PODS}/${name}/status`, { status: { phase: 'Running', conditions } });
    expect(r.status, r.text).toBe(200);
  };
  const budget = async (name: string, labels: Record<string, string>, status?: Json): Promise<void> => {
    const r = await h.post(PDBS, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name },
      spec: { minAvailable: 1, selector: { matchLabels: labels } },
    });
    expect(r.status, r.text).toBe(201);
    if (status) expect((await h.patch(`${PDBS}/${name}/status`, { status })).status).toBe(200);
  };

  it('D-BI-17 evicting a Pending Pod deletes it without looking at budgets, and answers a Success Status', async () => {
    await createPod(pod('ev-pending', { app: 'guarded' }));
    await budget('guard-pending', { app: 'guarded' }, { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 1 });
    const r = await h.post(`${PODS}/ev-pending/eviction`, eviction('ev-pending'));
    expect(r.status, r.text).toBe(201);
    expect(r.json).toEqual(SUCCESS);
    expect((await h.get(`${PODS}/ev-pending`)).status).toBe(404);
  });

  it("D-BI-17 a budget without disruptions left refuses with 429 and upstream's cause; one not yet observed asks to retry", async () => {
    await runningPod('ev-guarded', { app: 'db' });
    await budget('db-unobserved', { app: 'db' });
    const pending = await h.post(`${PODS}/ev-guarded/eviction`, eviction('ev-guarded'));
    expect(pending.status).toBe(429);
    expect(pending.headers.get('retry-after')).toBe('10');
    expect(pending.json['details']).toEqual({
      causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget db-unobserved is still being processed by the server.' }],
      retryAfterSeconds: 10,
    });
    await h.patch(`${PDBS}/db-unobserved/status`, {
      status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
    });
    const refused = await h.post(`${PODS}/ev-guarded/eviction`, eviction('ev-guarded'));
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: 'TooManyRequests',
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget db-unobserved needs 1 healthy pods and has 1 currently' }] },
      code: 429,
    });
    expect((await h.get(`${PODS}/ev-guarded`)).json['metadata']).not.toHaveProperty('deletionTimestamp');
  });

  it('D-BI-17 a budget with a disruption left is spent: the Pod gets DisruptionTarget and is deleted with the eviction options', async () => {
    await runningPod('ev-allowed', { app: 'web' });
    await budget('web-budget', { app: 'web' }, { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 });
    const r = await h.post(`${PODS}/ev-allowed/eviction`, eviction('ev-allowed', { deleteOptions: { gracePeriodSeconds: 5 } }));
    expect(r.status, r.text).toBe(201);
    const evicted = (await h.get(`${PODS}/ev-allowed`)).json;
    expect(evicted['metadata']['deletionGracePeriodSeconds']).toBe(5);
    expect(evicted['status']['conditions']).toContainEqual(
      expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' }),
    );
    const pdb = (await h.get(`${PDBS}/web-budget`)).json['status'];
    expect(pdb['disruptionsAllowed']).toBe(0);
    expect(Object.keys(pdb['disruptedPods'])).toEqual(['ev-allowed']);
    expect(pdb['conditions']).toContainEqual(expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' }));
  });

  it('D-BI-17 two budgets → a failure Status in a 201; a dry run deletes nothing; the name must match; GET is 405', async () => {
    await runningPod('ev-two', { app: 'two', tier: 't' });
    await budget('two-a', { app: 'two' }, { observedGeneration: 1, disruptionsAllowed: 1 });
    await budget('two-b', { tier: 't' }, { observedGeneration: 1, disruptionsAllowed: 1 });
    const two = await h.post(`${PODS}/ev-two/eviction`, eviction('ev-two'));
    expect(two.status).toBe(201);
    expect(two.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      code: 500,
    });
    await createPod(pod('ev-dry'));
    expect((await h.post(`${PODS}/ev-dry/eviction?dryRun=All`, eviction('ev-dry'))).status).toBe(201);
    expect((await h.get(`${PODS}/ev-dry`)).status).toBe(200);
    const mismatch = await h.post(`${PODS}/ev-dry/eviction`, eviction('other'));
    expect(mismatch.status).toBe(400);
    expect(mismatch.json['message']).toBe('name in URL does not match name in Eviction object');
    expect((await h.get(`${PODS}/ev-dry/eviction`)).status).toBe(405);
    expect((await h.post(`${PODS}/missing/eviction`, eviction('missing'))).status).toBe(404);
  });

  it('D-BI-17 an unready Pod may go without spending the budget when the budget says so', async () => {
    await runningPod('ev-unready', { app: 'u' }, false);
    await budget('u-budget', { app: 'u' }, { observedGeneration: 1, disruptionsAllowed: 0 });
    await h.patch(`${PDBS}/u-budget`, { spec: { unhealthyPodEvictionPolicy: 'AlwaysAllow' } });
    await h.patch(`${PDBS}/u-budget/status`, { status: { observedGeneration: 2 } });
    const r = await h.post(`${PODS}/ev-unready/eviction`, eviction('ev-unready'));
    expect(r.status, r.text).toBe(201);
    expect((await h.get(`${PDBS}/u-budget`)).json['status']['disruptionsAllowed']).toBe(0);
  });

  it('D-BI-17 binding sets the node, the annotations and PodScheduled; a bound Pod is a 409', async () => {
    await createPod(pod('bind-me'));
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'bind-me', annotations: { scheduler: 'test' } },
      target: { apiVersion: 'v1', kind: 'Node', name: 'node-a' },
    };
    const r = await h.post(`${PODS}/bind-me/binding`, binding);
    expect(r.status, r.text).toBe(201);
    expect(r.json).toEqual(SUCCESS);
    const bound = (await h.get(`${PODS}/bind-me`)).json;
    expect(bound['spec']['nodeName']).toBe('node-a');
    expect(bound['metadata']['annotations']).toEqual({ scheduler: 'test' });
    expect(bound['status']['conditions']).toEqual([{ type: 'PodScheduled', status: 'True', lastTransitionTime: expect.any(String) }]);
    const again = await h.post(`${PODS}/bind-me/binding`, { ...binding, target: { kind: 'Node', name: 'node-b' } });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on pods/binding "bind-me": pod bind-me is already assigned to node "node-a"',
      details: { name: 'bind-me', kind: 'pods/binding' },
    });
  });

  it('D-BI-17 the legacy bindings resource binds the Pod it names; bad targets and stale uids are refused as upstream', async () => {
    await createPod(pod('legacy'));
    const uid = (await h.get(`${PODS}/legacy`)).json['metadata']['uid'];
    const stale = await h.post('/api/v1/namespaces/default/bindings', {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'legacy', uid: 'other' },
      target: { name: 'n' },
    });
    expect(stale.status).toBe(409);
    expect(stale.json['message']).toBe(
      `Operation cannot be fulfilled on pods "legacy": Precondition failed: UID in precondition: other, UID in object meta: ${uid}`,
    );
    const noName = await h.post('/api/v1/namespaces/default/bindings', {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'legacy' },
      target: { kind: 'Pod' },
    });
    expect(noName.status).toBe(500);
    expect(noName.json['message']).toBe('[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]');
    const ok = await h.post('/api/v1/namespaces/default/bindings', {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'legacy', uid },
      target: { name: 'node-c' },
    });
    expect(ok.status, ok.text).toBe(201);
    expect((await h.get(`${PODS}/legacy`)).json['spec']['nodeName']).toBe('node-c');
    expect((await h.get('/api/v1/namespaces/default/bindings')).status).toBe(405);
  });

  it('D-BI-17 ephemeral containers are added through their subresource only, with the container defaults', async () => {
    await createPod(pod('debug-me'));
    const debug = { name: 'debugger', image: 'busybox:1.36', targetContainerName: 'app', stdin: true, tty: true };
    const r = await h.patch(
      `${PODS}/debug-me/ephemeralcontainers`,
      { spec: { ephemeralContainers: [debug], containers: [{ name: 'app', image: 'changed' }] } },
      'strategic',
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json['kind']).toBe('Pod');
    expect(r.json['spec']['containers'][0]['image']).toBe('nginx:1.27');
    expect(r.json['spec']['ephemeralContainers']).toEqual([
      { ...debug, imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', resources: {} },
    ]);
    expect((await h.get(`${PODS}/debug-me/ephemeralcontainers`)).json['spec']['ephemeralContainers']).toHaveLength(1);
    const removed = await h.patch(`${PODS}/debug-me/ephemeralcontainers`, { spec: { ephemeralContainers: [] } });
    expect(removed.status).toBe(422);
    expect(removed.json['message']).toBe(
      'Pod "debug-me" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed\n',
    );
    const ports = await h.patch(
      `${PODS}/debug-me/ephemeralcontainers`,
      { spec: { ephemeralContainers: [{ name: 'p', image: 'x', ports: [{ containerPort: 80 }] }] } },
      'strategic',
    );
    expect(ports.status).toBe(422);
    expect(ports.json['message']).toBe('Pod "debug-me" is invalid: spec.ephemeralContainers[1].ports: Forbidden: cannot be set for an Ephemeral Container');
    const onCreate = await h.post(PODS, pod('with-ephemeral', {}, { ephemeralContainers: [{ name: 'e', image: 'x' }] }));
    expect(onCreate.status).toBe(422);
    expect(onCreate.json['message']).toBe('Pod "with-ephemeral" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create');
  });

  it('D-BI-17 CSR approval changes only the conditions, stamps them, and keeps Approved and Denied apart', async () => {
    const csr = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'csr-1' },
      spec: { request: Buffer.from('not a real CSR').toString('base64'), signerName: 'example.com/signer', usages: ['client auth'] },
    };
    expect((await h.post(CSRS, csr)).status).toBe(201);
    const approved = await h.patch(`${CSRS}/csr-1/approval`, {
      spec: { signerName: 'example.com/other' },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }], certificate: 'Zm9v' },
    });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.json['spec']['signerName']).toBe('example.com/signer');
    expect(approved.json['status']).toEqual({
      conditions: [
        { type: 'Approved', status: 'True', reason: 'Test', message: 'ok', lastUpdateTime: expect.any(String), lastTransitionTime: expect.any(String) },
      ],
    });
    const both = await h.patch(`${CSRS}/csr-1/approval`, {
      status: { conditions: [...approved.json['status']['conditions'], { type: 'Denied', status: 'True' }] },
    });
    expect(both.status).toBe(422);
    expect(both.json['message']).toBe(
      'CertificateSigningRequest.certificates.k8s.io "csr-1" is invalid: status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    );
    const removed = await h.patch(`${CSRS}/csr-1/approval`, { status: { conditions: [] } });
    expect(removed.json['message']).toContain('status.conditions: Forbidden: updates may not remove a condition of type "Approved"');
    const viaStatus = await h.patch(`${CSRS}/csr-1/status`, { status: { certificate: 'Zm9v' } });
    expect(viaStatus.status, viaStatus.text).toBe(200);
    expect(viaStatus.json['status']['certificate']).toBe('Zm9v');
    expect(viaStatus.json['status']['conditions']).toHaveLength(1);
  });
});

describe('service-account tokens (D-BI-17)', () => {
  const clock = new VirtualClock({ start: Date.parse('2024-05-01T10:00:00Z') });
  let h: Harness;
  const ADMIN = { authorization: 'Bearer admin-token' };
  beforeAll(async () => {
    h = await startHarness({ widgets: false, auth: 'enforced', clock });
    h.cluster.auth.addToken({ token: 'admin-token', username: 'admin', groups: ['system:masters'] });
  });
  afterAll(async () => {
    await h.stop();
  });

  const post = (path: string, body: unknown) => h.request('POST', path, body, { headers: ADMIN });
  const tokenRequest = (spec: Json = {}, metadata: Json = {}): Json => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata, spec });
  const claimsOf = (token: string): Json => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

  it('D-BI-17 a TokenRequest answers a JWT-shaped token and its expiry, and the token authenticates as the service account', async () => {
    await post('/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
    const r = await post('/api/v1/namespaces/default/serviceaccounts/robot/token', tokenRequest({ expirationSeconds: 600 }));
    expect(r.status, r.text).toBe(201);
    expect(r.json).toEqual({
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name: 'robot', namespace: 'default', creationTimestamp: '2024-05-01T10:00:00Z' },
      spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 600, boundObjectRef: null },
      status: { token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/), expirationTimestamp: '2024-05-01T10:10:00Z' },
    });
    const token = r.json['status']['token'];
    expect(claimsOf(token)).toMatchObject({
      aud: ['https://kubernetes.default.svc.cluster.local'],
      iss: 'https://kubernetes.default.svc.cluster.local',
      sub: 'system:serviceaccount:default:robot',
      exp: Date.parse('2024-05-01T10:10:00Z') / 1000,
      'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'robot' } },
    });
    h.cluster.requests.clear();
    expect((await h.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(h.cluster.requests.all.at(-1)!.user).toBe('system:serviceaccount:default:robot');
    await clock.advance(601_000);
    expect((await h.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it('D-BI-17 a token for another audience does not authenticate to the API server', async () => {
    const r = await post('/api/v1/namespaces/default/serviceaccounts/robot/token', tokenRequest({ audiences: ['vault'] }));
    expect(r.status, r.text).toBe(201);
    expect((await h.request('GET', '/api/v1/namespaces', undefined, { headers: { authorization: `Bearer ${r.json['status']['token']}` } })).status).toBe(401);
  });

  it('D-BI-17 requests are checked as upstream: the account, the name, the expiry, the bound object', async () => {
    const short = await post('/api/v1/namespaces/default/serviceaccounts/robot/token', tokenRequest({ expirationSeconds: 60 }));
    expect(short.status).toBe(422);
    expect(short.json['message']).toBe(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
    const named = await post('/api/v1/namespaces/default/serviceaccounts/robot/token', tokenRequest({}, { name: 'other' }));
    expect(named.json['message']).toBe(
      'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified',
    );
    expect((await post('/api/v1/namespaces/default/serviceaccounts/nobody/token', tokenRequest())).status).toBe(404);
    await post('/api/v1/namespaces/default/pods', pod('runs-as-default'));
    const mismatch = await post(
      '/api/v1/namespaces/default/serviceaccounts/robot/token',
      tokenRequest({ boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'runs-as-default' } }),
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.json['message']).toBe('cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.');
    const bound = await post(
      '/api/v1/namespaces/default/serviceaccounts/default/token',
      tokenRequest({ boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'runs-as-default' } }),
    );
    expect(bound.status, bound.text).toBe(201);
    expect(claimsOf(bound.json['status']['token'])['kubernetes.io']['pod']).toEqual({ name: 'runs-as-default', uid: expect.any(String) });
  });
});
