/**
 * The built-in logins of R-AUTH-2: from an in-cluster service account and from kubeconfig files.
 *
 * Both are built on `@kubernetes/client-node`'s `KubeConfig` (kubeconfig parsing, relative paths,
 * exec plugins, token files, auth providers) and turn its current context into a
 * `credentials.ConnectionInfo`. Users whose kubeconfig entry needs a plugin (`exec`,
 * `auth-provider`) get a dynamic `authorization` provider that asks the `KubeConfig`'s own
 * authenticators before each request, so refreshed tokens are picked up.
 *
 * `KUBECONFIG` may list several files (separated by the OS path separator); for each entry name
 * and for the current context, the first file defining it wins (kubectl's merge rule).
 * The reactor's login activity calls these when no login handler is registered.
 */

import * as fs from 'node:fs';
import type * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type * as credentials from './credentials.js';
import * as errors from './errors.js';

/** Priority of the service-account login. */
export const PRIORITY_OF_SERVICE_ACCOUNT = 20;
/** Priority of the kubeconfig login. */
export const PRIORITY_OF_KUBECONFIG = 10;
/** Where Kubernetes mounts the service account's token, CA and namespace in a pod. */
export const SERVICE_ACCOUNT_FOLDER = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The in-cluster API server. */
export const IN_CLUSTER_SERVER = 'https://kubernetes.default.svc';

function readTrimmed(file: string): string | undefined {
  if (!fs.existsSync(file)) return undefined;
  return fs.readFileSync(file, 'utf8').trim() || undefined;
}

/**
 * Logs in with the pod's service account: if `<folder>/token` exists, returns the in-cluster server
 * with that token, the CA from `ca.crt`, the default namespace from `namespace`, priority 20;
 * otherwise `null`.
 *
 * @param options.folder the service-account folder (default: the standard mount point).
 * @param options.server the API server (default `https://kubernetes.default.svc`).
 */
export function loginWithServiceAccount(options?: { readonly folder?: string; readonly server?: string }): credentials.ConnectionInfo | null {
  const folder = options?.folder ?? SERVICE_ACCOUNT_FOLDER;
  const tokenPath = path.join(folder, 'token');
  if (!fs.existsSync(tokenPath)) return null;
  const caPath = path.join(folder, 'ca.crt');
  const config = new k8s.KubeConfig();
  config.loadFromClusterAndUser(
    { name: 'in-cluster', server: options?.server ?? IN_CLUSTER_SERVER, caFile: fs.existsSync(caPath) ? caPath : undefined, skipTLSVerify: false },
    { name: 'service-account', token: readTrimmed(tokenPath) },
  );
  const namespace = readTrimmed(path.join(folder, 'namespace'));
  return connectionFromKubeConfig(config, { priority: PRIORITY_OF_SERVICE_ACCOUNT, namespace });
}

/** The kubeconfig files to read: `$KUBECONFIG` (a path list) or `~/.kube/config`. */
export function kubeconfigPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const list = env['KUBECONFIG'];
  if (list) return list.split(path.delimiter).filter(Boolean);
  return [path.join(env['HOME'] ?? os.homedir(), '.kube', 'config')];
}

function firstByName<T extends { readonly name: string }>(lists: readonly (readonly T[])[]): T[] {
  const seen = new Map<string, T>();
  for (const list of lists) for (const item of list) if (!seen.has(item.name)) seen.set(item.name, item);
  return [...seen.values()];
}

/**
 * Loads and merges kubeconfig files with kubectl's rule (the first file defining a name or the
 * current context wins); missing files are skipped. Returns `null` if none exists.
 */
export function loadKubeconfig(paths: readonly string[]): k8s.KubeConfig | null {
  const configs: k8s.KubeConfig[] = [];
  for (const file of paths) {
    if (!fs.existsSync(file)) continue;
    const config = new k8s.KubeConfig();
    config.loadFromFile(file);
    configs.push(config);
  }
  if (configs.length === 0) return null;
  const merged = new k8s.KubeConfig();
  merged.loadFromOptions({
    clusters: firstByName(configs.map((c) => c.getClusters() ?? [])),
    users: firstByName(configs.map((c) => c.getUsers() ?? [])),
    contexts: firstByName(configs.map((c) => c.getContexts() ?? [])),
    currentContext: configs.map((c) => c.getCurrentContext()).find((name) => !!name),
  });
  return merged;
}

/**
 * Logs in with kubeconfig files (R-AUTH-2): the current (or given) context's cluster, user and
 * namespace, priority 10. Returns `null` when no kubeconfig file exists.
 *
 * @param options.paths files to merge (default `kubeconfigPaths()`).
 * @param options.context a context name instead of the current one.
 * @throws errors.LoginError when there is no current context, or it names an unknown cluster.
 */
export function loginWithKubeconfig(options?: { readonly paths?: readonly string[]; readonly context?: string }): credentials.ConnectionInfo | null {
  const config = loadKubeconfig(options?.paths ?? kubeconfigPaths());
  if (!config) return null;
  const contextName = options?.context ?? config.getCurrentContext();
  if (!contextName) throw new errors.LoginError('The kubeconfig has no current context.');
  const context = config.getContextObject(contextName);
  if (!context) throw new errors.LoginError(`The kubeconfig's context ${JSON.stringify(contextName)} is not defined.`);
  config.setCurrentContext(contextName);
  return connectionFromKubeConfig(config, { priority: PRIORITY_OF_KUBECONFIG, namespace: context.namespace });
}

/**
 * Converts a `KubeConfig`'s current context into connection info.
 *
 * @throws errors.LoginError if the context has no cluster.
 */
export function connectionFromKubeConfig(config: k8s.KubeConfig, options: { readonly priority: number; readonly namespace?: string }): credentials.ConnectionInfo {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new errors.LoginError(`The kubeconfig's context ${JSON.stringify(config.getCurrentContext())} has no known cluster.`);
  const user = config.getCurrentUser();
  const providerConfig = (user?.authProvider as { config?: Record<string, unknown> } | undefined)?.config;
  const accessToken = typeof providerConfig?.['access-token'] === 'string' ? providerConfig['access-token'] : undefined;
  const info: { -readonly [K in keyof credentials.ConnectionInfo]: credentials.ConnectionInfo[K] } = {
    server: cluster.server,
    priority: options.priority,
  };
  if (cluster.caFile) info.caPath = cluster.caFile;
  else if (cluster.caData) info.caData = cluster.caData;
  if (cluster.skipTLSVerify) info.insecure = true;
  if (cluster.proxyUrl) info.proxyUrl = cluster.proxyUrl;
  if (user?.certFile) info.certificatePath = user.certFile;
  else if (user?.certData) info.certificateData = user.certData;
  if (user?.keyFile) info.privateKeyPath = user.keyFile;
  else if (user?.keyData) info.privateKeyData = user.keyData;
  if (user?.username) info.username = user.username;
  if (user?.password) info.password = user.password;
  if (user?.token) info.token = user.token;
  else if (accessToken) info.token = accessToken;
  if (user && (user.exec || user.authProvider)) info.authorization = authorizationProvider(user);
  if (options.namespace) info.defaultNamespace = options.namespace;
  return info;
}

/**
 * A dynamic `Authorization` header from the `KubeConfig`'s own authenticators (exec plugins, token
 * files, OIDC, cloud providers) for one user. The placeholder cluster only satisfies the
 * `KubeConfig` API; no connection is made through it.
 */
function authorizationProvider(user: k8s.User): credentials.AuthorizationProvider {
  const config = new k8s.KubeConfig();
  config.loadFromClusterAndUser({ name: 'authorization', server: 'https://authorization.invalid', skipTLSVerify: true }, user);
  return async () => {
    const options: https.RequestOptions = { headers: {} };
    await config.applyToHTTPSOptions(options);
    const headers = (options.headers ?? {}) as Record<string, unknown>;
    const value = headers['Authorization'] ?? headers['authorization'];
    return typeof value === 'string' ? value.trim() : undefined;
  };
}
