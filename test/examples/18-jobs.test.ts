/**
 * examples/18-jobs, loaded from its file as `kopf-gen run examples/18-jobs/example.ts` loads it,
 * run in-process with `KopfRunner` against a devcluster: the create handler creates an adopted
 * batch Job, which the devcluster stores with the defaults and generated fields of a real 1.32 API
 * server (D-BI-13); the test plays the Job controller and writes the Job's status; the field handler
 * on Jobs reports the success into the parent's status.
 */
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { OperatorRegistry } from 'kopf-gen/runtime';
import { KopfRunner } from 'kopf-gen/testing';

import { eventually, KEX, ROOT, useExampleCluster } from './support.js';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' } as const;
const JOBS = { group: 'batch', version: 'v1', resource: 'jobs' } as const;
type Json = Record<string, any>;

describe('examples/18-jobs', () => {
  const env = useExampleCluster();

  it('D-BI-13 18-jobs: a Job child is stored with upstream defaults; its success, written by the test, reaches the parent', async () => {
    const { cluster, kubeconfig } = env;
    const file = path.join(ROOT, 'examples', '18-jobs', 'example.ts');
    const runner = new KopfRunner(['run', '-A', '--standalone', '--verbose', file], { registry: new OperatorRegistry(), timeout: 10, kubeconfig });
    await runner.start();
    try {
      const parent = (await cluster.store.create({
        apiVersion: 'kopf.dev/v1',
        kind: 'KopfExample',
        metadata: { name: 'kex-job', namespace: 'default' },
        spec: { field: 'hello' },
      })) as Json;
      const owned = (): Json[] =>
        cluster.store
          .list(JOBS, 'default')
          .filter((j) => ((j['metadata'] as Json)['ownerReferences'] ?? []).some((r: Json) => r['uid'] === parent['metadata']['uid']));
      await eventually(() => owned().length === 1, 'the Job child');
      const job = owned()[0]!;
      const name = job['metadata']['name'] as string;
      expect(name.startsWith('kex-job-')).toBe(true);
      // The defaults and generated fields a real API server fills in.
      const uid = job['metadata']['uid'] as string;
      expect(job['spec']).toMatchObject({
        backoffLimit: 2,
        completions: 1,
        parallelism: 1,
        completionMode: 'NonIndexed',
        suspend: false,
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
      });
      expect(job['spec']['template']['metadata']['labels']).toMatchObject({
        'batch.kubernetes.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': name,
        'job-name': name,
      });
      expect(job['spec']['template']['spec']['containers'][0]).toMatchObject({ imagePullPolicy: 'Always', terminationMessagePolicy: 'File' });
      expect(job).not.toHaveProperty('status');

      // No Job controller runs: the test writes what a succeeded Job's status is.
      const now = '2030-01-01T00:00:10Z';
      await cluster.store.patch(
        JOB,
        name,
        {
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
        { namespace: 'default', subresource: 'status' },
      );
      const status = (): Json | undefined => cluster.store.get(KEX, 'kex-job', 'default')?.['status'] as Json | undefined;
      await eventually(() => status()?.['jobSucceeded'] === name, 'the success in the parent status');
      expect(status()!['run_job']).toEqual({ job: name });
      await eventually(() => runner.output.includes(`Job ${name} of kex-job has succeeded.`), "the handler's log line");
    } finally {
      await runner.stop();
    }
    expect(runner.exitCode).toBe(0);
  });
});
