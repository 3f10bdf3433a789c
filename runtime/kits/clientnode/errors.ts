/**
 * Errors of the client-node kit: the optional package `@kubernetes/client-node` is missing or
 * cannot be loaded. (Calling `kubeConfig()` where no credentials exist is the caller's misuse, a
 * `ClientUsageError` of the client.)
 */

/** The package `@kubernetes/client-node` is not installed, or failed to load (R-CLIENT-502). */
export class ClientNodeUnavailableError extends Error {
  readonly code = 'ClientNodeUnavailable' as const;
  override readonly name = 'ClientNodeUnavailableError';
}
