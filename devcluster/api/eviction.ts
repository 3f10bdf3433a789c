/**
 * `pods/eviction` (D-BI-17): what `kubectl drain` and operators use to delete a Pod politely. A
 * policy/v1 Eviction names the Pod and carries delete options; the Pod is deleted with them
 * unless the PodDisruptionBudget that selects it forbids the disruption. As upstream:
 *
 * - Pods that are `Pending`, finished or already being deleted are deleted without looking at
 *   budgets (a devcluster Pod is `Pending` until a client writes its status);
 * - a budget whose status has not been observed for its current generation (no PDB controller
 *   runs: a client writes `status.observedGeneration`) → 429 "still being processed";
 * - `status.disruptionsAllowed` 0 → 429 `Cannot evict pod as it would violate the pod's disruption
 *   budget.`, negative → 403; otherwise it is decremented and the Pod recorded in
 *   `status.disruptedPods` before the delete;
 * - more than one budget → a 500 `Status` in a 201 answer, as upstream writes it;
 * - the Pod gets the `DisruptionTarget` condition before it is deleted.
 *
 * Success answers 201 with a `Status` of `Success`.
 */
import * as selectors from '../meta/selectors.js';
import * as times from '../meta/times.js';
import * as statuses from '../server/statuses.js';
import * as revisions from '../store/revisions.js';
import * as actions from './actions.js';
import * as deleting from './deleting.js';
import * as objects from './objects.js';
import * as options from './options.js';
import * as reading from './reading.js';
import * as updating from './updating.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

const PDB_RESOURCE = { group: 'policy', resource: 'poddisruptionbudget', kind: 'PodDisruptionBudget' };
/** Upstream refuses evictions while this many approved ones are still unconfirmed by the PDB controller. */
const MAX_DISRUPTED_PODS = 2000;
const BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

const statusOf = (o: JsonObject): JsonObject => (json.isObject(o['status']) ? o['status'] : {});
const int = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) ? v : 0);

/** The 429 of an eviction a budget forbids, with upstream's `DisruptionBudget` cause. */
function tooManyRequests(cause: string, retryAfterSeconds: number): statuses.ApiError {
  return new statuses.ApiError(
    429,
    'TooManyRequests',
    BUDGET_MESSAGE,
    { causes: [{ reason: 'DisruptionBudget', message: cause }], ...(retryAfterSeconds ? { retryAfterSeconds } : {}) },
    retryAfterSeconds ? { headers: { 'Retry-After': String(retryAfterSeconds) } } : undefined,
  );
}

/** Upstream's `canIgnorePDB`: finished, pending, or already terminating. */
function budgetIgnored(pod: JsonObject): boolean {
  const phase = statusOf(pod)['phase'];
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || objects.metaOf(pod)['deletionTimestamp'] !== undefined;
}

const isReady = (pod: JsonObject): boolean =>
  (Array.isArray(statusOf(pod)['conditions']) ? (statusOf(pod)['conditions'] as unknown[]) : []).some(
    (c) => json.isObject(c) && c['type'] === 'Ready' && c['status'] === 'True',
  );

/** The budgets of the Pod's namespace whose selector selects it (a missing selector selects nothing). */
function budgetsOf(r: actions.SubresourceRequest, pod: JsonObject): JsonObject[] {
  const type = actions.typeOf(r.core, 'policy', 'v1', 'poddisruptionbudgets');
  const labels = objects.labelsOf(pod);
  return r.core.store.list(type.storage, revisions.objectKey(objects.namespaceOf(pod), '')).filter((pdb) => {
    const selector = json.isObject(pdb['spec']) ? (pdb['spec'] as JsonObject)['selector'] : undefined;
    if (!json.isObject(selector)) return false;
    try {
      return selectors.matchesLabels(selectors.labelSelectorFromObject(selector), labels);
    } catch {
      return false;
    }
  });
}

/** Whether an unready Pod may go without spending the budget (upstream's unhealthy-pod eviction policy). */
function unhealthyMayGo(pod: JsonObject, pdb: JsonObject): boolean {
  if (isReady(pod)) return false;
  const spec = json.isObject(pdb['spec']) ? (pdb['spec'] as JsonObject) : {};
  if (spec['unhealthyPodEvictionPolicy'] === 'AlwaysAllow') return true;
  const status = statusOf(pdb);
  return int(status['currentHealthy']) >= int(status['desiredHealthy']) && int(status['desiredHealthy']) > 0;
}

/** Checks the budget and, unless it forbids the eviction, spends one disruption on the Pod. */
async function spendBudget(r: actions.SubresourceRequest, pdb: JsonObject, podName: string): Promise<void> {
  const name = objects.nameOf(pdb);
  const status = statusOf(pdb);
  if (int(status['observedGeneration']) < int(objects.metaOf(pdb)['generation'])) {
    throw tooManyRequests(`The disruption budget ${name} is still being processed by the server.`, 10);
  }
  const allowed = int(status['disruptionsAllowed']);
  if (allowed < 0)
    throw statuses.forbidden(`poddisruptionbudget.policy "${name}" is forbidden: pdb disruptions allowed is negative`, {
      name,
      group: 'policy',
      kind: PDB_RESOURCE.resource,
    });
  const disrupted = json.isObject(status['disruptedPods']) ? status['disruptedPods'] : {};
  if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS) {
    throw statuses.forbidden(
      `poddisruptionbudget.policy "${name}" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`,
      { name, group: 'policy', kind: PDB_RESOURCE.resource },
    );
  }
  if (allowed === 0) {
    throw tooManyRequests(
      `The disruption budget ${name} needs ${int(status['desiredHealthy'])} healthy pods and has ${int(status['currentHealthy'])} currently`,
      0,
    );
  }
  if (r.dryRun) return;
  const now = times.formatTime(new Date(r.core.clock.now()));
  const next: JsonObject = { disruptionsAllowed: allowed - 1, disruptedPods: { ...disrupted, [podName]: now } };
  if (allowed - 1 === 0) next['conditions'] = withCondition(status, 'DisruptionAllowed', 'False', 'InsufficientPods', now);
  const type = actions.typeOf(r.core, 'policy', 'v1', 'poddisruptionbudgets');
  await updating.update(actions.withoutAdmission(r.core), actions.actionWrite(r, type, r.namespace, name, 'status'), {
    kind: 'patch',
    type: 'merge-patch',
    patch: { metadata: { resourceVersion: objects.rvOf(pdb) }, status: next },
  });
}

/** The PDB's conditions with `type` set (upstream `SetStatusCondition`: the transition time moves only with the status). */
function withCondition(status: JsonObject, type: string, value: string, reason: string, now: string): JsonObject[] {
  const conditions = (Array.isArray(status['conditions']) ? status['conditions'] : []).filter(json.isObject);
  const previous = conditions.find((c) => c['type'] === type);
  const condition: JsonObject = {
    type,
    status: value,
    observedGeneration: int(status['observedGeneration']),
    lastTransitionTime: previous && previous['status'] === value ? previous['lastTransitionTime'] : now,
    reason,
    message: '',
  };
  return previous ? conditions.map((c) => (c === previous ? condition : c)) : [...conditions, condition];
}

/** Adds the `DisruptionTarget` condition (unless dry run), then deletes the Pod with the eviction's options. */
async function disruptAndDelete(r: actions.SubresourceRequest, pod: JsonObject, opts: options.DeleteOptions): Promise<void> {
  const c = actions.withoutAdmission(r.core);
  const name = objects.nameOf(pod);
  let deleteOptions = opts;
  checkPreconditions(pod, opts);
  if (!opts.dryRun) {
    const condition = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' };
    const conditions = podConditionsWith(pod, condition, times.formatTime(new Date(r.core.clock.now())));
    const result = await updating.update(c, actions.actionWrite(r, r.type, r.namespace, name, 'status'), {
      kind: 'patch',
      type: 'merge-patch',
      patch: { status: { conditions } },
    });
    if (opts.preconditions.resourceVersion !== undefined) {
      deleteOptions = { ...opts, preconditions: { ...opts.preconditions, resourceVersion: objects.rvOf(result.object) } };
    }
  }
  await deleting.remove(c, { ...actions.actionWrite(r, r.type, r.namespace, name), dryRun: opts.dryRun }, deleteOptions);
}

/** The delete options' preconditions hold for the Pod as read, or 409 (checked before the Pod is changed). */
function checkPreconditions(pod: JsonObject, opts: options.DeleteOptions): void {
  const ident = { group: '', resource: 'Pod', kind: 'Pod' };
  const { uid, resourceVersion } = opts.preconditions;
  if (uid !== undefined && uid !== '' && uid !== objects.uidOf(pod)) {
    throw statuses.conflict(
      ident,
      objects.nameOf(pod),
      `the UID in the precondition (${uid}) does not match the UID in record (${objects.uidOf(pod)}). The object might have been deleted and then recreated`,
    );
  }
  if (resourceVersion !== undefined && resourceVersion !== '' && resourceVersion !== objects.rvOf(pod)) {
    throw statuses.conflict(
      ident,
      objects.nameOf(pod),
      `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${objects.rvOf(pod)}). The object might have been modified`,
    );
  }
}

function podConditionsWith(pod: JsonObject, condition: JsonObject, now: string): JsonObject[] {
  const conditions = (Array.isArray(statusOf(pod)['conditions']) ? (statusOf(pod)['conditions'] as unknown[]) : []).filter(json.isObject);
  const previous = conditions.find((c) => c['type'] === condition['type']);
  const next = { ...condition, lastTransitionTime: previous && previous['status'] === condition['status'] ? previous['lastTransitionTime'] : now };
  return previous ? conditions.map((c) => (c === previous ? next : c)) : [...conditions, next];
}

/** `POST pods/{name}/eviction`. */
export async function evict(r: actions.SubresourceRequest): Promise<actions.SubresourceReply> {
  const body = actions.actionBody(r, ['policy/v1', 'policy/v1beta1'], 'Eviction');
  if (objects.nameOf(body) !== r.name) throw statuses.badRequest('name in URL does not match name in Eviction object');
  const rawOptions = body['deleteOptions'];
  const opts = options.decodeDeleteOptions(new URLSearchParams(), json.isObject(rawOptions) ? rawOptions : undefined);
  if (r.dryRun && !opts.dryRun) opts.dryRun = true;
  await actions.admitAction(r, r.type, 'eviction', 'Eviction', body);
  const pod = await reading.get(r.core, r.type, r.namespace, r.name!, undefined);
  const enforceVersion = (p: JsonObject): options.DeleteOptions =>
    opts.preconditions.resourceVersion === undefined &&
    !['Succeeded', 'Failed'].includes(String(statusOf(p)['phase'])) &&
    objects.metaOf(p)['deletionTimestamp'] === undefined
      ? { ...opts, preconditions: { ...opts.preconditions, resourceVersion: objects.rvOf(p) } }
      : opts;
  if (budgetIgnored(pod)) {
    await disruptAndDelete(r, pod, enforceVersion(pod));
    return { code: 201, body: actions.success() };
  }
  const budgets = budgetsOf(r, pod);
  if (budgets.length > 1) {
    return {
      code: 201,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        code: 500,
      },
    };
  }
  let deleteOptions = opts;
  if (budgets.length === 1) {
    if (unhealthyMayGo(pod, budgets[0]!)) deleteOptions = enforceVersion(pod);
    else await spendBudget(r, budgets[0]!, objects.nameOf(pod));
  }
  await disruptAndDelete(r, pod, deleteOptions);
  return { code: 201, body: actions.success() };
}
