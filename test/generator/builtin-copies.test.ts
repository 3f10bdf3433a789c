/**
 * A CRD's embedded copy of a built-in spec (R-TYPES-302): kubebuilder's CronJob carries a Job's
 * spec in `spec.jobTemplate.spec`, its schema inlined from batch/v1 JobTemplateSpec as controller-gen
 * writes it (fixtures/crds/cronjobs.yaml, derived by scripts/derive-cronjob-crd.mjs). The type the
 * generator emits for it must be accepted where a Job is created, without a cast; and, being a
 * custom object's copy (quantities may be numbers), it must not pass for a Job read from the server.
 */
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as YAML from 'yaml';
import { startHarness } from '../devcluster/conformance/harness.js';
import * as support from './support.js';

const CRD = fs.readFileSync(path.join(support.REPO_ROOT, 'fixtures/crds/cronjobs.yaml'), 'utf8');

describe('embedded copies of built-in specs', () => {
  it('R-TYPES-302: the CronJob fixture is what its script derives from the OpenAPI document', () => {
    const script = path.join(support.REPO_ROOT, 'scripts/derive-cronjob-crd.mjs');
    const run = childProcess.spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('R-TYPES-302: the API server keeps a quantity written as a number in the copy, defaults it, and prunes the template’s metadata', async () => {
    const h = await startHarness({ widgets: false });
    try {
      const created = await h.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', YAML.parse(CRD));
      expect(created.status, created.text).toBe(201);
      await h.cluster.settle();
      const container = { name: 'hello', image: 'busybox', ports: [{ containerPort: 80 }], resources: { limits: { cpu: 1, memory: '64Mi' } } };
      const cronJob = {
        apiVersion: 'batch.tutorial.kopf-gen.dev/v1',
        kind: 'CronJob',
        metadata: { name: 'hello' },
        spec: {
          schedule: '*/1 * * * *',
          jobTemplate: { metadata: { labels: { app: 'hello' } }, spec: { template: { spec: { containers: [container], restartPolicy: 'OnFailure' } } } },
        },
      };
      const stored = await h.post('/apis/batch.tutorial.kopf-gen.dev/v1/namespaces/default/cronjobs', cronJob);
      expect(stored.status, stored.text).toBe(201);
      const jobTemplate = stored.json['spec']['jobTemplate'];
      expect(jobTemplate['metadata']).toEqual({});
      expect(jobTemplate['spec']['template']['spec']['containers'][0]['resources']['limits']).toEqual({ cpu: 1, memory: '64Mi' });
      expect(jobTemplate['spec']['template']['spec']['containers'][0]['ports']).toEqual([{ containerPort: 80, protocol: 'TCP' }]);
    } finally {
      await h.stop();
    }
  });

  it('R-TYPES-302: a CronJob’s jobTemplate.spec creates a Job without a cast; it is no Job read from the server', { timeout: 120_000 }, () => {
    const [module] = support.generate([{ path: 'crds/cronjobs.yaml', text: CRD }]).modules;
    expect(module!.fileName).toBe('cronjobs.batch.tutorial.kopf-gen.dev.v1.ts');
    const use = `import { builtins, on } from 'kopf-gen/runtime';
import type { Job } from 'kopf-gen/runtime';
import { CronJobs } from './cronjobs.batch.tutorial.kopf-gen.dev.v1.js';

on.create(CronJobs, async function run({ spec, name, namespace, client }) {
  const jobSpec = spec?.jobTemplate.spec;
  if (jobSpec === undefined) return;
  await client.create(builtins.Jobs, { metadata: { name: \`\${name}-1\`, namespace }, spec: jobSpec });
  // @ts-expect-error: a custom object keeps a quantity written as a number; a Job read back has strings
  const read: Job['spec'] = jobSpec;
  return read;
});
`;
    expect(support.typecheck([module!, { fileName: 'use.ts', text: use }])).toEqual([]);
  });
});
