/**
 * The built-in webhook servers and tunnels (R-ADMISSION-9): what `settings.admission.server` is
 * usually set to. Each speaks the server contract of `cogs/structs/webhooks` — it serves the
 * operator's `WebhookFn` and yields the client configurations under which the API server reaches
 * it — so the admission engine never depends on how, or where, requests arrive.
 *
 * - `WebhookServer`: a local HTTPS server (generated or given certificates, rotation, client
 *   certificates), also behind a Service in a cluster; `WebhookK3dServer`,
 *   `WebhookMinikubeServer`, `WebhookDockerDesktopServer`: the same with the host name under which
 *   those local clusters reach the developer's machine.
 * - `WebhookAutoServer`: recognises the local cluster and serves as the matching variant.
 * - `WebhookNgrokTunnel`, `WebhookAutoTunnel`: a public URL through ngrok (optional package).
 */
export { WebhookServer, WebhookK3dServer, WebhookMinikubeServer, WebhookDockerDesktopServer } from './servers.js';
export type { WebhookServerOptions } from './servers.js';
export type { ServiceOptions as WebhookServiceOptions } from './addresses.js';
export type { VerifyMode as WebhookVerifyMode } from './materials.js';
export { DEFAULT_BODY_LIMIT as WEBHOOK_BODY_LIMIT, DEFAULT_DEPTH_LIMIT as WEBHOOK_DEPTH_LIMIT, DEFAULT_ITEM_LIMIT as WEBHOOK_ITEM_LIMIT } from './serving.js';
export { WebhookAutoServer } from './autoservers.js';
export type { ClusterFlavour } from './detection.js';
export { WebhookNgrokTunnel, WebhookAutoTunnel, NGROK_PACKAGE } from './tunnels.js';
export type {
  WebhookNgrokTunnelOptions,
  WebhookAutoTunnelOptions,
  NgrokLoader,
  NgrokModule,
  NgrokListener,
  NgrokForwardConfig,
} from './tunnels.js';
export { WebhookOptionsError, WebhookCertificateError, WebhookListenError, MissingDependencyError } from './errors.js';
