/**
 * A CRD's embedded copy of a built-in spec (R-TYPES-302): kubebuilder's CronJob carries a Job's
 * spec in `spec.jobTemplate.spec`, its schema inlined from batch/v1 JobTemplateSpec as controller-gen
 * writes it (fixtures/crds/cronjobs.yaml, derived by scripts/derive-cronjob-crd.mjs). The type the
 * generator emits for it must be accepted where a Job is created, without a cast; and, being a
 * custom object's copy (quantities may be numbers), it must not pass for a Job read from the server.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as support from './support.js';

const CRD = fs.readFileSync(path.join(support.REPO_ROOT, 'fixtures/crds/cronjobs.yaml'), 'utf8');

describe('embedded copies of built-in specs', () => {
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
