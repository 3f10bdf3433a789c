/**
 * The client users already have: a `KubeConfig` of `@kubernetes/client-node` with the operator's
 * live credentials (R-CLIENT-502).
 *
 * Operators written with client-node — its typed `CoreV1Api`, `Watch`, `Log`, `Exec`, informers —
 * keep using it inside kopf-gen's handlers: `await kubeConfig()` returns a `KubeConfig` whose every
 * request takes its credentials from the operator's vault at the moment it is sent. The operator's
 * re-logins (a rotated token file, an exec plugin's fresh token, new credentials after a 401) are
 * seen by client-node's next request, with no new `KubeConfig`; a 401 that client-node receives
 * invalidates the credentials it sent, so the operator logs in again (R-AUTH-3) and the handler's
 * retry succeeds. Only the server, its `tls-server-name` and its proxy are fixed when the
 * `KubeConfig` is made: ask for one per handler call, not once at module load.
 *
 * client-node is an optional package of kopf-gen, not a dependency: it is imported when
 * `kubeConfig()` is first called, so an operator that never calls it never loads it (nor its tens
 * of megabytes).
 */

import * as fs from 'node:fs';
import type * as clientNode from '@kubernetes/client-node';
import * as certificates from '../../cogs/client/certificates.js';
import * as clients from '../../cogs/client/clients.js';
import type * as credentials from '../../cogs/client/credentials.js';
import * as clientErrors from '../../cogs/client/errors.js';
import * as transport from '../../cogs/client/transport.js';
import * as invocation from '../../core/actions/invocation.js';
import { ClientNodeUnavailableError } from './errors.js';

/** The npm package this kit hands out objects of. */
export const CLIENT_NODE_PACKAGE = '@kubernetes/client-node';

/** The module `@kubernetes/client-node`. */
export type ClientNodeModule = typeof clientNode;

/** Loads `@kubernetes/client-node`; the default imports it. Tests inject their own. */
export type ClientNodeLoader = () => Promise<ClientNodeModule>;

/** Options of `kubeConfig()`. */
export interface KubeConfigOptions {
  /** How `@kubernetes/client-node` is loaded. Default: a dynamic import of the package. */
  readonly loader?: ClientNodeLoader;
}

/** The names of the one cluster, user and context of a live `KubeConfig`. */
export const LIVE_CONTEXT = 'kopf-gen';

/** Imports the package (a variable specifier: bundlers and the type checker leave the optional package alone). */
async function importClientNode(): Promise<ClientNodeModule> {
  const specifier: string = CLIENT_NODE_PACKAGE;
  return (await import(specifier)) as ClientNodeModule;
}

/** Loads client-node, or says why it cannot: not installed (and how to install it), or failing to load. */
async function loadClientNode(loader: ClientNodeLoader): Promise<ClientNodeModule> {
  try {
    return await loader();
  } catch (error) {
    const missing = (error as { readonly code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(CLIENT_NODE_PACKAGE);
    throw new ClientNodeUnavailableError(
      missing
        ? `kubeConfig() needs the optional package ${CLIENT_NODE_PACKAGE}, which is not installed: run \`npm install ${CLIENT_NODE_PACKAGE}\`.`
        : `kubeConfig() cannot load the package ${CLIENT_NODE_PACKAGE}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      { cause: error },
    );
  }
}

/** The client certificate and key of credentials, PEM: a dynamic provider's first, else the static ones. */
async function clientCertificateOf(info: credentials.ConnectionInfo): Promise<{ readonly cert?: string; readonly key?: string }> {
  const dynamic = info.clientCertificate ? await info.clientCertificate() : undefined;
  if (dynamic !== undefined) return { cert: certificates.pemOf(dynamic.certificateData), key: certificates.pemOf(dynamic.privateKeyData) };
  const read = (file: string | undefined, data: string | Uint8Array | undefined): string | undefined =>
    file !== undefined ? fs.readFileSync(file, 'utf8') : data !== undefined ? certificates.pemOf(data) : undefined;
  return { cert: read(info.certificatePath, info.certificateData), key: read(info.privateKeyPath, info.privateKeyData) };
}

/** What client-node hands its authenticators: the request's options, as far as they are set here. */
interface AuthenticatedOptions {
  headers?: Record<string, unknown>;
  ca?: unknown;
  cert?: unknown;
  key?: unknown;
  rejectUnauthorized?: boolean;
}

/**
 * The vault's current credentials applied to each of client-node's requests, and the 401s it
 * receives reported back: the credentials of the rejected `Authorization` header are invalidated.
 */
class LiveCredentials {
  /** The credentials behind recently sent `Authorization` headers (a few: they rarely change). */
  private readonly sent = new Map<string, credentials.VaultItem>();

  constructor(private readonly vault: credentials.Vault) {}

  isAuthProvider(user: { readonly name: string }): boolean {
    return user.name === LIVE_CONTEXT;
  }

  async applyAuthentication(_user: unknown, opts: AuthenticatedOptions): Promise<void> {
    const item = this.vault.selectNow() ?? (await this.vault.select());
    const info = item.info;
    opts.headers ??= {};
    const authorization = await transport.authorizationOf(info);
    if (authorization !== undefined) {
      opts.headers['Authorization'] = authorization;
      this.remember(authorization, item);
    }
    const ca = transport.certificateAuthorityOf(info);
    if (ca !== undefined) opts.ca = ca;
    if (info.insecure) opts.rejectUnauthorized = false;
    const { cert, key } = await clientCertificateOf(info);
    if (cert !== undefined) opts.cert = cert;
    if (key !== undefined) opts.key = key;
  }

  /** A 401 answered a request with this `Authorization` header: its credentials are invalid (R-AUTH-3). */
  rejected(authorization: string | undefined): void {
    const item = authorization === undefined ? undefined : this.sent.get(authorization);
    if (item !== undefined) this.vault.invalidate(item);
  }

  private remember(authorization: string, item: credentials.VaultItem): void {
    this.sent.delete(authorization);
    this.sent.set(authorization, item);
    if (this.sent.size > 8) this.sent.delete(this.sent.keys().next().value!);
  }
}

/** A `KubeConfig` over the vault: its API clients report 401s back to the credentials (see `LiveCredentials`). */
function liveKubeConfig(cn: ClientNodeModule, live: LiveCredentials): clientNode.KubeConfig {
  class LiveKubeConfig extends cn.KubeConfig {
    override makeApiClient<T extends clientNode.ApiType>(apiClientType: clientNode.ApiConstructor<T>): T {
      const cluster = this.getCurrentCluster();
      if (cluster === null) return super.makeApiClient(apiClientType); // its own error: "No active cluster!"
      const fetching = new cn.IsomorphicFetchHttpLibrary();
      const httpApi = cn.wrapHttpLibrary({
        async send(request) {
          const response = await fetching.send(request).toPromise();
          if (response.httpStatusCode === 401) live.rejected(request.getHeaders()['Authorization']);
          return response;
        },
      });
      const configuration = cn.createConfiguration({ baseServer: new cn.ServerConfiguration(cluster.server, {}), authMethods: { default: this }, httpApi });
      return new apiClientType(configuration);
    }
  }
  return new LiveKubeConfig();
}

/**
 * A `KubeConfig` of `@kubernetes/client-node` that authenticates every request with the current
 * credentials of `client` — by default the running operator's, inside a handler, daemon, timer or
 * activity (R-CLIENT-502). Its one context, `kopf-gen`, has the operator's server and default
 * namespace; `makeApiClient()` and client-node's `Watch`, `Log`, `Exec`, … all use it.
 *
 * @param client whose credentials to use: a `connect()`ed client in scripts; default: the operator's.
 * @throws ClientUsageError outside a running operator without a `client` (or with one without credentials).
 * @throws ClientNodeUnavailableError when `@kubernetes/client-node` is not installed.
 * @throws LoginError when the vault holds no usable credentials.
 * @example
 * import { CoreV1Api } from '@kubernetes/client-node';
 * on.create(KopfExamples, async function create({ name, namespace }) {
 *   const core = (await kubeConfig()).makeApiClient(CoreV1Api);
 *   await core.createNamespacedConfigMap({ namespace: namespace!, body: { metadata: { name } } });
 * });
 */
export async function kubeConfig(client?: clients.KubeClient, options: KubeConfigOptions = {}): Promise<clientNode.KubeConfig> {
  const vault = clients.vaultOf(client ?? invocation.currentClient());
  if (vault === undefined) {
    throw new clientErrors.ClientUsageError(
      client === undefined
        ? 'kubeConfig() without a client works in handlers of a running operator only; elsewhere, pass a client made with connect().'
        : "kubeConfig(client): this client has no credentials of its own (give the handlers' `client` or one made with connect()).",
    );
  }
  const cn = await loadClientNode(options.loader ?? importClientNode);
  const info = (vault.selectNow() ?? (await vault.select())).info;
  const live = new LiveCredentials(vault);
  const config = liveKubeConfig(cn, live);
  const server = info.server.replace(/\/+$/, '');
  config.loadFromOptions({
    clusters: [
      {
        name: LIVE_CONTEXT,
        server,
        // client-node refuses plain http unless told to skip TLS verification (which http has none of).
        skipTLSVerify: info.insecure === true || server.startsWith('http:'),
        ...(info.tlsServerName !== undefined ? { tlsServerName: info.tlsServerName } : {}),
        ...(info.proxyUrl !== undefined ? { proxyUrl: info.proxyUrl } : {}),
      },
    ],
    users: [{ name: LIVE_CONTEXT }],
    contexts: [{ name: LIVE_CONTEXT, cluster: LIVE_CONTEXT, user: LIVE_CONTEXT, ...(info.defaultNamespace ? { namespace: info.defaultNamespace } : {}) }],
    currentContext: LIVE_CONTEXT,
  });
  config.addAuthenticator(live);
  return config;
}
