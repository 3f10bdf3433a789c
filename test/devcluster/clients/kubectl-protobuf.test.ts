/**
 * kubectl 1.32 and later send the built-in kinds of their imperative commands as Kubernetes
 * protobuf (D-KCTL-10, D-WIRE-25): every such command of a kind the devcluster serves succeeds,
 * its request carries the protobuf body and an Accept that also names JSON, and the stored object is
 * the one the same command's JSON (`--dry-run=client -o json`, sent through `kubectl create -f`)
 * produces. Each protobuf-sending kubectl build beside the one on PATH is run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';
import type { RequestRecord, TypeRef } from '../../../devcluster/testing.js';
import * as kubectl from './kubectl.js';

/** kubectl sends protobuf bodies from this minor version on (section 12.1). */
const PROTOBUF_FROM = 32;
const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const KUBECTL_ACCEPT = 'application/vnd.kubernetes.protobuf,application/json';
const BINARIES = kubectl.findKubectlsFrom(PROTOBUF_FROM);
/** Bytes that are not UTF-8, so that a ConfigMap keeps them in `binaryData`. */
const BLOB = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x01]);

type Json = Record<string, any>;

interface Command {
  args: (files: { blob: string }) => string[];
  printed: string;
  ref: TypeRef;
  name: string;
  /** The collection URL the POST goes to. */
  path: string;
  /** Server-allocated fields left out of the comparison with the JSON twin. */
  allocated?: (obj: Json) => void;
}

const NS = '/api/v1/namespaces/default';
const COMMANDS: Command[] = [
  {
    args: () => ['create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=0', '--port=80'],
    printed: 'deployment.apps/web created',
    ref: { apiVersion: 'apps/v1', kind: 'Deployment' },
    name: 'web',
    path: '/apis/apps/v1/namespaces/default/deployments',
  },
  {
    args: ({ blob }) => ['create', 'configmap', 'settings', '--from-literal=mode=fast', `--from-file=blob=${blob}`],
    printed: 'configmap/settings created',
    ref: { apiVersion: 'v1', kind: 'ConfigMap' },
    name: 'settings',
    path: `${NS}/configmaps`,
  },
  {
    args: ({ blob }) => ['create', 'secret', 'generic', 'creds', '--from-literal=user=admin', `--from-file=key=${blob}`],
    printed: 'secret/creds created',
    ref: { apiVersion: 'v1', kind: 'Secret' },
    name: 'creds',
    path: `${NS}/secrets`,
  },
  {
    args: () => ['create', 'secret', 'docker-registry', 'pull', '--docker-server=registry.example', '--docker-username=u', '--docker-password=p'],
    printed: 'secret/pull created',
    ref: { apiVersion: 'v1', kind: 'Secret' },
    name: 'pull',
    path: `${NS}/secrets`,
  },
  {
    args: () => ['create', 'serviceaccount', 'robot'],
    printed: 'serviceaccount/robot created',
    ref: { apiVersion: 'v1', kind: 'ServiceAccount' },
    name: 'robot',
    path: `${NS}/serviceaccounts`,
  },
  {
    args: () => ['create', 'service', 'clusterip', 'frontend', '--tcp=80:8080'],
    printed: 'service/frontend created',
    ref: { apiVersion: 'v1', kind: 'Service' },
    name: 'frontend',
    path: `${NS}/services`,
    allocated: allocatedService,
  },
  {
    args: () => ['create', 'service', 'nodeport', 'edge', '--tcp=443:https'],
    printed: 'service/edge created',
    ref: { apiVersion: 'v1', kind: 'Service' },
    name: 'edge',
    path: `${NS}/services`,
    allocated: allocatedService,
  },
  {
    args: () => ['create', 'job', 'once', '--image=busybox'],
    printed: 'job.batch/once created',
    ref: { apiVersion: 'batch/v1', kind: 'Job' },
    name: 'once',
    path: '/apis/batch/v1/namespaces/default/jobs',
    allocated: generatedJob,
  },
  {
    args: () => ['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *'],
    printed: 'cronjob.batch/nightly created',
    ref: { apiVersion: 'batch/v1', kind: 'CronJob' },
    name: 'nightly',
    path: '/apis/batch/v1/namespaces/default/cronjobs',
  },
  {
    args: () => ['create', 'role', 'reader', '--verb=get,list', '--resource=pods,jobs.batch'],
    printed: 'role.rbac.authorization.k8s.io/reader created',
    ref: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
    name: 'reader',
    path: '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles',
  },
  {
    args: () => ['create', 'rolebinding', 'reader-binding', '--role=reader', '--serviceaccount=default:robot'],
    printed: 'rolebinding.rbac.authorization.k8s.io/reader-binding created',
    ref: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' },
    name: 'reader-binding',
    path: '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings',
  },
  {
    args: () => ['create', 'poddisruptionbudget', 'keep-one', '--selector=app=web', '--min-available=1'],
    printed: 'poddisruptionbudget.policy/keep-one created',
    ref: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' },
    name: 'keep-one',
    path: '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
  },
  {
    args: () => ['create', 'ingress', 'front', '--rule=example.com/*=frontend:80'],
    printed: 'ingress.networking.k8s.io/front created',
    ref: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
    name: 'front',
    path: '/apis/networking.k8s.io/v1/namespaces/default/ingresses',
  },
  {
    args: () => ['create', 'quota', 'limits', '--hard=pods=10'],
    printed: 'resourcequota/limits created',
    ref: { apiVersion: 'v1', kind: 'ResourceQuota' },
    name: 'limits',
    path: `${NS}/resourcequotas`,
  },
];

/** A Job's generated selector and labels carry its uid, which differs between the two creates. */
function generatedJob(obj: Json): void {
  delete obj['spec']['selector'];
  delete obj['spec']['template']['metadata']['labels'];
  delete obj['metadata']['labels'];
}

function allocatedService(obj: Json): void {
  delete obj['spec']['clusterIP'];
  delete obj['spec']['clusterIPs'];
  for (const port of obj['spec']['ports'] ?? []) delete port['nodePort'];
}

/** An object without what differs between two creates of it: identity, time, namespace, allocations. */
function comparable(obj: Json | undefined, allocated?: (obj: Json) => void): Json | undefined {
  if (!obj) return undefined;
  const copy = structuredClone(obj);
  for (const key of ['namespace', 'uid', 'resourceVersion', 'creationTimestamp']) delete copy['metadata'][key];
  for (const entry of copy['metadata']['managedFields'] ?? []) delete entry['time'];
  allocated?.(copy);
  return copy;
}

describe.each(BINARIES.map((b) => [b.label, b] as const))('%s imperative creates', (label, binary) => {
  let cluster: DevCluster;
  let target: kubectl.KubectlTarget;
  let bin: string;
  let blob: string;

  const run = async (args: string[], input?: string): Promise<kubectl.KubectlResult> =>
    kubectl.expectSuccess(await kubectl.run(bin, target, args, { input }), `kubectl ${args.join(' ')}`);

  beforeAll(async () => {
    bin = kubectl.requireBinary(binary);
    cluster = await DevCluster.start();
    const work = kubectl.makeWorkDir('kubectl-protobuf-');
    target = { kubeconfig: cluster.writeKubeconfig(path.join(work, 'kubeconfig')), workDir: work };
    blob = path.join(work, 'blob.bin');
    fs.writeFileSync(blob, BLOB);
    await cluster.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'twin' } });
  });
  afterAll(async () => {
    await cluster?.stop();
    if (target) fs.rmSync(target.workDir, { recursive: true, force: true });
  });

  it(`D-KCTL-10 ${label}: the build sends protobuf bodies`, () => {
    const minor = Number(binary.version?.split('.')[1] ?? 0);
    expect(minor, `kubectl 1.${PROTOBUF_FROM} or later is needed to exercise protobuf bodies, found ${binary.version}`).toBeGreaterThanOrEqual(PROTOBUF_FROM);
  });

  it.each(COMMANDS.map((c) => [c.args({ blob: 'FILE' }).join(' '), c] as const))(`D-KCTL-10 ${label}: %s`, async (_, command) => {
    const mark = cluster.requests.all.length;
    const r = await run(command.args({ blob }));
    expect(r.stdout.trim()).toBe(command.printed);
    const posts = cluster.requests.all.slice(mark).filter((x: RequestRecord) => x.method === 'POST');
    expect(posts.map((x) => [x.path, x.query, x.headers.contentType, x.headers.accept, x.code])).toEqual([
      [command.path, 'fieldManager=kubectl-create&fieldValidation=Strict', PROTOBUF, KUBECTL_ACCEPT, 201],
    ]);

    // The same command's JSON, created in another namespace, gives the same object.
    const dryRun = JSON.parse((await run([...command.args({ blob }), '--dry-run=client', '-o', 'json'])).stdout) as Json;
    delete dryRun['metadata']['namespace'];
    await run(['create', '-n', 'twin', '-f', '-'], JSON.stringify(dryRun));
    const twinPost = cluster.requests.all.filter((x) => x.method === 'POST' && x.namespace === 'twin').pop()!;
    expect(twinPost.headers.contentType).toBe('application/json');
    const stored = cluster.store.get(command.ref, command.name);
    expect(stored).toBeDefined();
    expect(comparable(stored, command.allocated)).toEqual(comparable(cluster.store.get(command.ref, command.name, 'twin'), command.allocated));
  });

  it(`D-KCTL-10 ${label}: the stored objects hold what the commands said`, () => {
    const deployment = cluster.store.get({ apiVersion: 'apps/v1', kind: 'Deployment' }, 'web') as Json;
    expect(deployment['spec']['replicas']).toBe(0);
    expect(deployment['spec']['template']['spec']['containers']).toMatchObject([{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }]);
    const configmap = cluster.store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'settings')!;
    expect(configmap['data']).toEqual({ mode: 'fast' });
    expect(configmap['binaryData']).toEqual({ blob: BLOB.toString('base64') });
    const secret = cluster.store.get({ apiVersion: 'v1', kind: 'Secret' }, 'creds')!;
    expect(secret['data']).toEqual({ user: Buffer.from('admin').toString('base64'), key: BLOB.toString('base64') });
    const service = cluster.store.get({ apiVersion: 'v1', kind: 'Service' }, 'edge') as Json;
    expect(service['spec']).toMatchObject({ type: 'NodePort', ports: [{ port: 443, targetPort: 'https' }] });
  });

  it(`D-KCTL-10 ${label}: create namespace`, async () => {
    const r = await run(['create', 'namespace', 'made']);
    expect(r.stdout.trim()).toBe('namespace/made created');
    const post = cluster.requests.filter((x) => x.method === 'POST' && x.path === '/api/v1/namespaces').pop()!;
    expect([post.headers.contentType, post.code]).toEqual([PROTOBUF, 201]);
    expect((cluster.store.get({ apiVersion: 'v1', kind: 'Namespace' }, 'made') as Json)['metadata']['labels']).toEqual({
      'kubernetes.io/metadata.name': 'made',
    });
  });
});
