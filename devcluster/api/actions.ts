/**
 * What the action subresources (eviction, binding, token requests), the connect subresources and
 * component statuses share (D-BI-17, D-BI-18): the request they are handed by the HTTP layer, the
 * reply they give back, and the steps every action repeats — decoding the body as the one kind the
 * subresource accepts, and running the admission webhooks for the `CREATE` it stands for.
 */
import type * as tokens from '../auth/tokens.js';
import * as decoding from '../builtins/decoding.js';
import * as statuses from '../server/statuses.js';
import * as core from './core.js';
import * as objects from './objects.js';
import type * as resources from './resources.js';
import * as writes from './writes.js';
import type { JsonObject } from '../json.js';

/** What a handler knows of its request. */
export interface SubresourceRequest {
  readonly core: core.Core;
  readonly type: resources.ResourceType;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  /** The rest of a proxy path (`pods/p/proxy/<subpath>`), without the leading slash. */
  readonly subpath: string | undefined;
  readonly query: URLSearchParams;
  readonly user: core.UserInfo;
  readonly fieldManager: string;
  readonly dryRun: boolean;
  readonly warnings: string[];
  /** Whether the client asked for a Table (`kubectl get`). */
  readonly table: boolean;
  /** Where issued service-account tokens are registered. */
  readonly tokens: tokens.TokenTable | undefined;
  /** The request body, decoded (400 when it is missing or malformed). */
  body(): unknown;
}

/** The answer: a JSON body, or raw text (logs); no body at all for 204. */
export interface SubresourceReply {
  readonly code: number;
  readonly body?: unknown;
  readonly text?: string;
  readonly contentType?: string;
}

export type SubresourceHandler = (r: SubresourceRequest) => Promise<SubresourceReply>;

/** The `Status` a successful action answers with (`{"status":"Success","code":201}`). */
export const success = (code = 201): JsonObject => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code });

/** The upstream schema of each action's body. */
const ACTION_DEFINITIONS: Readonly<Record<string, string>> = {
  Binding: 'io.k8s.api.core.v1.Binding',
  Eviction: 'io.k8s.api.policy.v1.Eviction',
  TokenRequest: 'io.k8s.api.authentication.v1.TokenRequest',
};

function decodeAction(r: SubresourceRequest, raw: JsonObject, kind: string, apiVersion: string, definition: string): JsonObject {
  const version = apiVersion.slice(apiVersion.lastIndexOf('/') + 1);
  const { value, unknownFields } = new decoding.SchemaDecoder(kind, version).decode(definition, raw);
  for (const f of unknownFields) r.warnings.push(`unknown field "${f}"`);
  return value;
}

/**
 * The body of an action as the kind it must be: an object whose `apiVersion` (when given) is one
 * the subresource accepts, and whose namespace (when given) is the request's.
 */
export function actionBody(r: SubresourceRequest, accepted: readonly string[], kind: string): JsonObject {
  const raw = writes.requireObject(r.body());
  // Decoded as the kind's Go type first, as upstream does before looking at anything (D-BI-20).
  const definition = ACTION_DEFINITIONS[kind];
  const body = definition ? decodeAction(r, raw, kind, accepted[0]!, definition) : raw;
  const apiVersion = body['apiVersion'];
  if (apiVersion !== undefined && apiVersion !== '' && !accepted.includes(String(apiVersion))) {
    throw statuses.badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${accepted[0]})`);
  }
  const k = body['kind'];
  if (k !== undefined && k !== '' && k !== kind) throw statuses.badRequest(`the kind in the data (${String(k)}) does not match the expected kind (${kind})`);
  const ns = objects.metaOf(body)['namespace'];
  if (ns !== undefined && ns !== '' && r.namespace !== undefined && ns !== r.namespace) {
    throw statuses.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  return body;
}

/**
 * Runs the admission webhooks for an action: a `CREATE` of `subresource` of `type` whose object is
 * the action's body (an Eviction, a Binding, a TokenRequest). Returns the object as mutated.
 */
export async function admitAction(
  r: SubresourceRequest,
  type: resources.ResourceType,
  subresource: string | undefined,
  kind: string,
  object: JsonObject,
): Promise<JsonObject> {
  const attrs: core.AdmissionAttributes = {
    operation: 'CREATE',
    // Webhooks see the action's kind (upstream sends its group too; the devcluster keeps the resource's).
    type: { ...type, kind },
    subresource,
    namespace: r.namespace,
    name: r.name,
    object,
    oldObject: undefined,
    dryRun: r.dryRun,
    options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions', fieldManager: r.fieldManager, ...(r.dryRun ? { dryRun: ['All'] } : {}) },
    user: r.user,
  };
  const mutated = (await r.core.admission.mutate(attrs, r.warnings)) ?? object;
  await r.core.admission.validate({ ...attrs, object: mutated }, r.warnings);
  return mutated;
}

/** The served type of a built-in resource, found by group, version and resource. */
export function typeOf(c: core.Core, group: string, version: string, resource: string): resources.ResourceType {
  const t = c.registry.find(group, version, resource);
  if (!t) throw statuses.internal(`the ${resource} resource is not served`);
  return t;
}

/** A write request for an action's own writes (as the requesting user, with the request's manager). */
export function actionWrite(
  r: SubresourceRequest,
  type: resources.ResourceType,
  namespace: string | undefined,
  name: string,
  subresource?: string,
): core.WriteRequest {
  return {
    type,
    namespace,
    name,
    subresource,
    user: r.user,
    dryRun: r.dryRun,
    fieldManager: r.fieldManager,
    fieldValidation: 'Ignore',
    warnings: r.warnings,
  };
}

/** The core without admission: an action's own writes go to storage directly upstream, past the webhooks. */
export function withoutAdmission(c: core.Core): core.Core {
  return Object.create(c, { admission: { value: core.noAdmission } }) as core.Core;
}
