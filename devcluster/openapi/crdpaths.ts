/**
 * The paths a custom resource version contributes to the OpenAPI documents, laid out as upstream's
 * apiextensions-apiserver builds them (D-WIRE-31): list (and, when namespaced, list across
 * namespaces), create, delete collection, read, replace, delete and patch, plus read/replace/patch
 * of `status` and `scale` when the version has them. Every operation carries the resource's
 * `x-kubernetes-group-version-kind`, produces JSON and YAML only, and a PATCH `consumes` JSON patch,
 * merge patch and apply patch but never strategic merge patch: current kubectl picks the patch type
 * of `apply` from that list (D-KCTL-4), so it keeps sending merge patches for custom resources.
 *
 * Upstream builds these from the same option structs as the built-in resources, so the query
 * parameters of each operation are those of the same operation on Deployments in upstream's
 * document; that is where they are taken from.
 */
import type * as resources from '../api/resources.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as openapi from '../upstream/openapi.js';
import * as crdschemas from './crdschemas.js';
import * as parts from './parts.js';

const TEMPLATE = '/apis/apps/v1/namespaces/{namespace}/deployments';
const TEMPLATE_ALL = '/apis/apps/v1/deployments';
const TEMPLATE_KINDS: Readonly<Record<string, 'kind' | 'list'>> = {
  'io.k8s.api.apps.v1.Deployment': 'kind',
  'io.k8s.api.apps.v1.DeploymentList': 'list',
};
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];
const MEDIA = ['application/json', 'application/yaml'];

/** Response codes upstream's builder declares per action (besides 401). */
const RESPONSES: Readonly<Record<string, readonly string[]>> = {
  post: ['200', '201', '202'],
  put: ['200', '201'],
  delete: ['200', '202'],
};

interface Operation {
  readonly method: string;
  readonly verb: string;
}

/** The v2 paths of one served custom resource version. */
export function v2Paths(t: resources.ResourceType): Record<string, JsonObject> {
  const plural = t.resource;
  const base = `/apis/${t.group}/${t.version}`;
  const root = t.namespaced ? `${base}/namespaces/{namespace}/${plural}` : `${base}/${plural}`;
  const out: Record<string, JsonObject> = {};
  if (t.namespaced) out[`${base}/${plural}`] = pathItem(t, TEMPLATE_ALL, '', [{ method: 'get', verb: 'list' }], true);
  const collection: Operation[] = [
    { method: 'get', verb: 'list' },
    { method: 'post', verb: 'create' },
    { method: 'delete', verb: 'deletecollection' },
  ];
  out[root] = pathItem(t, TEMPLATE, '', collection, false);
  const item: Operation[] = [
    { method: 'get', verb: 'read' },
    { method: 'put', verb: 'replace' },
    { method: 'delete', verb: 'delete' },
    { method: 'patch', verb: 'patch' },
  ];
  out[`${root}/{name}`] = pathItem(t, `${TEMPLATE}/{name}`, '', item, false);
  const subItem = item.filter((o) => o.method !== 'delete');
  for (const sub of ['status', 'scale']) {
    if (t.subresources.includes(sub)) out[`${root}/{name}/${sub}`] = pathItem(t, `${TEMPLATE}/{name}/${sub}`, sub, subItem, false);
  }
  return out;
}

function pathItem(t: resources.ResourceType, templatePath: string, sub: string, ops: readonly Operation[], allNamespaces: boolean): JsonObject {
  const template = openapi.document().paths[templatePath] as JsonObject | undefined;
  if (!template) throw new Error(`devcluster: the OpenAPI document has no path ${templatePath}`);
  const out: JsonObject = {};
  for (const { method, verb } of ops) {
    const op = template[method];
    if (!json.isObject(op)) continue;
    out[method] = operation(t, op, method, verb, sub, allNamespaces);
  }
  const params = ((template['parameters'] as JsonObject[] | undefined) ?? [])
    .filter((p) => t.namespaced || p['$ref'] !== '#/parameters/namespace-vgWSWtn3')
    .map((p) => (p['name'] === 'name' && p['in'] === 'path' ? { ...p, description: `name of the ${t.kind}` } : p));
  out['parameters'] = params;
  return parts.sortedKeys(out) as JsonObject;
}

function operation(t: resources.ResourceType, template: JsonObject, method: string, verb: string, sub: string, allNamespaces: boolean): JsonObject {
  const action = template['x-kubernetes-action'];
  const kindName = crdschemas.definitionName(t.group, t.version, t.kind);
  const listName = crdschemas.definitionName(t.group, t.version, t.listKind);
  const retarget = (schema: unknown): unknown => {
    const name = json.isObject(schema) ? parts.refName(schema['$ref']) : undefined;
    const role = name === undefined ? undefined : TEMPLATE_KINDS[name];
    if (role === undefined) return schema;
    return { $ref: parts.V2_PREFIX + (role === 'kind' ? kindName : listName) };
  };
  const parameters = ((template['parameters'] as JsonObject[] | undefined) ?? []).map((p) =>
    p['in'] === 'body' && p['schema'] !== undefined ? { ...p, schema: retarget(p['schema']) } : p,
  );
  const templateResponses = (template['responses'] ?? {}) as Record<string, JsonObject>;
  const responses: JsonObject = {};
  for (const code of RESPONSES[method] ?? ['200']) {
    const r = templateResponses[code] ?? templateResponses['200'];
    if (r) responses[code] = { ...r, schema: retarget(r['schema']) };
  }
  responses['401'] = { description: 'Unauthorized' };
  const op: JsonObject = {
    consumes: method === 'patch' ? PATCH_TYPES : MEDIA,
    description: describe(t.kind, verb, sub),
    operationId: operationId(t, verb, sub, allNamespaces),
    produces: MEDIA,
    responses,
    schemes: ['https'],
    tags: [tagOf(t.group, t.version)],
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: t.group, kind: t.kind, version: t.version },
  };
  if (parameters.length) op['parameters'] = parameters;
  return op;
}

/** Upstream's operation descriptions for custom resources. */
function describe(kind: string, verb: string, sub: string): string {
  const of = sub ? ` ${sub} of` : '';
  switch (verb) {
    case 'list':
      return `list objects of kind ${kind}`;
    case 'read':
    case 'replace':
      return `${verb}${of} the specified ${kind}`;
    case 'patch':
      return `partially update${of} the specified ${kind}`;
    case 'create':
    case 'delete':
      return `${verb}${of} ${/^[aeiou]/i.test(kind) ? 'an' : 'a'} ${kind}`;
    default:
      return `delete collection of${sub ? `${of} a` : ''} ${kind}`;
  }
}

function operationId(t: resources.ResourceType, verb: string, sub: string, allNamespaces: boolean): string {
  const prefix = verb === 'deletecollection' ? 'delete' : verb;
  const collection = verb === 'deletecollection' ? 'Collection' : '';
  const scope = t.namespaced && !allNamespaces ? 'Namespaced' : '';
  const suffix = (sub ? sub[0]!.toUpperCase() + sub.slice(1) : '') + (allNamespaces ? 'ForAllNamespaces' : '');
  return `${prefix}${validId(t.group.replace(/\.k8s\.io$/, ''), true)}${validId(t.version, true)}${collection}${scope}${t.kind}${suffix}`;
}

/** The operation tag of a group/version (`example.com`, `v1` → `exampleCom_v1`). */
export function tagOf(group: string, version: string): string {
  return `${validId(group.replace(/\.k8s\.io$/, ''), false)}_${validId(version, false)}`;
}

/** Upstream's identifier form: letters and digits kept, each other character capitalises the next letter. */
function validId(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (/\p{L}/u.test(ch) || ch === '_' || (i !== 0 && /\d/.test(ch))) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else capitalize = true;
  }
  return out;
}
