/**
 * Managed conversion webhooks (R-CONVERT-208): the operator's root task that points the
 * `spec.conversion` of every CRD it has converters for at its own webhook server, when
 * `settings.conversion.managed` asks for it.
 *
 * Changing a CRD is a cluster-admin action, so it is off by default (in a cluster, the CRD's
 * manifest carries the conversion, e.g. with cert-manager's CA injection). When on, each client
 * configuration the server yields (the first one, and every later one, such as a renewed
 * certificate) is merged into each CRD as `spec.conversion = { strategy: Webhook, webhook: {
 * conversionReviewVersions: [v1], clientConfig } }`, the client configuration with the CRD's
 * conversion path (`convert/<plural>.<group>`) appended and its CA bundle included, logged at INFO.
 *
 * A failed patch — the CRD does not exist yet (404), the operator may not patch it (403: the
 * message names the RBAC rule to grant), the API server refuses the conversion (422) — is logged
 * at ERROR with the CRD's name and retried with an exponential back-off (1 s doubling to 60 s, on
 * the operator's clock), restarting with the newest configuration when the server yields one; it
 * never stops the operator. Nothing is reverted at exit: objects stored in a version other than
 * the storage version would become unreadable without the webhook.
 */

import * as aborts from '../../cogs/aio/aborts.js';
import type * as clocks from '../../cogs/aio/clocks.js';
import type * as toggles from '../../cogs/aio/toggles.js';
import type * as api from '../../cogs/client/api.js';
import * as clientErrors from '../../cogs/client/errors.js';
import type * as settingsModule from '../../cogs/configs/settings.js';
import type * as loggers from '../../cogs/structs/loggers.js';
import type * as references from '../../cogs/structs/references.js';
import type * as webhooks from '../../cogs/structs/webhooks.js';
import * as errors from '../actions/errors.js';
import * as registries from '../intents/registry.js';
import * as configurations from './configurations.js';
import * as converting from './converting.js';
import type * as serving from './serving.js';

/** The back-off of failed patches, in seconds. */
export const BACKOFF = Object.freeze({ initial: 1, max: 60 });

/** What the manager task needs. */
export interface CrdConversionOptions {
  readonly settings: settingsModule.OperatorSettings;
  readonly registry: registries.OperatorRegistry;
  /** The operator's API client. */
  readonly api: api.KubeWriter;
  /** The CRDs' resource (`apiextensions.k8s.io/v1`). */
  readonly crds: references.Resource;
  /** On once resources are discovered. */
  readonly ready: toggles.Awaitable;
  /** The client configurations the webhook server yields. */
  readonly configs: serving.ClientConfigs;
  readonly clock: clocks.Clock;
  readonly logger: loggers.Logger;
  /** The operator's stop signal: the task ends (reverting nothing) when it aborts. */
  readonly signal: AbortSignal;
}

/**
 * The patch that points a CRD at its conversion path: a merge-patch that replaces the whole
 * `clientConfig` (keys the configuration lacks are nulled, so a `url` replaces a `service`).
 */
export function conversionPatch(crd: string, config: webhooks.WebhookClientConfig): Record<string, unknown> {
  const injected = configurations.injectHandlerId(config, converting.webhookIdOf(crd));
  return {
    spec: {
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { url: injected.url ?? null, service: injected.service ?? null, caBundle: injected.caBundle ?? null },
        },
      },
    },
  };
}

/** What went wrong with one CRD, as the ERROR line says it. */
function describeFailure(crd: string, error: unknown): string {
  const said = error instanceof clientErrors.ApiError ? error.detail : errors.describeError(error);
  if (error instanceof clientErrors.ApiForbiddenError) {
    return (
      `Not enough RBAC permissions to patch the CustomResourceDefinition ${crd}: ${said.replace(/\.?$/, '.')} ` +
      `Grant the operator's service account get and patch on customresourcedefinitions of apiextensions.k8s.io (resourceNames: ${crd}), ` +
      'or set settings.conversion.managed = false and configure the conversion in the CRD.'
    );
  }
  if (error instanceof clientErrors.ApiNotFoundError) return `The CustomResourceDefinition ${crd} does not exist (yet): its conversion webhook waits for it.`;
  return `Configuring the conversion webhook of the CustomResourceDefinition ${crd} has failed: ${said}`;
}

/** Patches one CRD; `true` if done. Failures are logged, not thrown (the caller retries). */
async function apply(options: CrdConversionOptions, crd: string, config: webhooks.WebhookClientConfig): Promise<boolean> {
  try {
    await options.api.patch(options.crds, null, crd, conversionPatch(crd, config), { signal: options.signal });
    options.logger.info(`Configured the conversion webhook of the CustomResourceDefinition ${crd} at ${config.url ?? JSON.stringify(config.service)}.`);
    return true;
  } catch (error) {
    if (options.signal.aborted) throw error;
    options.logger.error(describeFailure(crd, error));
    return false;
  }
}

/** Sleeps `seconds` on the operator's clock, or until a new configuration comes; rejects on abort. */
async function sleepOrChange(options: CrdConversionOptions, seconds: number, seen: number): Promise<void> {
  const round = new AbortController();
  const signal = aborts.anySignal([options.signal, round.signal]);
  try {
    await Promise.race([options.clock.sleep(seconds * 1000, signal), options.configs.waitForChange(seen, signal)]);
  } finally {
    round.abort();
  }
  if (options.signal.aborted) throw options.signal.reason;
}

/**
 * The root task "conversion webhook manager" (R-CONVERT-208): runs until the operator stops.
 * Without `settings.conversion.managed` or without conversions, it only waits for the stop.
 */
export async function manageCrdConversions(options: CrdConversionOptions): Promise<void> {
  const { settings, registry, signal, configs } = options;
  const crds = registries.convertedCrds(registry);
  if (!settings.conversion.managed || crds.length === 0) return untilAborted(signal);
  try {
    await options.ready.waitFor(true, signal);
    let seen = 0;
    let pending: string[] = [];
    let delay: number = BACKOFF.initial;
    for (;;) {
      if (configs.revision !== seen) {
        seen = configs.revision;
        pending = [...crds];
        delay = BACKOFF.initial;
      }
      const config = configs.current;
      if (config !== undefined) {
        const failed: string[] = [];
        for (const crd of pending) if (!(await apply(options, crd, config))) failed.push(crd);
        pending = failed;
      }
      if (config === undefined || pending.length === 0) {
        await configs.waitForChange(seen, signal);
      } else {
        await sleepOrChange(options, delay, seen);
        delay = Math.min(delay * 2, BACKOFF.max);
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
