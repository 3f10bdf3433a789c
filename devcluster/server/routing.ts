/**
 * URL routing: turns a request path into a `RequestInfo` the way the upstream API server's
 * request-info factory does (D-WIRE-1/2): resource paths under `/api/v1` and `/apis/{g}/{v}`,
 * namespace scoping, subresources, legacy `/watch/` prefixes, and everything else as non-resource
 * paths (discovery, OpenAPI, health). It also splits a request target into path and query.
 */

export interface ResourceRequestInfo {
  readonly kind: 'resource';
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
  /** What follows a `proxy` subresource (`pods/p/proxy/a/b` → `a/b`), the only one with a path of its own. */
  readonly subpath?: string;
  /** The path used the legacy `/watch/` prefix. */
  readonly legacyWatch: boolean;
}

export interface NonResourceRequestInfo {
  readonly kind: 'nonResource';
  readonly path: string;
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

/** Namespace subresources are addressed as `/api/v1/namespaces/{name}/{sub}`. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * Parses a (URL-decoded once, per segment) request path. Returns a non-resource info for paths
 * that are not under a group/version prefix with at least a resource segment.
 */
export function parsePath(rawPath: string): RequestInfo {
  const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
  const segments = path.split('/').slice(1).map(safeDecode);
  let rest: string[];
  let group: string;
  let version: string;
  if (segments[0] === 'api' && segments.length >= 3) {
    group = '';
    version = segments[1]!;
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    group = segments[1]!;
    version = segments[2]!;
    rest = segments.slice(3);
  } else {
    return { kind: 'nonResource', path };
  }
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
    if (rest.length === 0) return { kind: 'nonResource', path };
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) {
      rest = rest.slice(2);
    } else {
      // The Namespace object itself (`namespaces/{name}[/status|/finalize]`).
      return {
        kind: 'resource',
        group,
        version,
        resource: 'namespaces',
        namespace: undefined,
        name: rest[1],
        subresource: rest[2],
        legacyWatch,
      };
    }
  }
  if (rest.length > 3 && rest[2] === 'proxy' && rest.slice(0, 3).every((s) => s !== '')) {
    return {
      kind: 'resource',
      group,
      version,
      resource: rest[0]!,
      namespace,
      name: rest[1],
      subresource: 'proxy',
      subpath: rest.slice(3).join('/'),
      legacyWatch,
    };
  }
  if (rest.length > 3 || rest.some((s) => s === '')) return { kind: 'nonResource', path };
  return {
    kind: 'resource',
    group,
    version,
    resource: rest[0]!,
    namespace,
    name: rest[1],
    subresource: rest[2],
    legacyWatch,
  };
}

function safeDecode(segment: string): string {
  if (!segment.includes('%')) return segment; // nothing to decode (the common case, per request)
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The parts of a request target the pipeline reads, as `new URL(target, base)` has them. */
export interface RequestTarget {
  readonly pathname: string;
  readonly search: string;
  readonly searchParams: URLSearchParams;
}

/**
 * Targets that `new URL` takes as they are: an absolute path without empty or dot segments and
 * without characters it would percent-encode, and such a query without a fragment.
 */
const PLAIN_TARGET = /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@%]+\/)*(?:[A-Za-z0-9\-._~!$&'()*+,;=:@%]+)?(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@%/?]*)?$/;

/** Splits a request target; plain targets (nearly all) skip the full URL parser. */
export function parseTarget(raw: string): RequestTarget {
  if (!PLAIN_TARGET.test(raw) || raw.includes('/.') || /%2e/i.test(raw)) return new URL(raw, 'http://devcluster');
  const q = raw.indexOf('?');
  if (q < 0) return { pathname: raw, search: '', searchParams: new URLSearchParams() };
  const query = raw.slice(q + 1);
  return { pathname: raw.slice(0, q), search: query ? `?${query}` : '', searchParams: new URLSearchParams(query) };
}
