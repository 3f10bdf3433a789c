/**
 * Decoding of Kubernetes protobuf request bodies, for the few kinds that need it. The devcluster
 * speaks JSON (D-WIRE-16/17), but the typed clients of kubectl send some requests in protobuf only —
 * `kubectl auth can-i` and `auth whoami` post their reviews as `application/vnd.kubernetes.protobuf`
 * — so a kind may carry the message schema of its body (`ResourceType.protobuf`) and such bodies
 * are decoded here into the JSON the rest of the pipeline reads. Answers stay JSON, which those
 * clients accept.
 *
 * The format: the magic `k8s\0`, then a `runtime.Unknown` message (`typeMeta` {apiVersion, kind},
 * `raw` = the object's message). Messages are proto2 with the usual wire types; the schema names
 * each field number's JSON name and type. As Go's JSON encoding leaves out empty optional values,
 * empty strings, zeros and `false` are left out of the result; nested messages that are present are
 * kept, even when empty (they are pointers upstream, and their presence matters).
 */
import type { JsonObject } from '../json.js';
import * as statuses from './statuses.js';

/** The media type of Kubernetes protobuf bodies. */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** A field's type: a scalar, raw bytes (kept as a `Buffer`), a `metav1.Time`, or a nested message. */
export type FieldType = 'string' | 'bytes' | 'bool' | 'int' | 'time' | MessageSchema;

export interface FieldSpec {
  /** The JSON member name. */
  readonly name: string;
  readonly type: FieldType;
  /** A repeated field: a JSON array. */
  readonly repeated?: boolean;
  /** A `map<string, type>` field: a JSON object. */
  readonly map?: boolean;
}

export interface MessageSchema {
  readonly fields: Readonly<Record<number, FieldSpec>>;
  /** The JSON form of the message is its field of this number alone (wrappers such as `ExtraValue`, a list of strings). */
  readonly unwrap?: number;
}

const MAGIC = Buffer.from('k8s\0', 'latin1');

/** The envelope's type and the object, decoded by `schema`; 400 when the bytes are not such a body. */
export function decodeObject(body: Buffer, schema: MessageSchema): JsonObject {
  try {
    if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('missing the k8s protobuf prefix');
    const unknown = decodeMessage(body.subarray(MAGIC.length), UNKNOWN);
    const typeMeta = (unknown['typeMeta'] ?? {}) as JsonObject;
    const raw = unknown['raw'];
    const object = raw instanceof Buffer ? decodeMessage(raw, schema) : {};
    return { apiVersion: typeMeta['apiVersion'] ?? '', kind: typeMeta['kind'] ?? '', ...object };
  } catch (err) {
    throw statuses.badRequest(`the body of the request could not be decoded as protobuf: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** A reader over one message's bytes. */
class Reader {
  private at = 0;
  constructor(private readonly bytes: Buffer) {}

  get done(): boolean {
    return this.at >= this.bytes.length;
  }

  varint(): bigint {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.at >= this.bytes.length) throw new Error('truncated varint');
      const byte = this.bytes[this.at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
    throw new Error('varint too long');
  }

  bytesField(): Buffer {
    const length = Number(this.varint());
    if (this.at + length > this.bytes.length) throw new Error('truncated field');
    const out = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.at += 8;
    else if (wireType === 2) this.bytesField();
    else if (wireType === 5) this.at += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
    if (this.at > this.bytes.length) throw new Error('truncated field');
  }
}

/** Decodes one message into JSON by its schema; fields the schema does not name are skipped. */
export function decodeMessage(bytes: Buffer, schema: MessageSchema): JsonObject {
  const out: JsonObject = {};
  const reader = new Reader(bytes);
  while (!reader.done) {
    const key = reader.varint();
    const number = Number(key >> 3n);
    const wireType = Number(key & 7n);
    const spec = schema.fields[number];
    if (!spec) {
      reader.skip(wireType);
      continue;
    }
    if (spec.map) {
      const entry = decodeMessage(reader.bytesField(), { fields: { 1: { name: 'key', type: 'string' }, 2: { name: 'value', type: spec.type } } });
      const map = (out[spec.name] ??= {}) as JsonObject;
      map[String(entry['key'] ?? '')] = entry['value'] ?? emptyOf(spec.type);
      continue;
    }
    const value = readValue(reader, wireType, spec.type);
    if (spec.repeated) ((out[spec.name] ??= []) as unknown[]).push(value);
    else if (value !== '' && value !== 0 && value !== false) out[spec.name] = value as JsonObject[string];
  }
  return out;
}

function readValue(reader: Reader, wireType: number, type: FieldType): unknown {
  if (type === 'bool' || type === 'int') {
    if (wireType !== 0) throw new Error(`expected a varint, got wire type ${wireType}`);
    const value = reader.varint();
    return type === 'bool' ? value !== 0n : Number(BigInt.asIntN(64, value));
  }
  if (wireType !== 2) throw new Error(`expected a length-delimited field, got wire type ${wireType}`);
  const bytes = reader.bytesField();
  if (type === 'string') return bytes.toString('utf8');
  if (type === 'bytes') return Buffer.from(bytes);
  if (type === 'time') return timeOf(decodeMessage(bytes, TIME));
  const message = decodeMessage(bytes, type);
  return type.unwrap !== undefined ? (message[type.fields[type.unwrap]!.name] ?? []) : message;
}

/** The JSON of an absent map value: an empty list for wrappers, else an empty string or object. */
function emptyOf(type: FieldType): unknown {
  if (typeof type !== 'object') return type === 'string' ? '' : null;
  return type.unwrap !== undefined ? [] : {};
}

/** A `metav1.Time`: RFC 3339 in UTC with second precision, `null` for the zero time. */
function timeOf(time: JsonObject): string | null {
  const seconds = Number(time['seconds'] ?? 0);
  if (!seconds && !time['nanos']) return null;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const TIME: MessageSchema = { fields: { 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } } };

/** `runtime.Unknown` with `raw` kept as bytes (decoded by the kind's schema afterwards). */
const UNKNOWN: MessageSchema = {
  fields: {
    1: { name: 'typeMeta', type: { fields: { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } } } },
    2: { name: 'raw', type: 'bytes' },
  },
};
