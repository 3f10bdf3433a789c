/**
 * Real clients against the workload kinds and subresources (D-BI-13, D-BI-17, D-BI-18):
 * `@kubernetes/client-node`'s BatchV1Api in the kubebuilder CronJob tutorial's test case (a
 * CronJob, a Job it owns, the Job's status written as no controller would, both read back with
 * their defaults), and kubectl's commands for the subresources (`logs`, `exec`, `debug`,
 * `create token`, `get cs`) as a user sees them.
 */
import { execFile } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';
import { startTestCluster, type TestCluster } from '../../support/cluster.js';
import { requireKubectl } from '../../support/kubectl.js';

const NS = 'default';

describe('@kubernetes/client-node BatchV1Api: the CronJob tutorial case (D-BI-13, D-BI-14)', () => {
  let cluster: DevCluster;
  let batch: k8s.BatchV1Api;

  beforeAll(async () => {
    cluster = await DevCluster.start();
    const kc = new k8s.KubeConfig();
    kc.loadFromString(cluster.kubeconfig());
    batch = kc.makeApiClient(k8s.BatchV1Api);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('D-BI-13 a CronJob, a Job it owns, the Job marked succeeded through /status, both read back with their defaults', async () => {
    const cronJob = await batch.createNamespacedCronJob({
      namespace: NS,
      body: {
        metadata: { name: 'test-cronjob' },
        spec: {
          schedule: '1 * * * *',
          jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'test-container', image: 'test-image' }] } } } },
        },
      },
    });
    expect(cronJob.spec).toMatchObject({ concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });

    const job = await batch.createNamespacedJob({
      namespace: NS,
      body: {
        metadata: {
          name: 'test-job',
          ownerReferences: [
            { apiVersion: 'batch/v1', kind: 'CronJob', name: 'test-cronjob', uid: cronJob.metadata!.uid!, controller: true, blockOwnerDeletion: true },
          ],
        },
        spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'test-container', image: 'test-image' }] } } },
      },
    });
    expect(job.spec).toMatchObject({ completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, manualSelector: false });
    expect(job.spec!.selector!.matchLabels).toEqual({ 'batch.kubernetes.io/controller-uid': job.metadata!.uid });
    expect(job.status).toBeUndefined();

    const now = '2024-05-01T10:00:00Z';
    await batch.patchNamespacedJobStatus(
      {
        name: 'test-job',
        namespace: NS,
        body: {
          status: {
            startTime: now,
            completionTime: now,
            succeeded: 1,
            conditions: [
              { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: now },
              { type: 'Complete', status: 'True', lastTransitionTime: now },
            ],
          },
        },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );

    const readJob = await batch.readNamespacedJob({ name: 'test-job', namespace: NS });
    expect(readJob.status?.succeeded).toBe(1);
    expect(readJob.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['SuccessCriteriaMet', 'True'],
      ['Complete', 'True'],
    ]);
    expect(readJob.metadata?.ownerReferences?.[0]?.name).toBe('test-cronjob');
    expect(readJob.metadata?.generation).toBe(1);
    const readCronJob = await batch.readNamespacedCronJob({ name: 'test-cronjob', namespace: NS });
    expect(readCronJob.status).toBeUndefined();
    expect(readCronJob.spec?.jobTemplate.spec?.template.spec?.containers[0]?.imagePullPolicy).toBe('Always');

    await batch.deleteNamespacedCronJob({ name: 'test-cronjob', namespace: NS, propagationPolicy: 'Background' });
    await cluster.settle();
    expect((await batch.listNamespacedJob({ namespace: NS })).items).toHaveLength(0);
  });
});

describe('kubectl and the subresources (D-BI-17, D-BI-18)', () => {
  let test: TestCluster;
  let kubectlPath: string;

  beforeAll(async () => {
    kubectlPath = requireKubectl();
    test = await startTestCluster({ prefix: 'kubectl-subresources-' });
    await test.cluster.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: NS },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
  });
  afterAll(async () => {
    await test?.stop();
  });

  /** kubectl, run without blocking the cluster that lives in this process. */
  const kubectl = (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(kubectlPath, ['--kubeconfig', test.kubeconfig, ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });

  it('D-BI-18 kubectl exec fails with the server error; kubectl logs prints nothing', async () => {
    const exec = await kubectl('exec', 'p', '--', 'ls');
    expect(exec.code).toBe(1);
    expect(exec.stderr).toContain('Error from server (BadRequest): pod p does not have a host assigned');
    const logs = await kubectl('logs', 'p');
    expect(logs).toMatchObject({ code: 0, stdout: '' });
  });

  it('D-BI-17 kubectl debug adds an ephemeral container, and kubectl create token prints a token', async () => {
    const debug = await kubectl('debug', 'p', '--image=busybox:1.36', '--container=dbg', '--profile=general');
    expect(debug.code, debug.stderr).toBe(0);
    const pod = test.cluster.store.get({ apiVersion: 'v1', kind: 'Pod' }, 'p', NS)!;
    expect((pod['spec'] as { ephemeralContainers: { name: string }[] }).ephemeralContainers.map((c) => c.name)).toEqual(['dbg']);
    const token = await kubectl('create', 'token', 'default', '--duration=1h');
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('D-BI-18 kubectl get componentstatuses prints the three components and the deprecation warning', async () => {
    const cs = await kubectl('get', 'componentstatuses');
    expect(cs.code, cs.stderr).toBe(0);
    expect(cs.stderr).toContain('Warning: v1 ComponentStatus is deprecated in v1.19+');
    expect(cs.stdout.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+MESSAGE\s+ERROR/);
    expect(cs.stdout).toMatch(/scheduler\s+Unhealthy\s+Get "https:\/\/127\.0\.0\.1:10259\/healthz"/);
    expect(cs.stdout).toMatch(/etcd-0\s+Healthy\s+ok/);
  });
});
