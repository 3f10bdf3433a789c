/**
 * Protobuf request bodies (D-WIRE-25, D-WIRE-26). kubectl 1.32 and later send the built-in kinds
 * of its imperative commands (`create deployment`, `create secret`, `create token`, …) as
 * Kubernetes protobuf: the magic `k8s\0`, then a `runtime.Unknown` envelope whose `typeMeta` names
 * the kind and whose `raw` bytes are that kind's message. This module turns such a body into the
 * JSON object the same client would have sent as JSON — the Go types' JSON form — so that it then
 * goes through exactly the pipeline of a JSON body. Custom resources have no protobuf form (415, as
 * upstream), and responses are never protobuf (D-WIRE-17).
 *
 * The JSON form follows the Go struct tags recorded with the schemas: a scalar that is a Go pointer
 * keeps an explicit zero (`replicas: 0`), other scalars drop a zero unless their tag lacks
 * `omitempty`; messages, lists and maps appear when set and non-empty; embedded structs with
 * `json:",inline"` merge into their parent; and the apimachinery types with a JSON form of their own
 * (Time, MicroTime, Quantity, IntOrString, RawExtension, FieldsV1) are converted by name — a zero
 * Time that Go wrote (a pod template's `creationTimestamp`) is `null`, as in Go's JSON.
 */
import type * as protobuf from 'protobufjs/light.js';
import * as resources from '../api/resources.js';
import * as schemas from '../upstream/protobufschemas.js';
import type { JsonObject } from '../json.js';
import * as statuses from './statuses.js';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from('k8s\0', 'latin1');
const META = '.k8s.io.apimachinery.pkg.apis.meta.v1';

/** What decoding needs to know of the resource a body is sent to. */
export type Target = Pick<resources.ResourceType, 'builtin' | 'group' | 'version' | 'kind'>;

/** Whether protobuf bodies of this resource's kind can be read: built-in kinds with a schema. */
export function readable(type: Target): boolean {
  return type.builtin && schemas.hasApiVersion(resources.apiVersionOf(type));
}

/** The body media types a create or update of `type` accepts, for the 415 message (D-WIRE-16). */
export function acceptedTypes(type: Target): string[] {
  return readable(type) ? ['application/json', 'application/yaml', PROTOBUF] : ['application/json', 'application/yaml'];
}

/**
 * Decodes the protobuf body of a create or update of `type` into its JSON object, with `apiVersion`
 * and `kind` from the envelope (those of `type` when the envelope leaves them empty, as upstream).
 * 415 for kinds without a protobuf form, 400 for a body that is not a well-formed message.
 */
export async function decodeObject(body: Buffer, type: Target): Promise<JsonObject> {
  if (!readable(type)) throw statuses.unsupportedMediaType(acceptedTypes(type));
  return decode(body, resources.apiVersionOf(type), type.kind);
}

/** Decodes a protobuf `DeleteOptions` body (any resource's DELETE may carry one, upstream). */
export function decodeDeleteOptions(body: Buffer): Promise<JsonObject> {
  return decode(body, 'v1', 'DeleteOptions');
}

async function decode(body: Buffer, defaultApiVersion: string, expected: string): Promise<JsonObject> {
  const unrecognized = (why: string): statuses.ApiError =>
    statuses.badRequest(`the object provided is unrecognized (must be of type ${expected}): ${why} (${summary(body)})`);
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw unrecognized(`provided data does not appear to be a protobuf message, expected prefix [${[...MAGIC].join(' ')}]`);
  }
  if (body.length === MAGIC.length) throw unrecognized('empty body');
  const s = await schemas.load();
  let envelope: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array };
  try {
    envelope = s.envelope.decode(body.subarray(MAGIC.length)) as typeof envelope;
  } catch (err) {
    throw unrecognized(messageOf(err));
  }
  const apiVersion = envelope.typeMeta?.apiVersion || defaultApiVersion;
  const kind = envelope.typeMeta?.kind || expected;
  const cannot = (why: string): statuses.ApiError =>
    statuses.badRequest(`${kind} in version "${apiVersion.split('/').pop()}" cannot be handled as a ${expected}: ${why}`);
  const messageType = s.kindType(apiVersion, kind);
  if (!messageType) throw cannot(`no kind "${kind}" is registered for version "${apiVersion}"`);
  let message: Fields;
  try {
    message = messageType.decode(envelope.raw ?? new Uint8Array()) as unknown as Fields;
  } catch (err) {
    throw cannot(messageOf(err));
  }
  let json: JsonObject;
  try {
    json = objectToJson(s, messageType, message);
  } catch (err) {
    throw cannot(messageOf(err));
  }
  return { apiVersion, kind, ...json };
}

/** Upstream's summary of an undecodable body: its first 30 bytes in hex. */
function summary(body: Buffer): string {
  return body.length > 30 ? `${body.subarray(0, 30).toString('hex')} ...` : body.toString('hex');
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

// --- Message → JSON ------------------------------------------------------------------------------

type Fields = Record<string, unknown>;

/** A message's value in JSON; a zero Time and an empty raw object are `null`, as Go writes them. */
function messageToJson(s: schemas.Schemas, type: protobuf.Type, message: Fields): unknown {
  switch (type.fullName) {
    case `${META}.Time`:
      return isSet(message, 'seconds') || isSet(message, 'nanos') ? formatTime(toNumber(message['seconds']), undefined) : null;
    case `${META}.MicroTime`:
      return isSet(message, 'seconds') || isSet(message, 'nanos') ? formatTime(toNumber(message['seconds']), toNumber(message['nanos'])) : null;
    case `${META}.FieldsV1`:
      return embedded(message['Raw']);
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
    case '.k8s.io.apimachinery.pkg.runtime.Unknown':
      return embedded(message['raw']);
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      return (message['string'] as string | undefined) || '0';
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return toNumber(message['type']) === 1 ? (message['strVal'] ?? '') : toNumber(message['intVal']);
    default:
      break;
  }
  if (s.isSlice(type)) return ((message['items'] as unknown[] | undefined) ?? []).map((v) => scalarToJson(type.fields['items']!.type, v));
  return objectToJson(s, type, message);
}

/** How one field of a message is written in JSON, decided once per message type. */
interface FieldPlan {
  field: protobuf.Field;
  /** The JSON member name. */
  name: string;
  /** Undefined for scalars (the Kubernetes schemas have no enums). */
  nested: protobuf.Type | undefined;
  /** A Go pointer: set means written, even when zero. */
  pointer: boolean;
  omitempty: boolean;
  /** An embedded struct whose fields JSON merges into the parent. */
  inline: boolean;
}

const plans = new WeakMap<protobuf.Type, FieldPlan[]>();

/** The plans of a message's fields, in the order of their numbers, without fields JSON leaves out. */
function planOf(s: schemas.Schemas, type: protobuf.Type): FieldPlan[] {
  let plan = plans.get(type);
  if (plan) return plan;
  plan = [];
  for (const field of type.fieldsArray) {
    const tag = s.goTag(type, field.name) ?? `${field.name},omitempty`;
    const pointer = tag.startsWith('*');
    const [name = '', ...options] = (pointer ? tag.slice(1) : tag).split(',');
    if (name === '-') continue;
    const resolved = field.resolve().resolvedType;
    const nested = resolved && 'fieldsArray' in resolved ? resolved : undefined;
    plan.push({ field, name, nested, pointer, omitempty: options.includes('omitempty'), inline: options.includes('inline') });
  }
  plans.set(type, plan);
  return plan;
}

/** A struct-like message as a JSON object. */
function objectToJson(s: schemas.Schemas, type: protobuf.Type, message: Fields): JsonObject {
  const out: JsonObject = {};
  for (const { field, name, nested, pointer, omitempty, inline } of planOf(s, type)) {
    const value = message[field.name];
    const convert = (v: unknown): unknown => (nested ? messageToJson(s, nested, v as Fields) : scalarToJson(field.type, v));
    if (field.map) {
      const entries = Object.entries((value as Fields | undefined) ?? {});
      if (entries.length) out[name] = Object.fromEntries(entries.map(([k, v]) => [k, convert(v)]));
    } else if (field.repeated) {
      const items = (value as unknown[] | undefined) ?? [];
      if (items.length) out[name] = items.map(convert);
    } else if (nested) {
      if (!isSet(message, field.name) || value == null) continue;
      const converted = messageToJson(s, nested, value as Fields);
      if (inline) Object.assign(out, converted);
      else out[name] = converted;
    } else if (pointer) {
      if (isSet(message, field.name)) out[name] = scalarToJson(field.type, value);
    } else {
      const converted = scalarToJson(field.type, isSet(message, field.name) ? value : field.typeDefault);
      if (!(omitempty && isZero(converted))) out[name] = converted;
    }
  }
  return out;
}

/** A scalar as JSON: 64-bit integers as numbers, bytes as base64 (Go's `[]byte`). */
function scalarToJson(protoType: string, value: unknown): unknown {
  if (protoType === 'bytes') return Buffer.from((value as Uint8Array | undefined) ?? []).toString('base64');
  if (value !== null && typeof value === 'object' && 'low' in value) return toNumber(value);
  return value;
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false;
}

function isSet(message: Fields, field: string): boolean {
  return Object.hasOwn(message, field);
}

function toNumber(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'object' && 'toNumber' in value && typeof value.toNumber === 'function') return value.toNumber() as number;
  return Number(value);
}

/** RFC 3339 in UTC: whole seconds for Time (its protobuf form drops nanoseconds), microseconds for MicroTime. */
function formatTime(seconds: number, nanos: number | undefined): string {
  const whole = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (nanos === undefined) return `${whole}Z`;
  return `${whole}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

/** The JSON held as bytes by RawExtension, runtime.Unknown and FieldsV1; `null` when empty. */
function embedded(raw: unknown): unknown {
  const bytes = raw as Uint8Array | undefined;
  if (!bytes?.length) return null;
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  } catch {
    throw new Error('an embedded object is not JSON');
  }
}
