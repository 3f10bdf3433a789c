/**
 * `kopf-gen/runtime` as src/generated/admission.ts uses it, for type-checking projects with
 * admission handlers while the runtime does not export its built-in webhook servers: the
 * runtime's own exports, plus `WebhookServer` and `WebhookAutoServer` declared with exactly the
 * options the generated module passes (runtime spec R-ADMISSION-9, and the `service` option that
 * yields a Service client configuration). projects-support.ts uses the runtime itself as soon as
 * it exports them, so that the generated module is then checked against the real servers.
 */
import type * as webhooks from '../../runtime/cogs/structs/webhooks.js';

export * from '../../runtime/index.js';

/** The options of the built-in servers that the generated module passes. */
export interface WebhookServerOptions {
  readonly port?: number;
  readonly certfile?: string;
  readonly pkeyfile?: string;
  readonly cafile?: string;
  readonly service?: webhooks.WebhookServiceReference;
}

export declare class WebhookServer implements webhooks.WebhookServerObject {
  constructor(options?: WebhookServerOptions);
  serve(fn: webhooks.WebhookFn, environment?: webhooks.WebhookServerEnvironment): AsyncIterable<webhooks.WebhookClientConfig>;
}

export declare class WebhookAutoServer implements webhooks.WebhookServerObject {
  constructor(options?: WebhookServerOptions);
  serve(fn: webhooks.WebhookFn, environment?: webhooks.WebhookServerEnvironment): AsyncIterable<webhooks.WebhookClientConfig>;
}
