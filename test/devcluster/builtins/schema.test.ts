import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';

// The schema layer of every built-in kind (D-BI-20..23), over plain HTTP against a devcluster.
type Json = { [key: string]: any };

let cluster: DevCluster;
beforeAll(async () => {
  cluster = await DevCluster.start({ tls: false });
});
afterAll(async () => {
  await cluster?.stop();
});

async function send(method: string, path: string, body?: unknown, contentType = 'application/json') {
  const r = await fetch(`${cluster.url}${path}`, {
    method,
    headers: { 'content-type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: JSON.parse(text) as Json, warning: r.headers.get('warning') ?? '' };
}

const JOBS = '/apis/batch/v1/namespaces/default/jobs';
function job(name: string, spec: Json = {}, template: Json = {}): Json {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }], ...template } }, ...spec },
  };
}
const stored = (name: string) => cluster.store.get({ apiVersion: 'batch/v1', kind: 'Job' }, name, 'default');

describe('the schema layer of built-in kinds', () => {
  it('D-BI-23 start-up parses only the schemas its own writes need, never the whole OpenAPI document', async () => {
    vi.resetModules();
    const freshOpenapi = await import('../../../devcluster/upstream/openapi.js');
    const { DevCluster: FreshCluster } = await import('../../../devcluster/testing.js');
    const fresh = await FreshCluster.start({ tls: false });
    try {
      expect(freshOpenapi.isDocumentLoaded()).toBe(false);
      const atStart = freshOpenapi.parsedDefinitions();
      expect(atStart).toBeLessThan(40);
      const r = await fetch(`${fresh.url}/apis/batch/v1/namespaces/default/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(job('first')),
      });
      expect(r.status).toBe(201);
      expect(freshOpenapi.parsedDefinitions()).toBeGreaterThan(atStart);
      expect(freshOpenapi.isDocumentLoaded()).toBe(false);
    } finally {
      await fresh.stop();
    }
  });

  it('D-BI-20 a value of the wrong type is 400 with the decoder message naming the Go field, and nothing is stored', async () => {
    const r = await send('POST', JOBS, job('wrong-type', { completions: 'three' }));
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      reason: 'BadRequest',
      message: 'Job in version "v1" cannot be handled as a Job: json: cannot unmarshal string into Go struct field JobSpec.spec.completions of type int32',
    });
    expect(stored('wrong-type')).toBeUndefined();
    const nested = await send('POST', JOBS, job('wrong-nested', {}, { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: '80' }] }] }));
    expect(nested.json.message).toBe(
      'Job in version "v1" cannot be handled as a Job: json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
    );
  });

  it('D-BI-20 unknown fields warn by default, are refused with Strict, and are dropped', async () => {
    const warned = await send('POST', JOBS, job('unknown-warn', { bogus: 1 }, { containers: [{ name: 'c', image: 'busybox', imagee: 'x' }] }));
    expect(warned.status).toBe(201);
    expect(warned.warning).toContain('unknown field \\"spec.bogus\\"');
    expect(warned.warning).toContain('unknown field \\"spec.template.spec.containers[0].imagee\\"');
    expect(warned.json.spec).not.toHaveProperty('bogus');
    const strict = await send('POST', `${JOBS}?fieldValidation=Strict`, job('unknown-strict', { bogus: 1 }));
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe('strict decoding error: unknown field "spec.bogus"');
    expect(stored('unknown-strict')).toBeUndefined();
  });

  it('D-BI-20 a bad quantity is 400 with upstream message; a number is taken as a quantity', async () => {
    const bad = await send('POST', JOBS, job('bad-quantity', {}, { containers: [{ name: 'c', image: 'busybox', resources: { limits: { cpu: 'lots' } } }] }));
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe(
      'Job in version "v1" cannot be handled as a Job: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
    );
    expect(stored('bad-quantity')).toBeUndefined();
    const number = await send('POST', JOBS, job('number-quantity', {}, { containers: [{ name: 'c', image: 'busybox', resources: { limits: { cpu: 2 } } }] }));
    expect(number.status).toBe(201);
    expect(number.json.spec.template.spec.containers[0].resources.limits.cpu).toBe('2');
  });

  it('D-BI-21 a missing required field is 422 with the field path, and nothing is stored', async () => {
    const r = await send('POST', JOBS, job('no-name', {}, { containers: [{ image: 'busybox' }] }));
    expect(r.status).toBe(422);
    expect(r.json.details.causes).toContainEqual({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.template.spec.containers[0].name' });
    expect(stored('no-name')).toBeUndefined();
    const noTemplate = await send('POST', JOBS, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'no-template' }, spec: {} });
    expect(noTemplate.json.details.causes).toContainEqual({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.template.spec.containers' });
  });

  it('D-META-11 a bad label on a built-in kind is 422 on metadata.labels, and nothing is stored', async () => {
    const r = await send('POST', JOBS, { ...job('bad-label'), metadata: { name: 'bad-label', labels: { 'bad key': 'v' } } });
    expect(r.status).toBe(422);
    expect(r.json.details.causes[0]).toMatchObject({ field: 'metadata.labels', reason: 'FieldValueInvalid' });
    expect(stored('bad-label')).toBeUndefined();
  });

  it('D-BI-22 a strategic merge patch merges the containers of a Job template by name', async () => {
    await send('POST', JOBS, job('smp'));
    const r = await send(
      'PATCH',
      `${JOBS}/smp`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'alpine' }] } } } },
      'application/strategic-merge-patch+json',
    );
    // The Job's template is immutable upstream; the merge itself is what this checks, on a dry run.
    expect([200, 422]).toContain(r.status);
    const cm = await send('POST', '/api/v1/namespaces/default/podtemplates', {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 'pt' },
      template: {
        spec: {
          containers: [
            { name: 'a', image: 'x' },
            { name: 'b', image: 'y' },
          ],
        },
      },
    });
    expect(cm.status).toBe(201);
    const patched = await send(
      'PATCH',
      '/api/v1/namespaces/default/podtemplates/pt',
      { template: { spec: { containers: [{ name: 'b', image: 'z' }] } } },
      'application/strategic-merge-patch+json',
    );
    expect(patched.status).toBe(200);
    expect(patched.json.template.spec.containers.map((c: Json) => `${c.name}=${c.image}`)).toEqual(['a=x', 'b=z']);
  });

  it('D-BI-23 generation is set and bumped on spec changes; status is dropped on create and kept by main-endpoint writes', async () => {
    const created = await send('POST', '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'np' },
      spec: { podSelector: {} },
    });
    expect(created.status).toBe(201);
    expect(created.json.metadata.generation).toBe(1);
    const changed = await send(
      'PATCH',
      '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/np',
      { spec: { policyTypes: ['Ingress'] } },
      'application/merge-patch+json',
    );
    expect(changed.json.metadata.generation).toBe(2);
    const labelled = await send(
      'PATCH',
      '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/np',
      { metadata: { labels: { a: 'b' } } },
      'application/merge-patch+json',
    );
    expect(labelled.json.metadata.generation).toBe(2);

    const pdb = await send('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'pdb' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } } },
      status: { disruptionsAllowed: 5, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
    });
    expect(pdb.status).toBe(201);
    expect(pdb.json).not.toHaveProperty('status');
    const status = await send(
      'PATCH',
      '/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb/status',
      { status: { disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 } },
      'application/merge-patch+json',
    );
    expect(status.json.status.disruptionsAllowed).toBe(1);
    const main = await send(
      'PATCH',
      '/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb',
      { status: { disruptionsAllowed: 9 } },
      'application/merge-patch+json',
    );
    expect(main.json.status.disruptionsAllowed).toBe(1);
  });

  it('D-BI-23 RBAC objects take path-segment names; other kinds DNS-1123 subdomains', async () => {
    const role = await send('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:controller:job-controller' },
      rules: [{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['get'] }],
    });
    expect(role.status).toBe(201);
    const slash = await send('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'a/b' },
    });
    expect(slash.status).toBe(422);
    expect(slash.json.details.causes[0]).toMatchObject({ field: 'metadata.name', message: expect.stringContaining("may not contain '/'") });
    const colon = await send('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: 'a:b' },
      value: 1,
    });
    expect(colon.status).toBe(422);
  });
});
