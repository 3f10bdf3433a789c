/**
 * `/openapi/v2` in protobuf form (D-WIRE-30): the OpenAPI v2 `Document` message of gnostic's
 * `OpenAPIv2.proto` (kept as data in `upstream/`), which is what kubectl 1.20 downloads before
 * every `apply`/`create` and `explain`. The JSON document is converted to gnostic's message
 * structure the way gnostic's own compiler reads it: maps become repeated `Named…` pairs, `type` a
 * `TypeItem`, `items` an `ItemsItem`, `additionalProperties` a schema-or-boolean item, parameters a
 * body-or-non-body oneof, every `x-` member a `NamedAny` whose value is the member as YAML text.
 *
 * A document is encoded in parts — a head (everything but paths and definitions), and per source
 * the contents of its `Paths` and `Definitions` messages — because both of those messages hold
 * nothing but repeated fields: their encoded contents concatenate into a valid whole. So a CRD
 * change re-encodes only that CRD's part.
 */
import { createRequire } from 'node:module';
import type * as protobuf from 'protobufjs';
import * as YAML from 'yaml';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as files from '../upstream/files.js';
import type * as parts from './parts.js';

interface Types {
  readonly writer: () => protobuf.Writer;
  readonly document: protobuf.Type;
  readonly paths: protobuf.Type;
  readonly definitions: protobuf.Type;
}

let types: Types | undefined;

function load(): Types {
  if (types) return types;
  // The library is loaded by the first protobuf document asked for, never at start-up.
  const pb = createRequire(import.meta.url)('protobufjs') as typeof protobuf;
  const root = new pb.Root();
  pb.parse(files.readDataFile('gnostic-openapiv2.proto'), root, { keepCase: true });
  // The file imports google/protobuf/any.proto, which protobufjs carries among its common types.
  const any = pb.common.get('google/protobuf/any.proto');
  if (any?.nested) root.addJSON(any.nested);
  root.resolveAll();
  types = {
    writer: () => pb.Writer.create(),
    document: root.lookupType('openapi.v2.Document'),
    paths: root.lookupType('openapi.v2.Paths'),
    definitions: root.lookupType('openapi.v2.Definitions'),
  };
  return types;
}

/** The `Document` message type (for tests that decode what was served). */
export const documentType = (): protobuf.Type => load().document;

/** The encoded contents of one part's `Paths` and `Definitions` messages. */
export interface EncodedPart {
  readonly paths: Uint8Array;
  readonly definitions: Uint8Array;
}

/**
 * Encodes one part's paths and definitions. Each entry is converted and encoded on its own (a
 * `Paths` or `Definitions` message of one entry) and the results concatenated, which is the same
 * encoding as the whole message, without ever holding the whole message tree in memory.
 */
export function encodePart(part: parts.V2Part): EncodedPart {
  const t = load();
  const paths = Object.entries(part.paths).map(([name, item]) => t.paths.encode({ path: [{ name, value: pathItem(item) }] }).finish());
  const definitions = Object.entries(part.definitions).map(([name, s]) =>
    t.definitions.encode({ additional_properties: [{ name, value: schema(s) }] }).finish(),
  );
  return { paths: Buffer.concat(paths), definitions: Buffer.concat(definitions) };
}

/** Encodes the document-level members (swagger, info, parameters, security…), i.e. all but paths and definitions. */
export function encodeHead(head: JsonObject): Uint8Array {
  const t = load();
  const msg: JsonObject = { swagger: head['swagger'] };
  if (json.isObject(head['info'])) msg['info'] = { ...head['info'], vendor_extension: extensions(head['info']) };
  if (json.isObject(head['parameters'])) msg['parameters'] = { additional_properties: named(head['parameters'] as Record<string, JsonObject>, parameter) };
  if (Array.isArray(head['security'])) msg['security'] = (head['security'] as JsonObject[]).map(securityRequirement);
  if (json.isObject(head['securityDefinitions'])) {
    msg['security_definitions'] = {
      additional_properties: named(head['securityDefinitions'] as Record<string, JsonObject>, (d) => ({
        api_key_security: { ...d, vendor_extension: extensions(d) },
      })),
    };
  }
  return t.document.encode(msg).finish();
}

/** Joins a head and parts into one encoded `Document`. */
export function join(head: Uint8Array, encoded: readonly EncodedPart[]): Buffer {
  const chunks: Uint8Array[] = [head];
  for (const [field, pick] of [
    [8, (p: EncodedPart) => p.paths],
    [9, (p: EncodedPart) => p.definitions],
  ] as const) {
    const contents = encoded.map(pick);
    const length = contents.reduce((n, c) => n + c.length, 0);
    chunks.push(
      load()
        .writer()
        .uint32((field << 3) | 2)
        .uint32(length)
        .finish(),
      ...contents,
    );
  }
  return Buffer.concat(chunks);
}

function named<T>(record: Readonly<Record<string, T>>, convert: (v: T) => unknown): JsonObject[] {
  return Object.entries(record).map(([name, value]) => ({ name, value: convert(value) }));
}

const yamlCache = new Map<string, string>();

/** A value as gnostic's `Any`: its YAML text. */
function any(value: unknown): JsonObject {
  if (typeof value === 'string' && /^[A-Za-z][A-Za-z0-9_./-]*$/.test(value) && !/^(true|false|null|yes|no|on|off|y|n)$/i.test(value)) {
    return { yaml: `${value}\n` };
  }
  const key = JSON.stringify(value);
  let text = yamlCache.get(key);
  if (text === undefined) {
    text = YAML.stringify(value, { lineWidth: 0 });
    if (yamlCache.size < 10_000) yamlCache.set(key, text);
  }
  return { yaml: text };
}

function extensions(obj: JsonObject): JsonObject[] {
  const out: JsonObject[] = [];
  for (const [k, v] of Object.entries(obj)) if (k.startsWith('x-') && v !== undefined) out.push({ name: k, value: any(v) });
  return out;
}

/** Validation members every schema-like message has (`Schema`, `PrimitivesItems`, parameter sub-schemas). */
const VALIDATIONS: Readonly<Record<string, string>> = {
  format: 'format',
  multipleOf: 'multiple_of',
  maximum: 'maximum',
  exclusiveMaximum: 'exclusive_maximum',
  minimum: 'minimum',
  exclusiveMinimum: 'exclusive_minimum',
  maxLength: 'max_length',
  minLength: 'min_length',
  pattern: 'pattern',
  maxItems: 'max_items',
  minItems: 'min_items',
  uniqueItems: 'unique_items',
};

/** Members only `Schema` has. */
const SCHEMA_MEMBERS: Readonly<Record<string, string>> = {
  title: 'title',
  description: 'description',
  maxProperties: 'max_properties',
  minProperties: 'min_properties',
  required: 'required',
  discriminator: 'discriminator',
  readOnly: 'read_only',
};

/** Members of non-body parameters (and, for `type` and `collectionFormat`, of `PrimitivesItems`). */
const PARAMETER_MEMBERS: Readonly<Record<string, string>> = {
  required: 'required',
  in: 'in',
  description: 'description',
  name: 'name',
  allowEmptyValue: 'allow_empty_value',
  type: 'type',
  collectionFormat: 'collection_format',
};

/** A JSON schema as gnostic's `Schema`; members OpenAPI v2 does not have are not carried. */
function schema(s: JsonObject): JsonObject {
  const m: JsonObject = {};
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined) continue;
    const plain = VALIDATIONS[k] ?? SCHEMA_MEMBERS[k];
    if (plain !== undefined) m[plain] = v;
    else if (k === '$ref') m['_ref'] = v;
    else if (k === 'default' || k === 'example') m[k] = any(v);
    else if (k === 'enum' && Array.isArray(v)) m['enum'] = v.map(any);
    else if (k === 'type') m['type'] = { value: Array.isArray(v) ? v : [v] };
    else if (k === 'items') m['items'] = { schema: (Array.isArray(v) ? v : [v]).map((i) => schema(i as JsonObject)) };
    else if (k === 'additionalProperties') m['additional_properties'] = typeof v === 'boolean' ? { boolean: v } : { schema: schema(v as JsonObject) };
    else if (k === 'allOf' && Array.isArray(v)) m['all_of'] = v.map((i) => schema(i as JsonObject));
    else if (k === 'properties' && json.isObject(v)) m['properties'] = { additional_properties: named(v as Record<string, JsonObject>, schema) };
    else if (k === 'externalDocs' && json.isObject(v)) m['external_docs'] = { description: v['description'], url: v['url'] };
  }
  const ext = extensions(s);
  if (ext.length) m['vendor_extension'] = ext;
  return m;
}

/** A non-body parameter, or (`itemsOnly`) the `items` of one (gnostic's `PrimitivesItems`). */
function primitives(s: JsonObject, itemsOnly: boolean): JsonObject {
  const m: JsonObject = {};
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined) continue;
    const plain = VALIDATIONS[k] ?? (itemsOnly && k !== 'type' && k !== 'collectionFormat' ? undefined : PARAMETER_MEMBERS[k]);
    if (plain !== undefined) m[plain] = v;
    else if (k === 'items' && json.isObject(v)) m['items'] = primitives(v, true);
    else if (k === 'default') m['default'] = any(v);
    else if (k === 'enum' && Array.isArray(v)) m['enum'] = v.map(any);
  }
  m['vendor_extension'] = extensions(s);
  return m;
}

const SUB_SCHEMAS: Readonly<Record<string, string>> = {
  query: 'query_parameter_sub_schema',
  path: 'path_parameter_sub_schema',
  header: 'header_parameter_sub_schema',
  formData: 'form_data_parameter_sub_schema',
};

function parameter(p: JsonObject): JsonObject {
  if (p['in'] === 'body') {
    const body: JsonObject = { description: p['description'], name: p['name'], in: 'body', required: p['required'] === true };
    if (json.isObject(p['schema'])) body['schema'] = schema(p['schema']);
    body['vendor_extension'] = extensions(p);
    return { body_parameter: body };
  }
  return { non_body_parameter: { [SUB_SCHEMAS[p['in'] as string] ?? 'query_parameter_sub_schema']: primitives(p, false) } };
}

function parametersItem(p: JsonObject): JsonObject {
  return typeof p['$ref'] === 'string' ? { json_reference: { _ref: p['$ref'] } } : { parameter: parameter(p) };
}

function response(r: JsonObject): JsonObject {
  if (typeof r['$ref'] === 'string') return { json_reference: { _ref: r['$ref'] } };
  const out: JsonObject = { description: r['description'] ?? '' };
  if (json.isObject(r['schema'])) out['schema'] = { schema: schema(r['schema']) };
  out['vendor_extension'] = extensions(r);
  return { response: out };
}

function operation(op: JsonObject): JsonObject {
  const m: JsonObject = {};
  for (const k of ['tags', 'summary', 'description', 'produces', 'consumes', 'schemes', 'deprecated']) if (op[k] !== undefined) m[k] = op[k];
  if (op['operationId'] !== undefined) m['operation_id'] = op['operationId'];
  if (Array.isArray(op['parameters'])) m['parameters'] = (op['parameters'] as JsonObject[]).map(parametersItem);
  if (json.isObject(op['responses'])) {
    const responses = op['responses'];
    m['responses'] = {
      response_code: Object.entries(responses)
        .filter(([code]) => !code.startsWith('x-'))
        .map(([name, r]) => ({ name, value: response(r as JsonObject) })),
      vendor_extension: extensions(responses),
    };
  }
  m['vendor_extension'] = extensions(op);
  return m;
}

function pathItem(item: JsonObject): JsonObject {
  const m: JsonObject = {};
  for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']) {
    if (json.isObject(item[method])) m[method] = operation(item[method]);
  }
  if (Array.isArray(item['parameters'])) m['parameters'] = (item['parameters'] as JsonObject[]).map(parametersItem);
  if (typeof item['$ref'] === 'string') m['_ref'] = item['$ref'];
  m['vendor_extension'] = extensions(item);
  return m;
}

function securityRequirement(req: JsonObject): JsonObject {
  return { additional_properties: Object.entries(req).map(([name, scopes]) => ({ name, value: { value: scopes } })) };
}
