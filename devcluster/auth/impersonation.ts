/**
 * Impersonation (D-AUTH-10): the `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` headers switch the user a request runs as, when the authenticated user
 * may `impersonate` each of them — as `kubectl --as`, `--as-group` and `kubectl auth can-i --as`
 * send them. Checked as upstream's impersonation filter checks them: a user name on `users`
 * (a service account's name `system:serviceaccount:<ns>:<name>` on `serviceaccounts` in `<ns>`),
 * each group on `groups`, the uid on `uids` and each extra value on `userextras/<key>` (the last
 * two in API group `authentication.k8s.io`), every check with the impersonated name as the
 * resource name. The impersonated user gets `system:authenticated` (or, as `system:anonymous`,
 * `system:unauthenticated`); a service account impersonated without groups gets its own.
 */
import type * as http from 'node:http';
import * as statuses from '../server/statuses.js';
import type * as rules from './rules.js';
import * as users from './users.js';

/** Decides one impersonation check; returns the 403 to answer, or undefined when allowed. */
export type CheckImpersonation = (attributes: rules.ResourceAttributes) => statuses.ApiError | undefined;

const EXTRA_PREFIX = 'impersonate-extra-';
const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;

/**
 * The user to run the request as: `user` itself when no impersonation header is present,
 * otherwise the impersonated user once every check passed.
 *
 * @throws statuses.ApiError 403 from `check` for the first refused check; 400 for groups, a uid or
 * extras without `Impersonate-User`.
 */
export function impersonate(headers: http.IncomingMessage['headersDistinct'], user: users.UserInfo, check: CheckImpersonation): users.UserInfo {
  const username = single(headers['impersonate-user']);
  const groups = list(headers['impersonate-group']);
  const uid = single(headers['impersonate-uid']);
  const extra: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    extra[decodeURIComponent(name.slice(EXTRA_PREFIX.length))] = list(value);
  }
  if (username === undefined) {
    if (groups.length || uid !== undefined || Object.keys(extra).length) {
      throw statuses.badRequest('requested impersonation of groups, a uid or extras without impersonating a user');
    }
    return user;
  }
  const account = SERVICE_ACCOUNT.exec(username);
  const refusals = [
    account ? resourceCheck('', 'serviceaccounts', account[2]!, account[1]!) : resourceCheck('', 'users', username),
    ...groups.map((g) => resourceCheck('', 'groups', g)),
    ...(uid !== undefined ? [resourceCheck('authentication.k8s.io', 'uids', uid)] : []),
    ...Object.entries(extra).flatMap(([key, values]) => values.map((v) => resourceCheck('authentication.k8s.io', 'userextras', v, undefined, key))),
  ];
  for (const attributes of refusals) {
    const denied = check(attributes);
    if (denied) throw denied;
  }
  const impersonatedGroups = groups.length || !account ? [...groups] : users.serviceAccountGroups(account[1]!);
  const out: users.UserInfo =
    username === users.ANONYMOUS_USER
      ? { username, uid: uid ?? '', groups: [...new Set([...impersonatedGroups, users.UNAUTHENTICATED_GROUP])] }
      : users.authenticatedUser({ username, uid, groups: impersonatedGroups });
  if (Object.keys(extra).length) out.extra = extra;
  return out;
}

function resourceCheck(apiGroup: string, resource: string, name: string, namespace?: string, subresource?: string): rules.ResourceAttributes {
  const attributes: rules.ResourceAttributes = { kind: 'resource', verb: 'impersonate', apiGroup, resource, name };
  if (namespace) attributes.namespace = namespace;
  if (subresource) attributes.subresource = subresource;
  return attributes;
}

function single(values: readonly string[] | undefined): string | undefined {
  const first = values?.[0];
  return first === undefined || first === '' ? undefined : first;
}

/** Every value of a repeatable header (one per header line, as Go's clients send them). */
function list(values: readonly string[] | undefined): string[] {
  return (values ?? []).filter((v) => v !== '');
}
