/**
 * Managing the webhook configurations (R-ADMISSION-7/8): the operator's root task that keeps a
 * `ValidatingWebhookConfiguration` and a `MutatingWebhookConfiguration` named
 * `settings.admission.managed` pointing at its admission server, and cleans them up at exit.
 *
 * Once resources are discovered, both configurations are created (an existing one is fine: HTTP
 * 409), then their `webhooks` are replaced by a merge-patch with the entries of `configurations` —
 * at the first client configuration of the server, at every further one, and whenever the served
 * resources change the entries. At a graceful exit, the entries are patched once more to keep only
 * those of `persistent` handlers, through the operator's client while it still works; a forced exit
 * leaves them as they are. Missing RBAC permissions (HTTP 403) stop the operator with an
 * `AdmissionSetupError` naming what to grant, and so do handler ids whose entry names Kubernetes
 * would refuse (checked before anything is written).
 *
 * The resources of the configurations come from discovery (the reactor's backbone) and the served
 * resources from the insights, both passed in, so this module does not depend on the reactor.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import * as references from '../../cogs/structs/references.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as errors from '../actions/errors.js';
import type * as handlers from '../intents/handlers.js';
import type * as registries from '../intents/registry.js';
import * as configurations from './configurations.js';
import type * as serving from './serving.js';
import * as engineErrors from './errors.js';

/** The two kinds of webhook configurations. */
export type WebhookType = handlers.WebhookHandler['type'];

const KINDS: Readonly<Record<WebhookType, string>> = {
  validating: 'ValidatingWebhookConfiguration',
  mutating: 'MutatingWebhookConfiguration',
};
const TYPES: readonly WebhookType[] = ['validating', 'mutating'];

/** The served resources as the manager follows them (the operator's insights). */
export interface WebhookResources {
  /** The resources selected by admission handlers. */
  readonly webhooks: readonly references.Resource[];
  /** Grows with every change of the served resources (and namespaces). */
  readonly revision: number;
  waitForChange(since: number, signal?: AbortSignal): Promise<number>;
}

/** What the manager task needs. */
export interface ConfiguringOptions {
  readonly settings: settingsModule.OperatorSettings;
  readonly registry: registries.OperatorRegistry;
  /** The operator's API client. */
  readonly api: api.KubeWriter;
  readonly resources: WebhookResources;
  /** On once resources are discovered. */
  readonly ready: toggles.Awaitable;
  /** The discovered resource of a configuration kind (waits until it is discovered). */
  readonly configurationResource: (type: WebhookType, signal: AbortSignal) => Promise<references.Resource>;
  readonly configs: serving.ClientConfigs;
  readonly logger: loggers.Logger;
  /** The operator's stop signal: the cleanup starts when it aborts. */
  readonly signal: AbortSignal;
  /** Aborts when the operator gives up waiting for its work: it ends the cleanup's requests. */
  readonly cancellation?: AbortSignal;
}

interface Target {
  readonly type: WebhookType;
  readonly resource: references.Resource;
  readonly handlers: readonly handlers.WebhookHandler[];
}

function handlersOf(registry: registries.OperatorRegistry, type: WebhookType): handlers.WebhookHandler[] {
  return registry.handlers.filter((h): h is handlers.WebhookHandler => h.kind === 'webhook' && h.type === type);
}

/**
 * Checks that Kubernetes accepts the entry name of every admission handler: a valid DNS name
 * (normalisation lowers the case and encodes unusual characters, but cannot repair a segment that
 * starts or ends with `-`, an empty segment, a long id or an invalid managed name), and distinct
 * within its configuration (`Check` and `check`, or `a_b` and `a-b`, give the same name).
 *
 * @throws AdmissionSetupError (`invalid-name`) naming the first handler whose name it would refuse.
 */
export function checkNames(registry: registries.OperatorRegistry, managed: string): void {
  for (const type of TYPES) {
    const seen = new Map<string, string>();
    for (const handler of handlersOf(registry, type)) {
      const name = configurations.normalizeName(handler.id, managed);
      const problem = configurations.nameProblem(name);
      if (problem !== undefined) {
        throw new engineErrors.AdmissionSetupError(
          'invalid-name',
          `The webhook name '${name}' of the admission handler '${handler.id}' ` +
            `would be refused by Kubernetes: ${problem}. Give the handler an id of letters, digits, '-', '_', '.' and '/' ` +
            "that starts and ends with a letter or digit (e.g. { id: 'validate-widgets' }), or choose another settings.admission.managed name.",
        );
      }
      const other = seen.get(name);
      if (other !== undefined) {
        throw new engineErrors.AdmissionSetupError(
          'invalid-name',
          `The ${type} admission handlers '${other}' and '${handler.id}' ` +
            `have the same webhook name '${name}', which Kubernetes refuses: give one of them another id.`,
        );
      }
      seen.set(name, handler.id);
    }
  }
}

function forbidden(action: string, target: Target, name: string, error: unknown): engineErrors.AdmissionSetupError {
  const what = `${target.resource.plural}.${target.resource.group}`;
  // The action and the object are named already: the server's words alone, not its request again.
  const said = error instanceof clientErrors.ApiError ? error.detail : errors.describeError(error);
  return new engineErrors.AdmissionSetupError(
    'forbidden',
    `Not enough RBAC permissions to ${action} the ${what} '${name}': ` +
      `${said.replace(/\.?$/, '.')} Grant the operator's service account create and patch on ${what}.`,
    { cause: error },
  );
}

/** Creates a configuration unless it exists (R-ADMISSION-7). */
async function ensureExists(options: ConfiguringOptions, target: Target, name: string): Promise<void> {
  const body = { apiVersion: references.apiVersionOf(target.resource), kind: KINDS[target.type], metadata: { name } };
  try {
    await options.api.create(target.resource, null, body, { signal: options.signal });
  } catch (error) {
    if (error instanceof clientErrors.ApiConflictError) return;
    if (error instanceof clientErrors.ApiForbiddenError) throw forbidden('create', target, name, error);
    throw error;
  }
}

async function patchWebhooks(
  options: ConfiguringOptions,
  target: Target,
  name: string,
  entries: readonly configurations.WebhookEntry[],
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    await options.api.patch(target.resource, null, name, { webhooks: entries }, { signal });
  } catch (error) {
    if (error instanceof clientErrors.ApiForbiddenError) throw forbidden('patch', target, name, error);
    throw error;
  }
}

/** Waits for a new client configuration or a new revision of the served resources. */
async function nextChange(options: ConfiguringOptions, seenConfigs: number, seenResources: number): Promise<void> {
  const round = new AbortController();
  const signal = aborts.anySignal([options.signal, round.signal]);
  try {
    await Promise.race([options.configs.waitForChange(seenConfigs, signal), options.resources.waitForChange(seenResources, signal)]);
  } finally {
    round.abort();
  }
}

/**
 * The root task "admission webhook manager" (R-ADMISSION-7/8): runs until the operator stops, then
 * cleans up. Without `settings.admission.managed`, it only waits for the stop.
 *
 * @throws AdmissionSetupError for refused names and missing RBAC permissions; API errors otherwise.
 */
export async function manageConfigurations(options: ConfiguringOptions): Promise<void> {
  const { settings, registry, signal, logger } = options;
  const name = settings.admission.managed;
  if (name === null || name === undefined) return untilAborted(signal);
  checkNames(registry, name);

  let targets: Target[];
  try {
    await options.ready.waitFor(true, signal);
    targets = await Promise.all(
      TYPES.map(async (type) => ({
        type,
        resource: await options.configurationResource(type, signal),
        handlers: handlersOf(registry, type),
      })),
    );
    for (const target of targets) await ensureExists(options, target, name);
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }

  const build = (target: Target, config: webhooks.WebhookClientConfig, persistentOnly = false): configurations.WebhookEntry[] =>
    configurations.buildWebhooks(target.handlers, { resources: options.resources.webhooks, name, clientConfig: config, persistentOnly });
  let applied: webhooks.WebhookClientConfig | undefined;
  let failure: unknown;
  try {
    let seenConfigs = 0;
    let seenEntries = '';
    for (;;) {
      const config = options.configs.current;
      const revision = options.resources.revision;
      const configRevision = options.configs.revision;
      if (config !== undefined) {
        const entries = targets.map((target) => build(target, config));
        const key = JSON.stringify(entries);
        if (configRevision !== seenConfigs || key !== seenEntries) {
          // Counted as applied before the writes: a stop while one is in flight (written, but its
          // response not yet read) must still clean up what it may have written.
          applied = config;
          for (const [i, target] of targets.entries()) {
            logger.info(`Reconfiguring the ${target.type} webhook ${name}.`);
            await patchWebhooks(options, target, name, entries[i]!, signal);
          }
          seenEntries = key;
        }
      }
      seenConfigs = configRevision;
      await nextChange(options, configRevision, revision);
    }
  } catch (error) {
    if (!signal.aborted) failure = error;
  }

  if (applied !== undefined && !(failure instanceof engineErrors.AdmissionSetupError)) {
    logger.info(`Cleaning up the admission webhook ${name}.`);
    for (const target of targets) {
      try {
        await patchWebhooks(options, target, name, build(target, applied, true), options.cancellation);
      } catch (error) {
        logger.error(`Cleaning up the ${target.type} webhook ${name} has failed: ${errors.describeError(error)}`);
      }
    }
  }
  if (failure !== undefined) throw failure;
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
