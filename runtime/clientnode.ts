/**
 * kopf-gen/client-node — the client users already have, `@kubernetes/client-node`, with the
 * operator's live credentials (R-CLIENT-502).
 *
 * A separate entry point, not a part of `kopf-gen/runtime`: client-node is an optional package, and
 * its type declarations (with those of its own dependencies) reach only the projects that import
 * this entry — an operator that never uses client-node neither loads it nor type-checks against it.
 *
 * @example
 * import { CoreV1Api } from '@kubernetes/client-node';
 * import { kubeConfig } from 'kopf-gen/client-node';
 * const core = (await kubeConfig()).makeApiClient(CoreV1Api);
 */
export { kubeConfig } from './kits/clientnode/liveconfigs.js';
export type { ClientNodeLoader, ClientNodeModule, KubeConfigOptions } from './kits/clientnode/liveconfigs.js';
export { ClientNodeUnavailableError } from './kits/clientnode/errors.js';
