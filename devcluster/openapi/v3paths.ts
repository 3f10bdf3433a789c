/**
 * Paths in OpenAPI v3 form, converted from v2 path items as upstream's v3 documents lay them out
 * (D-WIRE-32): parameters inline (v2's shared `#/parameters/…` resolved) with their type in a
 * `schema`; the body parameter becomes a `requestBody` with one content entry per media type the
 * operation consumes; each response's schema becomes one content entry per media type it produces;
 * `consumes`, `produces` and `schemes` go. Every PATCH operation thereby keeps its
 * `fieldValidation` parameter and its `x-kubernetes-group-version-kind`, which is what kubectl 1.27+
 * looks for before it leaves validation to the server.
 */
import type { JsonObject } from '../json.js';
import * as json from '../json.js';
import * as builtin from './builtin.js';
import * as v3schemas from './v3schemas.js';

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch']);
const SCHEMA_MEMBERS = new Set(['type', 'format', 'items', 'enum', 'default', 'uniqueItems', 'maximum', 'minimum', 'pattern', 'collectionFormat']);

/** One v2 path item in v3 form. */
export function pathItem(item: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(item)) {
    if (METHODS.has(k) && json.isObject(v)) out[k] = operation(v);
    else if (k === 'parameters' && Array.isArray(v)) out[k] = (v as JsonObject[]).map(resolve).map(parameter);
    else out[k] = v;
  }
  return out;
}

function resolve(p: JsonObject): JsonObject {
  const ref = p['$ref'];
  if (typeof ref !== 'string' || !ref.startsWith('#/parameters/')) return p;
  return builtin.parameter(ref.slice('#/parameters/'.length)) ?? p;
}

function parameter(p: JsonObject): JsonObject {
  const out: JsonObject = {};
  const schema: JsonObject = {};
  for (const [k, v] of Object.entries(p)) {
    if (SCHEMA_MEMBERS.has(k)) {
      if (k !== 'collectionFormat') schema[k] = v;
    } else out[k] = v;
  }
  if (Object.keys(schema).length) out['schema'] = schema;
  return out;
}

const content = (types: readonly string[], schema: unknown): JsonObject => {
  const out: JsonObject = {};
  for (const t of [...types].sort()) out[t] = { schema: v3schemas.plain(schema) };
  return out;
};

function operation(op: JsonObject): JsonObject {
  const consumes = (op['consumes'] as string[] | undefined) ?? ['*/*'];
  const produces = (op['produces'] as string[] | undefined) ?? ['application/json'];
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(op)) {
    if (k === 'consumes' || k === 'produces' || k === 'schemes') continue;
    if (k === 'parameters' && Array.isArray(v)) {
      const params = (v as JsonObject[]).map(resolve);
      const body = params.find((p) => p['in'] === 'body');
      const rest = params.filter((p) => p['in'] !== 'body').map(parameter);
      if (rest.length) out['parameters'] = rest;
      if (body) {
        const requestBody: JsonObject = { content: content(consumes, body['schema']) };
        if (body['required'] === true) requestBody['required'] = true;
        out['requestBody'] = requestBody;
      }
    } else if (k === 'responses' && json.isObject(v)) {
      const responses: JsonObject = {};
      for (const [code, r] of Object.entries(v as Record<string, JsonObject>)) {
        const converted: JsonObject = {};
        if (r['schema'] !== undefined) converted['content'] = content(produces, r['schema']);
        converted['description'] = r['description'];
        responses[code] = converted;
      }
      out['responses'] = responses;
    } else out[k] = v;
  }
  return out;
}
