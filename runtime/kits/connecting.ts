/**
 * A typed client for scripts, tests and tools that are not handlers: `connect()`.
 *
 * Handlers get the operator's client as `client`; everything else — a migration script, a test
 * that creates objects, a CLI tool — needs one of its own with the same behaviour. `connect()`
 * logs in as the operator would (the built-in logins, or the explicit `kubeconfig`,
 * `kubeconfigContext`, `connection`, `env`), keeps its own credentials vault, and re-logs in when
 * the API server rejects the credentials (HTTP 401): a kubeconfig whose token file was rotated,
 * an exec plugin, or an expiring token keep working. Requests share keep-alive connections, the
 * retries and the concurrency cap of the operator's client. Close it with `close()` or
 * `await using`.
 */

import * as clocks from '../cogs/aio/clocks.js';
import * as api from '../cogs/client/api.js';
import * as clients from '../cogs/client/clients.js';
import * as connections from '../cogs/client/connections.js';
import * as credentials from '../cogs/client/credentials.js';
import * as settingsModule from '../cogs/configs/settings.js';
import type * as loggers from '../cogs/structs/loggers.js';
import * as logging from '../core/actions/logging.js';

/** Options of `connect()`: where the credentials come from, and the client's behaviour. */
export interface ConnectOptions extends connections.ConnectionOptions {
  /** Retries, timeouts, proxies from the environment (`networking`); default: fresh settings. */
  readonly settings?: settingsModule.OperatorSettings;
  /** Where the client logs its retries; default the framework logger `kopf.clients`. */
  readonly logger?: loggers.Logger;
  /** Default: the real clock. */
  readonly clock?: clocks.Clock;
}

/** Runs the built-in logins once into the vault; the credentials it accepted. */
function login(vault: credentials.Vault, options: connections.ConnectionOptions): number {
  const found: [string, credentials.ConnectionInfo][] = [];
  const failures: string[] = [];
  for (const { id, fn } of connections.builtinLogins(options)) {
    try {
      const info = fn();
      if (info !== null) found.push([id, info]);
    } catch (error) {
      failures.push(`${id} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const reason = failures.length > 0 ? `No credentials: ${failures.join('; ')}` : connections.noCredentialsMessage(options);
  return vault.populate(found, { reason });
}

/** Re-logs in whenever the vault runs empty, until `signal` aborts. */
async function relogin(vault: credentials.Vault, options: connections.ConnectionOptions, logger: loggers.Logger, signal: AbortSignal): Promise<void> {
  try {
    for (;;) {
      await vault.depleted.waitFor(true, signal);
      logger.info('Re-authentication has been initiated.');
      if (login(vault, options) > 0) logger.info('Re-authentication has finished.');
      else logger.warning('Re-authentication has failed: no new credentials were found.');
      if (vault.depleted.isOn()) await vault.depleted.waitFor(false, signal);
    }
  } catch (error) {
    if (!signal.aborted) logger.error(`Re-authentication has stopped: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Connects to the cluster: logs in now and returns a typed client.
 *
 * @throws LoginError at once when no credentials are found (naming what was looked for).
 * @throws ConnectionOptionsError for contradicting options.
 * @example
 * await using client = await connect({ kubeconfig: '.kopf-gen/kubeconfig' });
 * const { items } = await client.list(builtins.ConfigMaps, { namespace: 'default' });
 */
export async function connect(options: ConnectOptions = {}): Promise<clients.KubeClient> {
  const clock = options.clock ?? clocks.realClock;
  const settings = options.settings ?? new settingsModule.OperatorSettings();
  const logger = options.logger ?? logging.getLogger('kopf.clients', { lowLevel: true });
  const source: connections.ConnectionOptions = {
    kubeconfig: options.kubeconfig,
    kubeconfigContext: options.kubeconfigContext,
    connection: options.connection,
    env: options.env,
  };
  const vault = new credentials.Vault({ clock });
  if (login(vault, source) === 0) await vault.select(); // throws the LoginError that says why
  const http = new api.HttpKubeApi({ vault, settings, logger, clock });
  const stop = new AbortController();
  const relogging = relogin(vault, source, logger, stop.signal);
  return new clients.KubeClient(http, {
    close: async () => {
      stop.abort();
      await relogging;
      http.close();
    },
  });
}
