/**
 * The devcluster calls a CRD's conversion webhook as kube-apiserver does (D-CONV-401..409): a small
 * HTTPS webhook written here renames `spec.size` (v1, the storage version) to `spec.replicas` (v2)
 * and back, and can be told to misbehave; the devcluster is driven over real HTTP, kubectl and
 * @kubernetes/client-node.
 */
import * as k8s from '@kubernetes/client-node';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WebhookCallRecord } from '../../../devcluster/admission/chain.js';
import * as calling from '../../../devcluster/admission/calling.js';
import * as certs from '../../../devcluster/auth/certs.js';
import * as conversion from '../../../devcluster/crds/conversion.js';
import * as kubectl from '../clients/kubectl.js';
import { readWatch, startHarness, type Harness, type Json } from '../conformance/harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const V1 = '/apis/conv.example.com/v1/namespaces/default/gadgets';
const V2 = '/apis/conv.example.com/v2/namespaces/default/gadgets';

type Mode = 'ok' | 'down' | 'wrong-uid' | 'wrong-count' | 'wrong-apiVersion' | 'failure' | 'renamed' | 'not-object' | 'hang' | 'labels' | 'v1beta1-answer';

const specSchema = (field: string): Json => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: { [field]: { type: 'integer' }, color: { type: 'string' } } } },
});

function gadgetsCrd(url: string, caBundle: string, reviewVersions = ['v1']): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.conv.example.com' },
    spec: {
      group: 'conv.example.com',
      names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget' },
      scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: specSchema('size') } },
        { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: specSchema('replicas') }, subresources: { status: {} } },
      ],
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: reviewVersions, clientConfig: { url, caBundle } } },
    },
  };
}

/** The field rename of the test's converter. */
function convert(obj: Json, desired: string): Json {
  const spec = { ...(obj['spec'] ?? {}) };
  if (desired.endsWith('/v2') && 'size' in spec) {
    spec['replicas'] = spec['size'];
    delete spec['size'];
  }
  if (desired.endsWith('/v1') && 'replicas' in spec) {
    spec['size'] = spec['replicas'];
    delete spec['replicas'];
  }
  return { ...obj, apiVersion: desired, spec };
}

describe('conversion webhooks', () => {
  let h: Harness;
  let server: https.Server;
  let url = '';
  let caBundle = '';
  let mode: Mode = 'ok';
  const reviews: { review: Json; headers: Record<string, string | string[] | undefined>; url: string }[] = [];
  /** AdmissionReviews received at `/validate` and `/mutate` (the mutating one sets `spec.size` to 10, a v1 field). */
  const admissions: { path: string; request: Json }[] = [];
  let base = '';
  const calls: WebhookCallRecord[] = [];

  function answer(review: Json): Json | undefined {
    const request = review['request'];
    const objects: Json[] = request['objects'];
    const desired: string = request['desiredAPIVersion'];
    let converted = objects.map((o) => convert(o, desired));
    let uid = request['uid'];
    let result: Json = { status: 'Success' };
    let apiVersion = review['apiVersion'];
    switch (mode) {
      case 'hang':
        return undefined;
      case 'wrong-uid':
        uid = 'not-the-uid';
        break;
      case 'wrong-count':
        converted = [...converted, ...converted];
        break;
      case 'wrong-apiVersion':
        converted = converted.map((o) => ({ ...o, apiVersion: 'conv.example.com/v3' }));
        break;
      case 'failure':
        result = { status: 'Failure', message: 'the converter refused: spec.size is negative' };
        converted = [];
        break;
      case 'renamed':
        converted = converted.map((o) => ({ ...o, metadata: { ...o['metadata'], name: 'renamed' } }));
        break;
      case 'not-object':
        converted = converted.map(() => 'a string' as unknown as Json);
        break;
      case 'labels':
        converted = converted.map((o) => ({ ...o, metadata: { ...o['metadata'], labels: { converted: 'yes' }, generation: 99, finalizers: ['x/y'] } }));
        break;
      case 'v1beta1-answer':
        apiVersion = 'apiextensions.k8s.io/v1beta1';
        break;
    }
    return { apiVersion, kind: 'ConversionReview', response: { uid, convertedObjects: converted, result } };
  }

  function admit(path: string, review: Json): Json {
    admissions.push({ path, request: review['request'] });
    const response: Json = { uid: review['request']['uid'], allowed: true };
    if (path.startsWith('/mutate')) {
      response['patchType'] = 'JSONPatch';
      response['patch'] = Buffer.from(JSON.stringify([{ op: 'replace', path: '/spec/size', value: 10 }])).toString('base64');
    }
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
  }

  /** A webhook configuration for gadgets registered for v1 only (matchPolicy Equivalent, the default). */
  function v1OnlyConfig(kind: 'Validating' | 'Mutating', failurePolicy = 'Fail'): Json {
    return {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: `${kind}WebhookConfiguration`,
      metadata: { name: `gadgets-v1-${kind.toLowerCase()}` },
      webhooks: [
        {
          name: `${kind.toLowerCase()}.conv.example.com`,
          clientConfig: { url: `${base}/${kind === 'Mutating' ? 'mutate' : 'validate'}`, caBundle },
          rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['conv.example.com'], apiVersions: ['v1'], resources: ['gadgets'] }],
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy,
        },
      ],
    };
  }

  async function withConfig(config: Json, body: () => Promise<void>): Promise<void> {
    const kind = config['kind'] === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
    const created = await h.post(`/apis/admissionregistration.k8s.io/v1/${kind}`, config);
    expect(created.status, created.text).toBe(201);
    try {
      await body();
    } finally {
      expect((await h.del(`/apis/admissionregistration.k8s.io/v1/${kind}/${config['metadata']['name']}`)).status).toBe(200);
    }
  }

  const desired = (): string[] => reviews.map((r) => String(r.review['request']['desiredAPIVersion']).replace('conv.example.com/', ''));

  beforeAll(async () => {
    const ca = await certs.createCertificateAuthority();
    const serving = await certs.issueServingCertificate(ca, { hosts: ['127.0.0.1'] });
    caBundle = Buffer.from(ca.certPem).toString('base64');
    server = https.createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
        if (review['kind'] === 'AdmissionReview') {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(admit(req.url ?? '', review)));
          return;
        }
        reviews.push({ review, headers: req.headers, url: req.url ?? '' });
        const body = answer(review);
        if (body === undefined) return; // never answers
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    url = `${base}/convert/gadgets.conv.example.com`;
    h = await startHarness({ widgets: false, conversionWebhookTimeoutSeconds: 1, onWebhookCall: (call) => calls.push(call) });
    const created = await h.post(CRDS, gadgetsCrd(url, caBundle));
    expect(created.status, created.text).toBe(201);
    await h.cluster.settle();
  });
  afterAll(async () => {
    await h?.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });
  beforeEach(() => {
    mode = 'ok';
    reviews.length = 0;
    admissions.length = 0;
  });

  const gadget = (name: string, version: 'v1' | 'v2', n: number): Json => ({
    apiVersion: `conv.example.com/${version}`,
    kind: 'Gadget',
    metadata: { name },
    spec: version === 'v1' ? { size: n, color: 'red' } : { replicas: n, color: 'red' },
  });

  it('D-CONV-401 an object created in v1 reads in v2 through one ConversionReview of the real shape', async () => {
    expect((await h.post(V1, gadget('one', 'v1', 3))).status).toBe(201);
    expect(reviews).toHaveLength(0); // created in the storage version: no call
    const r = await h.get(`${V2}/one`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ apiVersion: 'conv.example.com/v2', kind: 'Gadget', spec: { replicas: 3, color: 'red' } });
    expect(r.json['spec']).not.toHaveProperty('size');
    expect(reviews).toHaveLength(1);
    const { review, headers } = reviews[0]!;
    expect(review['apiVersion']).toBe('apiextensions.k8s.io/v1');
    expect(review['kind']).toBe('ConversionReview');
    expect(review['request']['uid']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(review['request']['desiredAPIVersion']).toBe('conv.example.com/v2');
    expect(review['request']['objects']).toHaveLength(1);
    expect(review['request']['objects'][0]).toMatchObject({ apiVersion: 'conv.example.com/v1', spec: { size: 3 } });
    expect(headers['content-type']).toBe('application/json');
    expect(reviews[0]!.url).toBe('/convert/gadgets.conv.example.com?timeout=1s');
    expect(calls.some((c) => c.kind === 'conversion' && c.name === 'conversion_webhook_for_gadgets.conv.example.com' && c.ok)).toBe(true);
  });

  it('D-CONV-405 an object created in v2 is stored in v1 and answered in v2; reading it in v1 makes no call', async () => {
    const created = await h.post(V2, gadget('two', 'v2', 5));
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ apiVersion: 'conv.example.com/v2', spec: { replicas: 5 } });
    expect(reviews.map((r) => r.review['request']['desiredAPIVersion'])).toEqual(['conv.example.com/v1', 'conv.example.com/v2']);
    reviews.length = 0;
    const read = await h.get(`${V1}/two`);
    expect(read.json).toMatchObject({ apiVersion: 'conv.example.com/v1', spec: { size: 5, color: 'red' } });
    expect(reviews).toHaveLength(0);
  });

  it('D-CONV-404 a list in v2 converts every item stored in v1 with one review; a list needing none makes no call', async () => {
    for (const name of ['l1', 'l2']) expect((await h.post(V1, gadget(name, 'v1', 1))).status).toBe(201);
    const list = await h.get(V2);
    expect(list.status, list.text).toBe(200);
    expect(list.json['apiVersion']).toBe('conv.example.com/v2');
    for (const item of list.json['items']) expect(item['spec']).toHaveProperty('replicas');
    expect(reviews).toHaveLength(1);
    expect(reviews[0]!.review['request']['objects'].length).toBe(list.json['items'].length);
    reviews.length = 0;
    expect((await h.get(V1)).status).toBe(200);
    expect(reviews).toHaveLength(0);
  });

  it('D-CONV-406 a watch in v2 sees converted events', async () => {
    const watched = await readWatch(`${h.cluster.url}${V2}?watch=true&fieldSelector=metadata.name%3Dwatched`, {
      count: 2,
      onOpen: async () => {
        expect((await h.post(V1, gadget('watched', 'v1', 7))).status).toBe(201);
        expect((await h.patch(`${V1}/watched`, { spec: { size: 8 } })).status).toBe(200);
      },
    });
    expect(watched.events.map((e) => [e['type'], e['object']['apiVersion'], e['object']['spec']['replicas']])).toEqual([
      ['ADDED', 'conv.example.com/v2', 7],
      ['MODIFIED', 'conv.example.com/v2', 8],
    ]);
  });

  it('D-CONV-405 a merge patch through v2 is applied in v2 and stored in v1', async () => {
    expect((await h.post(V1, gadget('patched', 'v1', 1))).status).toBe(201);
    const patched = await h.patch(`${V2}/patched`, { spec: { replicas: 4 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json).toMatchObject({ apiVersion: 'conv.example.com/v2', spec: { replicas: 4, color: 'red' } });
    const stored = await h.get(`${V1}/patched`);
    expect(stored.json['spec']).toEqual({ size: 4, color: 'red' });
  });

  it('D-CONV-407 tables and status writes through v2 convert the object', async () => {
    expect((await h.post(V1, gadget('tabled', 'v1', 2))).status).toBe(201);
    const table = await h.get(`${V2}/tabled`, 'application/json;as=Table;v=v1;g=meta.k8s.io');
    expect(table.status, table.text).toBe(200);
    expect(table.json['rows'][0]['cells'][0]).toBe('tabled');
    const status = await h.patch(`${V2}/tabled/status`, { status: { ready: true } });
    expect(status.status, status.text).toBe(200);
    expect(status.json['apiVersion']).toBe('conv.example.com/v2');
  });

  it('D-CONV-402 failed conversions answer 500 with upstream message shapes, and a failed write stores nothing', async () => {
    expect((await h.post(V1, gadget('bad', 'v1', 1))).status).toBe(201);
    const cases: [Mode, RegExp][] = [
      ['wrong-uid', /failed: expected response\.uid="[0-9a-f-]+", got "not-the-uid"$/],
      ['wrong-count', /returned 2 objects, expected 1$/],
      ['wrong-apiVersion', /returned invalid object at index 0: invalid groupVersion \(expected conv\.example\.com\/v2, received conv\.example\.com\/v3\)$/],
      ['failure', /failed: the converter refused: spec\.size is negative$/],
      ['renamed', /returned invalid object: must have the same name: bad != renamed$/],
      ['not-object', /returned invalid object: the converted object is not an object$/],
      [
        'v1beta1-answer',
        /failed: expected webhook response of apiextensions\.k8s\.io\/v1, Kind=ConversionReview, got apiextensions\.k8s\.io\/v1beta1, Kind=ConversionReview$/,
      ],
    ];
    for (const [m, message] of cases) {
      mode = m;
      const r = await h.get(`${V2}/bad`);
      expect(r.status, m).toBe(500);
      expect(r.json, m).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
      expect(r.json['message'], m).toMatch(/^Internal error occurred: conversion webhook for conv\.example\.com\/v1, Kind=Gadget /);
      expect(r.json['message'], m).toMatch(message);
    }
    mode = 'failure';
    const rev = (await h.get(V1)).json['metadata']['resourceVersion'];
    const created = await h.post(V2, gadget('never', 'v2', 1));
    expect(created.status).toBe(500);
    expect(created.json['message']).toMatch(
      /^Internal error occurred: conversion webhook for conv\.example\.com\/v2, Kind=Gadget failed: the converter refused/,
    );
    mode = 'ok';
    expect((await h.get(`${V1}/never`)).status).toBe(404);
    expect((await h.get(V1)).json['metadata']['resourceVersion']).toBe(rev); // no revision consumed
  });

  it('D-CONV-402 metadata is restored from the original except labels and annotations', async () => {
    expect((await h.post(V1, gadget('meta', 'v1', 1))).status).toBe(201);
    mode = 'labels';
    const r = await h.get(`${V2}/meta`);
    expect(r.status, r.text).toBe(200);
    expect(r.json['metadata']['labels']).toEqual({ converted: 'yes' });
    expect(r.json['metadata']['generation']).toBe(1);
    expect(r.json['metadata']).not.toHaveProperty('finalizers');
  });

  it('D-CONV-401 a webhook that does not answer fails the request after the conversion timeout', async () => {
    expect((await h.post(V1, gadget('slow', 'v1', 1))).status).toBe(201);
    mode = 'hang';
    const r = await h.get(`${V2}/slow`);
    expect(r.status).toBe(500);
    expect(r.json['message']).toMatch(
      /conversion webhook for conv\.example\.com\/v1, Kind=Gadget failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert\/gadgets\.conv\.example\.com\?timeout=1s": /,
    );
    server.closeAllConnections();
  });

  it('D-CONV-408 kubectl reads an object in the other version (<plural>.<version>.<group>)', async () => {
    const bin = kubectl.requireBinary(kubectl.findKubectls()[1]!);
    const work = kubectl.makeWorkDir();
    try {
      const target = { kubeconfig: h.cluster.writeKubeconfig(path.join(work, 'kubeconfig')), workDir: work };
      expect((await h.post(V1, gadget('kubectled', 'v1', 6))).status).toBe(201);
      const r = await kubectl.run(bin, target, ['get', 'gadgets.v2.conv.example.com/kubectled', '-o', 'yaml']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('apiVersion: conv.example.com/v2');
      expect(r.stdout).toContain('replicas: 6');
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('D-CONV-408 @kubernetes/client-node creates in v2 and reads in v1', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(h.cluster.kubeconfig());
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: 'conv.example.com',
      version: 'v2',
      namespace: 'default',
      plural: 'gadgets',
      body: gadget('typed', 'v2', 9),
    });
    const read = (await custom.getNamespacedCustomObject({
      group: 'conv.example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'gadgets',
      name: 'typed',
    })) as Json;
    expect(read['spec']).toEqual({ size: 9, color: 'red' });
  });

  it('D-CONV-411 a validating webhook registered for v1 only sees a v2 create and update in v1, converted by the conversion webhook', async () => {
    await withConfig(v1OnlyConfig('Validating'), async () => {
      const created = await h.post(V2, gadget('equivalent', 'v2', 4));
      expect(created.status, created.text).toBe(201);
      expect(created.json['spec']).toEqual({ replicas: 4, color: 'red' });
      expect(admissions).toHaveLength(1);
      const request = admissions[0]!.request;
      expect(request['kind']).toEqual({ group: 'conv.example.com', version: 'v1', kind: 'Gadget' });
      expect(request['requestKind']).toEqual({ group: 'conv.example.com', version: 'v2', kind: 'Gadget' });
      expect(request['object']).toMatchObject({ apiVersion: 'conv.example.com/v1', spec: { size: 4, color: 'red' } });
      expect(request['object']['spec']).not.toHaveProperty('replicas');
      expect(request['oldObject']).toBeNull();
      // to v1 for the webhook, to v1 for storage, back to v2 for the answer
      expect(desired()).toEqual(['v1', 'v1', 'v2']);
      reviews.length = 0;
      const patched = await h.patch(`${V2}/equivalent`, { spec: { replicas: 6 } });
      expect(patched.status, patched.text).toBe(200);
      const update = admissions[1]!.request;
      expect(update['operation']).toBe('UPDATE');
      expect(update['oldObject']).toMatchObject({ apiVersion: 'conv.example.com/v1', spec: { size: 4 } });
      expect(update['object']).toMatchObject({ apiVersion: 'conv.example.com/v1', spec: { size: 6 } });
      // the stored object read in v2, then the old object and the object for the webhook (old first), storage, answer
      expect(desired()).toEqual(['v2', 'v1', 'v1', 'v1', 'v2']);
    });
  });

  it('D-CONV-411 a conversion that fails for an admission webhook fails the request with its 500 whatever the failurePolicy, storing nothing', async () => {
    await withConfig(v1OnlyConfig('Validating', 'Ignore'), async () => {
      mode = 'failure';
      const r = await h.post(V2, gadget('unconvertible', 'v2', 1));
      expect(r.status).toBe(500);
      expect(r.json['message']).toBe(
        'Internal error occurred: conversion webhook for conv.example.com/v2, Kind=Gadget failed: the converter refused: spec.size is negative',
      );
      expect(admissions).toHaveLength(0);
      mode = 'ok';
      expect((await h.get(`${V1}/unconvertible`)).status).toBe(404);
    });
  });

  it('D-CONV-412 a mutating webhook registered for v1 only patches a v2 create in v1; the patched object is converted back to v2', async () => {
    await withConfig(v1OnlyConfig('Mutating'), async () => {
      const created = await h.post(V2, gadget('mutated', 'v2', 4));
      expect(created.status, created.text).toBe(201);
      expect(created.json).toMatchObject({ apiVersion: 'conv.example.com/v2', spec: { replicas: 10, color: 'red' } });
      expect(created.json['spec']).not.toHaveProperty('size');
      expect(admissions).toHaveLength(1);
      expect(admissions[0]!.request['object']).toMatchObject({ apiVersion: 'conv.example.com/v1', spec: { size: 4 } });
      // to v1 for the webhook, its patched object back to v2, to v1 for storage, back to v2 for the answer
      expect(desired()).toEqual(['v1', 'v2', 'v1', 'v2']);
      expect((await h.get(`${V1}/mutated`)).json['spec']).toEqual({ size: 10, color: 'red' });
    });
  });

  it('D-CONV-413 cluster.store.read/readAll convert through the webhook; the synchronous get/list say to use them', async () => {
    expect((await h.post(V1, gadget('oob', 'v1', 2))).status).toBe(201);
    const ref = { group: 'conv.example.com', version: 'v2', resource: 'gadgets' };
    const read = await h.cluster.store.read(ref, 'oob', 'default');
    expect(read).toMatchObject({ apiVersion: 'conv.example.com/v2', spec: { replicas: 2, color: 'red' } });
    expect(desired()).toEqual(['v2']);
    expect(await h.cluster.store.read(ref, 'absent', 'default')).toBeUndefined();
    const all = await h.cluster.store.readAll(ref, 'default');
    expect(all.length).toBeGreaterThan(0);
    for (const item of all) expect(item['apiVersion']).toBe('conv.example.com/v2');
    expect(reviews).toHaveLength(2); // one review for the whole list
    expect(() => h.cluster.store.get(ref, 'oob', 'default')).toThrow(
      'cluster.store.get() cannot show Gadget "oob" in conv.example.com/v2: it is stored in conv.example.com/v1',
    );
    expect(() => h.cluster.store.get(ref, 'oob', 'default')).toThrow('use `await cluster.store.read(…)` instead');
    expect(() => h.cluster.store.list(ref, 'default')).toThrow('use `await cluster.store.readAll(…)` instead');
    // in the storage version the synchronous reads work and call nothing
    reviews.length = 0;
    expect(h.cluster.store.get({ apiVersion: 'conv.example.com/v1', kind: 'Gadget' }, 'oob', 'default')?.['spec']).toEqual({ size: 2, color: 'red' });
    expect(reviews).toHaveLength(0);
  });

  it('D-CONV-405 a dry-run create and update through v2 convert to v1 and back as real writes do, and store nothing', async () => {
    const created = await h.post(`${V2}?dryRun=All`, gadget('dry', 'v2', 3));
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ apiVersion: 'conv.example.com/v2', spec: { replicas: 3 } });
    expect(desired()).toEqual(['v1', 'v2']);
    expect((await h.get(`${V1}/dry`)).status).toBe(404);
    expect((await h.post(V1, gadget('dry', 'v1', 3))).status).toBe(201);
    reviews.length = 0;
    const patched = await h.request('PATCH', `${V2}/dry?dryRun=All`, JSON.stringify({ spec: { replicas: 7 } }), {
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json['spec']).toEqual({ replicas: 7, color: 'red' });
    expect(desired()).toEqual(['v2', 'v1', 'v2']);
    expect((await h.get(`${V1}/dry`)).json['spec']).toEqual({ size: 3, color: 'red' });
  });

  it('D-CONV-401 conversion calls carry the headers of the API server webhook client (User-Agent kube-apiserver-admission)', async () => {
    expect((await h.post(V1, gadget('agent', 'v1', 1))).status).toBe(201);
    expect((await h.get(`${V2}/agent`)).status).toBe(200);
    expect(reviews[0]!.headers['user-agent']).toBe('kube-apiserver-admission');
    expect(reviews[0]!.headers['accept-encoding']).toBe('gzip');
  });

  it('D-CONV-401 a CRD listing v1beta1 first gets v1beta1 reviews, whose answers are not checked for their uid', async () => {
    const crd = gadgetsCrd(url, caBundle, ['v1beta1', 'v1']);
    crd['metadata']['name'] = 'gizmos.conv.example.com';
    crd['spec']['names'] = { kind: 'Gizmo', plural: 'gizmos', singular: 'gizmo' };
    expect((await h.post(CRDS, crd)).status).toBe(201);
    await h.cluster.settle();
    const GIZMOS = '/apis/conv.example.com/v1/namespaces/default/gizmos';
    expect((await h.post(GIZMOS, { ...gadget('g', 'v1', 5), kind: 'Gizmo' })).status).toBe(201);
    mode = 'wrong-uid';
    const r = await h.get('/apis/conv.example.com/v2/namespaces/default/gizmos/g');
    expect(r.status, r.text).toBe(200);
    expect(r.json['spec']).toEqual({ replicas: 5, color: 'red' });
    expect(reviews).toHaveLength(1);
    expect(reviews[0]!.review['apiVersion']).toBe('apiextensions.k8s.io/v1beta1');
    expect(reviews[0]!.review['request']['desiredAPIVersion']).toBe('conv.example.com/v2');
  });

  it('D-CONV-401 review versions the server does not know: refused on the CRD; a converter left with them fails without a call', async () => {
    const crd = gadgetsCrd(url, caBundle, ['v2', 'v3']);
    crd['metadata']['name'] = 'gears.conv.example.com';
    crd['spec']['names'] = { kind: 'Gear', plural: 'gears', singular: 'gear' };
    const refused = await h.post(CRDS, crd);
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('must include at least one of v1, v1beta1');
    // Only a CRD stored before that rule can keep such a list; its conversions then fail as upstream's do.
    let posted = 0;
    const convert = conversion.webhookConverterFor(crd as never, {
      call: { resolver: calling.defaultServiceResolver, insecure: false },
      post: async () => {
        posted++;
        return { ok: false, detail: 'not called' };
      },
      uid: () => 'uid',
    })!;
    const stored = { apiVersion: 'conv.example.com/v1', kind: 'Gear', metadata: { name: 'g' }, spec: { size: 1 } };
    await expect(convert([stored], 'conv.example.com/v2')).rejects.toMatchObject({
      code: 500,
      message: 'Internal error occurred: no supported conversion review versions',
    });
    expect(await convert([stored], 'conv.example.com/v1')).toEqual([stored]); // nothing to convert: no review to build
    expect(posted).toBe(0);
  });
});
