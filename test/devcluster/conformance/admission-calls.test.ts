/**
 * The devcluster reports each webhook call it makes (name, kind, duration, outcome) to an observer,
 * so that benchmarks can measure webhook servers from the API server's side.
 */
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookCallRecord } from '../../../devcluster/admission/chain.js';
import * as certs from '../../../devcluster/auth/certs.js';
import { startHarness, WIDGETS, type Harness, type Json } from './harness.js';

describe('webhook call observer', () => {
  let h: Harness;
  let server: https.Server;
  let caBundle = '';
  const calls: WebhookCallRecord[] = [];

  beforeAll(async () => {
    const ca = await certs.createCertificateAuthority();
    const serving = await certs.issueServingCertificate(ca, { hosts: ['127.0.0.1'] });
    caBundle = Buffer.from(ca.certPem).toString('base64');
    server = https.createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review['request'].uid, allowed: true } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    h = await startHarness({ onWebhookCall: (call) => calls.push(call) });
  });
  afterAll(async () => {
    await h.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  it('D-ADM-8 every webhook call is reported with its name, kind, duration and whether the call succeeded', async () => {
    const port = (server.address() as AddressInfo).port;
    const webhook = (name: string, url: string): Json => ({
      name,
      clientConfig: { url, caBundle },
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }],
    });
    const created = await h.post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'observed' },
      webhooks: [webhook('up.example.com', `https://127.0.0.1:${port}/`), webhook('down.example.com', 'https://127.0.0.1:1/')],
    });
    expect(created.status, created.text).toBe(201);

    const r = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'observed' }, spec: { size: 1 } });
    expect(r.status, r.text).toBe(201);
    const byName = Object.fromEntries(calls.map((call) => [call.name, call]));
    expect(byName['up.example.com']).toMatchObject({ kind: 'validating', ok: true });
    expect(byName['down.example.com']).toMatchObject({ kind: 'validating', ok: false });
    expect(byName['up.example.com']!.ms).toBeGreaterThan(0);
  });
});
