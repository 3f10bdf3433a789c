/**
 * Running the admission webhook server (R-ADMISSION-2/3): the operator's root task that hands the
 * server in `settings.admission.server` the request function and collects the client
 * configurations it yields.
 *
 * The settings are checked once the startup activity ran (startup handlers may set the server):
 * admission handlers or conversions (`on.convert`, served by the same server) without a server, a server that is neither a function nor an object with
 * `serve()`, or a managed name that is not a string, stop the operator before it starts, with an
 * `AdmissionSetupError` saying what to configure. The server starts only after the first resource
 * scan, so that early requests are not refused as unknown resources. It gets the
 * `WebhookServerEnvironment` (the API server's URL and CA from the operator's credentials, for
 * recognising the cluster's flavour, and the operator's stop signal); an object server's
 * `[Symbol.asyncDispose]()` runs after its iteration, however that ends. Each yielded client
 * configuration goes to `ClientConfigs`, which the configuration manager (`configuring.ts`) follows.
 * When the iteration ends by itself, the task ends, and with it the operator.
 *
 * On stop, the server is expected to end its iteration when the signal aborts; one that does not
 * is left behind when the operator's work is cancelled (it is reported as a hung task).
 */

import * as revisions from '../../cogs/aio/revisions.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as credentials from '../../cogs/client/credentials.js';
import * as transport from '../../cogs/client/transport.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import * as dicts from '../../cogs/structs/dicts.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as errors from '../actions/errors.js';
import type * as registries from '../intents/registry.js';
import { AdmissionSetupError } from './errors.js';

/** Whether a registry has admission handlers. */
export function hasAdmissionHandlers(registry: registries.OperatorRegistry): boolean {
  return registry.handlers.some((handler) => handler.kind === 'webhook');
}

/** Whether a registry has conversions (R-CONVERT-205): they are served by the same server. */
export function hasConversions(registry: registries.OperatorRegistry): boolean {
  return registry.handlers.some((handler) => handler.kind === 'conversion');
}

/**
 * Checks the admission settings once the startup activity ran (R-ADMISSION-2).
 *
 * @throws AdmissionSetupError (`no-server`, `invalid-server`, `invalid-managed`).
 */
export function checkSettings(settings: settingsModule.OperatorSettings, registry: registries.OperatorRegistry): void {
  const { server, managed } = settings.admission;
  if (server === null || server === undefined) {
    const admission = hasAdmissionHandlers(registry);
    const conversion = hasConversions(registry);
    if (admission || conversion) {
      const what =
        admission && conversion
          ? 'Admission handlers and conversions are registered (on.validate, on.mutate, on.convert)'
          : admission
            ? 'Admission handlers are registered (on.validate, on.mutate)'
            : 'Conversions are registered (on.convert)';
      throw new AdmissionSetupError(
        'no-server',
        `${what}, but no admission server ` +
          'or tunnel is configured: set settings.admission.server in a startup handler, e.g. to a WebhookServer, ' +
          'or to your own server function (see docs/admission.md).',
      );
    }
  } else if (typeof server !== 'function' && !(typeof server === 'object' && typeof (server as { serve?: unknown }).serve === 'function')) {
    throw new AdmissionSetupError(
      'invalid-server',
      'settings.admission.server must be a server function (fn, environment) => AsyncIterable ' +
        `or an object with a serve(fn, environment) method, got ${errors.typeNameOf(server)}.`,
    );
  }
  if (typeof settings.conversion.managed !== 'boolean') {
    throw new AdmissionSetupError('invalid-managed', `settings.conversion.managed must be true or false, got ${JSON.stringify(settings.conversion.managed)}.`);
  }
  if (managed !== null && managed !== undefined && (typeof managed !== 'string' || managed === '')) {
    throw new AdmissionSetupError(
      'invalid-managed',
      `settings.admission.managed must be a non-empty name (e.g. 'auto.kopf.dev') or null, got ${JSON.stringify(managed)}.`,
    );
  }
}

/**
 * The latest client configuration a server yielded, with a revision that grows with each one; the
 * configuration manager waits on it. Kopf: the `Container` of client configs.
 */
export class ClientConfigs {
  private value: webhooks.WebhookClientConfig | undefined;
  private readonly changes = new revisions.Revision();

  /** The latest configuration, if any was yielded yet. */
  get current(): webhooks.WebhookClientConfig | undefined {
    return this.value;
  }

  /** 0 before the first configuration; one more with each. */
  get revision(): number {
    return this.changes.value;
  }

  /** Takes a new configuration (even an equal one counts as new: the server yielded it again). */
  set(config: webhooks.WebhookClientConfig): void {
    this.value = config;
    this.changes.bump();
  }

  /** Resolves with the revision once it is greater than `since`; rejects with the signal's reason. */
  waitForChange(since: number, signal?: AbortSignal): Promise<number> {
    return this.changes.waitForChange(since, signal);
  }
}

/**
 * Checks a yielded client configuration: a `url`, or a `service` with a namespace and name.
 *
 * @throws AdmissionSetupError (`invalid-client-config`).
 */
export function checkClientConfig(config: unknown): webhooks.WebhookClientConfig {
  const ok =
    dicts.isObject(config) &&
    ((typeof config['url'] === 'string' && config['url'] !== '') ||
      (dicts.isObject(config['service']) && typeof config['service']['namespace'] === 'string' && typeof config['service']['name'] === 'string'));
  if (!ok) {
    throw new AdmissionSetupError(
      'invalid-client-config',
      `The admission server yielded a client configuration without a url or a service (namespace and name): ${JSON.stringify(config) ?? String(config)}.`,
    );
  }
  return config as webhooks.WebhookClientConfig;
}

/** What the server task needs. */
export interface ServingOptions {
  readonly settings: settingsModule.OperatorSettings;
  readonly registry: registries.OperatorRegistry;
  /** The request function given to the server. */
  readonly fn: webhooks.WebhookFn;
  /** Where yielded configurations go. */
  readonly configs: ClientConfigs;
  /** On once resources are discovered: the server starts after it. */
  readonly ready: toggles.Awaitable;
  /** The operator's credentials, for the API server's URL and CA in the environment. */
  readonly vault: credentials.Vault;
  readonly logger: loggers.Logger;
  /** The operator's stop signal (also given to the server). */
  readonly signal: AbortSignal;
  /** Aborts when the operator gives up waiting for its work: stop waiting for the server then. */
  readonly cancellation?: AbortSignal;
}

/** The server's environment: where the API server is, as the operator's credentials say. */
export function environmentOf(vault: credentials.Vault, signal: AbortSignal, logger: loggers.Logger): webhooks.WebhookServerEnvironment {
  const info = vault.selectNow()?.info;
  let apiServerCa: string | undefined;
  try {
    apiServerCa = info === undefined ? undefined : transport.certificateAuthorityOf(info);
  } catch (error) {
    logger.warning(`The API server's CA is not given to the admission server: ${errors.describeError(error)}`);
  }
  return {
    signal,
    ...(info !== undefined ? { apiServer: info.server } : {}),
    ...(apiServerCa !== undefined ? { apiServerCa } : {}),
  };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

const ABORTED: unique symbol = Symbol('aborted');

function orAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  return Promise.race([promise, untilAborted(signal).then((): typeof ABORTED => ABORTED)]);
}

/**
 * The root task "admission webhook server" (R-ADMISSION-2/3): runs until the operator stops or the
 * server's iteration ends. Without a server (and without handlers, else `checkSettings` refused to
 * start), it only waits for the stop.
 *
 * @throws AdmissionSetupError for an invalid yielded configuration; whatever the server throws.
 */
export async function serveWebhooks(options: ServingOptions): Promise<void> {
  const { settings, signal, logger } = options;
  const server = settings.admission.server;
  if (server === null || server === undefined) return untilAborted(signal);
  checkSettings(settings, options.registry);
  try {
    await options.ready.waitFor(true, signal);
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
  const environment = environmentOf(options.vault, signal, logger);
  const cancellation = options.cancellation ?? new AbortController().signal;
  const disposable = typeof server === 'function' ? undefined : server;
  try {
    const iterable = typeof server === 'function' ? server(options.fn, environment) : server.serve(options.fn, environment);
    await iterate(iterable[Symbol.asyncIterator](), options, cancellation);
  } finally {
    const dispose = disposable?.[Symbol.asyncDispose];
    if (typeof dispose === 'function') await orAborted(Promise.resolve(dispose.call(disposable)), cancellation);
  }
}

/**
 * Takes the yielded configurations until the iteration ends or the signal aborts. Unless it ended
 * by itself, the iteration is closed (`return()`, which also ends a generator paused at `yield`) and
 * its end awaited, unless `cancellation` aborts first.
 */
async function iterate(iterator: AsyncIterator<webhooks.WebhookClientConfig>, options: ServingOptions, cancellation: AbortSignal): Promise<void> {
  let pending: Promise<IteratorResult<webhooks.WebhookClientConfig>> | undefined;
  let ended = false;
  try {
    for (;;) {
      pending = iterator.next();
      const step = await orAborted(pending, options.signal);
      if (step === ABORTED) return;
      pending = undefined;
      if (step.done) {
        ended = true;
        options.logger.info('The admission webhook server has stopped serving: the operator stops.');
        return;
      }
      const config = checkClientConfig(step.value);
      options.logger.debug(`The admission webhook server is reachable at ${config.url ?? JSON.stringify(config.service)}.`);
      options.configs.set(config);
    }
  } finally {
    if (!ended) {
      const closing = Promise.resolve(iterator.return?.()).catch(() => undefined);
      await orAborted(Promise.allSettled([pending, closing]), cancellation);
    }
  }
}
