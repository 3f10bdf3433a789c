/**
 * What a generated project's manifests say about who may reach the operator (R-SEC-15..17): the
 * NetworkPolicy admits the health port from anywhere, the metrics port from namespaces labelled
 * for monitoring and the webhook port from anywhere, and nothing else; the RBAC lets the operator
 * review its scrapers (TokenReview, SubjectAccessReview) and offers the `metrics-reader`
 * ClusterRole to bind to Prometheus. Every document of deploy/ is then sent to a devcluster as
 * `kubectl apply --dry-run=server` sends it (dry run, strict field validation): all are accepted.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as generator from '../../generator/index.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import * as support from './support.js';

type Json = Record<string, unknown>;

const CRD = path.join(support.REPO_ROOT, 'fixtures/crds/kopfexamples.yaml');

function documents(project: string, file: string): Json[] {
  return yaml
    .parseAllDocuments(fs.readFileSync(path.join(project, file), 'utf8'))
    .map((document) => document.toJS() as Json | null)
    .filter((document): document is Json => document !== null);
}

/** The API path a manifest is created at (the kinds of deploy/). */
function collectionOf(object: Json): string {
  const metadata = object['metadata'] as { namespace?: string };
  const [group, version] = String(object['apiVersion']).includes('/') ? String(object['apiVersion']).split('/') : ['', String(object['apiVersion'])];
  const kind = String(object['kind']).toLowerCase();
  const plural = kind.endsWith('y') ? `${kind.slice(0, -1)}ies` : `${kind}s`;
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  return `${base}${metadata.namespace ? `/namespaces/${metadata.namespace}` : ''}/${plural}`;
}

describe('the manifests of a generated project about its metrics and health', () => {
  let work: string;
  let project: string;
  let test: TestCluster;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-metrics-security-'));
    project = path.join(work, 'guarded');
    await generator.init({ crds: [CRD], out: project, webhooks: true });
    test = await startTestCluster({ crds: [fs.readFileSync(CRD, 'utf8')], tls: false });
  }, 60_000);

  afterAll(async () => {
    await test?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('R-SEC-16 the NetworkPolicy selects the operator’s pods and admits only health (anywhere), metrics (labelled namespaces) and webhooks (anywhere)', () => {
    const [policy, ...others] = documents(project, 'deploy/networkpolicy.yaml');
    expect(others).toEqual([]);
    const deployment = documents(project, 'deploy/deployment.yaml')[0] as {
      spec: { template: { metadata: { labels: Json }; spec: { containers: { ports: { name: string; containerPort: number }[] }[] } } };
    };
    const spec = policy!['spec'] as { podSelector: { matchLabels: Json }; policyTypes: string[]; ingress: Json[] };
    expect(policy!['kind']).toBe('NetworkPolicy');
    expect(spec.podSelector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    expect(spec.policyTypes).toEqual(['Ingress']);
    expect(spec.ingress).toEqual([
      { ports: [{ port: 'health', protocol: 'TCP' }] },
      { from: [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }], ports: [{ port: 'metrics', protocol: 'TCP' }] },
      { ports: [{ port: 9443, protocol: 'TCP' }] },
    ]);
    // The named ports are the container's, and the webhook port is the one the container serves on.
    const ports = deployment.spec.template.spec.containers[0]!.ports;
    expect(ports.map((port) => port.name)).toEqual(expect.arrayContaining(['health', 'metrics', 'webhooks']));
    expect(ports.find((port) => port.name === 'webhooks')?.containerPort).toBe(9443);
  });

  it('R-SEC-17 the RBAC lets the operator create TokenReviews and SubjectAccessReviews, and offers a metrics-reader ClusterRole', () => {
    const rbac = documents(project, 'deploy/rbac.yaml');
    const cluster = rbac.find((document) => document['kind'] === 'ClusterRole' && (document['metadata'] as Json)['name'] === 'guarded-cluster') as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    expect(cluster.rules).toContainEqual({ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] });
    expect(cluster.rules).toContainEqual({ apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] });
    const reader = rbac.find((document) => (document['metadata'] as Json)['name'] === 'guarded-metrics-reader');
    expect(reader).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'guarded-metrics-reader' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
  });

  it('R-SEC-15 R-SEC-16 R-SEC-17 every document of deploy/ is accepted by the API server (dry run, strict field validation)', async () => {
    const files = ['deploy/rbac.yaml', 'deploy/deployment.yaml', 'deploy/networkpolicy.yaml'];
    const objects = files.flatMap((file) => documents(project, file).map((object) => ({ file, object })));
    expect(objects.map(({ object }) => object['kind'])).toEqual(expect.arrayContaining(['NetworkPolicy', 'Deployment', 'ClusterRole']));
    // The namespace must exist for the namespaced dry runs; everything else is only tried.
    await test.cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'guarded' } });
    const answers: string[] = [];
    for (const { file, object } of objects) {
      if (object['kind'] === 'Namespace') continue;
      const response = await fetch(`${test.cluster.url}${collectionOf(object)}?dryRun=All&fieldValidation=Strict`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(object),
      });
      answers.push(
        `${file} ${String(object['kind'])} ${(object['metadata'] as Json)['name'] as string}: ${response.status}${response.status === 201 ? '' : ` ${await response.text()}`}`,
      );
    }
    expect(answers.filter((answer) => !answer.endsWith(': 201'))).toEqual([]);
    expect(answers.length).toBeGreaterThanOrEqual(7);
  });
});
