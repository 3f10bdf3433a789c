import type * as resources from '../api/resources.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as names from '../meta/names.js';
import * as selectors from '../meta/selectors.js';
import * as webhookclients from '../meta/webhookclients.js';
import * as datamaps from './datamaps.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
type FieldError = fielderrors.FieldError;

export type WebhookKind = 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
/** AdmissionReview versions the emulator speaks. */
export const REVIEW_VERSIONS = ['v1'];

function defaultWebhook(hook: unknown, mutating: boolean): unknown {
  if (!json.isObject(hook)) return hook;
  const out: JsonObject = { ...hook };
  out['failurePolicy'] ??= 'Fail';
  out['matchPolicy'] ??= 'Equivalent';
  out['namespaceSelector'] ??= {};
  out['objectSelector'] ??= {};
  out['timeoutSeconds'] ??= 10;
  if (mutating) out['reinvocationPolicy'] ??= 'Never';
  if (json.isObject(out['clientConfig']) && json.isObject(out['clientConfig']['service'])) {
    const service = out['clientConfig']['service'];
    out['clientConfig'] = { ...out['clientConfig'], service: { ...service, port: service['port'] ?? 443 } };
  }
  if (Array.isArray(out['rules'])) out['rules'] = out['rules'].map((r) => (json.isObject(r) ? { ...r, scope: r['scope'] ?? '*' } : r));
  return out;
}

/** The defaulted configuration (D-BI-12); a `caBundle` that is not base64 → 400. Returns a copy. */
export function defaultConfiguration(obj: JsonObject, kind: WebhookKind): JsonObject {
  if (!Array.isArray(obj['webhooks'])) return obj;
  for (const hook of obj['webhooks']) {
    const bundle = strategies.mapOf(hook, 'clientConfig')['caBundle'];
    const why = typeof bundle === 'string' ? datamaps.base64Error(bundle) : undefined;
    if (why) throw strategies.undecodable(kind, 'admissionregistration.k8s.io/v1', why);
  }
  return { ...obj, webhooks: obj['webhooks'].map((h) => defaultWebhook(h, kind === 'MutatingWebhookConfiguration')) };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

function wildcardList(field: string, values: string[], what: string): FieldError[] {
  return values.length > 1 && values.includes('*') ? [fielderrors.invalid(field, values, `if '*' is present, must not specify other ${what}`)] : [];
}

function validateResources(field: string, values: string[]): FieldError[] {
  if (values.length === 0) return [fielderrors.required(field)];
  const errors: FieldError[] = [];
  values.forEach((r, i) => {
    if (r === '') errors.push(fielderrors.required(`${field}[${i}]`));
  });
  if (values.length > 1 && values.includes('*/*')) errors.push(fielderrors.invalid(field, values, "if '*/*' is present, must not specify other resources"));
  if (values.includes('*') && values.some((r) => r !== '*' && !r.includes('/'))) {
    errors.push(fielderrors.invalid(field, values, "if '*' is present, must not specify other resources without subresources"));
  }
  return errors;
}

function validateRule(field: string, rule: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const operations = strings(rule['operations']);
  if (operations.length === 0) errors.push(fielderrors.required(`${field}.operations`));
  errors.push(...wildcardList(`${field}.operations`, operations, 'operations'));
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errors.push(fielderrors.notSupported(`${field}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strings(rule['apiGroups']);
  if (groups.length === 0) errors.push(fielderrors.required(`${field}.apiGroups`));
  errors.push(...wildcardList(`${field}.apiGroups`, groups, 'API groups'));
  const versions = strings(rule['apiVersions']);
  if (versions.length === 0) errors.push(fielderrors.required(`${field}.apiVersions`));
  errors.push(...wildcardList(`${field}.apiVersions`, versions, 'API versions'));
  versions.forEach((v, i) => {
    if (v === '') errors.push(fielderrors.required(`${field}.apiVersions[${i}]`));
  });
  errors.push(...validateResources(`${field}.resources`, strings(rule['resources'])));
  const scope = rule['scope'];
  if (scope !== undefined && !SCOPES.includes(scope as string)) errors.push(fielderrors.notSupported(`${field}.scope`, scope, SCOPES));
  return errors;
}

function validateReviewVersions(field: string, value: unknown): FieldError[] {
  const versions = strings(value);
  if (versions.length === 0) return [fielderrors.required(field, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errors.push(fielderrors.invalid(`${field}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const msg of names.dns1035LabelErrors(v)) errors.push(fielderrors.invalid(`${field}[${i}]`, v, msg));
  });
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v)))
    errors.push(fielderrors.invalid(field, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return errors;
}

function validateSelector(field: string, value: unknown): FieldError[] {
  if (value === undefined) return [];
  try {
    selectors.labelSelectorFromObject(value);
    return [];
  } catch (err) {
    if (err instanceof selectors.SelectorError) return [fielderrors.invalid(field, value, err.message)];
    throw err;
  }
}

function enumError(field: string, value: unknown, allowed: string[]): FieldError[] {
  return value !== undefined && !allowed.includes(value as string) ? [fielderrors.notSupported(field, value, allowed)] : [];
}

function validateWebhook(at: string, hook: JsonObject, mutating: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const name = strategies.stringOf(hook, 'name');
  if (!name) {
    errors.push(fielderrors.required(`${at}.name`));
  } else {
    const syntax = names.dns1123SubdomainErrors(name);
    if (syntax.length) errors.push(fielderrors.invalid(`${at}.name`, name, syntax.join(',')));
    else if (name.split('.').length < 3)
      errors.push(fielderrors.invalid(`${at}.name`, name, 'should be a domain with at least three segments separated by dots'));
  }
  errors.push(...webhookclients.validateClientConfig(`${at}.clientConfig`, strategies.mapOf(hook, 'clientConfig')));
  strategies.listOf(hook, 'rules').forEach((r, j) => errors.push(...validateRule(`${at}.rules[${j}]`, json.isObject(r) ? r : {})));
  errors.push(...enumError(`${at}.failurePolicy`, hook['failurePolicy'], FAILURE_POLICIES));
  errors.push(...enumError(`${at}.matchPolicy`, hook['matchPolicy'], MATCH_POLICIES));
  const sideEffects = hook['sideEffects'];
  if (sideEffects === undefined || sideEffects === null)
    errors.push(fielderrors.required(`${at}.sideEffects`, `must specify one of ${SIDE_EFFECTS.join(', ')}`));
  else errors.push(...enumError(`${at}.sideEffects`, sideEffects, SIDE_EFFECTS));
  const timeout = hook['timeoutSeconds'];
  if (timeout !== undefined && (!strategies.isInteger(timeout) || timeout < 1 || timeout > 30)) {
    errors.push(fielderrors.invalid(`${at}.timeoutSeconds`, timeout, 'the timeout value must be between 1 and 30 seconds'));
  }
  errors.push(...validateReviewVersions(`${at}.admissionReviewVersions`, hook['admissionReviewVersions']));
  errors.push(...validateSelector(`${at}.namespaceSelector`, hook['namespaceSelector']));
  errors.push(...validateSelector(`${at}.objectSelector`, hook['objectSelector']));
  if (mutating) errors.push(...enumError(`${at}.reinvocationPolicy`, hook['reinvocationPolicy'], REINVOCATION_POLICIES));
  return errors;
}

/** Validates a (defaulted) webhook configuration (D-BI-12). */
export function validateConfiguration(obj: JsonObject, kind: WebhookKind): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  strategies.listOf(obj, 'webhooks').forEach((hook, i) => {
    const at = `webhooks[${i}]`;
    const h = json.isObject(hook) ? hook : {};
    const name = strategies.stringOf(h, 'name');
    if (name && seen.has(name)) errors.push(fielderrors.duplicate(`${at}.name`, name));
    seen.add(name);
    errors.push(...validateWebhook(at, h, kind === 'MutatingWebhookConfiguration'));
  });
  return errors;
}

/** The strategy of one of the two configuration kinds; see the module comment. */
export function webhookConfigurationStrategy(kind: WebhookKind): resources.Strategy {
  return strategies.plainStrategy(kind, {
    requireResourceVersion: true,
    generation: (old, next) => strategies.changed(old['webhooks'], next['webhooks']),
    prepareForCreate: (obj) => defaultConfiguration(obj, kind),
    prepareForUpdate: (obj) => defaultConfiguration(obj, kind),
    validate: (obj) => validateConfiguration(obj, kind),
  });
}
