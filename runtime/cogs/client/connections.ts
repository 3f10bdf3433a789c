/**
 * Explicit connections: where an embedded operator, a test runner or a script gets its
 * credentials when it should not depend on the process's environment.
 *
 * Without options, the built-in logins look where kubectl and Kopf look: the pod's service
 * account, then `$KUBECONFIG` or `~/.kube/config` of `process.env`. Tests and tools that run
 * several clusters in one process cannot point a process-wide variable at each, so they say it:
 * `kubeconfig` (files to read instead), `kubeconfigContext` (a context other than the current
 * one), `connection` (ready `ConnectionInfo`, or a `KubeConfig` of `@kubernetes/client-node`,
 * whose current context is read at every login: `clientnodeconfigs`), or `env` (the environment the built-in logins read,
 * e.g. a test runner's `{ KUBECONFIG }`). An explicit `kubeconfig` or `connection` replaces the
 * built-in discovery altogether — an in-cluster service account never overrides it.
 *
 * `builtinLogins()` turns the options into the logins to run (by the operator's login activity,
 * or by `connecting` for scripts); `noCredentialsMessage()` says what they looked for when they
 * found nothing, and `missingCredentials()` says it before they run when there is nothing to read.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as clientnodeconfigs from './clientnodeconfigs.js';
import * as credentials from './credentials.js';
import * as errors from './errors.js';
import * as kubeconfigs from './kubeconfigs.js';
import * as logins from './logins.js';

/** Where to get credentials from, explicitly. All optional: without any, the usual discovery. */
export interface ConnectionOptions {
  /**
   * A kubeconfig file (or several: an array, or a path list as in `$KUBECONFIG`) to log in with,
   * instead of `$KUBECONFIG`, `~/.kube/config` and the service account. Relative paths are
   * resolved from the current directory.
   */
  readonly kubeconfig?: string | readonly string[];
  /** The kubeconfig context to use instead of its `current-context`. */
  readonly kubeconfigContext?: string;
  /**
   * Ready credentials, instead of any discovery (not together with `kubeconfig`): a
   * `ConnectionInfo`, or a `KubeConfig` of `@kubernetes/client-node`, whose current context is
   * logged in with (R-CLIENT-503).
   */
  readonly connection?: credentials.ConnectionInfo | clientnodeconfigs.ClientNodeKubeConfig;
  /** The environment the built-in logins read (`KUBECONFIG`, `HOME`); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

/** One built-in login: a Kopf-style id and what it returns (`null`: not applicable). */
export interface BuiltinLogin {
  readonly id: string;
  readonly fn: () => credentials.ConnectionInfo | null;
}

/**
 * Checks the options: `connection` goes alone; a malformed `connection` is named.
 *
 * @throws errors.ConnectionOptionsError for `connection` with `kubeconfig` or `kubeconfigContext`.
 * @throws InvalidConnectionInfoError for an unusable `connection`.
 */
export function checkConnectionOptions(options: ConnectionOptions): void {
  if (options.connection !== undefined) {
    const other = options.kubeconfig !== undefined ? 'kubeconfig' : options.kubeconfigContext !== undefined ? 'kubeconfigContext' : undefined;
    if (other !== undefined) throw new errors.ConnectionOptionsError(`The connection options "connection" and "${other}" exclude each other: give one.`);
    // A KubeConfig is converted now too: what the runtime cannot honour fails before the start.
    if (clientnodeconfigs.isClientNodeKubeConfig(options.connection)) clientnodeconfigs.kubeconfigOf(options.connection);
    else credentials.connectionInfo(options.connection);
  }
}

/** Whether the options name a source of credentials (as opposed to the usual discovery). */
export function isExplicit(options: ConnectionOptions | undefined): boolean {
  return options !== undefined && (options.connection !== undefined || options.kubeconfig !== undefined || options.kubeconfigContext !== undefined);
}

/** The explicit kubeconfig files, absolute. */
function explicitPaths(kubeconfig: string | readonly string[]): string[] {
  const list = typeof kubeconfig === 'string' ? kubeconfig.split(path.delimiter) : [...kubeconfig];
  const files = list.filter(Boolean).map((file) => path.resolve(file));
  if (files.length === 0) throw new errors.ConnectionOptionsError('The connection option "kubeconfig" names no file.');
  return files;
}

/**
 * The logins the options ask for, in Kopf's order and with Kopf's ids: `connection` alone; an
 * explicit `kubeconfig` (or only a `kubeconfigContext`) alone; else the service account, then
 * the kubeconfig files of `env`.
 */
export function builtinLogins(options: ConnectionOptions = {}, plugins?: logins.PluginOptions): BuiltinLogin[] {
  checkConnectionOptions(options);
  const connection = options.connection;
  if (clientnodeconfigs.isClientNodeKubeConfig(connection)) {
    return [{ id: 'login_with_connection', fn: () => clientnodeconfigs.connectionFromClientNode(connection, plugins) }];
  }
  if (connection !== undefined) return [{ id: 'login_with_connection', fn: () => connection }];
  const context = options.kubeconfigContext;
  if (options.kubeconfig !== undefined) {
    const paths = explicitPaths(options.kubeconfig);
    return [
      {
        id: 'login_with_kubeconfig',
        fn: () => {
          const missing = paths.filter((file) => !fs.existsSync(file));
          if (missing.length > 0) throw new errors.LoginError(`The kubeconfig ${missing.join(', ')} does not exist.`);
          return logins.loginWithKubeconfig({ paths, context, plugins });
        },
      },
    ];
  }
  const fromEnv: BuiltinLogin = {
    id: 'login_with_kubeconfig',
    fn: () => logins.loginWithKubeconfig({ paths: kubeconfigs.kubeconfigPaths(options.env), context, plugins }),
  };
  if (context !== undefined) return [fromEnv];
  return [{ id: 'login_with_service_account', fn: () => logins.loginWithServiceAccount() }, fromEnv];
}

/**
 * Whether the built-in logins of these options have nothing at all to read: no explicit
 * `connection` or `kubeconfig` (whose failures their logins report), no file that `KUBECONFIG`
 * lists (or `~/.kube/config` when it is unset), and no service-account token. Then the one line
 * that says what was looked for (`noCredentialsMessage`), for a command to stop with before the
 * operator starts (R-CLI-701); otherwise `undefined`, and the logins run as usual.
 */
export function missingCredentials(options: ConnectionOptions = {}, exists: (file: string) => boolean = fs.existsSync): string | undefined {
  if (options.connection !== undefined || options.kubeconfig !== undefined) return undefined;
  if (kubeconfigs.kubeconfigPaths(options.env).some((file) => exists(path.resolve(file)))) return undefined;
  if (exists(path.join(logins.SERVICE_ACCOUNT_FOLDER, 'token'))) return undefined;
  return noCredentialsMessage(options);
}

/** Why the built-in logins of these options found nothing, in one line. */
export function noCredentialsMessage(options: ConnectionOptions = {}): string {
  if (clientnodeconfigs.isClientNodeKubeConfig(options.connection)) return `No credentials: ${clientnodeconfigs.SOURCE} gave none that the API server accepts.`;
  if (options.connection !== undefined) return 'No credentials: the given connection was rejected by the API server.';
  if (options.kubeconfig !== undefined) {
    return `No credentials: the kubeconfig ${explicitPaths(options.kubeconfig).join(', ')} gave none that the API server accepts.`;
  }
  return logins.noCredentialsMessage({ env: options.env });
}
