/**
 * The CronJob of the kubebuilder book as ONE reconcile handler that owns Jobs: schedule,
 * concurrency policy (Allow, Forbid, Replace), suspend, starting deadline, history limits,
 * `status.active` and `status.lastScheduleTime` — with no timer, no polling and no finalizer.
 *
 * `on.reconcile` is level-based: the handler is called with the CronJob's newest state and the
 * Jobs it controls (`owned`, from the watch cache) whenever the CronJob or one of its Jobs
 * changes, and again when the `requeueAfter` it returned comes due — here, the next scheduled
 * run, computed from `now`, the operator's clock. Nothing is stored but what the handler writes:
 * the Jobs and the status. No `finalize` is given, so no finalizer is added: deleting a CronJob
 * never waits for the operator, and its Jobs go with it by garbage collection (owner references).
 *
 * The steps are the book's `Reconcile`, in its order; the pure computations are in
 * `scheduling.ts`. One difference: the status is written at the end, after this call's own
 * writes, because in kopf-gen a reconcile call's own writes do not trigger another call (in
 * controller-runtime the new Job's event would, and the next call would write it).
 */
import { ApiConflictError, ApiNotFoundError, builtins, buildObjectReference, on, type Job } from 'kopf-gen/runtime';

import { CronJobs } from '../cronjobs.js';
import { beyondHistory, classify, jobFor, latest, nextSchedule, rfc3339, ScheduleError } from './scheduling.js';

on.reconcile(CronJobs, { owns: [builtins.Jobs] }, async function cronjob({ body, spec, status, patch, owned, client, logger, now }) {
  const [jobs] = owned;
  const namespace = body.metadata?.namespace;

  // 1. The Jobs by state; the latest run they were created for.
  const { active, successful, failed, mostRecent } = classify(jobs);
  const running = new Map(active.map((job) => [job.metadata?.name, job]));

  // 2. Finished Jobs beyond the history limits go (their pods with them).
  const remove = async (job: Job, why: string): Promise<void> => {
    const name = job.metadata?.name;
    if (!name) return;
    try {
      await client.delete(builtins.Jobs, name, { namespace, propagationPolicy: 'Background' });
      logger.debug(`Deleted ${why} Job ${name}.`);
    } catch (error) {
      if (!(error instanceof ApiNotFoundError)) throw error; // gone already: what was wanted
    }
  };
  for (const job of beyondHistory(failed, spec.failedJobsHistoryLimit)) await remove(job, 'old failed');
  for (const job of beyondHistory(successful, spec.successfulJobsHistoryLimit)) await remove(job, 'old successful');

  // The status, as the book writes it: what runs, and the last scheduled time.
  // (Never older than the one recorded: a history limit of 0 may have deleted the newest Job.)
  let lastScheduled = latest(mostRecent, status?.lastScheduleTime);
  const writeStatus = (): void => {
    const refs = [...running.values()].map((job) => ({ ...buildObjectReference(job), resourceVersion: job.metadata?.resourceVersion }));
    patch.status = { active: refs.length ? refs : null, lastScheduleTime: lastScheduled ? rfc3339(lastScheduled) : null };
  };

  // 3. Suspended: nothing starts, and nothing to come back for until the spec changes.
  if (spec.suspend) {
    writeStatus();
    logger.debug('Suspended: no run is started.');
    return;
  }

  // 4. The run due now (if one was missed) and the next one.
  let schedule: ReturnType<typeof nextSchedule>;
  try {
    schedule = nextSchedule(body, now);
  } catch (error) {
    writeStatus();
    if (error instanceof ScheduleError) {
      // A schedule that cannot be read will not get better by retrying: wait for the next change.
      logger.error(error.message);
      return;
    }
    throw error;
  }
  const requeue = { requeueAfter: Math.max(1, (schedule.next.getTime() - now.getTime()) / 1000) };
  const missed = schedule.missed;
  if (!missed) {
    writeStatus();
    return requeue;
  }

  // 5. Too late to start the missed run: skip it.
  const deadline = spec.startingDeadlineSeconds;
  if (deadline !== undefined && missed.getTime() + deadline * 1000 < now.getTime()) {
    logger.info(`Missed the start of the run at ${rfc3339(missed)}: skipped (deadline ${deadline} s).`);
    writeStatus();
    return requeue;
  }

  // 6. The concurrency policy.
  const policy = spec.concurrencyPolicy ?? 'Allow';
  if (policy === 'Forbid' && running.size > 0) {
    logger.info(`The run at ${rfc3339(missed)} is skipped: ${running.size} Job(s) still running (Forbid).`);
    writeStatus();
    return requeue;
  }
  if (policy === 'Replace') {
    for (const [name, job] of running) {
      await remove(job, 'running (Replace)');
      running.delete(name);
    }
  }

  // 7. The Job of the run, created once: its name is the run's time.
  const job = jobFor(body, missed);
  try {
    const created = await client.create(builtins.Jobs, job);
    running.set(created.metadata?.name, created);
    logger.info(`Created Job ${created.metadata?.name} for the run at ${rfc3339(missed)}.`);
  } catch (error) {
    if (!(error instanceof ApiConflictError)) throw error;
    logger.debug(`Job ${job.metadata?.name} exists already.`);
  }
  lastScheduled = missed;
  writeStatus();
  return requeue;
});
