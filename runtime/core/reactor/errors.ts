/**
 * Errors of the reactor: operator options that contradict each other (found before anything
 * starts), metrics asked for that cannot be loaded, and the abort reason of a raised pressure. Named, coded and based by the runtime's
 * scheme (docs/architecture.md, "Errors").
 */

/** `clusterwide` together with `namespaces` (R-SCOPE-1). */
export class OperatorScopeError extends TypeError {
  override readonly name = 'OperatorScopeError';
  readonly code = 'OperatorScopeError' as const;
}

/** Options of two modes of coordination that exclude each other, e.g. `leaseName` with `standalone`. */
export class OperatorModeError extends TypeError {
  override readonly name = 'OperatorModeError';
  readonly code = 'OperatorModeError' as const;
}

/** Options of peering that contradict each other or are malformed (e.g. `standalone` with `peeringName`). */
export class PeeringOptionsError extends TypeError {
  override readonly name = 'PeeringOptionsError';
  readonly code = 'PeeringOptionsError' as const;
}

/**
 * `metricsEndpoint` (`--metrics`) is given, but the metrics' module or prom-client cannot be
 * loaded (e.g. prom-client is missing from the installed dependencies): the operator does not
 * start, rather than run without the metrics it was asked for (R-PERF-201). `cause` is the error
 * of the import.
 */
export class MetricsUnavailableError extends Error {
  override readonly name = 'MetricsUnavailableError';
  readonly code = 'MetricsUnavailableError' as const;
}

/**
 * The abort reason of a raised pressure (distinguishable from cancellation): not a failure, a
 * pseudo-error that cuts short the sleeps of a cycle when a newer event arrives (Kopf's "pressure
 * raised"). Never thrown to users, never logged as a failure.
 */
export class PressureRaisedError extends Error {
  override readonly name = 'PressureRaisedError';
  readonly code = 'pressure-raised' as const;

  constructor() {
    super('A newer event arrived for the object.');
  }
}
