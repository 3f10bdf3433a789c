/**
 * The rules of a Job's `/status` writes (D-BI-13) as a 1.32 API server checks them: since no Job
 * controller runs, every status a test sees is one a client wrote, so the devcluster refuses what a
 * real cluster refuses — a finished Job without `startTime`, `Complete` without `completionTime`
 * or without `SuccessCriteriaMet`, `Failed` without `FailureTarget`, counters that go down,
 * terminal conditions that are removed. Most rules apply only when the fields they read changed,
 * as upstream's, so unrelated status updates of a Job stay possible.
 */
import * as fielderrors from '../meta/fielderrors.js';
import * as times from '../meta/times.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const STATUS = 'status';
const CONDITIONS = 'status.conditions';

const specOf = (job: JsonObject): JsonObject => strategies.mapOf(job, 'spec');
const statusOf = (job: JsonObject): JsonObject => strategies.mapOf(job, 'status');

/** Whether the Job has a condition of `type` with status `True`. */
export function conditionTrue(job: JsonObject, type: string): boolean {
  return strategies.listOf(statusOf(job), 'conditions').some((c) => json.isObject(c) && c['type'] === type && c['status'] === 'True');
}

const isComplete = (job: JsonObject): boolean => conditionTrue(job, 'Complete');
const isFailed = (job: JsonObject): boolean => conditionTrue(job, 'Failed');
const isFinished = (job: JsonObject): boolean => isComplete(job) || isFailed(job);
const count = (status: JsonObject, key: string): number => (strategies.isInteger(status[key]) ? status[key] : 0);
const timeOf = (status: JsonObject, key: string): number | undefined => times.parseTime(status[key])?.getTime();

/** What changed between the stored and the new status, as upstream's strategy computes its triggers. */
function triggersOf(job: JsonObject, old: JsonObject) {
  const s = statusOf(job);
  const o = statusOf(old);
  const changed = (key: string): boolean => strategies.changed(s[key], o[key]);
  return {
    finished: isFinished(job) !== isFinished(old),
    complete: isComplete(job) !== isComplete(old),
    failed: isFailed(job) !== isFailed(old),
    failureTarget: conditionTrue(job, 'FailureTarget') !== conditionTrue(old, 'FailureTarget'),
    successCriteria: conditionTrue(job, 'SuccessCriteriaMet') !== conditionTrue(old, 'SuccessCriteriaMet'),
    completedIndexes: changed('completedIndexes'),
    failedIndexes: changed('failedIndexes'),
    active: changed('active'),
    startTime: changed('startTime'),
    completionTime: changed('completionTime'),
    uncounted: changed('uncountedTerminatedPods'),
    ready: changed('ready'),
    terminating: changed('terminating'),
  };
}

function countersErrors(status: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of ['active', 'succeeded', 'failed', 'ready', 'terminating']) {
    const v = status[key];
    if (strategies.isInteger(v) && v < 0) errors.push(fielderrors.invalid(`${STATUS}.${key}`, v, 'must be greater than or equal to 0'));
  }
  const seen = new Set<string>();
  for (const part of ['succeeded', 'failed']) {
    strategies.listOf(strategies.mapOf(status, 'uncountedTerminatedPods'), part).forEach((uid, i) => {
      const at = fielderrors.child(`${STATUS}.uncountedTerminatedPods.${part}`, i);
      if (uid === '') errors.push(fielderrors.invalid(at, uid, 'must not be empty'));
      else if (seen.has(String(uid))) errors.push(fielderrors.duplicate(at, uid));
      else seen.add(String(uid));
    });
  }
  return errors;
}

/**
 * Parses `completedIndexes`/`failedIndexes` (`1,3-5,7`): ascending, non-overlapping, below
 * `completions`; returns the problem, or undefined.
 */
export function indexesProblem(text: string, completions: number): string | undefined {
  if (text === '') return undefined;
  let previous = -1;
  for (const interval of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(interval);
    if (!m) return `cannot convert string to integer for index: ${JSON.stringify(interval.split('-')[0])}`;
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    if (last >= completions) return `too large index: ${last}`;
    if (first > last) return `non-increasing order, previous: ${first}, current: ${last}`;
    if (first <= previous) return `non-increasing order, previous: ${previous}, current: ${first}`;
    previous = last;
  }
  return undefined;
}

function indexesErrors(job: JsonObject, t: ReturnType<typeof triggersOf>): FieldError[] {
  const errors: FieldError[] = [];
  const spec = specOf(job);
  const status = statusOf(job);
  const completions = spec['completions'];
  const indexed = spec['completionMode'] === 'Indexed';
  const completed = strategies.stringOf(status, 'completedIndexes');
  const failed = status['failedIndexes'];
  if (t.completedIndexes && strategies.isInteger(completions)) {
    const problem = indexesProblem(completed, completions);
    if (problem) errors.push(fielderrors.invalid(`${STATUS}.completedIndexes`, completed, `error parsing completedIndexes: ${problem}`));
  }
  if (t.failedIndexes && strategies.isInteger(completions) && spec['backoffLimitPerIndex'] !== undefined && typeof failed === 'string') {
    const problem = indexesProblem(failed, completions);
    if (problem) errors.push(fielderrors.invalid(`${STATUS}.failedIndexes`, failed, `error parsing failedIndexes: ${problem}`));
  }
  if (t.completedIndexes && completed !== '' && !indexed)
    errors.push(fielderrors.invalid(`${STATUS}.completedIndexes`, completed, 'cannot set non-empty completedIndexes when non-indexed completion mode'));
  if (t.failedIndexes && spec['backoffLimitPerIndex'] === undefined && failed !== undefined)
    errors.push(fielderrors.invalid(`${STATUS}.failedIndexes`, failed, 'cannot set non-null failedIndexes when backoffLimitPerIndex is null'));
  return errors;
}

function conditionErrors(job: JsonObject, t: ReturnType<typeof triggersOf>): FieldError[] {
  const errors: FieldError[] = [];
  const complete = isComplete(job);
  const failed = isFailed(job);
  const failureTarget = conditionTrue(job, 'FailureTarget');
  const successCriteria = conditionTrue(job, 'SuccessCriteriaMet');
  if ((t.complete || t.failed) && complete && failed)
    errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot set Complete=True and Failed=true conditions'));
  if ((t.complete || t.failureTarget) && complete && failureTarget)
    errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot set Complete=True and FailureTarget=true conditions'));
  if ((t.failed || t.failedIndexes) && failed && !failureTarget)
    errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot set Failed=True condition without the FailureTarget=true condition'));
  if ((t.complete || t.successCriteria) && complete && !successCriteria)
    errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot set Complete=True condition without the SuccessCriteriaMet=true condition'));
  if (successCriteria && failed) errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot set SuccessCriteriaMet=True and Failed=true conditions'));
  if (successCriteria && failureTarget)
    errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot set SuccessCriteriaMet=True and FailureTarget=true conditions'));
  if (specOf(job)['successPolicy'] !== undefined && !successCriteria && complete)
    errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True'));
  return errors;
}

function timeErrors(job: JsonObject, t: ReturnType<typeof triggersOf>): FieldError[] {
  const errors: FieldError[] = [];
  const status = statusOf(job);
  const spec = specOf(job);
  const complete = isComplete(job);
  const start = timeOf(status, 'startTime');
  const completion = timeOf(status, 'completionTime');
  const suspendedWithoutCompletions = spec['suspend'] === true && spec['completions'] === 0;
  if ((t.complete || t.completionTime) && completion !== undefined && !complete)
    errors.push(
      fielderrors.invalid(`${STATUS}.completionTime`, status['completionTime'], 'cannot set completionTime when there is no Complete=True condition'),
    );
  if ((t.complete || t.completionTime) && completion === undefined && complete)
    errors.push(fielderrors.required(`${STATUS}.completionTime`, 'completionTime is required for Complete jobs'));
  if ((t.startTime || t.completionTime) && start !== undefined && completion !== undefined && completion < start)
    errors.push(fielderrors.invalid(`${STATUS}.completionTime`, status['completionTime'], 'completionTime cannot be set before startTime'));
  if ((t.finished || t.startTime) && !suspendedWithoutCompletions && start === undefined && isFinished(job))
    errors.push(fielderrors.required(`${STATUS}.startTime`, 'startTime is required for finished job'));
  return errors;
}

function finishedErrors(job: JsonObject, t: ReturnType<typeof triggersOf>): FieldError[] {
  const errors: FieldError[] = [];
  const status = statusOf(job);
  const finished = isFinished(job);
  if ((t.finished || t.active) && finished && count(status, 'active') > 0)
    errors.push(fielderrors.invalid(`${STATUS}.active`, count(status, 'active'), 'active>0 is invalid for finished job'));
  const uncounted = strategies.mapOf(status, 'uncountedTerminatedPods');
  const pending = strategies.listOf(uncounted, 'succeeded').length + strategies.listOf(uncounted, 'failed').length;
  if ((t.finished || t.uncounted) && finished && pending > 0)
    errors.push(fielderrors.invalid(`${STATUS}.uncountedTerminatedPods`, uncounted, 'uncountedTerminatedPods needs to be empty for finished job'));
  if ((t.finished || t.terminating) && finished && count(status, 'terminating') > 0)
    errors.push(fielderrors.invalid(`${STATUS}.terminating`, count(status, 'terminating'), 'terminating>0 is invalid for finished job'));
  const ready = status['ready'];
  if ((t.ready || t.active) && strategies.isInteger(ready) && ready > count(status, 'active'))
    errors.push(fielderrors.invalid(`${STATUS}.ready`, ready, 'cannot set more ready pods than active'));
  return errors;
}

/** The transitions of upstream's `ValidateJobStatusUpdate`: what may not go back. */
function transitionErrors(job: JsonObject, old: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const status = statusOf(job);
  const oldStatus = statusOf(old);
  for (const type of ['Failed', 'Complete', 'FailureTarget']) {
    if (conditionTrue(old, type) && !conditionTrue(job, type))
      errors.push(fielderrors.invalidOmitted(CONDITIONS, `cannot disable the terminal ${type}=True condition`));
  }
  if (count(status, 'failed') < count(oldStatus, 'failed'))
    errors.push(fielderrors.invalid(`${STATUS}.failed`, count(status, 'failed'), 'cannot decrease the failed counter'));
  const spec = specOf(job);
  const scalable = spec['completionMode'] === 'Indexed' && spec['completions'] === spec['parallelism'];
  if (!scalable && count(status, 'succeeded') < count(oldStatus, 'succeeded'))
    errors.push(fielderrors.invalid(`${STATUS}.succeeded`, count(status, 'succeeded'), 'cannot decrease the succeeded counter'));
  const completion = timeOf(status, 'completionTime');
  const oldCompletion = timeOf(oldStatus, 'completionTime');
  if (completion !== undefined && oldCompletion !== undefined && completion !== oldCompletion)
    errors.push(fielderrors.invalid(`${STATUS}.completionTime`, status['completionTime'], 'completionTime cannot be mutated'));
  if (oldStatus['startTime'] !== undefined && strategies.changed(oldStatus['startTime'], status['startTime']) && spec['suspend'] !== true)
    errors.push(fielderrors.required(`${STATUS}.startTime`, 'startTime cannot be removed for unsuspended job'));
  if (conditionTrue(old, 'SuccessCriteriaMet') && !conditionTrue(job, 'SuccessCriteriaMet'))
    errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot disable the SuccessCriteriaMet=True condition'));
  if (isComplete(old) && !conditionTrue(old, 'SuccessCriteriaMet') && conditionTrue(job, 'SuccessCriteriaMet'))
    errors.push(fielderrors.invalidOmitted(CONDITIONS, 'cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions'));
  return errors;
}

/** The errors of a `/status` write of `job` over the stored `old` (D-BI-13). */
export function jobStatusErrors(job: JsonObject, old: JsonObject): FieldError[] {
  const t = triggersOf(job, old);
  return [
    ...countersErrors(statusOf(job)),
    ...conditionErrors(job, t),
    ...timeErrors(job, t),
    ...finishedErrors(job, t),
    ...indexesErrors(job, t),
    ...transitionErrors(job, old),
  ];
}
