/**
 * Admission webhooks (devcluster reference section 9): a real HTTPS webhook server on loopback with a
 * certificate from its own CA, registered through webhook configuration objects.
 */
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as certs from '../../../devcluster/auth/certs.js';
import { startHarness, WIDGETS, type Harness, type Json } from './harness.js';

interface Received {
  url: string;
  review: Json;
  headers: Record<string, string | string[] | undefined>;
  /** Header names and values as they came over the wire, in order. */
  rawHeaders: string[];
}

type Reply = (review: Json) => Json | 'close';

class WebhookServer {
  server!: https.Server;
  received: Received[] = [];
  reply: Reply = (review) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review['request'].uid, allowed: true } });
  caBundle = '';
  /** Answer gzip-compressed (with `Content-Encoding: gzip`). */
  gzip = false;

  async start(): Promise<void> {
    const ca = await certs.createCertificateAuthority();
    const serving = await certs.issueServingCertificate(ca, { hosts: ['localhost', '127.0.0.1', 'hooks.default.svc'] });
    this.caBundle = Buffer.from(ca.certPem).toString('base64');
    this.server = https.createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
        this.received.push({ url: req.url ?? '', review, headers: req.headers, rawHeaders: req.rawHeaders });
        const answer = this.reply(review);
        if (answer === 'close') {
          res.socket?.destroy();
          return;
        }
        res.setHeader('content-type', 'application/json');
        if (this.gzip) {
          res.setHeader('content-encoding', 'gzip');
          res.end(zlib.gzipSync(JSON.stringify(answer)));
        } else res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
  stop(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

const respond = (review: Json, response: Json): Json => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: review['request'].uid, ...response },
});

describe('admission webhooks', () => {
  let h: Harness;
  const hook = new WebhookServer();

  beforeAll(async () => {
    await hook.start();
    h = await startHarness({ webhookServiceResolver: () => `127.0.0.1:${hook.port}` });
  });
  afterAll(async () => {
    await h.stop();
    await hook.stop();
  });

  async function register(kind: 'validating' | 'mutating', name: string, webhook: Json): Promise<() => Promise<void>> {
    const plural = `${kind}webhookconfigurations`;
    const body = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: kind === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          name: 'v.example.com',
          clientConfig: { url: `https://127.0.0.1:${hook.port}/validate`, caBundle: hook.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          ...webhook,
        },
      ],
    };
    const r = await h.post(`/apis/admissionregistration.k8s.io/v1/${plural}`, body);
    expect(r.status, r.text).toBe(201);
    return async () => {
      expect((await h.del(`/apis/admissionregistration.k8s.io/v1/${plural}/${name}`)).status).toBe(200);
    };
  }

  it('C-109 a validating webhook denial is a 400 with the exact message', async () => {
    const unregister = await register('validating', 'deny-all', {});
    hook.reply = (review) => respond(review, { allowed: false, status: { message: 'nope' } });
    const r = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'denied' }, spec: { size: 1 } });
    expect(r.status).toBe(400);
    expect(r.json['message']).toBe('admission webhook "v.example.com" denied the request: nope');
    expect((await h.get(`${WIDGETS}/denied`)).status).toBe(404);
    await unregister();
  });

  it('C-110 the AdmissionReview carries uid, kind, resource, operation, object, options and the timeout query', async () => {
    hook.received = [];
    hook.reply = (review) => respond(review, { allowed: true });
    const unregister = await register('validating', 'observe', {});
    expect((await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'seen' }, spec: { size: 2 } })).status).toBe(201);
    const { url, review } = hook.received.at(-1)!;
    expect(url).toMatch(/\?timeout=10s$/);
    const req = review['request'];
    expect(req.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(req.kind).toEqual({ group: 'example.com', version: 'v1', kind: 'Widget' });
    expect(req.resource).toEqual({ group: 'example.com', version: 'v1', resource: 'widgets' });
    expect(req.operation).toBe('CREATE');
    expect(req.object.spec.size).toBe(2);
    expect(req.options.kind).toBe('CreateOptions');
    expect(req.userInfo.username).toBe('devcluster-admin');
    await unregister();
  });

  it('D-ADM-13 admission calls carry the header names, values and order of a real API server, and no Connection header', async () => {
    hook.received = [];
    hook.reply = (review) => respond(review, { allowed: true });
    const unregister = await register('validating', 'headers', {});
    expect((await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'agent' }, spec: { size: 1 } })).status).toBe(201);
    const { rawHeaders, review } = hook.received.at(-1)!;
    expect(rawHeaders).toEqual([
      'Host',
      `127.0.0.1:${hook.port}`,
      'User-Agent',
      'kube-apiserver-admission',
      'Content-Length',
      String(Buffer.byteLength(JSON.stringify(review))),
      'Accept',
      'application/json, */*',
      'Content-Type',
      'application/json',
      'Accept-Encoding',
      'gzip',
    ]);
    await unregister();
  });

  it('D-ADM-13 a service reference is called with Host <name>.<namespace>.svc:<port>', async () => {
    hook.received = [];
    hook.reply = (review) => respond(review, { allowed: true });
    const unregister = await register('validating', 'service-host', {
      clientConfig: { service: { name: 'hooks', namespace: 'default', path: '/validate' }, caBundle: hook.caBundle },
    });
    expect((await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'by-service' }, spec: { size: 1 } })).status).toBe(201);
    const { rawHeaders, url } = hook.received.at(-1)!;
    expect(rawHeaders.slice(0, 4)).toEqual(['Host', 'hooks.default.svc:443', 'User-Agent', 'kube-apiserver-admission']);
    expect(url).toBe('/validate?timeout=10s');
    await unregister();
  });

  it("D-ADM-13 a gzip-compressed answer is decoded, as Go's client does", async () => {
    hook.reply = (review) => respond(review, { allowed: false, status: { message: 'zipped' } });
    hook.gzip = true;
    const unregister = await register('validating', 'gzipped', {});
    try {
      const r = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'zipped' }, spec: { size: 1 } });
      expect(r.json['message']).toBe('admission webhook "v.example.com" denied the request: zipped');
    } finally {
      hook.gzip = false;
      await unregister();
    }
  });

  it('C-111 a mutating webhook JSONPatch is applied; with generateName the webhook sees an empty name', async () => {
    hook.received = [];
    hook.reply = (review) =>
      respond(review, {
        allowed: true,
        patchType: 'JSONPatch',
        patch: Buffer.from(JSON.stringify([{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }])).toString('base64'),
      });
    const unregister = await register('mutating', 'mutate', { clientConfig: { url: `https://127.0.0.1:${hook.port}/mutate`, caBundle: hook.caBundle } });
    const r = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { generateName: 'gen-' }, spec: { size: 1 } });
    expect(r.status, r.text).toBe(201);
    expect(r.json['metadata'].labels).toEqual({ mutated: 'yes' });
    const stored = await h.get(`${WIDGETS}/${r.json['metadata'].name}`);
    expect(stored.json['metadata'].labels).toEqual({ mutated: 'yes' });
    const req = hook.received.at(-1)!.review['request'];
    expect(req.name).toBeUndefined();
    expect(req.object.metadata.uid).toBeUndefined();
    await unregister();
  });

  it('C-112 an unreachable webhook fails the request with Fail and is skipped with Ignore', async () => {
    const down = { clientConfig: { url: 'https://127.0.0.1:1/nowhere', caBundle: hook.caBundle } };
    const unregister = await register('validating', 'down-fail', down);
    const failed = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'blocked' }, spec: { size: 1 } });
    expect(failed.status).toBe(500);
    expect(failed.json['reason']).toBe('InternalError');
    expect(failed.json['message']).toMatch(/^Internal error occurred: failed calling webhook "v.example.com"/);
    await unregister();
    const unregister2 = await register('validating', 'down-ignore', { ...down, failurePolicy: 'Ignore' });
    const passed = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'ignored' }, spec: { size: 1 } });
    expect(passed.status).toBe(201);
    await unregister2();
  });

  it('C-113 objectSelector and subresource rules decide whether a webhook is called', async () => {
    hook.received = [];
    hook.reply = (review) => respond(review, { allowed: true });
    const unregister = await register('validating', 'selective', {
      objectSelector: { matchLabels: { hook: 'on' } },
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }],
    });
    await h.widget('unlabelled');
    expect(hook.received).toHaveLength(0);
    await h.widget('labelled', { size: 1 }, { metadata: { labels: { hook: 'on' } } });
    expect(hook.received).toHaveLength(1);
    hook.received = [];
    const status = await h.patch(`${WIDGETS}/labelled/status`, { status: { phase: 'x' } });
    expect(status.status).toBe(200);
    expect(hook.received).toHaveLength(0);
    await unregister();
    const unregister2 = await register('validating', 'status-only', {
      rules: [{ operations: ['UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets/status'] }],
    });
    await h.patch(`${WIDGETS}/labelled/status`, { status: { phase: 'y' } });
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.review['request'].subResource).toBe('status');
    await unregister2();
  });

  it('C-114 DELETE reviews carry oldObject and a null object; a mismatched uid is a call failure', async () => {
    await h.widget('to-delete');
    hook.received = [];
    hook.reply = (review) => respond(review, { allowed: true });
    const unregister = await register('validating', 'deletes', {
      rules: [{ operations: ['DELETE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }],
    });
    expect((await h.del(`${WIDGETS}/to-delete`)).status).toBe(200);
    const req = hook.received.at(-1)!.review['request'];
    expect(req.operation).toBe('DELETE');
    expect(req.object).toBeNull();
    expect(req.oldObject.metadata.name).toBe('to-delete');
    await h.widget('kept');
    hook.reply = (review) => respond({ request: { ...review['request'], uid: 'wrong' } }, { allowed: true });
    const r = await h.del(`${WIDGETS}/kept`);
    expect(r.status).toBe(500);
    expect(r.json['message']).toContain('expected response.uid=');
    expect((await h.get(`${WIDGETS}/kept`)).status).toBe(200);
    await unregister();
  });
});
