/**
 * Kubernetes protobuf request bodies for tests, written the way client-go writes them: the magic
 * `k8s\0`, then a `runtime.Unknown` envelope around the kind's message, encoded with the
 * devcluster's own schemas (D-WIRE-25). Fields given are written even when zero, as Go's encoder
 * writes every plain field.
 */
import * as schemas from '../../devcluster/upstream/protobufschemas.js';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
export const MAGIC = Buffer.from('k8s\0', 'latin1');

export interface BodyOptions {
  /** The envelope's typeMeta (default: `apiVersion` and `kind`). */
  typeMeta?: Record<string, unknown>;
  /** Bytes appended to the message, e.g. a field its schema does not know. */
  trailing?: Uint8Array;
}

/** Encodes `message` (proto field names, bytes as Buffers) as a body of `kind` in `apiVersion`. */
export async function protobufBody(apiVersion: string, kind: string, message: Record<string, unknown>, opts: BodyOptions = {}): Promise<Buffer> {
  const s = await schemas.load();
  const type = s.kindType(apiVersion, kind);
  if (!type) throw new Error(`no protobuf message for ${kind} in ${apiVersion}`);
  const raw = Buffer.concat([type.encode(type.fromObject(message)).finish(), opts.trailing ?? new Uint8Array()]);
  const typeMeta = opts.typeMeta ?? { apiVersion, kind };
  return Buffer.concat([MAGIC, s.envelope.encode(s.envelope.fromObject({ typeMeta, raw })).finish()]);
}
