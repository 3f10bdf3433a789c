/**
 * Content negotiation: which form a response takes and which request bodies are understood
 * (D-WIRE-12, D-WIRE-16..18). Clients differ a lot here — kubectl asks for Tables and aggregated
 * discovery, client libraries for JSON, some for protobuf first — so `Accept` is parsed into media
 * ranges and the output form (JSON, YAML, Table, aggregated discovery) is picked from them. Protobuf
 * is read in request bodies (server/protobuf.ts) but never produced; a request that accepts
 * nothing the server can produce gets 406.
 */
import * as statuses from './statuses.js';

export interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly params: Readonly<Record<string, string>>;
  readonly q: number;
}

export type OutputForm = 'json' | 'yaml' | 'table' | 'discovery-v2' | 'discovery-v2beta1';

export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
export const AGGREGATED_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

export function parseMediaType(text: string): MediaRange | undefined {
  const [head, ...paramParts] = text.split(';');
  const [type, subtype] = (head ?? '').trim().toLowerCase().split('/');
  if (!type || !subtype) return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const part of paramParts) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim().toLowerCase();
    const v = part
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (k === 'q') {
      const n = Number(v);
      q = Number.isFinite(n) ? n : 0;
    } else params[k] = v;
  }
  return { type, subtype, params, q };
}

/** Parses an Accept header into ranges sorted by q (stable). A missing header means `*\/*`. */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header?.trim()) return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const ranges = header
    .split(',')
    .map((p) => parseMediaType(p))
    .filter((r): r is MediaRange => r !== undefined && r.q > 0);
  return ranges
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.q - a.r.q || a.i - b.i)
    .map((x) => x.r);
}

export interface NegotiationOptions {
  /** Table output is meaningful for this request (get/list/watch of a resource). */
  allowTable?: boolean;
  /** Aggregated discovery is meaningful (`/api`, `/apis`) and enabled. */
  allowAggregated?: boolean;
}

/** Picks the output form or throws 406 (D-WIRE-17). */
export function negotiate(accept: string | undefined, opts: NegotiationOptions = {}): OutputForm {
  for (const r of parseAccept(accept)) {
    const as = r.params['as'];
    if (r.type === 'application' && r.subtype === 'json') {
      if (as === undefined) return 'json';
      if (as === 'Table' && r.params['g'] === 'meta.k8s.io' && (r.params['v'] === 'v1' || r.params['v'] === 'v1beta1')) {
        if (opts.allowTable) return 'table';
        continue;
      }
      if (as === 'APIGroupDiscoveryList' && r.params['g'] === 'apidiscovery.k8s.io') {
        if (!opts.allowAggregated) continue;
        if (r.params['v'] === 'v2') return 'discovery-v2';
        if (r.params['v'] === 'v2beta1') return 'discovery-v2beta1';
      }
      continue;
    }
    if (r.type === 'application' && r.subtype === 'yaml') return 'yaml';
    if (r.type === '*' || (r.type === 'application' && r.subtype === '*')) return 'json';
  }
  throw statuses.notAcceptable();
}

export type BodyType = 'json' | 'yaml' | 'protobuf' | 'merge-patch' | 'json-patch' | 'strategic-merge-patch' | 'apply-patch' | 'unknown';

/** Recent Content-Type classifications: clients send the same few values on every request. */
const bodyTypes = new Map<string, BodyType>();

/** Classifies a request body's Content-Type (parameters such as charset are ignored). */
export function bodyType(contentType: string | undefined): BodyType {
  if (!contentType) return 'unknown';
  let type = bodyTypes.get(contentType);
  if (type === undefined) {
    type = classifyBody(contentType);
    if (bodyTypes.size >= 64) bodyTypes.clear();
    bodyTypes.set(contentType, type);
  }
  return type;
}

function classifyBody(contentType: string): BodyType {
  const m = parseMediaType(contentType);
  if (!m) return 'unknown';
  const t = `${m.type}/${m.subtype}`;
  switch (t) {
    case 'application/json':
      return 'json';
    case 'application/yaml':
    case 'application/x-yaml':
    case 'text/yaml':
      return 'yaml';
    case 'application/vnd.kubernetes.protobuf':
      return 'protobuf';
    case 'application/merge-patch+json':
      return 'merge-patch';
    case 'application/json-patch+json':
      return 'json-patch';
    case 'application/strategic-merge-patch+json':
      return 'strategic-merge-patch';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+json':
      return 'apply-patch';
    default:
      return 'unknown';
  }
}

export const PATCH_MEDIA_TYPES = {
  'json-patch': 'application/json-patch+json',
  'merge-patch': 'application/merge-patch+json',
  'apply-patch': 'application/apply-patch+yaml',
  'strategic-merge-patch': 'application/strategic-merge-patch+json',
} as const;
