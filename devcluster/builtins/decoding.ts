/**
 * Decoding of built-in objects against their upstream OpenAPI schema, as the API server's JSON
 * decoder does it into Go types (D-BI-20): a value of the wrong type is refused with 400 and Go's
 * message (`json: cannot unmarshal string into Go struct field JobSpec.spec.completions of type
 * int32`), members the type does not have are unknown fields (reported or refused by the request's
 * `fieldValidation`, and dropped), `null` leaves a field unset, times are normalised to their
 * second or microsecond form, and quantities must parse.
 *
 * Only the shape is checked here; rules (required fields, enums) are `schemarules.ts`'s, and
 * kind-specific ones live in the kinds' modules.
 */
import * as times from '../meta/times.js';
import * as openapi from '../upstream/openapi.js';
import * as datamaps from './datamaps.js';
import * as strategies from './strategies.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

/** The result of decoding: the value as stored, and the unknown fields found (`spec.foo`, `a[0].b`). */
export interface Decoded {
  readonly value: JsonObject;
  readonly unknownFields: string[];
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const TIME = `${META}Time`;
const MICRO_TIME = `${META}MicroTime`;
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
/** Definitions whose content is free JSON. */
const FREE = new Set([`${META}FieldsV1`, 'io.k8s.apimachinery.pkg.runtime.RawExtension', 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON']);

/** Upstream's quantity syntax (`resource.Quantity`), as its decoder's message quotes it. */
export const QUANTITY_PATTERN = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;

/** Where a value sits: the Go message's path (no indices) and the field path (with indices). */
interface Place {
  readonly goPath: string;
  readonly fieldPath: string;
  /** The Go struct holding the field (`JobSpec`), for the decoder's message. */
  readonly struct: string;
}

/** A decoder for one kind: `definition` is its OpenAPI definition, `kind`/`version` name it in errors. */
export class SchemaDecoder {
  private unknown: string[] = [];

  constructor(
    private readonly kind: string,
    private readonly version: string,
  ) {}

  /** Decodes `obj` against the named definition; throws the upstream 400 for undecodable values. */
  decode(definition: string, obj: JsonObject): Decoded {
    this.unknown = [];
    const schema = openapi.definition(definition);
    if (!schema) throw new Error(`devcluster: no OpenAPI definition ${definition}`);
    const value = this.object(obj, schema, { goPath: '', fieldPath: '', struct: shortName(definition) });
    return { value, unknownFields: this.unknown };
  }

  private value(v: unknown, schema: openapi.Schema, at: Place): unknown {
    const name = openapi.refName(schema);
    if (name !== undefined) {
      if (name === TIME || name === MICRO_TIME) return this.time(v, name === MICRO_TIME, at);
      if (name === QUANTITY) return this.quantity(v, at);
      if (FREE.has(name)) return v;
      return this.value(v, openapi.resolve(schema), { ...at, struct: shortName(name) });
    }
    if (schema['x-kubernetes-int-or-string'] || schema.format === 'int-or-string') {
      if (typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))) return v;
      throw this.mismatch(v, at, 'intstr.IntOrString');
    }
    switch (schema.type) {
      case 'string':
        if (typeof v === 'string') return schema.format === 'byte' ? this.base64(v) : v;
        throw this.mismatch(v, at, 'string');
      case 'boolean':
        if (typeof v === 'boolean') return v;
        throw this.mismatch(v, at, 'bool');
      case 'integer':
        if (typeof v === 'number' && Number.isInteger(v)) return v;
        throw this.mismatch(v, at, schema.format === 'int64' ? 'int64' : 'int32');
      case 'number':
        if (typeof v === 'number') return v;
        throw this.mismatch(v, at, 'float64');
      case 'array':
        if (!Array.isArray(v)) throw this.mismatch(v, at, `[]${goTypeOf(schema.items)}`);
        return v.map((item, i) => {
          if (item === null) return item;
          return schema.items ? this.value(item, schema.items, { ...at, fieldPath: `${at.fieldPath}[${i}]` }) : item;
        });
      case 'object':
      case undefined:
        if (!schema.properties && !json.isObject(schema.additionalProperties)) return v;
        if (!json.isObject(v)) throw this.mismatch(v, at, goTypeOf(schema));
        return this.object(v, schema, at);
      default:
        return v;
    }
  }

  private object(v: JsonObject, schema: openapi.Schema, at: Place): JsonObject {
    const out: JsonObject = {};
    const properties = schema.properties;
    const additional = json.isObject(schema.additionalProperties) ? (schema.additionalProperties as openapi.Schema) : undefined;
    for (const [key, member] of Object.entries(v)) {
      if (member === undefined) continue;
      const property = properties && Object.hasOwn(properties, key) ? properties[key] : undefined;
      if (!property && !additional) {
        if (properties) {
          this.unknown.push(at.fieldPath ? `${at.fieldPath}.${key}` : key);
          continue;
        }
        out[key] = member;
        continue;
      }
      if (member === null) continue;
      const place: Place = property
        ? { goPath: at.goPath ? `${at.goPath}.${key}` : key, fieldPath: at.fieldPath ? `${at.fieldPath}.${key}` : key, struct: at.struct }
        : { ...at, fieldPath: `${at.fieldPath}[${key}]` };
      out[key] = this.value(member, property ?? additional!, place);
    }
    return out;
  }

  private time(v: unknown, micro: boolean, at: Place): unknown {
    const normalized = micro ? times.normalizeMicroTime(v) : times.normalizeTime(v);
    if (normalized !== undefined) return normalized;
    if (typeof v !== 'string') throw this.mismatch(v, at, micro ? 'v1.MicroTime' : 'v1.Time');
    throw strategies.undecodable(
      this.kind,
      this.version,
      `parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(v)} as an RFC 3339 time`,
    );
  }

  private quantity(v: unknown, at: Place): unknown {
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    if (typeof v === 'string' && QUANTITY_PATTERN.test(v.trim()) && v.trim() !== '') return v;
    if (typeof v !== 'string' && typeof v !== 'number') throw this.mismatch(v, at, 'resource.Quantity');
    throw strategies.undecodable(this.kind, this.version, `quantities must match the regular expression '${QUANTITY_PATTERN.source}'`);
  }

  private base64(v: string): string {
    const why = datamaps.base64Error(v);
    if (why === undefined) return v;
    throw strategies.undecodable(this.kind, this.version, why);
  }

  private mismatch(v: unknown, at: Place, goType: string): Error {
    const field = at.goPath ? ` into Go struct field ${at.struct}.${at.goPath} of type ${goType}` : ` into Go value of type ${goType}`;
    return strategies.undecodable(this.kind, this.version, `json: cannot unmarshal ${jsonKind(v)}${field}`);
  }
}

/** `io.k8s.api.batch.v1.JobSpec` → `JobSpec`. */
function shortName(definition: string): string {
  return definition.slice(definition.lastIndexOf('.') + 1);
}

/** The Go type a schema decodes into, as the decoder's messages name it (`v1.PodSpec`, `map[string]string`). */
function goTypeOf(schema: openapi.Schema | undefined): string {
  if (!schema) return 'interface {}';
  const name = openapi.refName(schema);
  if (name !== undefined) {
    const parts = name.split('.');
    return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
  }
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return schema.format === 'int64' ? 'int64' : 'int32';
    case 'number':
      return 'float64';
    case 'array':
      return `[]${goTypeOf(schema.items)}`;
    default:
      return json.isObject(schema.additionalProperties) ? `map[string]${goTypeOf(schema.additionalProperties as openapi.Schema)}` : 'map[string]interface {}';
  }
}

/** How Go's decoder names a JSON value's kind in its messages. */
function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'number' : `number ${v}`;
  if (Array.isArray(v)) return 'array';
  return 'object';
}
