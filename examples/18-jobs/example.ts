/**
 * Jobs as children: every KopfExample runs a batch Job made from its spec, and hears back when the
 * Job has finished — the shape of most operators that manage built-in children (a backup, a
 * migration, the kubebuilder book's CronJob).
 *
 * The create handler builds a `Job` (typed by `kubernetes-types`), makes it the parent's child with
 * `adopt()` (owner reference, generated name, namespace, labels), and creates it with the
 * operator's client. A field handler on `builtins.Jobs` watches every Job's `status.succeeded`;
 * for the Jobs a KopfExample owns, it writes the outcome into the parent's status. On the
 * embedded devcluster, as in envtest, no Job controller runs: the Job is stored with the defaults
 * a real API server fills in (its generated selector and labels, `backoffLimit`, `completions`…),
 * and its status changes when something writes it — in the example's test, the test itself.
 */
import { adopt, builtins, on, type Job } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

on.create(KopfExamples, async function run_job({ spec, client, logger }) {
  const job: Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    spec: {
      backoffLimit: 2,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'work', image: 'busybox', command: ['sh', '-c', `echo ${spec.field ?? 'nothing to do'}`] }],
        },
      },
    },
  };
  adopt(job);
  const created = await client.create(builtins.Jobs, job);
  logger.info(`Job ${created.metadata?.name} is created.`);
  return { job: created.metadata?.name };
});

/** The name of the KopfExample that owns a Job, if one does. */
const parentOf = (job: Job): string | undefined => job.metadata?.ownerReferences?.find((ref) => ref.kind === 'KopfExample')?.name;

on.field(
  builtins.Jobs,
  'status.succeeded',
  { when: ({ body }) => parentOf(body) !== undefined },
  async function job_succeeded({ body, newValue, namespace, client, logger }) {
    if (!newValue) return;
    const parent = parentOf(body)!;
    await client.patch(KopfExamples, parent, { status: { jobSucceeded: body.metadata?.name } }, { namespace: namespace ?? undefined, subresource: 'status' });
    logger.info(`Job ${body.metadata?.name} of ${parent} has succeeded.`);
  },
);
