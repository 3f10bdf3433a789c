/**
 * Jobs (D-BI-13): stored only — no Pods are created and `status` changes only when a client writes
 * `/status` (its rules are in jobstatus.ts). What clients read back is what a 1.32 API server
 * answers: the defaults of `SetDefaults_Job` (completions and parallelism, backoffLimit,
 * completionMode, suspend, manualSelector, podReplacementPolicy), the pod template's defaults, the
 * selector and template labels generated from the Job's uid and name, and the Job's labels copied
 * from its template when it has none. Validation follows upstream's: the template must restart
 * `OnFailure` or `Never`, the generated labels must be intact, and the selector and most of the
 * template are immutable.
 */
import * as objects from '../api/objects.js';
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as names from '../meta/names.js';
import * as selectors from '../meta/selectors.js';
import * as jobstatus from './jobstatus.js';
import * as strategies from './strategies.js';
import * as workloads from './workloads.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const LEGACY_JOB_NAME_LABEL = 'job-name';
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';

const MAX_INT32 = 2147483647;
const MAX_PARALLELISM_INDEXED = 100000;
const COMPLETION_MODES = ['NonIndexed', 'Indexed'];
const REPLACEMENT_POLICIES = ['Failed', 'TerminatingOrFailed'];
const FAILURE_ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const EXIT_CODE_OPERATORS = ['In', 'NotIn'];
const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const NON_NEGATIVE = [
  'parallelism',
  'completions',
  'activeDeadlineSeconds',
  'backoffLimit',
  'ttlSecondsAfterFinished',
  'backoffLimitPerIndex',
  'maxFailedIndexes',
];

const specOf = (o: JsonObject): JsonObject => strategies.mapOf(o, 'spec');

/** The pattern defaults of a pod failure policy: `status: True` for every `onPodConditions` entry. */
function defaultFailurePolicy(policy: unknown): unknown {
  if (!json.isObject(policy)) return policy;
  const rules = strategies.listOf(policy, 'rules').map((rule) => {
    if (!json.isObject(rule) || !Array.isArray(rule['onPodConditions'])) return rule;
    return { ...rule, onPodConditions: rule['onPodConditions'].map((p) => (json.isObject(p) ? { ...p, status: p['status'] || 'True' } : p)) };
  });
  return { ...policy, rules };
}

/**
 * The spec defaults of a Job (upstream `SetDefaults_Job`) and of the job template of a CronJob
 * (`job: false`: only what the nested types default, the pod template and failure-policy patterns).
 */
export function defaultJobSpec(spec: JsonObject, opts: { job: boolean } = { job: true }): JsonObject {
  const out: JsonObject = { ...spec };
  if (opts.job) {
    if (out['completions'] === undefined && out['parallelism'] === undefined) {
      out['completions'] = 1;
      out['parallelism'] = 1;
    }
    out['parallelism'] ??= 1;
    out['backoffLimit'] ??= out['backoffLimitPerIndex'] !== undefined ? MAX_INT32 : 6;
    out['completionMode'] ??= 'NonIndexed';
    out['suspend'] ??= false;
    out['podReplacementPolicy'] ??= out['podFailurePolicy'] !== undefined ? 'Failed' : 'TerminatingOrFailed';
    out['manualSelector'] ??= false;
  }
  if (out['podFailurePolicy'] !== undefined) out['podFailurePolicy'] = defaultFailurePolicy(out['podFailurePolicy']);
  out['template'] = workloads.defaultTemplate(out['template']);
  return out;
}

/**
 * The generated selector and template labels (upstream `generateSelector`): the template gets
 * `batch.kubernetes.io/job-name`, `job-name`, `batch.kubernetes.io/controller-uid` and
 * `controller-uid` unless it sets them, and the selector matches `batch.kubernetes.io/controller-uid`.
 */
export function generateSelector(spec: JsonObject, name: string, uid: string): JsonObject {
  const template = strategies.mapOf(spec, 'template');
  const meta = strategies.mapOf(template, 'metadata');
  const labels: Record<string, unknown> = { ...strategies.mapOf(meta, 'labels') };
  for (const key of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) labels[key] ??= name;
  for (const key of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) labels[key] ??= uid;
  const selector: JsonObject = json.isObject(spec['selector']) ? { ...spec['selector'] } : {};
  const matchLabels: JsonObject = { ...strategies.mapOf(selector, 'matchLabels') };
  matchLabels[CONTROLLER_UID_LABEL] ??= uid;
  selector['matchLabels'] = matchLabels;
  return { ...spec, selector, template: { ...template, metadata: { ...meta, labels } } };
}

/** A Job without labels takes its template's (upstream's defaulting, applied whenever a Job is decoded). */
function labelsFromTemplate(job: JsonObject): JsonObject {
  const templateMeta = strategies.mapOf(strategies.mapOf(specOf(job), 'template'), 'metadata');
  if (!json.isObject(templateMeta['labels']) || Object.keys(objects.labelsOf(job)).length > 0) return job;
  const labels = { ...templateMeta['labels'] };
  return objects.withMeta(job, (m) => {
    m['labels'] = labels;
  });
}

function withDefaults(job: JsonObject): JsonObject {
  return { ...job, spec: defaultJobSpec(specOf(job)) };
}

/** The Job as created: defaults, the generated selector (unless `manualSelector`), labels, no status. */
export function prepareJob(job: JsonObject): JsonObject {
  const { status: _status, ...rest } = withDefaults(job);
  let out: JsonObject = rest;
  if (specOf(out)['manualSelector'] !== true) out = { ...out, spec: generateSelector(specOf(out), objects.nameOf(out), objects.uidOf(out)) };
  return labelsFromTemplate(out);
}

/** upstream `ValidateHasLabel`: the template carries `key` with the expected value. */
function hasLabelErrors(labels: Record<string, string>, key: string, expected: string): FieldError[] {
  const at = fielderrors.child('spec.template.metadata.labels', key, true);
  if (!(key in labels)) return [fielderrors.required(at, `must be '${expected}'`)];
  if (labels[key] !== expected) return [fielderrors.invalid(at, labels, `must be '${expected}'`)];
  return [];
}

/** The generated labels and selector are still what generation produced (upstream `validateGeneratedSelector`). */
function generatedSelectorErrors(job: JsonObject, prefixedLabels: boolean): FieldError[] {
  const spec = specOf(job);
  if (spec['manualSelector'] === true || !json.isObject(spec['selector'])) return [];
  const uid = objects.uidOf(job);
  const name = objects.nameOf(job);
  const labels = workloads.templateLabels(spec);
  const errors: FieldError[] = uid ? [] : [fielderrors.required('metadata.uid')];
  errors.push(...hasLabelErrors(labels, LEGACY_CONTROLLER_UID_LABEL, uid), ...hasLabelErrors(labels, LEGACY_JOB_NAME_LABEL, name));
  const expected: Record<string, string> = { [LEGACY_CONTROLLER_UID_LABEL]: uid, [LEGACY_JOB_NAME_LABEL]: name };
  if (prefixedLabels) {
    errors.push(...hasLabelErrors(labels, CONTROLLER_UID_LABEL, uid), ...hasLabelErrors(labels, JOB_NAME_LABEL, name));
    expected[CONTROLLER_UID_LABEL] = uid;
    expected[JOB_NAME_LABEL] = name;
  }
  const { selector } = workloads.parseSelector(spec['selector'], 'spec.selector');
  if (selector && !selectors.matchesLabels(selector, expected)) {
    errors.push(fielderrors.invalid('spec.selector', spec['selector'], '`selector` not auto-generated'));
  }
  return errors;
}

function failurePolicyErrors(spec: JsonObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const rules = strategies.listOf(spec['podFailurePolicy'], 'rules');
  if (rules.length > 20) errors.push(fielderrors.tooMany(`${path}.rules`, rules.length, 'must have at most 20 items'));
  const podSpec = strategies.mapOf(strategies.mapOf(spec, 'template'), 'spec');
  const containerNames = new Set(
    [...strategies.listOf(podSpec, 'containers'), ...strategies.listOf(podSpec, 'initContainers')].map((c) => strategies.stringOf(c, 'name')),
  );
  rules.forEach((rule, i) => {
    const at = fielderrors.child(`${path}.rules`, i);
    const action = strategies.stringOf(rule, 'action');
    if (!action) errors.push(fielderrors.required(`${at}.action`, `valid values: ${JSON.stringify(FAILURE_ACTIONS).replace(/,/g, ' ')}`));
    else if (action === 'FailIndex' && spec['backoffLimitPerIndex'] === undefined)
      errors.push(fielderrors.invalid(`${at}.action`, action, 'requires the backoffLimitPerIndex to be set'));
    else if (!FAILURE_ACTIONS.includes(action)) errors.push(fielderrors.notSupported(`${at}.action`, action, FAILURE_ACTIONS));
    const onExit = json.isObject(rule) ? rule['onExitCodes'] : undefined;
    const onConditions = strategies.listOf(rule, 'onPodConditions');
    if (json.isObject(onExit)) errors.push(...exitCodeErrors(onExit, `${at}.onExitCodes`, containerNames));
    onConditions.forEach((pattern, j) => {
      const status = strategies.stringOf(pattern, 'status');
      const statusAt = `${fielderrors.child(`${at}.onPodConditions`, j)}.status`;
      if (!status) errors.push(fielderrors.required(statusAt, `valid values: ${JSON.stringify(CONDITION_STATUSES).replace(/,/g, ' ')}`));
      else if (!CONDITION_STATUSES.includes(status)) errors.push(fielderrors.notSupported(statusAt, status, CONDITION_STATUSES));
    });
    if (json.isObject(onExit) && onConditions.length > 0)
      errors.push(fielderrors.invalidOmitted(at, 'specifying both OnExitCodes and OnPodConditions is not supported'));
    if (!json.isObject(onExit) && onConditions.length === 0)
      errors.push(fielderrors.invalidOmitted(at, 'specifying one of OnExitCodes and OnPodConditions is required'));
  });
  return errors;
}

function exitCodeErrors(onExit: JsonObject, path: string, containerNames: ReadonlySet<string>): FieldError[] {
  const errors: FieldError[] = [];
  const operator = strategies.stringOf(onExit, 'operator');
  if (!operator) errors.push(fielderrors.required(`${path}.operator`, `valid values: ${JSON.stringify(EXIT_CODE_OPERATORS).replace(/,/g, ' ')}`));
  else if (!EXIT_CODE_OPERATORS.includes(operator)) errors.push(fielderrors.notSupported(`${path}.operator`, operator, EXIT_CODE_OPERATORS));
  const container = onExit['containerName'];
  if (typeof container === 'string' && !containerNames.has(container)) {
    errors.push(fielderrors.invalid(`${path}.containerName`, container, 'must be one of the container or initContainer names in the pod template'));
  }
  const values = strategies.listOf(onExit, 'values');
  if (values.length === 0) errors.push(fielderrors.invalid(`${path}.values`, values, 'at least one value is required'));
  const seen = new Set<unknown>();
  let ordered = true;
  values.forEach((v, j) => {
    const at = fielderrors.child(`${path}.values`, j);
    if (operator === 'In' && v === 0) errors.push(fielderrors.invalid(at, v, 'must not be 0 for the In operator'));
    if (seen.has(v)) errors.push(fielderrors.duplicate(at, v));
    seen.add(v);
    if (j > 0 && Number(values[j - 1]) > Number(v)) ordered = false;
  });
  if (!ordered) errors.push(fielderrors.invalid(`${path}.values`, values, 'must be ordered'));
  return errors;
}

/** upstream `validateJobSpec` at `path` (`spec`, or `spec.jobTemplate.spec` of a CronJob). */
export function jobSpecErrors(spec: JsonObject, path: string): FieldError[] {
  const errors = workloads.nonNegativeErrors(spec, NON_NEGATIVE, path);
  if (spec['maxFailedIndexes'] !== undefined && spec['backoffLimitPerIndex'] === undefined)
    errors.push(fielderrors.required(`${path}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  const managedBy = spec['managedBy'];
  if (typeof managedBy === 'string' && managedBy.length > 63) errors.push(fielderrors.tooLong(`${path}.managedBy`, 'may not be more than 63 bytes'));
  const mode = spec['completionMode'];
  if (mode !== undefined && !COMPLETION_MODES.includes(mode as string)) errors.push(fielderrors.notSupported(`${path}.completionMode`, mode, COMPLETION_MODES));
  if (mode === 'Indexed') {
    if (spec['completions'] === undefined) errors.push(fielderrors.required(`${path}.completions`, 'when completion mode is Indexed'));
    const parallelism = spec['parallelism'];
    if (strategies.isInteger(parallelism) && parallelism > MAX_PARALLELISM_INDEXED)
      errors.push(
        fielderrors.invalid(`${path}.parallelism`, parallelism, `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`),
      );
  } else {
    if (spec['backoffLimitPerIndex'] !== undefined)
      errors.push(fielderrors.invalid(`${path}.backoffLimitPerIndex`, spec['backoffLimitPerIndex'], 'requires indexed completion mode'));
    if (spec['maxFailedIndexes'] !== undefined)
      errors.push(fielderrors.invalid(`${path}.maxFailedIndexes`, spec['maxFailedIndexes'], 'requires indexed completion mode'));
    if (spec['successPolicy'] !== undefined)
      errors.push(fielderrors.invalid(`${path}.successPolicy`, spec['successPolicy'], 'requires indexed completion mode'));
  }
  if (json.isObject(spec['podFailurePolicy'])) errors.push(...failurePolicyErrors(spec, `${path}.podFailurePolicy`));
  const replacement = spec['podReplacementPolicy'];
  if (replacement !== undefined) {
    const allowed = spec['podFailurePolicy'] !== undefined ? ['Failed'] : REPLACEMENT_POLICIES;
    if (!allowed.includes(replacement as string)) errors.push(fielderrors.notSupported(`${path}.podReplacementPolicy`, replacement, allowed));
  }
  errors.push(...workloads.templateErrors(spec['template'], `${path}.template`));
  const restart = strategies.stringOf(strategies.mapOf(strategies.mapOf(spec, 'template'), 'spec'), 'restartPolicy');
  const restartAt = `${path}.template.spec.restartPolicy`;
  if (restart === 'Always' || restart === '') errors.push(fielderrors.required(restartAt, 'valid values: "OnFailure", "Never"'));
  else if (restart !== 'OnFailure' && restart !== 'Never') errors.push(fielderrors.notSupported(restartAt, restart, ['OnFailure', 'Never']));
  else if (spec['podFailurePolicy'] !== undefined && restart !== 'Never')
    errors.push(fielderrors.invalid(restartAt, restart, 'only "Never" is supported when podFailurePolicy is specified'));
  return errors;
}

/** The selector of a Job: required, parsable, and selecting the template's labels. */
function selectorErrors(spec: JsonObject): FieldError[] {
  const value = spec['selector'];
  if (value === undefined || value === null) return [fielderrors.required('spec.selector')];
  const { selector, errors } = workloads.parseSelector(value, 'spec.selector');
  if (selector) errors.push(...workloads.selectorMatchErrors(selector, spec));
  return errors;
}

/** Updating a Job: what upstream's `ValidateJobSpecUpdate` keeps immutable. */
function updateErrors(spec: JsonObject, old: JsonObject, oldJob: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const completionsChanged = strategies.changed(spec['completions'], old['completions']);
  if (spec['completionMode'] === 'Indexed' && completionsChanged) {
    if (spec['completions'] !== undefined && spec['completions'] !== spec['parallelism'])
      errors.push(fielderrors.invalid('spec.completions', spec['completions'], 'can only be modified in tandem with spec.parallelism'));
  } else errors.push(...workloads.immutableErrors(spec['completions'], old['completions'], 'spec.completions'));
  errors.push(...workloads.immutableErrors(spec['selector'], old['selector'], 'spec.selector'));
  errors.push(...templateUpdateErrors(spec, old, oldJob));
  for (const key of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy']) {
    errors.push(...workloads.immutableErrors(spec[key], old[key], `spec.${key}`));
  }
  return errors;
}

/**
 * The template is immutable, except that a suspended Job that never started may change its
 * scheduling directives (node affinity, node selector, tolerations, scheduling gates) and the
 * template's labels and annotations.
 */
function templateUpdateErrors(spec: JsonObject, old: JsonObject, oldJob: JsonObject): FieldError[] {
  const template = strategies.mapOf(spec, 'template');
  let oldTemplate = strategies.mapOf(old, 'template');
  const mutable = old['suspend'] === true && strategies.mapOf(oldJob, 'status')['startTime'] === undefined;
  if (mutable) {
    const podSpec = { ...strategies.mapOf(oldTemplate, 'spec') };
    const newPodSpec = strategies.mapOf(template, 'spec');
    for (const key of ['nodeSelector', 'tolerations', 'schedulingGates']) copyMember(podSpec, newPodSpec, key);
    const affinity: JsonObject = { ...strategies.mapOf(podSpec, 'affinity') };
    copyMember(affinity, strategies.mapOf(newPodSpec, 'affinity'), 'nodeAffinity');
    if (Object.keys(affinity).length) podSpec['affinity'] = affinity;
    else delete podSpec['affinity'];
    const meta = { ...strategies.mapOf(oldTemplate, 'metadata') };
    for (const key of ['labels', 'annotations']) copyMember(meta, strategies.mapOf(template, 'metadata'), key);
    oldTemplate = { ...oldTemplate, metadata: meta, spec: podSpec };
  }
  return workloads.immutableErrors(template, oldTemplate, 'spec.template');
}

function copyMember(into: JsonObject, from: JsonObject, key: string): void {
  if (from[key] === undefined) delete into[key];
  else into[key] = from[key];
}

/** Validates a (prepared) Job; `old` is the stored one on update. */
export function validateJob(job: JsonObject, old: JsonObject | undefined): FieldError[] {
  const spec = specOf(job);
  const oldLabels = old ? workloads.templateLabels(specOf(old)) : undefined;
  const prefixed = oldLabels === undefined || (JOB_NAME_LABEL in oldLabels && CONTROLLER_UID_LABEL in oldLabels);
  const errors = [...generatedSelectorErrors(job, prefixed), ...jobSpecErrors(spec, 'spec'), ...selectorErrors(spec)];
  const completions = spec['completions'];
  if (spec['completionMode'] === 'Indexed' && strategies.isInteger(completions) && completions > 0) {
    const hostname = `${objects.nameOf(job)}-${completions - 1}`;
    if (names.dns1123LabelErrors(hostname).length)
      errors.push(fielderrors.invalid('metadata.name', objects.nameOf(job), `will not able to create pod with invalid DNS label: ${hostname}`));
  }
  if (old) errors.push(...updateErrors(spec, specOf(old), old));
  return errors;
}

/** A Job's name is used in its Pods' names and hostnames: a name that is not a DNS label gets a warning on create. */
function nameWarnings(job: JsonObject, old: JsonObject | undefined): string[] {
  if (old) return [];
  const problems = names.dns1123LabelErrors(objects.nameOf(job));
  if (problems.length === 0) return [];
  return [
    `metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [${problems.join(' ')}]`,
  ];
}

/** The Job strategy; see the module comment. */
export const jobStrategy: resources.Strategy = strategies.plainStrategy('Job', {
  fieldSelectors: {
    'status.successful': (o) => String(Number(strategies.mapOf(o, 'status')['succeeded'] ?? 0)),
  },
  generation: (old, next) => strategies.changed(old['spec'], next['spec']),
  prepareForCreate: (obj) => prepareJob(obj),
  prepareForUpdate(obj, old) {
    return strategies.keepStatus(labelsFromTemplate(withDefaults(obj)), old);
  },
  prepareForSubresource: strategies.statusSubresource.prepareForSubresource,
  validate(obj, old, _ctx, subresource) {
    if (subresource === 'status' && old) return jobstatus.jobStatusErrors(obj, old);
    return validateJob(obj, old);
  },
  warnings: nameWarnings,
});
