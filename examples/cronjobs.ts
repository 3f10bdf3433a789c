/**
 * The CronJob of the kubebuilder book (`cronjobs.batch.tutorial.kopf-gen.dev/v1`, CRD in
 * fixtures/crds/cronjobs.yaml), typed for examples/20-reconcile and docs/reconcile.md.
 *
 * Written by hand, with the fields and the comments of the book's `cronjob_types.go`: the CRD
 * embeds a copy of the built-in JobTemplateSpec in `spec.jobTemplate`, typed here as the built-in
 * type itself, so that a Job built from it needs no cast. In your own project, the descriptor and
 * the types come from `src/generated/` (`kopf-gen generate`).
 */
import type { JobTemplateSpec } from 'kubernetes-types/batch/v1.js';
import type { ObjectReference } from 'kubernetes-types/core/v1.js';

import { resource, type KubernetesObject } from 'kopf-gen/runtime';

export interface CronJobSpec {
  /** The schedule in Cron format (five fields, UTC). */
  schedule: string;
  /** Deadline in seconds for starting the job if it misses its scheduled time; missed jobs beyond it are skipped. */
  startingDeadlineSeconds?: number;
  /**
   * How to treat concurrent executions of a Job: `Allow` (default) runs them concurrently, `Forbid`
   * skips a new run while the previous one has not finished, `Replace` cancels the running one.
   */
  concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
  /** Suspends subsequent executions; already started ones go on. */
  suspend?: boolean;
  /** The Job to create at each scheduled time. */
  jobTemplate: JobTemplateSpec;
  /** How many successful finished Jobs to keep (absent: all). */
  successfulJobsHistoryLimit?: number;
  /** How many failed finished Jobs to keep (absent: all). */
  failedJobsHistoryLimit?: number;
}

export interface CronJobStatus {
  /** The currently running Jobs. */
  active?: ObjectReference[];
  /** When the Job was last successfully scheduled (RFC 3339). */
  lastScheduleTime?: string;
}

export interface CronJob extends KubernetesObject {
  apiVersion: 'batch.tutorial.kopf-gen.dev/v1';
  kind: 'CronJob';
  spec: CronJobSpec;
  status?: CronJobStatus;
}

export const CronJobs = resource<CronJob>({
  group: 'batch.tutorial.kopf-gen.dev',
  version: 'v1',
  plural: 'cronjobs',
  kind: 'CronJob',
  namespaced: true,
  singular: 'cronjob',
  statusSubresource: true,
});
