/**
 * The connect subresources and component statuses over HTTP (D-BI-18): with no kubelet and no
 * cluster network, each answers what a real server answers when there is nothing to reach — never
 * a silent success — after upstream's own checks of the object, the container and the options.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Json } from '../conformance/harness.js';

const PODS = '/api/v1/namespaces/default/pods';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

describe('connect subresources (D-BI-18)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
    const pod = (name: string, containers: Json[], spec: Json = {}): Json => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers, ...spec },
    });
    await h.cluster.store.create(pod('solo', [{ name: 'app', image: 'nginx', ports: [{ containerPort: 8080 }] }]));
    await h.cluster.store.create(
      pod(
        'duo',
        [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y' },
        ],
        { initContainers: [{ name: 'init', image: 'z' }] },
      ),
    );
    await h.cluster.store.create(pod('placed', [{ name: 'app', image: 'nginx' }], { nodeName: 'node-1' }));
  });
  afterAll(async () => {
    await h.stop();
  });

  const expectStatus = async (method: string, path: string, code: number, message: string): Promise<Json> => {
    const r = await h.request(method, path);
    expect(r.status, r.text).toBe(code);
    expect(r.json['message']).toBe(message);
    return r.json;
  };

  it('D-BI-18 logs of a Pod without a node are 204 No Content, after the container and options are checked', async () => {
    const r = await h.get(`${PODS}/solo/log`);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    await expectStatus('GET', `${PODS}/duo/log`, 400, 'a container name must be specified for pod duo, choose one of: [init a b]');
    await expectStatus('GET', `${PODS}/duo/log?container=c`, 400, 'container c is not valid for pod duo');
    expect((await h.get(`${PODS}/duo/log?container=init`)).status).toBe(204);
    const options = await expectStatus(
      'GET',
      `${PODS}/solo/log?tailLines=-1`,
      422,
      'PodLogOptions "solo" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
    );
    expect(options['details']['kind']).toBe('PodLogOptions');
    await expectStatus('GET', `${PODS}/missing/log`, 404, 'pods "missing" not found');
  });

  it('D-BI-18 exec, attach and port-forward of a Pod without a node are 400 "does not have a host assigned"', async () => {
    await expectStatus('POST', `${PODS}/solo/exec?command=ls&stdout=true`, 400, 'pod solo does not have a host assigned');
    await expectStatus('GET', `${PODS}/solo/exec?command=ls&stdout=true`, 400, 'pod solo does not have a host assigned');
    await expectStatus('POST', `${PODS}/solo/attach?stdout=true`, 400, 'pod solo does not have a host assigned');
    await expectStatus('POST', `${PODS}/solo/portforward?ports=80`, 400, 'pod solo does not have a host assigned');
    await expectStatus('POST', `${PODS}/duo/exec?command=ls`, 400, 'a container name must be specified for pod duo, choose one of: [init a b]');
    expect((await h.request('PUT', `${PODS}/solo/exec`, {})).status).toBe(405);
  });

  it('D-BI-18 a Pod bound to a node reaches for its kubelet: a missing node is 404, one without an address or reachable kubelet is 500', async () => {
    await expectStatus('POST', `${PODS}/placed/exec?command=ls`, 404, 'nodes "node-1" not found');
    await h.cluster.store.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
    const noAddress = await expectStatus('GET', `${PODS}/placed/log`, 500, 'no preferred addresses found; known addresses: []');
    expect(noAddress).not.toHaveProperty('reason');
    await h.cluster.store.patch(
      { apiVersion: 'v1', kind: 'Node' },
      'node-1',
      { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.7' }] } },
      { subresource: 'status' },
    );
    await expectStatus(
      'GET',
      `${PODS}/placed/log`,
      500,
      'Get "https://10.0.0.7:10250/containerLogs/default/placed/app": dial tcp 10.0.0.7:10250: connect: connection refused',
    );
    await expectStatus('POST', `${PODS}/placed/exec?command=ls`, 500, 'error dialing backend: dial tcp 10.0.0.7:10250: connect: connection refused');
    await expectStatus('GET', '/api/v1/nodes/node-1/proxy/metrics', 500, 'dial tcp 10.0.0.7:10250: connect: connection refused');
    await expectStatus('GET', '/api/v1/nodes/node-2/proxy/metrics', 404, 'nodes "node-2" not found');
  });

  it('D-BI-18 pod proxies need a routable Pod IP; there is nothing behind it', async () => {
    await expectStatus('GET', `${PODS}/solo/proxy/healthz`, 400, 'address not allowed');
    await h.cluster.store.patch(
      { apiVersion: 'v1', kind: 'Pod' },
      'solo',
      { status: { podIP: '10.244.0.5', podIPs: [{ ip: '10.244.0.5' }] } },
      { subresource: 'status' },
    );
    await expectStatus('GET', `${PODS}/solo/proxy/healthz`, 500, 'dial tcp 10.244.0.5:8080: connect: connection refused');
    await expectStatus('DELETE', `${PODS}/solo:9090/proxy/`, 500, 'dial tcp 10.244.0.5:9090: connect: connection refused');
    await expectStatus('GET', `${PODS}/a:b:c:d/proxy`, 400, 'invalid pod request "a:b:c:d"');
  });

  it('D-BI-18 service proxies go through Endpoints, which nothing produces here', async () => {
    await h.post('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'w' }, ports: [{ port: 80 }] },
    });
    await expectStatus('GET', '/api/v1/namespaces/default/services/web/proxy/', 404, 'endpoints "web" not found');
    await expectStatus('GET', '/api/v1/namespaces/default/services/web:81/proxy/', 503, 'no service port 81 found for service "web"');
    await h.post('/api/v1/namespaces/default/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' } });
    await expectStatus('GET', '/api/v1/namespaces/default/services/web/proxy/', 503, 'no endpoints available for service "web"');
    await h.put('/api/v1/namespaces/default/endpoints/web', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web' },
      subsets: [{ addresses: [{ ip: '10.244.0.5', targetRef: { kind: 'Pod', namespace: 'default', name: 'solo' } }], ports: [{ port: 8080 }] }],
    });
    await expectStatus('GET', '/api/v1/namespaces/default/services/web:80/proxy/', 500, 'dial tcp 10.244.0.5:8080: connect: connection refused');
  });
});

describe('component statuses (D-BI-18)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('D-BI-18 the list names the controller manager, etcd and the scheduler that does not exist, with the deprecation warning', async () => {
    const r = await h.get('/api/v1/componentstatuses');
    expect(r.status).toBe(200);
    expect(r.headers.get('warning')).toBe('299 - "v1 ComponentStatus is deprecated in v1.19+"');
    expect(r.json).toEqual({
      kind: 'ComponentStatusList',
      apiVersion: 'v1',
      metadata: {},
      items: [
        { metadata: { name: 'controller-manager' }, conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] },
        { metadata: { name: 'etcd-0' }, conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] },
        {
          metadata: { name: 'scheduler' },
          conditions: [
            { type: 'Healthy', status: 'False', message: 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused' },
          ],
        },
      ],
    });
  });

  it('D-BI-18 get by name, selectors, tables, and what is not served', async () => {
    const one = await h.get('/api/v1/componentstatuses/etcd-0');
    expect(one.json).toEqual({
      kind: 'ComponentStatus',
      apiVersion: 'v1',
      metadata: { name: 'etcd-0' },
      conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
    });
    const unknown = await h.get('/api/v1/componentstatuses/kubelet');
    expect(unknown.status).toBe(500);
    expect(unknown.json['message']).toBe('Component not found: kubelet');
    const selected = await h.get('/api/v1/componentstatuses?fieldSelector=metadata.name=scheduler');
    expect(selected.json['items'].map((i: Json) => i['metadata']['name'])).toEqual(['scheduler']);
    const table = await h.get('/api/v1/componentstatuses', TABLE);
    expect(table.json['columnDefinitions'].map((c: Json) => c['name'])).toEqual(['Name', 'Status', 'Message', 'Error']);
    expect(table.json['rows'].map((r: Json) => r['cells'].slice(0, 2))).toEqual([
      ['controller-manager', 'Healthy'],
      ['etcd-0', 'Healthy'],
      ['scheduler', 'Unhealthy'],
    ]);
    expect((await h.get('/api/v1/componentstatuses?watch=true')).status).toBe(405);
    expect((await h.post('/api/v1/componentstatuses', { metadata: { name: 'x' } })).status).toBe(405);
  });
});
