/**
 * D-BI-24 over HTTP: the JSON text the devcluster writes has the member order of a real API server
 * — Go struct order for built-in objects, sorted keys at every level for custom resources — in
 * responses, lists, watch events, discovery and admission reviews. The assertions read the raw text:
 * a parsed-and-compared object would not see the order.
 */
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as certs from '../../../devcluster/auth/certs.js';
import { CONFIGMAPS, startHarness, WIDGETS, type Harness, type Json } from '../conformance/harness.js';

/** A JSON value read from text with every object's members in the order of the text. */
type Node = { object: [string, Node][] } | { array: Node[] } | { scalar: unknown };

function parseOrdered(text: string): Node {
  let at = 0;
  const skip = (): void => {
    while (/\s/.test(text[at] ?? '')) at++;
  };
  const value = (): Node => {
    skip();
    const c = text[at];
    if (c === '{') {
      at++;
      const entries: [string, Node][] = [];
      skip();
      if (text[at] === '}') {
        at++;
        return { object: entries };
      }
      for (;;) {
        skip();
        const key = (value() as { scalar: string }).scalar;
        skip();
        at++; // ':'
        entries.push([key, value()]);
        skip();
        if (text[at++] === '}') return { object: entries };
      }
    }
    if (c === '[') {
      at++;
      const items: Node[] = [];
      skip();
      if (text[at] === ']') {
        at++;
        return { array: items };
      }
      for (;;) {
        items.push(value());
        skip();
        if (text[at++] === ']') return { array: items };
      }
    }
    const m = /^(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)/.exec(text.slice(at));
    if (!m) throw new Error(`not JSON at ${at}: ${text.slice(at, at + 20)}`);
    at += m[0].length;
    return { scalar: JSON.parse(m[0]) as unknown };
  };
  return value();
}

/** The member names of the object at `path` (keys and list indices) in the order of the text. */
function membersAt(text: string, ...path: (string | number)[]): string[] {
  let node = parseOrdered(text);
  for (const step of path) {
    if (typeof step === 'number' && 'array' in node) node = node.array[step]!;
    else if (typeof step === 'string' && 'object' in node) node = node.object.find(([k]) => k === step)![1];
    else throw new Error(`no ${String(step)} in the text`);
  }
  if (!('object' in node)) throw new Error('not an object');
  return node.object.map(([k]) => k);
}

/** Opens a watch and returns its raw lines once `count` arrived or one starts with `until` (or the time is up). */
async function watchLines(url: string, count: number | string, act: () => Promise<void>): Promise<string[]> {
  const done = (lines: string[]): boolean => (typeof count === 'number' ? lines.length >= count : lines.some((l) => l.startsWith(count)));
  const controller = new AbortController();
  // A deadline, not a wait: a stream that never delivers fails the test's assertions instead of hanging.
  const res = await fetch(url, { signal: AbortSignal.any([controller.signal, AbortSignal.timeout(5000)]) });
  const lines: string[] = [];
  const acting = act();
  try {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    while (!done(lines)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        lines.push(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
      }
    }
  } catch (err) {
    if (!(err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))) throw err;
  } finally {
    controller.abort();
  }
  await acting;
  return lines;
}

const BOOKMARK = '{"type":"BOOKMARK"';
const OBJECT_META_ORDER = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'labels', 'annotations', 'managedFields'];
const only = (order: string[], present: string[]): string[] => order.filter((k) => present.includes(k));

describe('key order over HTTP (D-BI-24)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('D-BI-24 a ConfigMap created with its members reversed comes back as kind, apiVersion, metadata, data in Go order, data keys sorted', async () => {
    const r = await h.post(CONFIGMAPS, {
      data: { zeta: '1', alpha: '2', mid: '3' },
      metadata: { annotations: { y: 'z', b: 'x' }, labels: { z: '2', a: '1' }, namespace: 'default', name: 'reversed' },
      apiVersion: 'v1',
      kind: 'ConfigMap',
    });
    expect(r.status, r.text).toBe(201);
    const expected =
      /^\{"kind":"ConfigMap","apiVersion":"v1","metadata":\{"name":"reversed","namespace":"default","uid":"[^"]+","resourceVersion":"\d+","creationTimestamp":"[^"]+","labels":\{"a":"1","z":"2"\},"annotations":\{"b":"x","y":"z"\},"managedFields":\[\{"manager":"[^"]*","operation":"Update","apiVersion":"v1","time":"[^"]+","fieldsType":"FieldsV1","fieldsV1":\{.*\}\}\]\},"data":\{"alpha":"2","mid":"3","zeta":"1"\}\}$/;
    expect(r.text).toMatch(expected);
    const got = await h.get(`${CONFIGMAPS}/reversed`);
    expect(got.text).toBe(r.text);
    // A patch adding members keeps every level in order.
    const patched = await h.patch(`${CONFIGMAPS}/reversed`, { data: { aaa: '0' }, metadata: { labels: { m: '3' } } });
    expect(patched.status, patched.text).toBe(200);
    expect(membersAt(patched.text, 'data')).toEqual(['aaa', 'alpha', 'mid', 'zeta']);
    expect(membersAt(patched.text, 'metadata', 'labels')).toEqual(['a', 'm', 'z']);
    expect(membersAt(patched.text, 'metadata')).toEqual(only(OBJECT_META_ORDER, membersAt(patched.text, 'metadata')));
  });

  it("D-BI-24 a Deployment's spec and pod template come back in Go struct order", async () => {
    const r = await h.post('/apis/apps/v1/namespaces/default/deployments', {
      status: {},
      spec: {
        template: {
          spec: {
            dnsPolicy: 'ClusterFirst',
            containers: [{ imagePullPolicy: 'IfNotPresent', ports: [{ protocol: 'TCP', containerPort: 80 }], image: 'nginx', name: 'web' }],
          },
          metadata: { labels: { app: 'web' } },
        },
        strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }, type: 'RollingUpdate' },
        selector: { matchLabels: { app: 'web' } },
        replicas: 2,
      },
      metadata: { name: 'web' },
      apiVersion: 'apps/v1',
      kind: 'Deployment',
    });
    expect(r.status, r.text).toBe(201);
    expect(membersAt(r.text).slice(0, 4)).toEqual(['kind', 'apiVersion', 'metadata', 'spec']);
    const specOrder = ['replicas', 'selector', 'template', 'strategy', 'minReadySeconds', 'revisionHistoryLimit', 'paused', 'progressDeadlineSeconds'];
    expect(membersAt(r.text, 'spec')).toEqual(only(specOrder, membersAt(r.text, 'spec')));
    expect(membersAt(r.text, 'spec', 'template')).toEqual(['metadata', 'spec']);
    expect(membersAt(r.text, 'spec', 'strategy')).toEqual(['type', 'rollingUpdate']);
    expect(membersAt(r.text, 'spec', 'strategy', 'rollingUpdate')).toEqual(['maxUnavailable', 'maxSurge']);
    const podSpec = membersAt(r.text, 'spec', 'template', 'spec');
    expect(podSpec[0]).toBe('containers');
    expect(podSpec.indexOf('restartPolicy')).toBeLessThan(podSpec.indexOf('dnsPolicy'));
    const container = membersAt(r.text, 'spec', 'template', 'spec', 'containers', 0);
    expect(container.slice(0, 3)).toEqual(['name', 'image', 'ports']);
    expect(container.indexOf('imagePullPolicy')).toBeGreaterThan(container.indexOf('terminationMessagePolicy'));
    expect(membersAt(r.text, 'spec', 'template', 'spec', 'containers', 0, 'ports', 0)).toEqual(['containerPort', 'protocol']);

    const scale = await h.get('/apis/apps/v1/namespaces/default/deployments/web/scale');
    expect(scale.text).toMatch(
      /^\{"kind":"Scale","apiVersion":"autoscaling\/v1","metadata":\{"name":"web","namespace":"default","uid":"[^"]+","resourceVersion":"\d+","creationTimestamp":"[^"]+"\},"spec":\{"replicas":2\},"status":\{/,
    );
  });

  it('D-BI-24 a custom resource with unsorted members comes back sorted at every level, metadata included', async () => {
    const r = await h.post(WIDGETS, {
      status: { phase: 'x' },
      spec: { tags: ['b', 'a'], size: 2, extra: { zeta: { b: 1, a: 2 }, alpha: [{ y: 1, x: 2 }] }, mode: 'a' },
      metadata: { labels: { z: '1', a: '2' }, name: 'sorted' },
      kind: 'Widget',
      apiVersion: 'example.com/v1',
    });
    expect(r.status, r.text).toBe(201);
    expect(r.text).toMatch(
      /^\{"apiVersion":"example\.com\/v1","kind":"Widget","metadata":\{"creationTimestamp":"[^"]+","generation":1,"labels":\{"a":"2","z":"1"\},"managedFields":\[\{"apiVersion":"example\.com\/v1","fieldsType":"FieldsV1","fieldsV1":\{.*\},"manager":"[^"]*","operation":"Update","time":"[^"]+"\}\],"name":"sorted","namespace":"default","resourceVersion":"\d+","uid":"[^"]+"\},"spec":\{"color":"blue","extra":\{"alpha":\[\{"x":2,"y":1\}\],"zeta":\{"a":2,"b":1\}\},"mode":"a","size":2,"tags":\["b","a"\]\}\}$/,
    );
    const fields = membersAt(r.text, 'metadata', 'managedFields', 0, 'fieldsV1', 'f:spec');
    expect(fields).toEqual([...fields].sort());
    // A status written with its members reversed is stored sorted; the same status again changes nothing.
    const status = await h.patch(`${WIDGETS}/sorted/status`, { status: { replicas: 1, phase: 'Ready', conditions: [{ type: 'A', status: 'True' }] } });
    expect(status.status, status.text).toBe(200);
    expect(membersAt(status.text, 'status')).toEqual(['conditions', 'phase', 'replicas']);
    expect(membersAt(status.text, 'status', 'conditions', 0)).toEqual(['status', 'type']);
    const again = await h.patch(`${WIDGETS}/sorted/status`, { status: { conditions: [{ status: 'True', type: 'A' }], phase: 'Ready', replicas: 1 } });
    expect(again.text).toBe(status.text);
  });

  it('D-BI-24 lists: built-in lists as Go structs, custom resource lists sorted', async () => {
    await h.widget('listed-1');
    expect((await h.post(CONFIGMAPS, { metadata: { name: 'listed-1' } })).status).toBe(201);
    expect((await h.post(CONFIGMAPS, { metadata: { name: 'listed-2' } })).status).toBe(201);
    const builtins = await h.get(`${CONFIGMAPS}?limit=1`);
    expect(membersAt(builtins.text)).toEqual(['kind', 'apiVersion', 'metadata', 'items']);
    expect(membersAt(builtins.text, 'metadata')).toEqual(['resourceVersion', 'continue', 'remainingItemCount']);
    expect(membersAt(builtins.text, 'items', 0)[0]).toBe('metadata');
    const custom = await h.get(`${WIDGETS}?limit=1`);
    expect(membersAt(custom.text)).toEqual(['apiVersion', 'items', 'kind', 'metadata']);
    expect(membersAt(custom.text, 'metadata')).toEqual(['continue', 'remainingItemCount', 'resourceVersion']);
    expect(membersAt(custom.text, 'items', 0)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
  });

  it('D-BI-24 watch events carry objects in the same order, bookmarks too', async () => {
    const revision = async (): Promise<string> => String((await h.get(CONFIGMAPS)).json['metadata'].resourceVersion);
    const builtin = await watchLines(`${h.cluster.url}${CONFIGMAPS}?watch=true&resourceVersion=${await revision()}`, 1, async () => {
      const r = await h.post(CONFIGMAPS, { data: { b: '1', a: '2' }, metadata: { name: 'watched' }, kind: 'ConfigMap', apiVersion: 'v1' });
      expect(r.status, r.text).toBe(201);
    });
    expect(builtin[0]).toMatch(/^\{"type":"ADDED","object":\{"kind":"ConfigMap","apiVersion":"v1","metadata":\{"name":"watched","namespace":"default","uid":/);
    expect(builtin[0]).toContain('"data":{"a":"2","b":"1"}}}');
    const custom = await watchLines(`${h.cluster.url}${WIDGETS}?watch=true&resourceVersion=${await revision()}`, 1, async () => {
      await h.widget('watched', { size: 3, extra: { b: 1, a: 2 } });
    });
    expect(custom[0]).toMatch(/^\{"type":"ADDED","object":\{"apiVersion":"example\.com\/v1","kind":"Widget","metadata":\{"creationTimestamp":/);
    expect(custom[0]).toContain('"spec":{"color":"blue","extra":{"a":2,"b":1},"size":3}}}');
    const bookmarks = await watchLines(
      `${h.cluster.url}${WIDGETS}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
      BOOKMARK,
      async () => {},
    );
    const bookmark = bookmarks.find((l) => l.startsWith(BOOKMARK));
    expect(bookmark).toMatch(
      /^\{"type":"BOOKMARK","object":\{"apiVersion":"example\.com\/v1","kind":"Widget","metadata":\{"annotations":\{"k8s\.io\/initial-events-end":"true"\},"resourceVersion":"\d+"\}\}\}$/,
    );
    const builtinBookmarks = await watchLines(
      `${h.cluster.url}${CONFIGMAPS}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
      BOOKMARK,
      async () => {},
    );
    expect(builtinBookmarks.find((l) => l.startsWith(BOOKMARK))).toMatch(
      /^\{"type":"BOOKMARK","object":\{"kind":"ConfigMap","apiVersion":"v1","metadata":\{"resourceVersion":"\d+","annotations":\{"k8s\.io\/initial-events-end":"true"\}\}\}\}$/,
    );
  });

  it('D-BI-24 discovery documents have the members of their Go structs in order', async () => {
    const apps = await h.get('/apis/apps/v1');
    expect(apps.text).toMatch(/^\{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps\/v1","resources":\[/);
    expect(apps.text).toContain(
      '{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":[',
    );
    const core = await h.get('/api/v1');
    expect(core.text).toMatch(/^\{"kind":"APIResourceList","groupVersion":"v1","resources":\[/);
    const aggregated = await h.get('/apis', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(membersAt(aggregated.text, 'items', 0, 'versions', 0)).toEqual(['version', 'resources', 'freshness']);
  });
});

describe('admission reviews in order (D-BI-24)', () => {
  let h: Harness;
  let server: https.Server;
  let caBundle = '';
  const bodies: string[] = [];

  beforeAll(async () => {
    const ca = await certs.createCertificateAuthority();
    const serving = await certs.issueServingCertificate(ca, { hosts: ['127.0.0.1'] });
    caBundle = Buffer.from(ca.certPem).toString('base64');
    server = https.createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        bodies.push(text);
        const review = JSON.parse(text) as Json;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review['request'].uid, allowed: true } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h?.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  it('D-BI-24 a webhook receives the review and the objects in the order the server writes them', async () => {
    const port = (server.address() as AddressInfo).port;
    const created = await h.post('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'ordered' },
      webhooks: [
        {
          name: 'ordered.example.com',
          clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        },
      ],
    });
    expect(created.status, created.text).toBe(201);
    const r = await h.post(CONFIGMAPS, {
      data: { b: '1', a: '2' },
      metadata: { labels: { z: '1', a: '2' }, name: 'reviewed' },
      apiVersion: 'v1',
      kind: 'ConfigMap',
    });
    expect(r.status, r.text).toBe(201);
    expect(bodies).toHaveLength(1);
    const body = bodies[0]!;
    expect(membersAt(body)).toEqual(['kind', 'apiVersion', 'request']);
    expect(membersAt(body, 'request')).toEqual([
      'uid',
      'kind',
      'resource',
      'requestKind',
      'requestResource',
      'name',
      'namespace',
      'operation',
      'userInfo',
      'object',
      'oldObject',
      'dryRun',
      'options',
    ]);
    expect(body).toContain(
      '"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"reviewed","namespace":"default","labels":{"a":"2","z":"1"}},"data":{"a":"2","b":"1"}}',
    );
    expect(membersAt(body, 'request', 'options')).toEqual(['kind', 'apiVersion', 'fieldManager']);
  });
});
