/**
 * The server that picks its host by itself (R-ADMISSION-9; Kopf: `kopf.WebhookAutoServer`).
 *
 * For development against a local cluster, the right host name depends on the cluster: k3d, minikube
 * and Docker Desktop each reach the developer's machine under their own name. This server
 * recognises the cluster from the API server the operator talks to (`environment.apiServer`, see
 * `detection`) and then serves exactly as the matching variant would, with the same options; when
 * the cluster is not recognised, the API server is not HTTPS, or the operator did not say which it
 * is, it serves as a plain `WebhookServer`. The choice is logged.
 */
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as logging from '../../core/actions/logging.js';
import * as detection from './detection.js';
import * as errors from './errors.js';
import * as runs from './runs.js';
import * as servers from './servers.js';

/** The server class that serves a recognised cluster (a plain server for none). */
export function serverClassFor(flavour: detection.ClusterFlavour | null): typeof servers.WebhookServer {
  switch (flavour) {
    case 'k3d':
      return servers.WebhookK3dServer;
    case 'minikube':
      return servers.WebhookMinikubeServer;
    case 'docker-desktop':
      return servers.WebhookDockerDesktopServer;
    case null:
      return servers.WebhookServer;
  }
}

/**
 * Recognises the cluster of `environment.apiServer`, logging what it found; failures mean `null`.
 */
export async function recogniseCluster(
  environment: webhooks.WebhookServerEnvironment | undefined,
  options: { readonly logger: loggers.Logger; readonly clock?: clocks.Clock },
): Promise<detection.ClusterFlavour | null> {
  const logger = options.logger;
  const apiServer = environment?.apiServer;
  if (apiServer === undefined) {
    logger.info('Cluster detection: the API server is not known; using no cluster-specific host.');
    return null;
  }
  if (!apiServer.startsWith('https://')) {
    logger.info(`Cluster detection: the API server ${apiServer} is not HTTPS; using no cluster-specific host.`);
    return null;
  }
  try {
    return await detection.detectCluster(apiServer, { signal: environment?.signal, clock: options.clock });
  } catch (error) {
    logger.warning(`Cluster detection failed; using no cluster-specific host: ${errors.oneLine(error)}`);
    return null;
  }
}

/**
 * A local server with the host name of the recognised local cluster.
 *
 * @example
 * settings.admission.server = new WebhookAutoServer({ port: 9443 });
 */
export class WebhookAutoServer extends runs.DelegatingServer {
  readonly options: servers.WebhookServerOptions;

  /** @throws errors.WebhookOptionsError for options that cannot work together. */
  constructor(options: servers.WebhookServerOptions = {}) {
    super();
    servers.checkOptions(options, 'WebhookAutoServer');
    this.options = { ...options };
  }

  protected async *serving(fn: webhooks.WebhookFn, scoped: webhooks.WebhookServerEnvironment): AsyncGenerator<webhooks.WebhookClientConfig, void, undefined> {
    const logger = this.options.logger ?? logging.getLogger('kopf.webhooks');
    const flavour = await recogniseCluster(scoped, { logger, clock: this.options.clock });
    if (scoped.signal.aborted) return;
    const Server = serverClassFor(flavour);
    const server = new Server(this.options);
    logger.info(
      flavour === null
        ? `Cluster detection recognised no local cluster; serving webhooks with ${Server.name}.`
        : `Cluster detection recognised ${flavour}; serving webhooks with ${Server.name} (host ${server.host ?? '(default)'}).`,
    );
    yield* server.serve(fn, scoped);
  }
}
