/**
 * Legacy kubeconfig `auth-provider`s that refresh their tokens (`oidc`, `gcp`, `azure`), through
 * `@kubernetes/client-node` — loaded only when such a user is actually used.
 *
 * Refreshing those tokens means OAuth flows and cloud SDK conventions that a general Kubernetes
 * client already implements; copying them is not worth it for entries that modern clusters replaced
 * with exec plugins. But the client is far too heavy to be loaded by every operator: kopf-gen does
 * not depend on it; it is imported dynamically on the first request that needs it, from wherever
 * the operator's project installed it, under a specifier the type-checker does not resolve (so it
 * is no build-time dependency either). When it is not installed, the entry's current token
 * (`access-token`, or an oidc `id-token`) is used as it is, until the API server refuses it; an
 * entry without one fails its first request with a `LoginError` saying how to install the client.
 *
 * Static tokens of other providers (`config.access-token`) need none of this: `logins` uses them
 * directly.
 */

import type * as credentials from './credentials.js';
import * as errors from './errors.js';
import type * as kubeconfigs from './kubeconfigs.js';

/** The client library; a variable, so that TypeScript does not resolve it at build time. */
const CLIENT_NODE: string = '@kubernetes/client-node';

/** The providers that need `@kubernetes/client-node` to refresh their tokens. */
export const REFRESHING_PROVIDERS: readonly string[] = ['oidc', 'gcp', 'azure'];

/** Loads a module by its specifier (default: a dynamic `import()`). */
export type ModuleImporter = (specifier: string) => Promise<unknown>;

const importModule: ModuleImporter = (specifier) => import(specifier);

/** The parts of client-node's `KubeConfig` used here (its own types are not imported on purpose). */
interface KubeConfigLike {
  loadFromClusterAndUser(cluster: object, user: object): void;
  applyToHTTPSOptions(options: { headers?: Record<string, unknown> }): Promise<void>;
}

/** The client library is not installed. */
class ClientMissingError extends errors.LoginError {}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes(CLIENT_NODE);
}

/**
 * A dynamic `Authorization` header from client-node's authenticator for one user's auth-provider.
 * Nothing is loaded until the first call. The placeholder cluster only satisfies the `KubeConfig`
 * API; no connection is made through it.
 *
 * @param options.importModule for tests: how the client is loaded.
 */
export function refreshingAuthorization(
  user: kubeconfigs.KubeconfigUser & { readonly authProvider: kubeconfigs.AuthProviderConfig },
  options: { readonly importModule?: ModuleImporter } = {},
): credentials.AuthorizationProvider {
  const provider = user.authProvider.name;
  let loading: Promise<KubeConfigLike> | undefined;
  const load = async (): Promise<KubeConfigLike> => {
    let module: { KubeConfig?: new () => KubeConfigLike };
    try {
      module = (await (options.importModule ?? importModule)(CLIENT_NODE)) as typeof module;
    } catch (cause) {
      const where = `user ${JSON.stringify(user.name)} in ${user.source}`;
      if (isMissing(cause))
        throw new ClientMissingError(`Run \`npm install ${CLIENT_NODE}\` to use auth-provider ${JSON.stringify(provider)} (${where}).`, { cause });
      throw new errors.LoginError(
        `Cannot load ${CLIENT_NODE} for auth-provider ${JSON.stringify(provider)} (${where}): ${(cause as Error)?.message ?? String(cause)}`,
        { cause },
      );
    }
    if (typeof module.KubeConfig !== 'function')
      throw new errors.LoginError(`${CLIENT_NODE} has no KubeConfig class; cannot use auth-provider ${JSON.stringify(provider)}.`);
    const config = new module.KubeConfig();
    config.loadFromClusterAndUser(
      { name: 'authorization', server: 'https://authorization.invalid', skipTLSVerify: true },
      // The provider may write refreshed tokens into its config: give it a copy of its own.
      { name: user.name, authProvider: { name: provider, config: { ...user.authProvider.config } } },
    );
    return config;
  };
  const config = user.authProvider.config;
  const current = config['access-token'] || (provider === 'oidc' ? config['id-token'] : undefined) || undefined;
  return async () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    let config: KubeConfigLike;
    try {
      config = await loading;
    } catch (error) {
      // Without the client, the token the entry holds now still works until it expires.
      if (error instanceof ClientMissingError && current) return `Bearer ${current}`;
      throw error;
    }
    const request: { headers: Record<string, unknown> } = { headers: {} };
    await config.applyToHTTPSOptions(request);
    const value = request.headers['Authorization'] ?? request.headers['authorization'];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
}
