/**
 * Conformance checklist, "Built-ins" and the built-in parts of other sections (devcluster reference
 * section 13: C-25, the ConfigMap part of C-32, the Lease part of C-34, C-49, C-64, C-76,
 * C-102..C-108), plus over-HTTP checks of the D-BI rules the checklist does not spell out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGMAPS, readWatch, startHarness, type Harness, type HttpResult, type Json } from './harness.js';

const NS = '/api/v1/namespaces/default';
const PODS = `${NS}/pods`;
const SERVICES = `${NS}/services`;
const SECRETS = `${NS}/secrets`;
const EVENTS = `${NS}/events`;
const EVENTS_V1 = '/apis/events.k8s.io/v1/namespaces/default/events';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const VWCS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWCS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

const pod = (name: string, spec: Json = {}): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'main', image: 'nginx:1.27' }], ...spec },
});

function deployment(name: string, templateLabels: Json = { app: name }): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: templateLabels }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
    },
  };
}

const lease = (name: string, spec: Json = { holderIdentity: 'a', leaseDurationSeconds: 15 }): Json => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name },
  spec,
});

/** A core/v1 Event shaped as Kopf posts it (timestamps from Python's `isoformat()`). */
function kopfEvent(objectName: string, overrides: Json = {}): Json {
  const now = '2024-05-01T10:00:00.123456+00:00';
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { namespace: 'default', generateName: 'kopf-event-' },
    action: 'Action',
    reason: 'Logging',
    message: `hello ${objectName}`,
    type: 'Normal',
    reportingComponent: 'kopf',
    reportingInstance: 'dev',
    source: { component: 'kopf' },
    firstTimestamp: now,
    lastTimestamp: now,
    eventTime: now,
    involvedObject: { apiVersion: 'example.com/v1', kind: 'Widget', name: objectName, namespace: 'default', uid: `uid-${objectName}` },
    ...overrides,
  };
}

const webhook = (name: string, extra: Json = {}): Json => ({
  name,
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  clientConfig: { service: { namespace: 'default', name: 'hooks', path: '/validate' } },
  rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }],
  ...extra,
});

function expectInvalid(r: HttpResult, field: string): Json {
  expect(r.status, r.text).toBe(422);
  expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
  expect((r.json['details']['causes'] as Json[]).map((c) => c['field'])).toContain(field);
  return r.json;
}

describe('conformance: built-in resources', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-25 changing an annotation of a Deployment bumps its generation', async () => {
    const created = await h.post(DEPLOYMENTS, deployment('gen'));
    expect(created.status, created.text).toBe(201);
    expect(created.json['metadata']['generation']).toBe(1);
    const labelled = await h.patch(`${DEPLOYMENTS}/gen`, { metadata: { labels: { x: 'y' } } });
    expect(labelled.json['metadata']['generation']).toBe(1);
    const annotated = await h.patch(`${DEPLOYMENTS}/gen`, { metadata: { annotations: { note: 'a' } } });
    expect(annotated.status, annotated.text).toBe(200);
    expect(annotated.json['metadata']['generation']).toBe(2);
  });

  it('C-32 (ConfigMap part) PUT of a ConfigMap without resourceVersion is 200', async () => {
    const created = await h.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'norv' }, data: { a: '1' } });
    expect(created.status).toBe(201);
    const r = await h.put(`${CONFIGMAPS}/norv`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'norv' }, data: { a: '2' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json['data']).toEqual({ a: '2' });
    expect(r.json['metadata']['resourceVersion']).not.toBe(created.json['metadata']['resourceVersion']);
  });

  it('C-34 (Lease part) PUT of a missing Lease creates it with 201', async () => {
    const r = await h.put(`${LEASES}/fresh`, lease('fresh'));
    expect(r.status, r.text).toBe(201);
    expect((await h.get(`${LEASES}/fresh`)).json['spec']['holderIdentity']).toBe('a');
  });

  it('C-49 DELETE of an unscheduled Pod answers with the Pod and removes it', async () => {
    expect((await h.post(PODS, pod('unscheduled'))).status).toBe(201);
    const r = await h.del(`${PODS}/unscheduled`);
    expect(r.status, r.text).toBe(200);
    expect(r.json['kind']).toBe('Pod');
    expect(r.json['metadata']['name']).toBe('unscheduled');
    expect((await h.get(`${PODS}/unscheduled`)).status).toBe(404);
  });

  it("C-64 an involvedObject field selector returns only that object's events", async () => {
    for (const name of ['sel-w1', 'sel-w2']) expect((await h.post(EVENTS, kopfEvent(name))).status).toBe(201);
    const r = await h.get(`${EVENTS}?fieldSelector=${encodeURIComponent('involvedObject.name=sel-w1,involvedObject.namespace=default')}`);
    expect(r.status, r.text).toBe(200);
    const items = r.json['items'] as Json[];
    expect(items.length).toBe(1);
    expect(items[0]!['involvedObject']['name']).toBe('sel-w1');
  });

  it('C-76 the Deployment scale subresource renders status.selector from spec.selector', async () => {
    const body = deployment('scaled');
    body['spec']['selector'] = { matchLabels: { app: 'scaled' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] };
    body['spec']['template']['metadata']['labels'] = { app: 'scaled', tier: 'a' };
    expect((await h.post(DEPLOYMENTS, body)).status).toBe(201);
    const r = await h.get(`${DEPLOYMENTS}/scaled/scale`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 },
      status: { replicas: 0, selector: 'app=scaled,tier in (a,b)' },
    });
  });

  it('C-102 a Kopf-shaped core/v1 Event is created and read back with Z timestamps; without action it is 422', async () => {
    const r = await h.post(EVENTS, kopfEvent('kopf-w1'));
    expect(r.status, r.text).toBe(201);
    expect(r.json['metadata']['name']).toMatch(/^kopf-event-[a-z0-9]{5}$/);
    const read = await h.get(`${EVENTS}/${r.json['metadata']['name']}`);
    expect(read.json['eventTime']).toBe('2024-05-01T10:00:00.123456Z');
    expect(read.json['firstTimestamp']).toBe('2024-05-01T10:00:00Z');
    expect(read.json['lastTimestamp']).toBe('2024-05-01T10:00:00Z');
    const { action: _a, ...withoutAction } = kopfEvent('kopf-w1');
    const bad = await h.post(EVENTS, withoutAction);
    expectInvalid(bad, 'action');
    expect(bad.json['message']).toContain('action: Required value');
  });

  it('C-103 an Event is readable through events.k8s.io/v1 with note and regarding', async () => {
    const created = await h.post(EVENTS, kopfEvent('v1-w1'));
    const name = created.json['metadata']['name'] as string;
    const r = await h.get(`${EVENTS_V1}/${name}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      note: 'hello v1-w1',
      reportingController: 'kopf',
      regarding: { kind: 'Widget', name: 'v1-w1' },
      deprecatedSource: { component: 'kopf' },
      deprecatedFirstTimestamp: '2024-05-01T10:00:00Z',
      eventTime: '2024-05-01T10:00:00.123456Z',
    });
    expect(r.json['message']).toBeUndefined();
    expect(r.json['involvedObject']).toBeUndefined();
  });

  it('C-104 Secret stringData is folded into base64 data and never returned; invalid base64 is 400', async () => {
    const r = await h.post(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'folded' }, stringData: { a: 'x' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json['data']).toEqual({ a: 'eA==' });
    expect(r.json['stringData']).toBeUndefined();
    expect(r.json['type']).toBe('Opaque');
    expect((await h.get(`${SECRETS}/folded`)).json['stringData']).toBeUndefined();
    const bad = await h.post(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'badb64' }, data: { a: '!!' } });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.json['reason']).toBe('BadRequest');
    expect(bad.json['message']).toContain('illegal base64 data at input byte 0');
    expect((await h.get(`${SECRETS}/badb64`)).status).toBe(404);
  });

  it('C-105 a Deployment whose template labels miss the selector is 422; a valid one gets the defaults', async () => {
    const bad = await h.post(DEPLOYMENTS, deployment('mismatch', { app: 'other' }));
    const body = expectInvalid(bad, 'spec.template.metadata.labels');
    expect(body['message']).toContain('`selector` does not match template `labels`');
    expect((await h.get(`${DEPLOYMENTS}/mismatch`)).status).toBe(404);
    const ok = await h.post(DEPLOYMENTS, deployment('defaulted'));
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json['spec']).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
    });
    expect(ok.json['spec']['template']['spec']).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler' });
  });

  it('C-106 a Service without ports is 422; a valid one gets a cluster IP in 10.96.0.0/12', async () => {
    const bad = await h.post(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'noports' }, spec: { selector: { app: 'x' } } });
    expect(expectInvalid(bad, 'spec.ports')['message']).toContain('spec.ports: Required value');
    const ok = await h.post(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'x' }, ports: [{ port: 80 }] },
    });
    expect(ok.status, ok.text).toBe(201);
    const ip = ok.json['spec']['clusterIP'] as string;
    const [a, b] = ip.split('.').map(Number);
    expect(a).toBe(10);
    expect(b! >= 96 && b! <= 111).toBe(true);
    expect(ok.json['spec']['clusterIPs']).toEqual([ip]);
    expect(ok.json['spec']['ports']).toEqual([{ port: 80, protocol: 'TCP', targetPort: 80 }]);
    expect(ok.json['status']).toEqual({ loadBalancer: {} });
  });

  it('C-107 PUT of a Lease with a stale resourceVersion is 409', async () => {
    const created = await h.post(LEASES, lease('elect'));
    const rv = created.json['metadata']['resourceVersion'] as string;
    const renewed = await h.put(`${LEASES}/elect`, {
      ...lease('elect', { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 1 }),
      metadata: { name: 'elect', resourceVersion: rv },
    });
    expect(renewed.status, renewed.text).toBe(200);
    const stale = await h.put(`${LEASES}/elect`, {
      ...lease('elect', { holderIdentity: 'b', leaseDurationSeconds: 15 }),
      metadata: { name: 'elect', resourceVersion: rv },
    });
    expect(stale.status, stale.text).toBe(409);
    expect(stale.json['reason']).toBe('Conflict');
    expect((await h.get(`${LEASES}/elect`)).json['spec']['holderIdentity']).toBe('a');
  });

  it('C-108 a scheduled Pod is first marked with grace 30, then gone after settle', async () => {
    expect((await h.post(PODS, pod('scheduled', { nodeName: 'node-1' }))).status).toBe(201);
    const r = await h.del(`${PODS}/scheduled`);
    expect(r.status, r.text).toBe(200);
    expect(r.json['metadata']['deletionGracePeriodSeconds']).toBe(30);
    const marked = Date.parse(r.json['metadata']['deletionTimestamp'] as string);
    expect(marked - Date.now()).toBeGreaterThan(25_000);
    await h.cluster.settle();
    expect((await h.get(`${PODS}/scheduled`)).status).toBe(404);
  });
});

describe('conformance: built-in rules beyond the checklist', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false, podTerminationDelayMs: 60_000 });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('D-BI-7 a Pod gets the defaults and a Pending status with its QoS class on create', async () => {
    const body = pod('defaults', {
      containers: [{ name: 'main', image: 'nginx', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1', memory: '1Gi' } } }],
    });
    body['status'] = { phase: 'Running' };
    const r = await h.post(PODS, body);
    expect(r.status, r.text).toBe(201);
    expect(r.json['spec']).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
      securityContext: {},
      serviceAccountName: 'default',
      serviceAccount: 'default',
      enableServiceLinks: true,
    });
    expect(r.json['spec']['containers'][0]).toMatchObject({
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      imagePullPolicy: 'Always',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      resources: { requests: { cpu: '1', memory: '1Gi' } },
    });
    expect(r.json['status']).toEqual({ phase: 'Pending', qosClass: 'Guaranteed' });
    expect(r.json['metadata']['generation']).toBe(1);
  });

  it('D-BI-7 a Pod without containers is 422 and its spec may only change images', async () => {
    expect(expectInvalid(await h.post(PODS, pod('empty', { containers: [] })), 'spec.containers')['message']).toContain('spec.containers: Required value');
    expect((await h.post(PODS, pod('fixed'))).status).toBe(201);
    const image = await h.patch(`${PODS}/fixed`, { spec: { containers: [{ name: 'main', image: 'nginx:1.28' }] } }, 'strategic');
    expect(image.status, image.text).toBe(200);
    expect(image.json['metadata']['generation']).toBe(2);
    const policy = await h.patch(`${PODS}/fixed`, { spec: { restartPolicy: 'Never' } });
    expect(expectInvalid(policy, 'spec')['message']).toContain('spec: Forbidden: pod updates may not change fields other than');
    expect((await h.get(`${PODS}/fixed`)).json['spec']['restartPolicy']).toBe('Always');
  });

  it('D-VERB-28 a scheduled Pod stays Terminating until the termination delay; a Succeeded one goes at once', async () => {
    expect((await h.post(PODS, pod('slow', { nodeName: 'n' }))).status).toBe(201);
    const r = await h.request('DELETE', `${PODS}/slow?gracePeriodSeconds=5`);
    expect(r.json['metadata']['deletionGracePeriodSeconds']).toBe(5);
    expect((await h.get(`${PODS}/slow`)).json['metadata']['deletionTimestamp']).toBeDefined();
    expect((await h.post(PODS, pod('done', { nodeName: 'n' }))).status).toBe(201);
    expect((await h.put(`${PODS}/done/status`, { ...pod('done', { nodeName: 'n' }), status: { phase: 'Succeeded' } })).status).toBe(200);
    expect((await h.del(`${PODS}/done`)).status).toBe(200);
    expect((await h.get(`${PODS}/done`)).status).toBe(404);
  });

  it('D-BI-1 Pods are selectable by spec.nodeName and status.phase', async () => {
    expect((await h.post(PODS, pod('on-a', { nodeName: 'node-a' }))).status).toBe(201);
    expect((await h.post(PODS, pod('nowhere'))).status).toBe(201);
    const names = async (sel: string): Promise<string[]> =>
      ((await h.get(`${PODS}?fieldSelector=${encodeURIComponent(sel)}`)).json['items'] as Json[]).map((p) => p['metadata']['name']);
    expect(await names('spec.nodeName=node-a')).toEqual(['on-a']);
    expect(await names('spec.nodeName=')).toContain('nowhere');
    expect(await names('spec.nodeName=')).not.toContain('on-a');
    expect(await names('status.phase=Pending')).toEqual(expect.arrayContaining(['on-a', 'nowhere']));
  });

  it('D-BI-8 a taken cluster IP is 422, clusterIP is immutable, NodePort services get node ports', async () => {
    const first = await h.post(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'fixed-ip' },
      spec: { clusterIP: '10.96.0.50', ports: [{ port: 80 }] },
    });
    expect(first.status, first.text).toBe(201);
    const taken = await h.post(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'same-ip' },
      spec: { clusterIP: '10.96.0.50', ports: [{ port: 80 }] },
    });
    expect(expectInvalid(taken, 'spec.clusterIPs')['message']).toContain('provided IP is already allocated');
    const changed = await h.patch(`${SERVICES}/fixed-ip`, { spec: { clusterIP: '10.96.0.51' } });
    expectInvalid(changed, 'spec.clusterIP');
    const put = await h.put(`${SERVICES}/fixed-ip`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'fixed-ip' }, spec: { ports: [{ port: 81 }] } });
    expect(put.status, put.text).toBe(200);
    expect(put.json['spec']['clusterIP']).toBe('10.96.0.50');
    const np = await h.post(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'np' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } });
    expect(np.status, np.text).toBe(201);
    const nodePort = np.json['spec']['ports'][0]['nodePort'] as number;
    expect(nodePort >= 30000 && nodePort <= 32767).toBe(true);
  });

  it('D-BI-5 an immutable ConfigMap refuses data changes', async () => {
    expect((await h.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true })).status).toBe(
      201,
    );
    const r = await h.patch(`${CONFIGMAPS}/frozen`, { data: { a: '2' } });
    expect(expectInvalid(r, 'data')['message']).toContain('data: Forbidden: field is immutable when `immutable` is set');
    const both = await h.post(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'both' }, data: { k: 'v' }, binaryData: { k: 'eA==' } });
    expectInvalid(both, 'data[k]');
  });

  it("D-BI-4 creating through events.k8s.io/v1 stores the core form and enforces that API's rules", async () => {
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'new-api' },
      eventTime: '2024-05-01T10:00:00.5+02:00',
      type: 'Normal',
      reason: 'Started',
      action: 'Start',
      note: 'hi',
      reportingController: 'example.com/ctl',
      reportingInstance: 'ctl-1',
      regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
    };
    const r = await h.post(EVENTS_V1, body);
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ note: 'hi', eventTime: '2024-05-01T08:00:00.500000Z', regarding: { name: 'p' } });
    const core = await h.get(`${EVENTS}/new-api`);
    expect(core.json).toMatchObject({ apiVersion: 'v1', message: 'hi', reportingComponent: 'example.com/ctl', involvedObject: { name: 'p' } });
    const deprecated = await h.post(EVENTS_V1, { ...body, metadata: { name: 'old-fields' }, deprecatedCount: 3 });
    expect(expectInvalid(deprecated, 'deprecatedCount')['message']).toContain('needs to be unset');
    const noTime = await h.post(EVENTS_V1, { ...body, metadata: { name: 'no-time' }, eventTime: undefined });
    expectInvalid(noTime, 'eventTime');
  });

  it('D-BI-10 Lease times are normalised to MicroTime and a zero duration is 422', async () => {
    const r = await h.post(LEASES, lease('times', { holderIdentity: 'a', leaseDurationSeconds: 10, renewTime: '2024-05-01T10:00:00+00:00' }));
    expect(r.status, r.text).toBe(201);
    expect(r.json['spec']['renewTime']).toBe('2024-05-01T10:00:00.000000Z');
    expectInvalid(await h.post(LEASES, lease('zero', { leaseDurationSeconds: 0 })), 'spec.leaseDurationSeconds');
  });

  it('D-BI-12 webhook configurations are defaulted and validated', async () => {
    const r = await h.post(MWCS, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'm' },
      webhooks: [webhook('m.example.com')],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json['webhooks'][0]).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
      clientConfig: { service: { port: 443 } },
      rules: [{ scope: '*' }],
    });
    expect(r.json['metadata']['generation']).toBe(1);
    const bad = await h.post(VWCS, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'v' },
      webhooks: [webhook('short.name', { admissionReviewVersions: ['v1beta1'] })],
    });
    const body = expectInvalid(bad, 'webhooks[0].name');
    expect(body['message']).toContain('should be a domain with at least three segments separated by dots');
    expect(body['message']).toContain('must include at least one of v1');
  });

  it('D-WIRE-19 watch events of built-ins carry the normalised form', async () => {
    const list = await h.get(LEASES);
    const rv = list.json['metadata']['resourceVersion'] as string;
    const watched = await readWatch(`${h.cluster.url}${LEASES}?watch=true&resourceVersion=${rv}`, {
      count: 1,
      onOpen: async () => {
        await h.post(LEASES, lease('watched', { acquireTime: '2024-05-01T12:00:00.1234567+02:00' }));
      },
    });
    expect(watched.events[0]).toMatchObject({ type: 'ADDED', object: { kind: 'Lease', spec: { acquireTime: '2024-05-01T10:00:00.123456Z' } } });
  });
});
