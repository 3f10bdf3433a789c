/**
 * Legacy kubeconfig `auth-provider`s that refresh their tokens (`oidc`, `gcp`, `azure`), through
 * `@kubernetes/client-node` — loaded only when such a user is actually used.
 *
 * Refreshing those tokens means OAuth flows and cloud SDK conventions that a general Kubernetes
 * client already implements; copying them is not worth it for entries that modern clusters replaced
 * with exec plugins. But the client is far too heavy to be loaded by every operator: it is an
 * optional peer dependency, imported dynamically on the first request that needs it, under a
 * specifier the type-checker does not resolve (so it is no build-time dependency either). When it
 * is not installed, the request fails with a `LoginError` saying how to install it.
 *
 * Static tokens of other providers (`config.access-token`) need none of this: `logins` uses them
 * directly.
 */

import type * as credentials from './credentials.js';
import * as errors from './errors.js';
import type * as kubeconfigs from './kubeconfigs.js';

/** The optional peer dependency; a variable, so that TypeScript does not resolve it at build time. */
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
      if (isMissing(cause)) throw new errors.LoginError(`Run \`npm install ${CLIENT_NODE}\` to use auth-provider ${JSON.stringify(provider)} (${where}).`, { cause });
      throw new errors.LoginError(`Cannot load ${CLIENT_NODE} for auth-provider ${JSON.stringify(provider)} (${where}): ${(cause as Error)?.message ?? String(cause)}`, { cause });
    }
    if (typeof module.KubeConfig !== 'function') throw new errors.LoginError(`${CLIENT_NODE} has no KubeConfig class; cannot use auth-provider ${JSON.stringify(provider)}.`);
    const config = new module.KubeConfig();
    config.loadFromClusterAndUser(
      { name: 'authorization', server: 'https://authorization.invalid', skipTLSVerify: true },
      // The provider may write refreshed tokens into its config: give it a copy of its own.
      { name: user.name, authProvider: { name: provider, config: { ...user.authProvider.config } } },
    );
    return config;
  };
  return async () => {
    loading ??= load().catch((error: unknown) => { loading = undefined; throw error; });
    const config = await loading;
    const request: { headers: Record<string, unknown> } = { headers: {} };
    await config.applyToHTTPSOptions(request);
    const value = request.headers['Authorization'] ?? request.headers['authorization'];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
}
