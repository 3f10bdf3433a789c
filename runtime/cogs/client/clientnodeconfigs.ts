/**
 * A `KubeConfig` of `@kubernetes/client-node` as an operator's connection (R-CLIENT-503).
 *
 * Operators written before kopf-gen, and tools beside it, already hold a client-node `KubeConfig`
 * (`kc.loadFromDefault()`, `kc.loadFromCluster()`, a test's `kc.loadFromString(...)`). Passing it
 * as `connection` logs in with its current context — without loading client-node: the object is
 * read through its public methods (`getCurrentContext`, `getContextObject`, `getCluster`,
 * `getUser`), and its context is turned back into a kubeconfig entry that the runtime's own
 * kubeconfig reader resolves exactly as it resolves a file (R-AUTH-2): the server, the CA, client
 * certificates and keys (files or data), tokens, basic auth, `insecure-skip-tls-verify`,
 * `tls-server-name`, `proxy-url`, exec plugins and the auth-providers the runtime supports.
 * client-node's in-cluster user (`loadFromCluster()`: an auth-provider `tokenFile`) becomes a
 * `tokenFile`, re-read at every re-login as kubectl does.
 *
 * What the runtime cannot honour fails at once, naming the field: impersonation
 * (`impersonateUser`), a SOCKS proxy, custom authenticators (`addAuthenticator`), fields of a
 * newer client-node this module does not know. The conversion runs at every login, so a
 * `KubeConfig` changed by its owner is followed at the next re-login.
 */

import type * as credentials from './credentials.js';
import * as errors from './errors.js';
import * as kubeconfigs from './kubeconfigs.js';
import * as logins from './logins.js';

/** The cluster entry of a client-node `KubeConfig` (its `Cluster`). */
export interface ClientNodeCluster {
  readonly name: string;
  readonly server: string;
  readonly caData?: string | null;
  readonly caFile?: string | null;
  readonly skipTLSVerify?: boolean | null;
  readonly tlsServerName?: string | null;
  readonly proxyUrl?: string | null;
}

/** The user entry of a client-node `KubeConfig` (its `User`). */
export interface ClientNodeUser {
  readonly name: string;
  readonly certData?: string | null;
  readonly certFile?: string | null;
  readonly keyData?: string | null;
  readonly keyFile?: string | null;
  readonly token?: string | null;
  readonly username?: string | null;
  readonly password?: string | null;
  readonly exec?: unknown;
  readonly authProvider?: unknown;
  readonly impersonateUser?: string | null;
}

/** The context entry of a client-node `KubeConfig` (its `Context`). */
export interface ClientNodeContext {
  readonly name: string;
  readonly cluster: string;
  readonly user: string;
  readonly namespace?: string | null;
}

/**
 * What the runtime reads of a client-node `KubeConfig` (1.x): a `KubeConfig` is one, and nothing of
 * client-node is imported to read it.
 */
export interface ClientNodeKubeConfig {
  getCurrentContext(): string;
  getContextObject(name: string): ClientNodeContext | null;
  getCluster(name: string): ClientNodeCluster | null;
  getUser(name: string): ClientNodeUser | null;
}

/** Whether a `connection` is a client-node `KubeConfig` rather than a `ConnectionInfo`. */
export function isClientNodeKubeConfig(value: unknown): value is ClientNodeKubeConfig {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof ClientNodeKubeConfig, unknown>>;
  return typeof candidate.getCurrentContext === 'function' && typeof candidate.getCluster === 'function' && typeof candidate.getUser === 'function';
}

/** How the converted entries are named in messages (and where relative paths resolve from: the current folder). */
export const SOURCE = 'the @kubernetes/client-node KubeConfig';

const CLUSTER_FIELDS: Readonly<Record<string, string | null>> = {
  name: null,
  server: 'server',
  caData: 'certificate-authority-data',
  caFile: 'certificate-authority',
  skipTLSVerify: 'insecure-skip-tls-verify',
  tlsServerName: 'tls-server-name',
  proxyUrl: 'proxy-url',
};

const USER_FIELDS: Readonly<Record<string, string | null>> = {
  name: null,
  certData: 'client-certificate-data',
  certFile: 'client-certificate',
  keyData: 'client-key-data',
  keyFile: 'client-key',
  token: 'token',
  username: 'username',
  password: 'password',
  exec: 'exec',
  authProvider: 'auth-provider',
};

/** Why a value cannot be honoured: the field is named, and what to do instead. */
function unsupported(what: string, why: string): errors.InvalidConnectionInfoError {
  return new errors.InvalidConnectionInfoError(`The connection's ${what} cannot be honoured by kopf-gen: ${why}`);
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** An entry's fields in kubeconfig spelling; a set field of no known meaning is refused by name. */
function entryOf(entry: object, fields: Readonly<Record<string, string | null>>, what: string): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (!isSet(value)) continue;
    const spelled = fields[key];
    if (spelled === null) continue;
    if (spelled === undefined) throw unsupported(`${what} field "${key}"`, 'it is not one of the fields the runtime knows; remove it or connect otherwise.');
    raw[spelled] = value;
  }
  return raw;
}

function userEntryOf(user: ClientNodeUser): Record<string, unknown> {
  const what = `user ${JSON.stringify(user.name)}`;
  if (isSet(user.impersonateUser))
    throw unsupported(`${what} field "impersonateUser"`, "the runtime does not impersonate; use the impersonated account's own credentials.");
  const raw = entryOf(user, USER_FIELDS, what);
  const provider = raw['auth-provider'] as { readonly name?: unknown; readonly config?: { readonly tokenFile?: unknown } } | undefined;
  // client-node's in-cluster login: the service account's token file, re-read at every re-login.
  if (provider?.name === 'tokenFile' && typeof provider.config?.tokenFile === 'string') {
    delete raw['auth-provider'];
    raw['tokenFile'] = provider.config.tokenFile;
  }
  return raw;
}

function clusterEntryOf(cluster: ClientNodeCluster): Record<string, unknown> {
  const what = `cluster ${JSON.stringify(cluster.name)}`;
  const raw = entryOf(cluster, CLUSTER_FIELDS, what);
  const proxy = raw['proxy-url'];
  if (typeof proxy === 'string' && !/^https?:/i.test(proxy)) {
    throw unsupported(`${what} field "proxyUrl"`, `the runtime's proxies are http(s):// only, got ${JSON.stringify(proxy.replace(/\/\/[^@/]*@/, '//'))}.`);
  }
  return raw;
}

/** The authenticators added with `addAuthenticator()`, which only client-node can call. */
function customAuthenticators(config: ClientNodeKubeConfig): number {
  const list = (config as { readonly custom_authenticators?: unknown }).custom_authenticators;
  return Array.isArray(list) ? list.length : 0;
}

/**
 * The current context of a client-node `KubeConfig` as a kubeconfig the runtime reads (one
 * cluster, user and context).
 *
 * @throws errors.InvalidConnectionInfoError for anything the runtime cannot honour, naming it.
 * @throws errors.LoginError for a missing context, cluster or user (as for kubeconfig files).
 */
export function kubeconfigOf(config: ClientNodeKubeConfig): kubeconfigs.Kubeconfig {
  if (customAuthenticators(config) > 0) {
    throw unsupported(
      'custom authenticators (addAuthenticator)',
      'only client-node can call them; give the credentials they produce as a ConnectionInfo or a login handler.',
    );
  }
  const name = config.getCurrentContext();
  if (!name) throw new errors.LoginError(`${SOURCE} has no current context.`);
  const context = config.getContextObject(name);
  if (context === null) throw new errors.LoginError(`${SOURCE}: its current context ${JSON.stringify(name)} is not defined.`);
  const cluster = config.getCluster(context.cluster);
  if (cluster === null) throw new errors.LoginError(`${SOURCE}: context ${JSON.stringify(name)} names an unknown cluster ${JSON.stringify(context.cluster)}.`);
  const user = context.user ? config.getUser(context.user) : null;
  if (context.user && user === null)
    throw new errors.LoginError(`${SOURCE}: context ${JSON.stringify(name)} names an unknown user ${JSON.stringify(context.user)}.`);
  const document = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster.name, cluster: clusterEntryOf(cluster) }],
    users: user === null ? [] : [{ name: user.name, user: userEntryOf(user) }],
    contexts: [
      { name, context: { cluster: cluster.name, ...(user ? { user: user.name } : {}), ...(context.namespace ? { namespace: context.namespace } : {}) } },
    ],
    'current-context': name,
  };
  const parsed = kubeconfigs.parseKubeconfig(JSON.stringify(document), SOURCE);
  const byName = <T extends { readonly name: string }>(list: readonly T[]): Map<string, T> => new Map(list.map((item) => [item.name, item]));
  return {
    files: [SOURCE],
    clusters: byName(parsed.clusters),
    users: byName(parsed.users),
    contexts: byName(parsed.contexts),
    currentContext: name,
  };
}

/**
 * The credentials of a client-node `KubeConfig`'s current context (R-CLIENT-503), as the kubeconfig
 * login makes them (priority 10).
 *
 * @throws errors.InvalidConnectionInfoError / errors.LoginError as `kubeconfigOf` and the kubeconfig login.
 * @example
 * const kc = new KubeConfig(); kc.loadFromDefault();
 * const info = connectionFromClientNode(kc);
 */
export function connectionFromClientNode(config: ClientNodeKubeConfig, plugins?: logins.PluginOptions): credentials.ConnectionInfo {
  return logins.connectionFromKubeConfig(kubeconfigOf(config), { priority: logins.PRIORITY_OF_KUBECONFIG, plugins });
}
