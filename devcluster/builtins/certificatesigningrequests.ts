/**
 * CertificateSigningRequests and their `approval` subresource (D-BI-17). No signer runs: a request
 * is approved or denied by a client writing `/approval`, and a certificate appears only when a
 * client writes `/status`. The three endpoints split the object as upstream's strategies do — the
 * main endpoint changes neither `spec` nor `status`, `/approval` changes only
 * `status.conditions`, `/status` everything in `status` but the `Approved`/`Denied` conditions — and
 * conditions get `lastUpdateTime`/`lastTransitionTime` when written without them. Validation keeps
 * `Approved` and `Denied` exclusive and never lets `Approved`, `Denied` or `Failed` be removed.
 */
import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as times from '../meta/times.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);
const STATUSES = ['False', 'True', 'Unknown'];

const conditionsOf = (csr: JsonObject): JsonObject[] => strategies.listOf(strategies.mapOf(csr, 'status'), 'conditions').filter(json.isObject);

/** Conditions written without timestamps get `now`; a condition that kept its type and status keeps its transition time. */
function withTimestamps(conditions: JsonObject[], old: JsonObject[], now: string): JsonObject[] {
  return conditions.map((c) => {
    const out = { ...c };
    out['lastUpdateTime'] ??= now;
    if (out['lastTransitionTime'] === undefined) {
      const same = old.find((o) => o['type'] === c['type'] && o['status'] === c['status'] && o['lastTransitionTime'] !== undefined);
      out['lastTransitionTime'] = same ? same['lastTransitionTime'] : now;
    }
    return out;
  });
}

/** The `Approved`/`Denied` entries of `conditions` replaced, in order, by the stored ones when their number is unchanged. */
function preserveApprovals(conditions: JsonObject[], old: JsonObject[]): JsonObject[] {
  const out = [...conditions];
  for (const type of ['Approved', 'Denied']) {
    const oldOnes = old.filter((c) => c['type'] === type);
    const indices = out.flatMap((c, i) => (c['type'] === type ? [i] : []));
    if (indices.length === oldOnes.length) indices.forEach((index, k) => (out[index] = oldOnes[k]!));
  }
  return out;
}

/** `csr` with `status.conditions` replaced (removed when empty, as upstream serialises an empty list). */
function withConditions(csr: JsonObject, conditions: JsonObject[]): JsonObject {
  const status: JsonObject = { ...strategies.mapOf(csr, 'status') };
  if (conditions.length) status['conditions'] = conditions;
  else delete status['conditions'];
  return { ...csr, status };
}

/** upstream `validateConditions` and the removal rule of `validateCertificateSigningRequestUpdate`. */
function conditionErrors(csr: JsonObject, old: JsonObject | undefined, allowApprovalChanges: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const path = 'status.conditions';
  const oldConditions = old ? conditionsOf(old) : [];
  const bothBefore = oldConditions.some((c) => c['type'] === 'Approved') && oldConditions.some((c) => c['type'] === 'Denied');
  const seen = new Set<unknown>();
  let approved = false;
  let denied = false;
  conditionsOf(csr).forEach((c, i) => {
    const at = fielderrors.child(path, i);
    const type = c['type'];
    if (!type) errors.push(fielderrors.required(`${at}.type`));
    const allowed = TRUE_ONLY.has(type as string) ? ['True'] : STATUSES;
    if (!c['status']) errors.push(fielderrors.required(`${at}.status`));
    else if (!allowed.includes(c['status'] as string)) errors.push(fielderrors.notSupported(`${at}.status`, c['status'], allowed));
    if (!bothBefore && (type === 'Approved' || type === 'Denied')) {
      if ((type === 'Approved' && denied) || (type === 'Denied' && approved))
        errors.push(fielderrors.invalid(`${at}.type`, type, 'Approved and Denied conditions are mutually exclusive'));
      approved ||= type === 'Approved';
      denied ||= type === 'Denied';
    }
    if (seen.has(type)) errors.push(fielderrors.duplicate(`${at}.type`, type));
    seen.add(type);
  });
  if (!old) return errors;
  for (const type of ['Approved', 'Denied', 'Failed']) {
    const before = oldConditions.filter((c) => c['type'] === type);
    const after = conditionsOf(csr).filter((c) => c['type'] === type);
    if (after.length < before.length) errors.push(fielderrors.forbidden(path, `updates may not remove a condition of type "${type}"`));
    else if (!allowApprovalChanges && type !== 'Failed') {
      if (after.length > before.length) errors.push(fielderrors.forbidden(path, `updates may not add a condition of type "${type}"`));
      else if (strategies.changed(after, before)) errors.push(fielderrors.forbidden(path, `updates may not modify a condition of type "${type}"`));
    }
  }
  return errors;
}

/** The CertificateSigningRequest strategy; see the module comment. */
export const certificateSigningRequestStrategy: resources.Strategy = strategies.plainStrategy('CertificateSigningRequest', {
  prepareForCreate(obj) {
    const { status: _status, ...rest } = obj;
    return rest;
  },
  prepareForUpdate(obj, old) {
    const out: JsonObject = { ...obj, spec: old['spec'] };
    return strategies.keepStatus(out, old);
  },
  prepareForSubresource(sub, obj, old, ctx) {
    const now = times.formatTime(ctx.now());
    const oldConditions = conditionsOf(old);
    if (sub === 'approval') return withConditions(old, withTimestamps(conditionsOf(obj), oldConditions, now));
    if (sub !== 'status') return old;
    const conditions = withTimestamps(preserveApprovals(conditionsOf(obj), oldConditions), oldConditions, now);
    return withConditions({ ...old, status: strategies.mapOf(obj, 'status') }, conditions);
  },
  validate(obj, old, _ctx, subresource) {
    return conditionErrors(obj, old, subresource === 'approval');
  },
});
