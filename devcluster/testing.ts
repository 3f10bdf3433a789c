/**
 * Test support for operators: the embedded Kubernetes API server. Users get it through
 * `kopf-gen/testing` (the `testing/` kit, which adds the operator runner and the virtual clock).
 *
 * @example
 * const cluster = await DevCluster.start();
 * cluster.writeKubeconfig('/tmp/kubeconfig');
 * // … run an operator against it, then:
 * await cluster.stop();
 */
export { DevCluster, OutOfBand } from './cluster.js';
export type { DevClusterOptions, KubeconfigOptions, RestartOptions, TypeRef, WriteOptions } from './cluster.js';
export { StateError, StateCorruptError, StateLockedError, StateVersionError } from './persistence/format.js';
export { realClock } from './clock.js';
export type { Clock } from './clock.js';
export type { FaultRule, FaultAction, FaultMatch, FaultHandle } from './faults/rules.js';
export type { RequestRecord } from './server/requestlog.js';
export type { KubeconfigObject } from './kubeconfig.js';
