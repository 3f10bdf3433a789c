/**
 * Answering `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<group/version>` as upstream's handlers do
 * (D-WIRE-30, D-WIRE-32): content negotiation between JSON and gnostic protobuf for v2, an `Etag`
 * on every document (and `304` for a matching `If-None-Match`), and for a v3 document asked for
 * with `?hash=`: `Cache-Control: public, immutable` with a year's `Expires` when the hash is the
 * current one, a `301` to the current hash when it is not.
 */
import type * as resources from '../api/resources.js';
import * as v2 from './v2.js';
import * as v3 from './v3.js';

export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** One answer: a status code, the body, and the headers beyond the server's usual ones. */
export interface Answer {
  readonly code: number;
  readonly body: Buffer;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** The request facts the handlers look at. */
export interface OpenApiRequest {
  readonly path: string;
  readonly query: URLSearchParams;
  readonly accept: string | undefined;
  readonly ifNoneMatch: string | undefined;
}

/** Whether an Accept header asks for the protobuf OpenAPI v2 document (either spelling). */
export function wantsProtobuf(accept: string | undefined): boolean {
  return !!accept && /application\/com\.github\.proto-openapi\.spec\.v2[@.]v1\.0\+protobuf/.test(accept);
}

/** Whether `path` is one of the OpenAPI endpoints this module answers. */
export const isOpenApiPath = (path: string): boolean => path === '/openapi/v2' || path === '/openapi/v3' || path.startsWith('/openapi/v3/');

/** The answer for an OpenAPI path, or undefined when no such document is served (→ 404). */
export function answer(registry: resources.Registry, version: string, req: OpenApiRequest): Answer | undefined {
  if (req.path === '/openapi/v2') {
    const served = wantsProtobuf(req.accept) ? v2.protobufBytes(registry, version) : v2.json(registry, version);
    return document(served, wantsProtobuf(req.accept) ? OPENAPI_V2_PROTOBUF : 'application/json', req, {});
  }
  if (req.path === '/openapi/v3') {
    const body = Buffer.from(JSON.stringify(v3.index(registry, version)));
    return { code: 200, body, contentType: 'application/json', headers: {} };
  }
  const key = req.path.slice('/openapi/v3/'.length).replace(/\/$/, '');
  const served = v3.document(registry, version, key);
  if (!served) return undefined;
  const hash = req.query.get('hash');
  if (hash !== null && hash !== '' && hash !== served.etag) {
    return { code: 301, body: Buffer.alloc(0), contentType: 'text/html; charset=utf-8', headers: { Location: v3.serverRelativeURL(key, served.etag) } };
  }
  const extra: Record<string, string> = {};
  if (hash !== null && hash !== '') {
    extra['Cache-Control'] = 'public, immutable';
    extra['Expires'] = new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString();
  }
  return document(served, 'application/json', req, extra);
}

function document(served: v2.Served, contentType: string, req: OpenApiRequest, extra: Record<string, string>): Answer {
  const etag = `"${served.etag}"`;
  const headers = { Etag: etag, Vary: 'Accept', ...extra };
  if (req.ifNoneMatch?.split(',').some((t) => t.trim() === etag)) {
    return { code: 304, body: Buffer.alloc(0), contentType, headers };
  }
  return { code: 200, body: served.bytes, contentType, headers };
}
