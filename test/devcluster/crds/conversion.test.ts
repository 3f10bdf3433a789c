/**
 * CRDs with `conversion.strategy: Webhook` over HTTP (D-CRD-21, D-CRD-22): such a CRD is accepted,
 * defaulted and served; requests in the version an object is stored in work as usual without a
 * webhook call, and a request that needs a conversion calls the webhook — here one that is not
 * running, so it fails with upstream's 500 (the calls themselves: conversion-webhook.test.ts).
 * The CRD below has the shape of Tekton's PipelineRuns: v1beta1 and v1 served, v1 stored, a
 * conversion webhook reached through a service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWatch, startHarness, type Harness, type Json } from '../conformance/harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const V1 = '/apis/tekton.example.dev/v1/namespaces/default/pipelineruns';
const V1BETA1 = '/apis/tekton.example.dev/v1beta1/namespaces/default/pipelineruns';

const openSchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/** A two-version CRD converted by a webhook, as Tekton ships its PipelineRuns. */
function pipelineRunsCrd(): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'pipelineruns.tekton.example.dev' },
    spec: {
      group: 'tekton.example.dev',
      preserveUnknownFields: false,
      versions: [
        { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: openSchema }, subresources: { status: {} } },
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: openSchema }, subresources: { status: {} } },
      ],
      names: { kind: 'PipelineRun', plural: 'pipelineruns', singular: 'pipelinerun', shortNames: ['pr'], categories: ['tekton'] },
      scope: 'Namespaced',
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1beta1', 'v1'],
          clientConfig: { service: { name: 'tekton-pipelines-webhook', namespace: 'tekton-pipelines' } },
        },
      },
    },
  };
}

const run = (name: string, apiVersion = 'tekton.example.dev/v1'): Json => ({
  apiVersion,
  kind: 'PipelineRun',
  metadata: { name },
  spec: { pipelineRef: { name: 'build' } },
});

describe('CRDs converted by a webhook', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ widgets: false });
    const created = await h.post(CRDS, pipelineRunsCrd());
    expect(created.status, created.text).toBe(201);
    await h.cluster.settle();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('D-CRD-21 a two-version CRD with strategy Webhook is stored with its defaults, established and served in both versions', async () => {
    const crd = (await h.get(`${CRDS}/pipelineruns.tekton.example.dev`)).json;
    expect(crd['spec']['conversion']).toEqual({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1beta1', 'v1'],
        clientConfig: { service: { name: 'tekton-pipelines-webhook', namespace: 'tekton-pipelines', port: 443 } },
      },
    });
    expect(crd['status']['conditions']).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'True' })]));
    const group = (await h.get('/apis/tekton.example.dev')).json;
    expect(group['versions'].map((v: Json) => v['version'])).toEqual(['v1', 'v1beta1']);
  });

  it('D-CRD-22 requests in the storage version work as usual: create, get, list, patch, status and watch', async () => {
    expect((await h.post(V1, run('same'))).status).toBe(201);
    expect((await h.get(`${V1}/same`)).json['spec']).toEqual({ pipelineRef: { name: 'build' } });
    expect((await h.get(V1)).json['items'].map((i: Json) => i['metadata']['name'])).toContain('same');
    const patched = await h.patch(`${V1}/same`, { spec: { timeout: '1h' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json['apiVersion']).toBe('tekton.example.dev/v1');
    const status = await h.patch(`${V1}/same/status`, { status: { phase: 'Running' } });
    expect(status.status, status.text).toBe(200);
    const watched = await readWatch(`${h.cluster.url}${V1}?watch=true&fieldSelector=metadata.name%3Dsame`, { count: 1 });
    expect(watched.events.map((e) => [e['type'], e['object']['apiVersion']])).toEqual([['ADDED', 'tekton.example.dev/v1']]);
  });

  it('D-CRD-22 reading an object through another version with the webhook down fails with a 500 naming the conversion webhook', async () => {
    expect((await h.post(V1, run('other'))).status).toBe(201);
    for (const path of [`${V1BETA1}/other`, V1BETA1]) {
      const r = await h.get(path);
      expect(r.status, path).toBe(500);
      expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500 });
      expect(r.json['message']).toMatch(
        /^Internal error occurred: conversion webhook for tekton\.example\.dev\/v1, Kind=PipelineRun failed: Post "https:\/\/tekton-pipelines-webhook\.tekton-pipelines\.svc:443\/\?timeout=30s": /,
      );
    }
  });

  it('D-CRD-22 writing through a version other than the storage version fails with a 500 and stores nothing', async () => {
    const r = await h.post(V1BETA1, run('beta', 'tekton.example.dev/v1beta1'));
    expect(r.status).toBe(500);
    expect(r.json['message']).toContain('conversion webhook for tekton.example.dev/v1beta1, Kind=PipelineRun failed');
    expect((await h.get(`${V1}/beta`)).status).toBe(404);
  });

  it('D-CRD-22 a watch through another version ends with an ERROR event carrying the 500', async () => {
    const watched = await readWatch(`${h.cluster.url}${V1BETA1}?watch=true`, { count: 5 });
    expect(watched.status).toBe(200);
    expect(watched.ended).toBe(true);
    expect(watched.events).toHaveLength(1);
    expect(watched.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', reason: 'InternalError', code: 500 } });
    expect(watched.events[0]!['object']['message']).toContain('conversion webhook for tekton.example.dev/v1, Kind=PipelineRun failed');
  });

  it('D-CONV-411 an admission webhook matched through another version gets the object converted; an unreachable conversion webhook fails the request whatever its failurePolicy', async () => {
    const config = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'beta-only' },
      webhooks: [
        {
          name: 'beta.tekton.example.dev',
          clientConfig: { url: 'https://127.0.0.1:1/validate' },
          rules: [{ operations: ['CREATE'], apiGroups: ['tekton.example.dev'], apiVersions: ['v1beta1'], resources: ['pipelineruns'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Ignore',
        },
      ],
    };
    expect((await h.post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', config)).status).toBe(201);
    try {
      const r = await h.post(V1, run('equivalent'));
      expect(r.status).toBe(500);
      expect(r.json['message']).toMatch(
        /^Internal error occurred: conversion webhook for tekton\.example\.dev\/v1, Kind=PipelineRun failed: Post "https:\/\/tekton-pipelines-webhook\.tekton-pipelines\.svc:443\/\?timeout=30s": /,
      );
      expect((await h.get(`${V1}/equivalent`)).status).toBe(404);
    } finally {
      expect((await h.del('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/beta-only')).status).toBe(200);
    }
  });

  it('D-CRD-21 a caBundle that is not base64 is refused with 400 while decoding', async () => {
    const crd = pipelineRunsCrd();
    crd['metadata']['name'] = 'tasks.tekton.example.dev';
    crd['spec']['names'] = { kind: 'Task', plural: 'tasks' };
    crd['spec']['conversion']['webhook']['clientConfig']['caBundle'] = 'not base64!';
    const r = await h.post(CRDS, crd);
    expect(r.status).toBe(400);
    expect(r.json['message']).toMatch(/^CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: illegal base64 data/);
  });
});
