/**
 * The built-in logins of R-AUTH-2: from an in-cluster service account and from kubeconfig files.
 *
 * Both turn what they find into a `credentials.ConnectionInfo`. The kubeconfig login reads the
 * files with `kubeconfigs` (kubectl's merging and path rules) and converts the current context's
 * cluster, user and namespace: static material as fields, an exec plugin as dynamic providers
 * (`execplugins`, refreshed when its credentials expire), a refreshing auth-provider (oidc, gcp,
 * azure) as a provider backed by the optional `@kubernetes/client-node` (`authproviders`).
 * Everything a request would trip over later — a missing certificate file, an unknown user, an
 * unsupported field — is a `LoginError` naming the file and the entry now.
 *
 * The reactor's login activity calls these when no login handler is registered; when neither
 * applies, `noCredentialsMessage()` says exactly what was looked for.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as authproviders from './authproviders.js';
import type * as credentials from './credentials.js';
import * as errors from './errors.js';
import * as execplugins from './execplugins.js';
import * as kubeconfigs from './kubeconfigs.js';

/** Priority of the service-account login. */
export const PRIORITY_OF_SERVICE_ACCOUNT = 20;
/** Priority of the kubeconfig login. */
export const PRIORITY_OF_KUBECONFIG = 10;
/** Where Kubernetes mounts the service account's token, CA and namespace in a pod. */
export const SERVICE_ACCOUNT_FOLDER = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The in-cluster API server. */
export const IN_CLUSTER_SERVER = 'https://kubernetes.default.svc';

export { kubeconfigPaths, loadKubeconfig } from './kubeconfigs.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

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
  const info: Mutable<credentials.ConnectionInfo> = {
    server: (options?.server ?? IN_CLUSTER_SERVER).replace(/\/$/, ''),
    priority: PRIORITY_OF_SERVICE_ACCOUNT,
    principal: `the service account of ${tokenPath}`,
  };
  if (fs.existsSync(caPath)) info.caPath = caPath;
  const token = readTrimmed(tokenPath);
  if (token) info.token = token;
  const namespace = readTrimmed(path.join(folder, 'namespace'));
  if (namespace) info.defaultNamespace = namespace;
  return info;
}

/** Injectable parts of the kubeconfig login, for tests: how plugins run, time, module loading. */
export interface PluginOptions extends execplugins.ExecOptions {
  readonly importModule?: authproviders.ModuleImporter;
}

/**
 * Logs in with kubeconfig files (R-AUTH-2): the current (or given) context's cluster, user and
 * namespace, priority 10. Returns `null` when no kubeconfig file exists.
 *
 * @param options.paths files to merge (default `kubeconfigPaths()`).
 * @param options.context a context name instead of the current one.
 * @param options.plugins for tests: the process runner and clock of exec plugins, the module loader.
 * @throws errors.LoginError when a file is not a kubeconfig, there is no current context, or the
 *   context's entries are unknown, malformed or unusable (see `connectionFromKubeConfig`).
 */
export function loginWithKubeconfig(options?: {
  readonly paths?: readonly string[];
  readonly context?: string;
  readonly plugins?: PluginOptions;
}): credentials.ConnectionInfo | null {
  const config = kubeconfigs.loadKubeconfig(options?.paths ?? kubeconfigs.kubeconfigPaths());
  if (!config) return null;
  return connectionFromKubeConfig(config, { priority: PRIORITY_OF_KUBECONFIG, context: options?.context, plugins: options?.plugins });
}

function requireFile(file: string | undefined, what: string, entry: string): string | undefined {
  if (file !== undefined && !fs.existsSync(file)) throw new errors.LoginError(`${entry}: the ${what} file ${file} does not exist.`);
  return file;
}

function exclusive(entry: string, pathKey: string, file: string | undefined, data: string | undefined): void {
  // kubectl rejects this too ("... are both specified"); the ConnectionInfo cannot hold both.
  if (file !== undefined && data !== undefined) throw new errors.LoginError(`${entry}: both ${pathKey} and ${pathKey}-data are set; use one.`);
}

/**
 * Converts a kubeconfig's current (or given) context into connection info.
 *
 * @throws errors.LoginError for a missing or unknown context, cluster or user; a certificate, key
 *   or token file that does not exist; both a file and data for one item; an exec plugin of an
 *   unsupported version; an auth-provider without a usable token; impersonation (unsupported).
 */
export function connectionFromKubeConfig(
  config: kubeconfigs.Kubeconfig,
  options: { readonly priority: number; readonly context?: string; readonly plugins?: PluginOptions },
): credentials.ConnectionInfo {
  const { context, cluster, user } = kubeconfigs.resolveContext(config, options.context);
  const clusterEntry = `${cluster.source}: cluster ${JSON.stringify(cluster.name)}`;
  exclusive(clusterEntry, 'certificate-authority', cluster.certificateAuthority, cluster.certificateAuthorityData);
  const info: Mutable<credentials.ConnectionInfo> = { server: cluster.server!.replace(/\/$/, ''), priority: options.priority };
  const caPath = requireFile(cluster.certificateAuthority, 'certificate-authority', clusterEntry);
  if (caPath) info.caPath = caPath;
  else if (cluster.certificateAuthorityData) info.caData = cluster.certificateAuthorityData;
  if (cluster.insecureSkipTlsVerify) info.insecure = true;
  if (cluster.proxyUrl) info.proxyUrl = cluster.proxyUrl;
  if (cluster.tlsServerName) info.tlsServerName = cluster.tlsServerName;
  if (user) Object.assign(info, userFields(user, cluster, options.plugins));
  info.principal = principalOf(user, context);
  if (context.namespace) info.defaultNamespace = context.namespace;
  return info;
}

/** Who a context's credentials authenticate as, for messages (R-SEC-22). */
function principalOf(user: kubeconfigs.KubeconfigUser | undefined, context: { readonly name: string; readonly source?: string }): string {
  if (!user) return `no user (context ${JSON.stringify(context.name)})`;
  const how = user.exec
    ? ` (exec plugin ${JSON.stringify(user.exec.command)})`
    : user.authProvider
      ? ` (auth-provider ${JSON.stringify(user.authProvider.name)})`
      : '';
  return `user ${JSON.stringify(user.name)} of ${user.source}${how}`;
}

/** The ConnectionInfo fields of a user entry. */
function userFields(
  user: kubeconfigs.KubeconfigUser,
  cluster: kubeconfigs.KubeconfigCluster,
  plugins: PluginOptions | undefined,
): Partial<credentials.ConnectionInfo> {
  const entry = `${user.source}: user ${JSON.stringify(user.name)}`;
  if (user.impersonation.length > 0) {
    throw new errors.LoginError(`${entry}: impersonation (${user.impersonation.join(', ')}) is not supported by the runtime.`);
  }
  exclusive(entry, 'client-certificate', user.clientCertificate, user.clientCertificateData);
  exclusive(entry, 'client-key', user.clientKey, user.clientKeyData);
  const fields: Mutable<Partial<credentials.ConnectionInfo>> = {};
  const certificatePath = requireFile(user.clientCertificate, 'client-certificate', entry);
  if (certificatePath) fields.certificatePath = certificatePath;
  else if (user.clientCertificateData) fields.certificateData = user.clientCertificateData;
  const keyPath = requireFile(user.clientKey, 'client-key', entry);
  if (keyPath) fields.privateKeyPath = keyPath;
  else if (user.clientKeyData) fields.privateKeyData = user.clientKeyData;
  if (user.username) fields.username = user.username;
  if (user.password) fields.password = user.password;
  if (user.token) fields.token = user.token;
  else if (user.tokenFile) {
    // kubectl: `token` wins over `tokenFile`, whose content is trimmed. A re-login re-reads it.
    const token = readTrimmed(requireFile(user.tokenFile, 'tokenFile', entry)!);
    if (!token) throw new errors.LoginError(`${entry}: the tokenFile ${user.tokenFile} is empty.`);
    fields.token = token;
  }
  if (user.exec) {
    const exec = new execplugins.ExecCredentials(user.exec, user, cluster, plugins);
    fields.authorization = exec.authorization;
    fields.clientCertificate = exec.clientCertificate;
  }
  const provider = user.authProvider;
  if (provider) {
    const accessToken = provider.config['access-token'] || undefined;
    if (authproviders.REFRESHING_PROVIDERS.includes(provider.name)) {
      fields.authorization = authproviders.refreshingAuthorization({ ...user, authProvider: provider }, { importModule: plugins?.importModule });
    } else if (!accessToken) {
      throw new errors.LoginError(
        `${entry}: auth-provider ${JSON.stringify(provider.name)} has no access-token and is not supported; ` +
          `supported: ${authproviders.REFRESHING_PROVIDERS.join(', ')} (with @kubernetes/client-node), or any with a static access-token.`,
      );
    }
    if (!fields.token && accessToken) fields.token = accessToken;
  }
  return fields;
}

/**
 * Why the built-in logins found nothing, naming exactly what they looked for: `KUBECONFIG` (unset,
 * or the files it lists), the default kubeconfig (not read when `KUBECONFIG` is set), and the
 * service-account token. One line, for the error that stops the operator.
 *
 * @param options.env the environment (default `process.env`).
 * @param options.folder the service-account folder (default: the standard mount point).
 */
export function noCredentialsMessage(options?: { readonly env?: NodeJS.ProcessEnv; readonly folder?: string }): string {
  const env = options?.env ?? process.env;
  const fallback = kubeconfigs.defaultKubeconfigPath(env);
  const list = env['KUBECONFIG'];
  const token = path.join(options?.folder ?? SERVICE_ACCOUNT_FOLDER, 'token');
  const kubeconfig = list
    ? `KUBECONFIG=${list} lists no existing file (the default ${fallback} is not read when KUBECONFIG is set)`
    : `KUBECONFIG is not set, ${fallback} does not exist`;
  return (
    `No credentials found: ${kubeconfig}, and ${token} does not exist (not running in a pod). ` +
    'Point KUBECONFIG at a kubeconfig file or register a login handler (on.login).'
  );
}
