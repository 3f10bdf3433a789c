/**
 * The served `/openapi/v2` document (D-WIRE-30, D-WIRE-31), as JSON or as gnostic protobuf: the
 * built-in part (`builtin.ts`) plus one part per served custom resource version (`crdpaths.ts`,
 * `crdschemas.ts`), with `info.version` the devcluster's reported version.
 *
 * Nothing is computed before the first request (D-WIRE-33). Then every piece is cached where it
 * can only change with its source: the built-in part for the process, each custom resource's part
 * (and its protobuf encoding) with its `ResourceType`, which a CRD change replaces; and the
 * assembled bytes with the registry's generation, so a CRD change re-assembles the document from
 * cached pieces and recomputes only the changed CRD's.
 */
import * as crypto from 'node:crypto';
import type * as resources from '../api/resources.js';
import type { JsonObject } from '../json.js';
import * as builtin from './builtin.js';
import * as crdpaths from './crdpaths.js';
import * as crdschemas from './crdschemas.js';
import * as parts from './parts.js';
import * as protobuf from './protobuf.js';

/** One served form of a document: its bytes and its entity tag (upstream's: SHA-512 in hex). */
export interface Served {
  readonly bytes: Buffer;
  readonly etag: string;
}

interface State {
  generation: number;
  version: string;
  json?: Served;
  protobuf?: Served;
}

const states = new WeakMap<resources.Registry, State>();
const crdParts = new WeakMap<resources.ResourceType, parts.V2Part>();
const encodedParts = new WeakMap<object, protobuf.EncodedPart>();

export const etagOf = (bytes: Buffer): string => crypto.createHash('sha512').update(bytes).digest('hex').toUpperCase();

function state(registry: resources.Registry, version: string): State {
  let s = states.get(registry);
  if (!s || s.generation !== registry.generation || s.version !== version) {
    s = { generation: registry.generation, version };
    states.set(registry, s);
  }
  return s;
}

/** The served custom resource versions, in a stable order. */
export function customTypes(registry: resources.Registry): resources.ResourceType[] {
  return registry
    .all()
    .filter((t) => !t.builtin)
    .sort((a, b) => (`${a.group}/${a.version}/${a.resource}` < `${b.group}/${b.version}/${b.resource}` ? -1 : 1));
}

/** What one custom resource version contributes (cached with the type). */
export function crdPart(t: resources.ResourceType): parts.V2Part {
  let part = crdParts.get(t);
  if (!part) {
    parts.computed.crdParts++;
    part = { paths: crdpaths.v2Paths(t), definitions: crdschemas.v2Definitions(t) };
    crdParts.set(t, part);
  }
  return part;
}

function head(version: string, b: builtin.BuiltinPart): JsonObject {
  return {
    info: { title: 'Kubernetes', version },
    parameters: b.parameters,
    security: b.security,
    securityDefinitions: b.securityDefinitions,
    swagger: '2.0',
  };
}

/** The document as an object (JSON form). */
export function document(registry: resources.Registry, version: string): JsonObject {
  const b = builtin.builtinPart(registry);
  const custom = customTypes(registry).map(crdPart);
  const all = [b, ...custom];
  const { parameters, security, securityDefinitions, info, swagger } = head(version, b);
  return {
    definitions: parts.mergeSorted(all.map((p) => p.definitions)),
    info,
    parameters,
    paths: parts.mergeSorted(all.map((p) => p.paths)),
    security,
    securityDefinitions,
    swagger,
  };
}

/** The JSON bytes of the document. */
export function json(registry: resources.Registry, version: string): Served {
  const s = state(registry, version);
  if (!s.json) {
    parts.computed.v2Documents++;
    const bytes = Buffer.from(JSON.stringify(document(registry, version)));
    s.json = { bytes, etag: etagOf(bytes) };
  }
  return s.json;
}

function encoded(key: object, part: parts.V2Part): protobuf.EncodedPart {
  let e = encodedParts.get(key);
  if (!e) {
    e = protobuf.encodePart(part);
    encodedParts.set(key, e);
  }
  return e;
}

/** The gnostic protobuf bytes of the document. */
export function protobufBytes(registry: resources.Registry, version: string): Served {
  const s = state(registry, version);
  if (!s.protobuf) {
    parts.computed.v2Documents++;
    const b = builtin.builtinPart(registry);
    const pieces = [encoded(b, b), ...customTypes(registry).map((t) => encoded(t, crdPart(t)))];
    const bytes = protobuf.join(protobuf.encodeHead(head(version, b)), pieces);
    s.protobuf = { bytes, etag: etagOf(bytes) };
  }
  return s.protobuf;
}
