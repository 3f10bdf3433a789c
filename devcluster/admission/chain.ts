/**
 * The admission chain: what lets an operator's webhooks see and change requests before they are
 * stored, as in a real cluster (D-ADM-1..9). It builds AdmissionReviews, calls the matching mutating
 * webhooks in order (applying their JSON patches, with one reinvocation round for `IfNeeded`), then
 * the validating webhooks in parallel, and turns denials and failures into the API errors of
 * D-ADM-7/8. Configurations are read from the store on every request, so changes apply at once
 * (D-ADM-12). A webhook matched through another version of the resource (`matchPolicy:
 * Equivalent`) gets the objects in its version — through the CRD's conversion webhook where it has
 * one (D-CONV-411, `versioned.ts`).
 */
import type * as core from '../api/core.js';
import * as objects from '../api/objects.js';
import * as keyorder from '../meta/keyorder.js';
import * as jsonpatch from '../patching/jsonpatch.js';
import * as statuses from '../server/statuses.js';
import * as calling from './calling.js';
import * as matching from './matching.js';
import * as versioning from './versioned.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

const MUTATING = 'admissionregistration.k8s.io/mutatingwebhookconfigurations';
const VALIDATING = 'admissionregistration.k8s.io/validatingwebhookconfigurations';

/** One finished webhook call, as seen from the API server's side (conversion calls too, D-CONV-409). */
export interface WebhookCallRecord {
  readonly name: string;
  readonly kind: 'mutating' | 'validating' | 'conversion';
  readonly ms: number;
  readonly ok: boolean;
}

export interface AdmissionOptions {
  resolver?: calling.ServiceResolver;
  insecure?: boolean;
  /** Observes every finished call (see `ClusterOptions.onWebhookCall`). */
  onCall?: (call: WebhookCallRecord) => void;
}

export class WebhookAdmission implements core.Admission {
  private readonly call: calling.CallOptions;
  private readonly onCall: ((call: WebhookCallRecord) => void) | undefined;

  constructor(
    private readonly c: core.Core,
    opts: AdmissionOptions = {},
  ) {
    this.call = { resolver: opts.resolver ?? calling.defaultServiceResolver, insecure: opts.insecure ?? false };
    this.onCall = opts.onCall;
  }

  private exempt(attrs: core.AdmissionAttributes): boolean {
    return attrs.type.storage === MUTATING || attrs.type.storage === VALIDATING;
  }

  private hooks(kind: 'mutating' | 'validating', attrs: core.AdmissionAttributes): matching.Webhook[] {
    const configs = this.c.store.list(kind === 'mutating' ? MUTATING : VALIDATING);
    if (!configs.length) return [];
    return matching.matchingWebhooks(kind, configs, attrs, this.c.registry, (ns) => {
      const nsObj = this.c.store.get('namespaces', ns);
      return nsObj ? objects.labelsOf(nsObj) : {};
    });
  }

  async mutate(attrs: core.AdmissionAttributes, warnings: string[]): Promise<JsonObject | undefined> {
    if (this.exempt(attrs) || attrs.operation === 'DELETE' || attrs.operation === 'CONNECT') return attrs.object;
    const hooks = this.hooks('mutating', attrs);
    if (!hooks.length) return attrs.object;
    const ranIfNeeded: { hook: matching.Webhook; changedAfter: boolean }[] = [];
    const obj = await this.mutatingPass(hooks, attrs, warnings, (hook, changed) => {
      if (changed) for (const r of ranIfNeeded) r.changedAfter = true;
      if (hook.spec['reinvocationPolicy'] === 'IfNeeded') ranIfNeeded.push({ hook, changedAfter: false });
    });
    const again = ranIfNeeded.filter((r) => r.changedAfter).map((r) => r.hook);
    if (!again.length) return obj;
    return this.mutatingPass(again, { ...attrs, object: obj }, warnings, () => undefined);
  }

  /**
   * Calls mutating webhooks in order, each with the object in its version (D-ADM-3, D-CONV-411),
   * and returns the request's object, in its version, with their patches.
   */
  private async mutatingPass(
    hooks: matching.Webhook[],
    attrs: core.AdmissionAttributes,
    warnings: string[],
    onCalled: (hook: matching.Webhook, changed: boolean) => void,
  ): Promise<JsonObject | undefined> {
    const versioned = new versioning.VersionedAttributes(attrs);
    for (const hook of hooks) {
      const sent = await versioned.as(hook.sendAs.version);
      const result = await this.callOne(hook, attrs, sent, warnings, true);
      const changed = result !== sent.object && result !== undefined && !json.deepEqual(sent.object, result);
      if (result !== sent.object && result !== undefined) versioned.patched(result);
      onCalled(hook, changed);
    }
    return versioned.result();
  }

  async validate(attrs: core.AdmissionAttributes, warnings: string[]): Promise<void> {
    if (this.exempt(attrs)) return;
    const hooks = this.hooks('validating', attrs);
    if (!hooks.length) return;
    // One view per version, converted once, before that version's first webhook is called (as upstream).
    const views = new Map<string, versioning.Sent>();
    const calls: Promise<JsonObject | undefined>[] = [];
    let conversionFailure: { error: unknown } | undefined;
    for (const hook of hooks) {
      const version = hook.sendAs.version;
      let sent = views.get(version);
      if (!sent) {
        try {
          sent = await new versioning.VersionedAttributes(attrs).as(version);
        } catch (error) {
          conversionFailure = { error };
          break;
        }
        views.set(version, sent);
      }
      calls.push(this.callOne(hook, attrs, sent, warnings, false));
    }
    const results = await Promise.allSettled(calls);
    if (conversionFailure) throw conversionFailure.error;
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }

  /** Calls one webhook with the objects in its version; returns the (possibly patched) object sent, or throws the request's error. */
  private async callOne(
    hook: matching.Webhook,
    attrs: core.AdmissionAttributes,
    sent: versioning.Sent,
    warnings: string[],
    mutating: boolean,
  ): Promise<JsonObject | undefined> {
    const name = String(hook.spec['name'] ?? '');
    const uid = this.c.ids.uid();
    const review = buildReview(hook, attrs, sent, uid);
    const started = performance.now();
    const result = await calling.callWebhook(hook.spec, review, this.call);
    this.onCall?.({ name, kind: mutating ? 'mutating' : 'validating', ms: performance.now() - started, ok: result.ok });
    const failurePolicy = (hook.spec['failurePolicy'] as string | undefined) ?? 'Fail';
    const fail = (detail: string): JsonObject | undefined => {
      if (failurePolicy === 'Ignore') return sent.object;
      const message = `failed calling webhook "${name}": failed to call webhook: ${detail}`;
      throw statuses.internal(message, [{ message: `Internal error occurred: ${message}` }]);
    };
    if (!result.ok) return fail(result.detail);
    const res = result.response;
    const response = json.isObject(res['response']) ? res['response'] : undefined;
    if (res['apiVersion'] !== 'admission.k8s.io/v1' || res['kind'] !== 'AdmissionReview' || !response) {
      return fail(`received invalid webhook response: expected apiVersion "admission.k8s.io/v1" and kind "AdmissionReview" with a response`);
    }
    if (response['uid'] !== uid) return fail(`received invalid webhook response: expected response.uid="${uid}", got "${String(response['uid'] ?? '')}"`);
    if (Array.isArray(response['warnings'])) for (const w of response['warnings']) warnings.push(String(w));
    if (response['allowed'] !== true) {
      const status = json.isObject(response['status']) ? response['status'] : {};
      const code = typeof status['code'] === 'number' && status['code'] >= 400 ? status['code'] : 400;
      const why = status['message'] ? `: ${String(status['message'])}` : status['reason'] ? `: ${String(status['reason'])}` : ' without explanation';
      throw new statuses.ApiError(code, (status['reason'] as statuses.StatusReason | undefined) ?? '', `admission webhook "${name}" denied the request${why}`);
    }
    const patch = response['patch'];
    const patchType = response['patchType'];
    if (patch === undefined && patchType === undefined) return sent.object;
    if (!mutating) return fail('received invalid webhook response: a validating webhook returned a patch');
    if (patch === undefined || patchType !== 'JSONPatch')
      return fail('received invalid webhook response: patch and patchType must be given together, patchType JSONPatch');
    try {
      const ops = jsonpatch.parseJsonPatch(JSON.parse(Buffer.from(String(patch), 'base64').toString('utf8')));
      const patched = jsonpatch.applyJsonPatch(sent.object, ops);
      if (!json.isObject(patched)) throw new Error('the patched object is not an object');
      return patched;
    } catch (err) {
      throw statuses.internal(`failed to apply the patch of webhook "${name}": ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/** The AdmissionReview sent to a webhook, members in Go's order and objects as the server writes them (D-BI-24). */
function buildReview(hook: matching.Webhook, attrs: core.AdmissionAttributes, sent: versioning.Sent, uid: string): JsonObject {
  const t = attrs.type;
  const sendVersion = hook.sendAs.version;
  const request: JsonObject = {
    uid,
    kind: { group: t.group, version: sendVersion, kind: t.kind },
    resource: { group: t.group, version: sendVersion, resource: t.resource },
  };
  if (attrs.subresource) request['subResource'] = attrs.subresource;
  request['requestKind'] = { group: t.group, version: t.version, kind: t.kind };
  request['requestResource'] = { group: t.group, version: t.version, resource: t.resource };
  if (attrs.subresource) request['requestSubResource'] = attrs.subresource;
  if (attrs.name) request['name'] = attrs.name;
  if (t.namespaced && attrs.namespace) request['namespace'] = attrs.namespace;
  Object.assign(request, {
    operation: attrs.operation,
    userInfo: {
      username: attrs.user.username,
      uid: attrs.user.uid,
      groups: attrs.user.groups,
      ...(attrs.user.extra ? { extra: keyorder.sortedDeep(attrs.user.extra) } : {}),
    },
    object: attrs.operation === 'DELETE' ? null : (sent.object ?? null),
    oldObject: sent.oldObject ?? null,
    dryRun: attrs.dryRun,
    options: attrs.options,
  });
  return { kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', request };
}
