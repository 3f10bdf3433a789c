/**
 * Denials: how a 403 from the API server is reported (R-SEC-1).
 *
 * A 403 means the operator's RBAC lacks a rule, which no retry fixes: the request fails at once,
 * and the operator says so in one ERROR line naming the verb, the resource, the namespace and the
 * user that lacked it — once per verb, resource and namespace for the client, however many objects
 * or attempts run into it (later ones are logged at DEBUG). Without this, every object's every
 * call retried its 403 nine times and logged each attempt: thousands of lines saying nothing the
 * first did not. The call sites decide what the operator does next (see docs/reliability.md).
 */
import type * as errors from './errors.js';
import type * as loggers from '../structs/loggers.js';

/** The request a 403 answered, as the client sent it. */
export interface DeniedRequest {
  readonly method: string;
  /** The full URL (server and path with the query), for the report. */
  readonly url: string;
}

/** The Kubernetes verb of an HTTP method, for requests whose 403 does not say it. */
const VERBS: Readonly<Record<string, string>> = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** Per client (its request context): the denials reported already. */
const reported = new WeakMap<object, Set<string>>();

/** `"kopfexamples.kopf.dev" in namespace "default"`, `"namespaces" at the cluster scope`, `path "/x"`. */
export function describeTarget(denial: errors.Denial): string {
  if (denial.path !== undefined) return `path "${denial.path}"`;
  const resource = denial.group ? `${denial.resource}.${denial.group}` : `${denial.resource}`;
  return denial.namespace === null || denial.namespace === undefined
    ? `"${resource}" at the cluster scope`
    : `"${resource}" in namespace "${denial.namespace}"`;
}

/** The one line of a denial (without the once-only note): who may not do what, and the request. */
export function describeDenial(error: errors.ApiForbiddenError, request: DeniedRequest): string {
  const denial = error.denial;
  if (denial === undefined) return `Forbidden (HTTP 403): ${request.method} ${request.url} -> ${error.detail}`;
  return `Forbidden (HTTP 403): user "${denial.user}" may not ${denial.verb} ${describeTarget(denial)}: ${request.method} ${request.url}`;
}

/**
 * Reports a 403: one ERROR line the first time the client (`owner`) meets this verb, resource and
 * namespace (or this method and path, when the message does not name them), DEBUG afterwards.
 */
export function reportDenial(owner: object, logger: loggers.Logger, error: errors.ApiForbiddenError, request: DeniedRequest): void {
  const denial = error.denial;
  const key =
    denial === undefined
      ? `${VERBS[request.method] ?? request.method} ${request.url.replace(/\?.*$/, '')}`
      : `${denial.verb} ${denial.group ?? ''}/${denial.resource ?? denial.path} ${denial.namespace ?? ''}`;
  let seen = reported.get(owner);
  if (seen === undefined) reported.set(owner, (seen = new Set()));
  const line = describeDenial(error, request);
  if (seen.has(key)) {
    logger.debug(line);
    return;
  }
  seen.add(key);
  logger.error(
    `${line} — the operator's RBAC lacks this permission; not retried. Grant it (deploy/rbac.yaml of a generated project). Reported once per verb, resource and namespace.`,
  );
}
