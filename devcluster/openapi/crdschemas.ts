/**
 * What a custom resource version contributes to the OpenAPI documents' schemas, as upstream's
 * apiextensions-apiserver publishes it (D-WIRE-31): two definitions, the kind and its list, named
 * like upstream (`example.com/v1` `Widget` → `com.example.v1.Widget`), each with
 * `x-kubernetes-group-version-kind`. The kind's schema is the CRD's structural schema with
 * `int-or-string` unfolded, `metadata` pointing at ObjectMeta, `apiVersion`/`kind` added, and the
 * same three added under every `x-kubernetes-embedded-resource`.
 *
 * For OpenAPI v2 the schema is then made digestible for kubectl's validator as upstream does it:
 * junctors (`allOf`/`anyOf`/`oneOf`/`not`) and defaults dropped; a `nullable` node loses its type,
 * properties and items (and leaves its parent's `required`); a node that preserves unknown fields
 * loses its properties and items (and its `object` type); an array left without items loses its
 * type. A kind whose root preserves unknown fields, or that has no schema, is published as a bare
 * object, so that kubectl validates nothing in it.
 */
import type * as resources from '../api/resources.js';
import type * as schemas from '../crds/schemas.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as openapi from '../upstream/openapi.js';
import * as parts from './parts.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const OBJECT_META_DESCRIPTION =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_META_DESCRIPTION = 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';
const EMBEDDED_API_VERSION =
  'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND =
  'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** Members of a schema node that survive into a structural schema (upstream's `Structural`). */
const KEPT = new Set([
  'description',
  'type',
  'title',
  'default',
  'format',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);
const FLAGS = ['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string', 'nullable'];

/** Upstream's definition name for a kind of a group/version (`com.example.v1.Widget`). */
export function definitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/** The kind's and the list's definitions in OpenAPI v2 form. */
export function v2Definitions(t: resources.ResourceType): Record<string, JsonObject> {
  return definitions(t, true);
}

/** The kind's and the list's schemas in OpenAPI v3 form (`#/components/schemas/` references). */
export function v3Schemas(t: resources.ResourceType): Record<string, JsonObject> {
  return definitions(t, false);
}

function definitions(t: resources.ResourceType, v2: boolean): Record<string, JsonObject> {
  const kindName = definitionName(t.group, t.version, t.kind);
  const listName = definitionName(t.group, t.version, t.listKind);
  return parts.sortedKeys({ [kindName]: kindSchema(t, v2), [listName]: listSchema(t, kindName, v2) }) as Record<string, JsonObject>;
}

const gvk = (t: resources.ResourceType, kind: string): JsonObject[] => [{ group: t.group, kind, version: t.version }];

function ref(name: string, v2: boolean, description: string): JsonObject {
  const target = (v2 ? parts.V2_PREFIX : parts.V3_PREFIX) + name;
  // OpenAPI 3.0 ignores members beside a `$ref`; upstream's v3 documents wrap it in `allOf`.
  return v2 ? { $ref: target, description } : { allOf: [{ $ref: target }], description };
}

/** `apiVersion` and `kind` as every built-in kind declares them (upstream copies TypeMeta's). */
function typeMeta(): { apiVersion: JsonObject; kind: JsonObject } {
  const props = (openapi.definition('io.k8s.api.core.v1.ConfigMap')?.properties ?? {}) as Record<string, JsonObject>;
  return { apiVersion: props['apiVersion'] ?? { type: 'string' }, kind: props['kind'] ?? { type: 'string' } };
}

function kindSchema(t: resources.ResourceType, v2: boolean): JsonObject {
  const schema = t.customSchema;
  if (!schema || (v2 && schema['x-kubernetes-preserve-unknown-fields'] === true)) {
    return { type: 'object', 'x-kubernetes-group-version-kind': gvk(t, t.kind) };
  }
  let root = structural(schema);
  if (v2) root = toV2(root);
  const props: JsonObject = { ...(json.isObject(root['properties']) ? root['properties'] : {}) };
  const tm = typeMeta();
  props['metadata'] = ref(`${META}ObjectMeta`, v2, OBJECT_META_DESCRIPTION);
  props['apiVersion'] = tm.apiVersion;
  props['kind'] = tm.kind;
  root['properties'] = props;
  addEmbedded(root, v2);
  root['x-kubernetes-group-version-kind'] = gvk(t, t.kind);
  return root;
}

function listSchema(t: resources.ResourceType, kindName: string, v2: boolean): JsonObject {
  const tm = typeMeta();
  return {
    description: `${t.listKind} is a list of ${t.kind}`,
    properties: {
      apiVersion: tm.apiVersion,
      items: {
        description: `List of ${t.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        items: { $ref: (v2 ? parts.V2_PREFIX : parts.V3_PREFIX) + kindName },
        type: 'array',
      },
      kind: tm.kind,
      metadata: ref(`${META}ListMeta`, v2, LIST_META_DESCRIPTION),
    },
    required: ['items'],
    type: 'object',
    'x-kubernetes-group-version-kind': gvk(t, t.listKind),
  };
}

/** The structural members of a CRD schema node, recursively, with int-or-string unfolded. */
function structural(s: schemas.JSONSchemaProps): JsonObject {
  const src = s as unknown as JsonObject;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(src)) if (KEPT.has(k) && v !== undefined) out[k] = json.deepCopy(v);
  for (const flag of FLAGS) if (src[flag] === true) out[flag] = true;
  if (Array.isArray(out['x-kubernetes-validations']) && out['x-kubernetes-validations'].length === 0) delete out['x-kubernetes-validations'];
  if (s.properties) {
    const props: JsonObject = {};
    for (const [name, p] of Object.entries(s.properties)) props[name] = structural(p);
    out['properties'] = props;
  }
  if (s.items) out['items'] = structural(s.items);
  if (json.isObject(s.additionalProperties)) out['additionalProperties'] = structural(s.additionalProperties as schemas.JSONSchemaProps);
  else if (typeof s.additionalProperties === 'boolean') out['additionalProperties'] = s.additionalProperties;
  if (out['x-kubernetes-int-or-string'] === true) unfoldIntOrString(out);
  return out;
}

function unfoldIntOrString(node: JsonObject): void {
  const alternatives = [{ type: 'integer' }, { type: 'string' }];
  const anyOf = node['anyOf'];
  const allOf = node['allOf'];
  if (Array.isArray(anyOf) && json.deepEqual(anyOf, alternatives)) return;
  if (Array.isArray(allOf) && json.isObject(allOf[0]) && json.deepEqual(allOf[0]['anyOf'], alternatives)) return;
  if (anyOf === undefined) node['anyOf'] = alternatives;
  else node['allOf'] = [{ anyOf: alternatives }, ...(Array.isArray(allOf) ? allOf : [])];
}

/** Upstream's conversion of a structural schema for OpenAPI v2 (and its pruning of defaults). */
function toV2(node: JsonObject): JsonObject {
  for (const k of ['allOf', 'oneOf', 'anyOf', 'not', 'default']) delete node[k];
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (node['nullable'] === true) {
    delete node['type'];
    delete node['nullable'];
    delete node['items'];
    delete node['properties'];
  }
  if (preserve) {
    delete node['items'];
    delete node['properties'];
  }
  if (node['items'] === undefined && node['type'] === 'array') delete node['type'];
  if (preserve && node['type'] === 'object') delete node['type'];
  const props = json.isObject(node['properties']) ? (node['properties'] as Record<string, JsonObject>) : undefined;
  if (props && Array.isArray(node['required'])) {
    const required = (node['required'] as string[]).filter((f) => props[f]?.['nullable'] !== true);
    if (required.length) node['required'] = required;
    else delete node['required'];
  }
  const additional = node['additionalProperties'];
  if (json.isObject(additional) && additional['nullable'] === true) delete node['required'];
  if (props) for (const p of Object.values(props)) toV2(p);
  if (json.isObject(node['items'])) toV2(node['items']);
  if (json.isObject(additional)) toV2(additional);
  return node;
}

/** Adds `apiVersion`, `kind` and `metadata` under every embedded resource, as upstream does. */
function addEmbedded(node: JsonObject, v2: boolean): void {
  const props = json.isObject(node['properties']) ? (node['properties'] as Record<string, JsonObject>) : undefined;
  if (props) for (const p of Object.values(props)) addEmbedded(p, v2);
  if (json.isObject(node['items'])) addEmbedded(node['items'], v2);
  if (json.isObject(node['additionalProperties'])) addEmbedded(node['additionalProperties'], v2);
  if (v2 && node['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (node['x-kubernetes-embedded-resource'] !== true) return;
  const tm = typeMeta();
  node['properties'] = {
    ...(props ?? {}),
    apiVersion: { ...tm.apiVersion, description: EMBEDDED_API_VERSION },
    kind: { ...tm.kind, description: EMBEDDED_KIND },
    metadata: ref(`${META}ObjectMeta`, v2, OBJECT_META_DESCRIPTION),
  };
  const required = Array.isArray(node['required']) ? [...(node['required'] as string[])] : [];
  for (const r of ['kind', 'apiVersion']) if (!required.includes(r)) required.push(r);
  node['required'] = required;
}
