/**
 * Who a request runs as: the `UserInfo` shape shared by authentication (which produces it),
 * authorization (which judges it) and admission (which forwards it as `userInfo` in reviews),
 * plus the well-known users and groups of D-AUTH-1..4 and D-AUTH-9.
 */

/** An authenticated (or anonymous) identity, shaped like Kubernetes' `UserInfo`. */
export interface UserInfo {
  username: string;
  /** Empty when the credential carries none (client certificates, anonymous). */
  uid: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const AUTHENTICATED_GROUP = 'system:authenticated';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const MASTERS_GROUP = 'system:masters';
export const ANONYMOUS_USER = 'system:anonymous';
export const ADMIN_USER = 'devcluster-admin';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

/**
 * The user every request runs as in `auth: "none"` mode, and the identity of the default
 * kubeconfig: `devcluster-admin` in `system:masters` and `system:authenticated` (D-AUTH-1).
 */
export function adminUser(uid: string): UserInfo {
  return { username: ADMIN_USER, uid, groups: [MASTERS_GROUP, AUTHENTICATED_GROUP] };
}

/** `system:anonymous` in `system:unauthenticated` (D-AUTH-4). */
export function anonymousUser(): UserInfo {
  return { username: ANONYMOUS_USER, uid: '', groups: [UNAUTHENTICATED_GROUP] };
}

/** Builds an authenticated user: copies every list and appends `system:authenticated` once. */
export function authenticatedUser(input: {
  username: string;
  uid?: string;
  groups?: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}): UserInfo {
  const groups = [...new Set(input.groups ?? [])].filter((g) => g !== AUTHENTICATED_GROUP);
  groups.push(AUTHENTICATED_GROUP);
  const user: UserInfo = { username: input.username, uid: input.uid ?? '', groups };
  if (input.extra && Object.keys(input.extra).length) {
    user.extra = Object.fromEntries(Object.entries(input.extra).map(([k, v]) => [k, [...v]]));
  }
  return user;
}

/** Whether the user went through authentication (as opposed to anonymous access). */
export function isAuthenticated(user: UserInfo): boolean {
  return user.groups.includes(AUTHENTICATED_GROUP);
}

/** The user name of a service account: `system:serviceaccount:<ns>:<name>` (D-AUTH-9). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The groups of a service account: `system:serviceaccounts`, `system:serviceaccounts:<ns>` (D-AUTH-9). */
export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`];
}
