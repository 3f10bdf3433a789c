/**
 * CronJobs (D-BI-14): stored only — no Jobs are created on schedule, and `status` changes only
 * when a client writes `/status`. The strategy applies upstream's defaults (`concurrencyPolicy:
 * Allow`, `suspend: false`, history limits 3 and 1), the job template's pod-template defaults (a
 * job template gets no Job defaults: those belong to the Job the controller would create), and
 * validates the schedule and time zone with upstream's messages (cronschedule.ts), the job template
 * as a Job spec without a selector, and the 52-character name limit of create.
 */
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as objects from '../api/objects.js';
import * as cronschedule from './cronschedule.js';
import * as jobs from './jobs.js';
import * as strategies from './strategies.js';
import * as workloads from './workloads.js';
import type { JsonObject } from '../json.js';
type FieldError = fielderrors.FieldError;

const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace'];
/** The controller appends an 11-character suffix to a CronJob's name for its Jobs (≤ 63). */
const MAX_NAME_LENGTH = 52;
const TIME_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');

/** The defaults of D-BI-14 (job template included). Returns a copy. */
export function defaultCronJobSpec(spec: JsonObject): JsonObject {
  const out: JsonObject = { ...spec };
  if (!out['concurrencyPolicy']) out['concurrencyPolicy'] = 'Allow';
  out['suspend'] ??= false;
  out['successfulJobsHistoryLimit'] ??= 3;
  out['failedJobsHistoryLimit'] ??= 1;
  const template = strategies.mapOf(out, 'jobTemplate');
  out['jobTemplate'] = { ...template, spec: jobs.defaultJobSpec(strategies.mapOf(template, 'spec'), { job: false }) };
  return out;
}

/** upstream `validateTimeZone`: IANA names only, not `Local`. */
export function timeZoneErrors(zone: unknown): FieldError[] {
  if (zone === undefined || zone === null) return [];
  const at = 'spec.timeZone';
  const name = String(zone);
  if (name === '') return [fielderrors.invalid(at, name, 'timeZone must be nil or non-empty string')];
  for (const part of name.split('/')) {
    if (part === '.' || part === '..' || part.startsWith('-') || !TIME_ZONE_PART.test(part))
      return [fielderrors.invalid(at, name, `unknown time zone ${name}`)];
  }
  const errors: FieldError[] = [];
  if (name.toLowerCase() === 'local')
    errors.push(fielderrors.invalid(at, name, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  const problem = name.toLowerCase() === 'local' ? undefined : cronschedule.timeZoneProblem(name);
  if (problem) errors.push(fielderrors.invalid(at, name, problem));
  return errors;
}

/** The schedule: required, cron syntax, and no `TZ=`/`CRON_TZ=` (the `timeZone` field replaces them). */
function scheduleErrors(spec: JsonObject, old: JsonObject | undefined): FieldError[] {
  const schedule = strategies.stringOf(spec, 'schedule');
  const at = 'spec.schedule';
  if (!schedule) return [fielderrors.required(at)];
  const errors: FieldError[] = [];
  const problem = cronschedule.scheduleError(schedule);
  if (problem) errors.push(fielderrors.invalid(at, schedule, problem));
  const allowTZ = old !== undefined && strategies.stringOf(old, 'schedule').includes('TZ');
  if (allowTZ && schedule.includes('TZ') && spec['timeZone'] !== undefined)
    errors.push(fielderrors.invalid(at, schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
  else if (!allowTZ && schedule.includes('TZ'))
    errors.push(fielderrors.invalid(at, schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  return errors;
}

/** upstream `ValidateJobTemplateSpec`: a Job spec whose selector is always generated. */
function jobTemplateErrors(spec: JsonObject): FieldError[] {
  const path = 'spec.jobTemplate.spec';
  const jobSpec = strategies.mapOf(strategies.mapOf(spec, 'jobTemplate'), 'spec');
  const errors = jobs.jobSpecErrors(jobSpec, path);
  if (jobSpec['selector'] !== undefined) errors.push(fielderrors.invalid(`${path}.selector`, jobSpec['selector'], '`selector` will be auto-generated'));
  if (jobSpec['manualSelector'] === true) errors.push(fielderrors.notSupported(`${path}.manualSelector`, true, ['nil', 'false']));
  return errors;
}

/** Validates a (defaulted) CronJob; `old` is the stored one on update. */
export function validateCronJob(cronJob: JsonObject, old: JsonObject | undefined): FieldError[] {
  const spec = specOf(cronJob);
  const oldSpec = old ? specOf(old) : undefined;
  const errors = scheduleErrors(spec, oldSpec);
  errors.push(...workloads.nonNegativeErrors(spec, ['startingDeadlineSeconds']));
  if (!oldSpec || strategies.changed(oldSpec['timeZone'], spec['timeZone'])) errors.push(...timeZoneErrors(spec['timeZone']));
  const policy = spec['concurrencyPolicy'];
  if (!policy) errors.push(fielderrors.required('spec.concurrencyPolicy'));
  else if (!CONCURRENCY_POLICIES.includes(policy as string)) errors.push(fielderrors.notSupported('spec.concurrencyPolicy', policy, CONCURRENCY_POLICIES));
  errors.push(...jobTemplateErrors(spec));
  errors.push(...workloads.nonNegativeErrors(spec, ['successfulJobsHistoryLimit', 'failedJobsHistoryLimit']));
  const name = objects.nameOf(cronJob);
  if (!old && name.length > MAX_NAME_LENGTH) errors.push(fielderrors.invalid('metadata.name', name, `must be no more than ${MAX_NAME_LENGTH} characters`));
  return errors;
}

function withDefaults(obj: JsonObject): JsonObject {
  return { ...obj, spec: defaultCronJobSpec(specOf(obj)) };
}

/** The CronJob strategy; see the module comment. */
export const cronJobStrategy: resources.Strategy = workloads.workloadStrategy('CronJob', { defaults: withDefaults, validate: validateCronJob });
