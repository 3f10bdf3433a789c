/**
 * API errors as values: one class that carries a complete Kubernetes `Status`, and builders for
 * every row of the error catalogue (D-WIRE-21). Anything in the devcluster that fails a request
 * throws an `ApiError`; the HTTP layer serialises it verbatim. Messages marked exact in the devcluster
 * reference are produced only here, so tests and clients can rely on them.
 */
import * as fielderrors from '../meta/fielderrors.js';

export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'Forbidden'
  | 'Unauthorized'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'Expired'
  | 'Timeout'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'RequestEntityTooLarge'
  | 'Gone'
  | '';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** Identifies the resource an error is about (for `details` and the qualified names in messages). */
export interface ResourceIdent {
  group: string;
  /** Plural resource name, e.g. `widgets`. */
  resource: string;
  kind: string;
}

export const qualifiedResource = (r: ResourceIdent): string => (r.group ? `${r.resource}.${r.group}` : r.resource);
export const qualifiedKind = (r: ResourceIdent): string => (r.group ? `${r.kind}.${r.group}` : r.kind);

export class ApiError extends Error {
  readonly code: number;
  readonly reason: StatusReason;
  readonly details: StatusDetails | undefined;
  readonly headers: Record<string, string>;
  /** For `Expired` on lists: a fresh continue token (D-VERB-6). */
  readonly continueToken: string | undefined;

  constructor(
    code: number,
    reason: StatusReason,
    message: string,
    details?: StatusDetails,
    extra?: { headers?: Record<string, string>; continueToken?: string },
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.headers = extra?.headers ?? {};
    this.continueToken = extra?.continueToken;
  }

  toStatus(): Status {
    const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
    if (this.continueToken !== undefined) status.metadata = { continue: this.continueToken };
    if (this.reason === '') delete status.reason;
    status.details = compactDetails(this.details);
    if (status.details === undefined && this.reason !== 'NotFound') delete status.details;
    if (status.details === undefined && this.reason === 'NotFound') status.details = {};
    return status;
  }
}

function compactDetails(details: StatusDetails | undefined): StatusDetails | undefined {
  if (!details) return undefined;
  const out: StatusDetails = {};
  if (details.name) out.name = details.name;
  if (details.group) out.group = details.group;
  if (details.kind) out.kind = details.kind;
  if (details.uid) out.uid = details.uid;
  if (details.causes?.length) out.causes = details.causes;
  if (details.retryAfterSeconds !== undefined) out.retryAfterSeconds = details.retryAfterSeconds;
  return Object.keys(out).length ? out : undefined;
}

const resourceDetails = (r: ResourceIdent, name: string): StatusDetails => ({ name, group: r.group, kind: r.resource });

export const notFound = (r: ResourceIdent, name: string): ApiError =>
  new ApiError(404, 'NotFound', `${qualifiedResource(r)} "${name}" not found`, resourceDetails(r, name));

export const namespaceNotFound = (ns: string): ApiError => new ApiError(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });

export const pathNotFound = (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

export const alreadyExists = (r: ResourceIdent, name: string): ApiError =>
  new ApiError(409, 'AlreadyExists', `${qualifiedResource(r)} "${name}" already exists`, resourceDetails(r, name));

export const conflict = (
  r: ResourceIdent,
  name: string,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): ApiError => new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(r)} "${name}": ${why}`, resourceDetails(r, name));

/** 422 Invalid with causes; `K "name" is invalid: …` with K the qualified kind (or resource, see D-VERB-13). */
export function invalid(r: ResourceIdent, name: string, errors: readonly fielderrors.FieldError[], opts: { byResource?: boolean } = {}): ApiError {
  const subject = opts.byResource ? qualifiedResource(r) : qualifiedKind(r);
  const causes = dedupeCauses(errors);
  return new ApiError(422, 'Invalid', `${subject} "${name}" is invalid: ${fielderrors.renderList(errors)}`, {
    name,
    group: r.group,
    kind: opts.byResource ? r.resource : r.kind,
    causes,
  });
}

/** 422 on query options: `ListOptions.meta.k8s.io "" is invalid: …`. */
export function invalidOptions(
  kind: 'ListOptions' | 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions',
  errors: readonly fielderrors.FieldError[],
): ApiError {
  return new ApiError(422, 'Invalid', `${kind}.meta.k8s.io "" is invalid: ${fielderrors.renderList(errors)}`, {
    group: 'meta.k8s.io',
    kind,
    causes: dedupeCauses(errors),
  });
}

function dedupeCauses(errors: readonly fielderrors.FieldError[]): StatusCause[] {
  const seen = new Set<string>();
  const causes: StatusCause[] = [];
  for (const e of errors) {
    const cause = { reason: e.type, message: fielderrors.renderBody(e), field: e.field };
    const key = JSON.stringify(cause);
    if (!seen.has(key)) {
      seen.add(key);
      causes.push(cause);
    }
  }
  return causes;
}

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

export const jsonPatchRejected = (): ApiError => new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});

export const unsupportedMediaType = (accepted: readonly string[]): ApiError =>
  new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);

export const notAcceptable = (): ApiError =>
  new ApiError(406, 'NotAcceptable', 'only the following media types are accepted: application/json, application/yaml');

export const methodNotAllowed = (): ApiError => new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');

export const unauthorized = (): ApiError => new ApiError(401, 'Unauthorized', 'Unauthorized');

export const forbidden = (message: string, details?: StatusDetails): ApiError => new ApiError(403, 'Forbidden', message, details);

export const tooLarge = (message = 'Request entity too large: limit is 3145728'): ApiError => new ApiError(413, 'RequestEntityTooLarge', message);

export const internal = (message: string, causes?: StatusCause[]): ApiError =>
  new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, causes ? { causes } : undefined);

export const expiredList = (): ApiError => new ApiError(410, 'Expired', 'The resourceVersion for the provided list is too old.');
