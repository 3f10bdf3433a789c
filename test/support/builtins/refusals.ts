/**
 * Bodies a built-in kind must refuse, derived from its sample object and OpenAPI schema, with the
 * answer upstream gives: a value of the wrong JSON type (400, the decoder's message naming the Go
 * struct and the field — D-BI-20) and a sample without a member the schema requires (422, `<path>:
 * Required value` — D-BI-21). The field is chosen by walking the sample breadth-first, so the
 * refusal is about a field a real object of the kind carries.
 */
import type { JsonObject } from '../../../devcluster/json.js';
import type { ResourceEntry } from '../../../devcluster/upstream/catalog.js';
import * as openapi from '../../../devcluster/upstream/openapi.js';
import type { Sample } from './samples.js';

const ROOT_MEMBERS = new Set(['apiVersion', 'kind', 'metadata', 'status']);

export interface WrongType {
  /** The sample with one scalar replaced by a value of another JSON type. */
  readonly body: Sample;
  /** The field's path (`spec.template.spec.containers[0].name`). */
  readonly field: string;
  /** The whole message upstream answers with. */
  readonly message: string;
}

export interface MissingRequired {
  /** The sample without the member. */
  readonly body: Sample;
  /** The member's path, as the 422's cause names it. */
  readonly field: string;
}

/** One place in the sample: its value, its schema, and the paths the two messages use. */
interface Node {
  readonly value: unknown;
  readonly schema: openapi.Schema;
  /** The Go struct holding the value (`JobSpec`). */
  readonly struct: string;
  /** The decoder's path: members only (`spec.template.spec.containers.name`). */
  readonly goPath: string;
  /** The field path: with list indices (`spec.template.spec.containers[0].name`). */
  readonly fieldPath: string;
  /** How to reach it from the root (member names and indices). */
  readonly steps: readonly (string | number)[];
}

const shortName = (definition: string): string => definition.slice(definition.lastIndexOf('.') + 1);

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** The members of an object node, with their schemas (a `$ref` resolved, its struct name kept). */
function children(node: Node): Node[] {
  const ref = openapi.refName(node.schema);
  const schema = ref ? openapi.resolve(node.schema) : node.schema;
  const struct = ref ? shortName(ref) : node.struct;
  if (Array.isArray(node.value) && schema.items) {
    return node.value.map((item, i) => ({
      value: item,
      schema: schema.items!,
      struct,
      goPath: node.goPath,
      fieldPath: `${node.fieldPath}[${i}]`,
      steps: [...node.steps, i],
    }));
  }
  if (node.value === null || typeof node.value !== 'object' || !schema.properties) return [];
  const root = node.steps.length === 0;
  return Object.entries(node.value as JsonObject)
    .filter(([key]) => !(root && ROOT_MEMBERS.has(key)) && schema.properties![key] !== undefined)
    .map(([key, value]) => ({
      value,
      schema: schema.properties![key]!,
      struct,
      goPath: join(node.goPath, key),
      fieldPath: join(node.fieldPath, key),
      steps: [...node.steps, key],
    }));
}

/** The nodes of the sample, breadth-first. */
function* walk(e: ResourceEntry, sample: JsonObject): Generator<Node> {
  const queue: Node[] = [
    { value: sample, schema: { $ref: `#/definitions/${e.definition}` }, struct: shortName(e.definition), goPath: '', fieldPath: '', steps: [] },
  ];
  while (queue.length) {
    const node = queue.shift()!;
    if (node.steps.length) yield node;
    queue.push(...children(node));
  }
}

/** The Go type the decoder names for a scalar schema. */
function goTypeOf(schema: openapi.Schema): string | undefined {
  if (schema['x-kubernetes-int-or-string'] || schema.format === 'int-or-string') return undefined;
  switch (schema.type) {
    case 'string':
      return schema.format === 'byte' ? undefined : 'string';
    case 'integer':
      return schema.format === 'int64' ? 'int64' : 'int32';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    default:
      return undefined;
  }
}

/** A copy of `obj` with `value` at `steps` (intermediate objects and lists created), or without it when `value` is undefined. */
function setAt(obj: JsonObject, steps: readonly (string | number)[], value: unknown): JsonObject {
  const copy = structuredClone(obj);
  let at: any = copy;
  steps.slice(0, -1).forEach((step, i) => {
    at[step] ??= typeof steps[i + 1] === 'number' ? [] : {};
    at = at[step];
  });
  const last = steps[steps.length - 1]!;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return copy;
}

/** The optional members of the kind's schema, breadth-first (a list's first item stands for the list), to `depth` levels. */
function* schemaWalk(e: ResourceEntry, depth = 4): Generator<Node> {
  const queue: Node[] = [
    { value: undefined, schema: { $ref: `#/definitions/${e.definition}` }, struct: shortName(e.definition), goPath: '', fieldPath: '', steps: [] },
  ];
  while (queue.length) {
    const node = queue.shift()!;
    if (node.steps.length) yield node;
    if (node.steps.length >= depth) continue;
    const ref = openapi.refName(node.schema);
    const schema = ref ? openapi.resolve(node.schema) : node.schema;
    const struct = ref ? shortName(ref) : node.struct;
    if (schema.type === 'array' && schema.items) {
      queue.push({ ...node, schema: schema.items, struct, fieldPath: `${node.fieldPath}[0]`, steps: [...node.steps, 0] });
      continue;
    }
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (node.steps.length === 0 && ROOT_MEMBERS.has(key)) continue;
      queue.push({
        value: undefined,
        schema: property,
        struct,
        goPath: join(node.goPath, key),
        fieldPath: join(node.fieldPath, key),
        steps: [...node.steps, key],
      });
    }
  }
}

/**
 * The sample with one scalar of the wrong JSON type, and the decoder's answer: the first scalar the
 * sample carries (breadth-first), else the first optional scalar of the schema, set in a copy;
 * undefined when the kind has no scalar at all.
 */
export function wrongType(e: ResourceEntry, sample: JsonObject): WrongType | undefined {
  for (const node of [...walk(e, sample), ...schemaWalk(e)]) {
    // A `$ref` scalar is a type the decoder parses itself (times, quantities, int-or-string).
    if (openapi.refName(node.schema) !== undefined || (node.value !== undefined && typeof node.value === 'object')) continue;
    const goType = goTypeOf(node.schema);
    if (goType === undefined) continue;
    const [wrong, jsonKind] = goType === 'string' ? [12345, 'number'] : ['wrong', 'string'];
    return {
      body: setAt(sample, node.steps, wrong),
      field: node.fieldPath,
      message: `${e.kind} in version "${e.version}" cannot be handled as a ${e.kind}: json: cannot unmarshal ${jsonKind} into Go struct field ${node.struct}.${node.goPath} of type ${goType}`,
    };
  }
  return undefined;
}

/**
 * The sample without a member its schema requires: the first required scalar or list the sample
 * carries (breadth-first), else the first required object — a kind's own validation names the
 * missing leaf rather than its parent, so a leaf gives the comparable answer. Undefined when
 * nothing the sample carries is required.
 */
export function missingRequired(e: ResourceEntry, sample: JsonObject): MissingRequired | undefined {
  const root: Node = { value: sample, schema: { $ref: `#/definitions/${e.definition}` }, struct: '', goPath: '', fieldPath: '', steps: [] };
  const found: MissingRequired[] = [];
  for (const node of [root, ...walk(e, sample)]) {
    if (node.value === null || typeof node.value !== 'object' || Array.isArray(node.value)) continue;
    const value = node.value as JsonObject;
    const schema = openapi.refName(node.schema) ? openapi.resolve(node.schema) : node.schema;
    for (const key of schema.required ?? []) {
      if ((node.steps.length === 0 && ROOT_MEMBERS.has(key)) || value[key] === undefined) continue;
      const probe = { body: setAt(sample, [...node.steps, key], undefined), field: join(node.fieldPath, key) };
      const member = value[key];
      if (member === null || typeof member !== 'object' || Array.isArray(member)) return probe;
      found.push(probe);
    }
  }
  return found[0];
}
