/**
 * Tunnels: webhooks served on the developer's machine and reached by a remote cluster through a
 * public URL (R-ADMISSION-9, optional; Kopf: `kopf.WebhookNgrokTunnel`, `kopf.WebhookAutoTunnel`).
 *
 * The ngrok tunnel runs a local plain-HTTP `WebhookServer` and forwards a public ngrok URL to it
 * with the optional package `@ngrok/ngrok` (not a dependency of kopf-gen: install it to use the
 * tunnel). The public URL has a certificate from a public CA, so no `caBundle` is announced. When
 * the package is missing, serving fails at once with a `MissingDependencyError` that says how to
 * install it. The auto tunnel does what Kopf's does: a local cluster it recognises (k3d, minikube,
 * Docker Desktop) reaches the machine directly, so it serves there as `WebhookAutoServer` would;
 * any other cluster gets the ngrok tunnel.
 *
 * Caveat (as in Kopf): anybody who learns the public URL can send requests to the operator;
 * ngrok's random host names make that unlikely for a development session, not impossible.
 */
import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as logging from '../../core/actions/logging.js';
import * as addresses from './addresses.js';
import * as autoservers from './autoservers.js';
import * as errors from './errors.js';
import * as runs from './runs.js';
import * as servers from './servers.js';

/** The npm package the ngrok tunnel needs. */
export const NGROK_PACKAGE = '@ngrok/ngrok';

/** What the tunnel passes to `@ngrok/ngrok`'s `forward()` (a subset of its `Config`). */
export interface NgrokForwardConfig {
  /** The local `host:port` to forward to. */
  readonly addr: string;
  readonly authtoken?: string;
  /** Read the token from `NGROK_AUTHTOKEN` (used when no token is given). */
  readonly authtoken_from_env?: boolean;
  readonly domain?: string;
}

/** The part of an ngrok listener the tunnel uses. */
export interface NgrokListener {
  url(): string | null;
  close(): Promise<void>;
}

/** The part of the `@ngrok/ngrok` module the tunnel uses. */
export interface NgrokModule {
  forward(config: NgrokForwardConfig): Promise<NgrokListener>;
}

/** Loads the ngrok module; the default imports `@ngrok/ngrok`. Tests inject their own. */
export type NgrokLoader = () => Promise<NgrokModule>;

/** Options of `WebhookNgrokTunnel`. */
export interface WebhookNgrokTunnelOptions {
  /** The local address to listen on. Default: all interfaces. */
  readonly addr?: string;
  /** The local port. Default: a random free port. */
  readonly port?: number;
  /** The root path of the webhooks, locally and in the public URL. */
  readonly path?: string;
  /** The ngrok auth token. Default: the `NGROK_AUTHTOKEN` environment variable. */
  readonly token?: string;
  /** A reserved ngrok domain for a stable public URL (paid plans). */
  readonly domain?: string;
  /** How `@ngrok/ngrok` is loaded. Default: a dynamic import of the package. */
  readonly loader?: NgrokLoader;
  readonly clock?: clocks.Clock;
  readonly logger?: loggers.Logger;
}

/**
 * Imports `@ngrok/ngrok`.
 *
 * @throws errors.MissingDependencyError when the package is not installed or cannot load.
 */
export async function importNgrok(): Promise<NgrokModule> {
  const specifier: string = NGROK_PACKAGE; // a variable: the package is optional, not resolved at build time
  let loaded: unknown;
  try {
    loaded = await import(specifier);
  } catch (error) {
    const missing = isMissingModule(error, specifier);
    throw new errors.MissingDependencyError(
      NGROK_PACKAGE,
      missing
        ? `The ngrok webhook tunnel needs the optional package ${NGROK_PACKAGE}, which is not installed: run \`npm install ${NGROK_PACKAGE}\` and set NGROK_AUTHTOKEN (or pass token), or use a WebhookServer instead.`
        : `The ngrok webhook tunnel cannot load the package ${NGROK_PACKAGE}: ${errors.oneLine(error)}`,
      { cause: error },
    );
  }
  const module = loaded as Partial<NgrokModule> & { default?: Partial<NgrokModule> };
  const api = typeof module.forward === 'function' ? module : module.default;
  if (typeof api?.forward !== 'function') {
    throw new errors.MissingDependencyError(
      NGROK_PACKAGE,
      `The package ${NGROK_PACKAGE} has no forward() function; install a current version: \`npm install ${NGROK_PACKAGE}@latest\`.`,
    );
  }
  return api as NgrokModule;
}

/**
 * Whether an import failed because the package is not installed: Node says so with a code; module
 * runners and bundlers (e.g. in test runners) only in words that name the package.
 */
function isMissingModule(error: unknown, specifier: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return true;
  const message = error instanceof Error ? error.message : String(error);
  return message.includes(specifier) && /cannot find|could not resolve|failed to resolve|not found/i.test(message);
}

/**
 * Webhooks served locally over plain HTTP and published at an ngrok URL.
 *
 * @example
 * settings.admission.server = new WebhookNgrokTunnel({ path: '/hooks' }); // NGROK_AUTHTOKEN in the environment
 */
export class WebhookNgrokTunnel extends runs.DelegatingServer {
  readonly options: WebhookNgrokTunnelOptions;

  /** @throws errors.WebhookOptionsError for options that cannot work. */
  constructor(options: WebhookNgrokTunnelOptions = {}) {
    super();
    checkTunnelOptions(options, 'WebhookNgrokTunnel');
    this.options = { ...options };
  }

  protected async *serving(fn: webhooks.WebhookFn, scoped: webhooks.WebhookServerEnvironment): AsyncGenerator<webhooks.WebhookClientConfig, void, undefined> {
    const o = this.options;
    const logger = o.logger ?? logging.getLogger('kopf.webhooks');
    const ngrok = await (o.loader ?? importNgrok)();
    const local = new servers.WebhookServer({ addr: o.addr, port: o.port, path: o.path, insecure: true, clock: o.clock, logger: o.logger });
    let tunnel: NgrokListener | undefined;
    const closeTunnel = async (): Promise<void> => {
      const current = tunnel;
      tunnel = undefined;
      await current?.close().catch((error: unknown) => logger.warning(`Cannot close the ngrok tunnel: ${errors.oneLine(error)}`));
    };
    const unhook = aborts.onAbort(scoped.signal, () => {
      void closeTunnel();
    });
    try {
      for await (const config of local.serve(fn, scoped)) {
        await closeTunnel(); // a new local endpoint gets a new tunnel
        const target = new URL(config.url!).host;
        tunnel = await ngrok.forward({
          addr: target,
          ...(o.token !== undefined ? { authtoken: o.token } : { authtoken_from_env: true }),
          ...(o.domain !== undefined ? { domain: o.domain } : {}),
        });
        const publicUrl = tunnel.url();
        if (!publicUrl) throw new Error(`ngrok opened a tunnel to ${target} but reported no public URL`);
        const url = `${publicUrl.replace(/\/+$/, '')}${addresses.rootPath(o.path)}`;
        logger.info(`Accessing the webhooks through ngrok at ${url}`);
        if (scoped.signal.aborted) return;
        yield { url };
      }
    } finally {
      unhook();
      await closeTunnel();
    }
  }
}

/** Options of `WebhookAutoTunnel`: where to listen locally, and the ngrok tunnel's extras. */
export type WebhookAutoTunnelOptions = WebhookNgrokTunnelOptions;

function checkTunnelOptions(options: WebhookNgrokTunnelOptions, owner: string): void {
  servers.checkOptions({ addr: options.addr, port: options.port, path: options.path, insecure: true }, owner);
  for (const key of ['token', 'domain'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || !value)) throw new errors.WebhookOptionsError(`${owner}: ${key} must be a non-empty string`);
  }
  if (options.loader !== undefined && typeof options.loader !== 'function') throw new errors.WebhookOptionsError(`${owner}: loader must be a function`);
}

/**
 * A local server for a recognised local cluster, else an ngrok tunnel (Kopf's choice).
 *
 * @example
 * settings.admission.server = new WebhookAutoTunnel();
 */
export class WebhookAutoTunnel extends runs.DelegatingServer {
  readonly options: WebhookAutoTunnelOptions;

  /** @throws errors.WebhookOptionsError for options that cannot work. */
  constructor(options: WebhookAutoTunnelOptions = {}) {
    super();
    checkTunnelOptions(options, 'WebhookAutoTunnel');
    this.options = { ...options };
  }

  protected async *serving(fn: webhooks.WebhookFn, scoped: webhooks.WebhookServerEnvironment): AsyncGenerator<webhooks.WebhookClientConfig, void, undefined> {
    const o = this.options;
    const logger = o.logger ?? logging.getLogger('kopf.webhooks');
    const flavour = await autoservers.recogniseCluster(scoped, { logger, clock: o.clock });
    if (scoped.signal.aborted) return;
    let server: webhooks.WebhookServerObject;
    if (flavour === null) {
      logger.info('Cluster detection recognised no local cluster; tunnelling webhooks through ngrok.');
      server = new WebhookNgrokTunnel(o);
    } else {
      const Server = autoservers.serverClassFor(flavour);
      logger.info(`Cluster detection recognised ${flavour}; serving webhooks with ${Server.name}.`);
      server = new Server({ addr: o.addr, port: o.port, path: o.path, clock: o.clock, logger: o.logger });
    }
    yield* server.serve(fn, scoped);
  }
}
