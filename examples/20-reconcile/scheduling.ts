/**
 * The pure half of the CronJob controller: what the kubebuilder book's `Reconcile` computes from a
 * CronJob, its Jobs and the time, with no I/O — which Jobs are running or finished, when the last
 * run was missed and the next is due, which finished Jobs fall out of the history, and the Job of
 * a scheduled run. `example.ts` is the other half: it reads, writes and decides with these.
 *
 * Times come from the caller (the handler's `now`, the operator's clock), never from `Date.now()`,
 * so that the example runs on a virtual clock in its test. Schedules are read by `croner` in UTC
 * with five fields, as the book's `cron.ParseStandard` reads them.
 */
import { Cron } from 'croner';

import { buildOwnerReference, type Job } from 'kopf-gen/runtime';

import type { CronJob } from '../cronjobs.js';

/** The annotation that records, on each Job, the scheduled time it was created for (RFC 3339). */
export const SCHEDULED_AT = 'batch.tutorial.kopf-gen.dev/scheduled-at';

/** More than this many missed runs since the last one is a clock skew or a bad schedule, not a backlog. */
export const MAX_MISSED = 100;

/** Why no schedule could be computed; `code` is literal, for the handler to tell it apart. */
export class ScheduleError extends Error {
  constructor(
    readonly code: 'BAD_SCHEDULE' | 'TOO_MANY_MISSED',
    message: string,
  ) {
    super(message);
    this.name = 'ScheduleError';
  }
}

/** A time as Kubernetes writes one: RFC 3339 in UTC, to the second. */
export function rfc3339(time: Date): string {
  return `${time.toISOString().slice(0, 19)}Z`;
}

/** The later of a time and a recorded RFC 3339 time (either may be absent). */
export function latest(time: Date | undefined, recorded: string | undefined): Date | undefined {
  const other = recorded ? new Date(recorded) : undefined;
  if (!other || Number.isNaN(other.getTime())) return time;
  return !time || other > time ? other : time;
}

/** `Complete` or `Failed` once a Job has finished (the condition is `True`), else `undefined`. */
export function finishedAs(job: Job): 'Complete' | 'Failed' | undefined {
  for (const condition of job.status?.conditions ?? []) {
    if ((condition.type === 'Complete' || condition.type === 'Failed') && condition.status === 'True') return condition.type;
  }
  return undefined;
}

/** The scheduled time a Job was created for, from its annotation. */
export function scheduledTimeOf(job: Job): Date | undefined {
  const text = job.metadata?.annotations?.[SCHEDULED_AT];
  if (!text) return undefined;
  const time = new Date(text);
  return Number.isNaN(time.getTime()) ? undefined : time;
}

/** A CronJob's Jobs by state, and the latest scheduled time among them. */
export interface Classified {
  readonly active: Job[];
  readonly successful: Job[];
  readonly failed: Job[];
  readonly mostRecent: Date | undefined;
}

export function classify(jobs: readonly Job[]): Classified {
  const active: Job[] = [];
  const successful: Job[] = [];
  const failed: Job[] = [];
  let mostRecent: Date | undefined;
  for (const job of jobs) {
    const state = finishedAs(job);
    (state === 'Complete' ? successful : state === 'Failed' ? failed : active).push(job);
    const scheduled = scheduledTimeOf(job);
    if (scheduled && (!mostRecent || scheduled > mostRecent)) mostRecent = scheduled;
  }
  return { active, successful, failed, mostRecent };
}

/**
 * The finished Jobs beyond a history limit, oldest first (by `status.startTime`, as the book
 * sorts them; a Job never started counts as oldest). No limit: none.
 */
export function beyondHistory(finished: readonly Job[], limit: number | undefined): Job[] {
  if (limit === undefined) return [];
  const started = (job: Job): number => (job.status?.startTime ? Date.parse(job.status.startTime) : 0);
  const sorted = [...finished].sort((a, b) => started(a) - started(b));
  return sorted.slice(0, Math.max(0, sorted.length - limit));
}

/** The last run missed since the previous one (if any), and the next run after `now`. */
export interface Schedule {
  readonly missed: Date | undefined;
  readonly next: Date;
}

/** Reads a schedule: five fields, UTC. */
export function parseSchedule(text: string): Cron {
  try {
    return new Cron(text, { timezone: 'UTC', mode: '5-part', paused: true });
  } catch (error) {
    throw new ScheduleError('BAD_SCHEDULE', `Unparseable schedule ${JSON.stringify(text)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The book's `getNextSchedule`: runs are counted from the last scheduled time (or the CronJob's
 * creation), but not from earlier than `startingDeadlineSeconds` ago — older runs could not start
 * anyway. The latest run due by `now` is the one to start; the next after `now` is when to come back.
 *
 * @throws ScheduleError `BAD_SCHEDULE`, or `TOO_MANY_MISSED` beyond `MAX_MISSED` missed runs.
 */
export function nextSchedule(cronJob: CronJob, now: Date): Schedule {
  const cron = parseSchedule(cronJob.spec.schedule);
  const last = cronJob.status?.lastScheduleTime ?? cronJob.metadata?.creationTimestamp;
  let earliest = last ? new Date(last) : now;
  const deadline = cronJob.spec.startingDeadlineSeconds;
  if (deadline !== undefined) {
    const limit = new Date(now.getTime() - deadline * 1000);
    if (limit > earliest) earliest = limit;
  }
  const after = (time: Date): Date => {
    const next = cron.nextRun(time);
    if (!next) throw new ScheduleError('BAD_SCHEDULE', `The schedule ${JSON.stringify(cronJob.spec.schedule)} has no run after ${time.toISOString()}.`);
    return next;
  };
  let missed: Date | undefined;
  let count = 0;
  for (let time = after(earliest); time <= now; time = after(time)) {
    missed = time;
    if (++count > MAX_MISSED) {
      throw new ScheduleError('TOO_MANY_MISSED', `More than ${MAX_MISSED} missed start times: set or decrease startingDeadlineSeconds, or check clock skew.`);
    }
  }
  return { missed, next: after(now) };
}

/** The Job of the run scheduled at `scheduled`: named after the CronJob and the time, so that a run is created once. */
export function jobFor(cronJob: CronJob, scheduled: Date): Job {
  const template = cronJob.spec.jobTemplate;
  const name = `${cronJob.metadata?.name}-${Math.floor(scheduled.getTime() / 1000)}`;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: cronJob.metadata?.namespace,
      labels: { ...template.metadata?.labels },
      annotations: { ...template.metadata?.annotations, [SCHEDULED_AT]: rfc3339(scheduled) },
      ownerReferences: [buildOwnerReference(cronJob)],
    },
    spec: structuredClone(template.spec),
  };
}
