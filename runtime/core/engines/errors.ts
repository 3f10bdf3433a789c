/**
 * Errors of the engines: an activity whose handlers failed for good, endpoints that cannot be
 * served, an index key that cannot be compared, an admission set-up that cannot work. Named,
 * coded and based by the runtime's scheme (docs/architecture.md, "Errors").
 */

import type * as outcomes from '../actions/outcomes.js';

/** One or more handlers of an activity failed for good (permanently, or by retries/timeout). */
export class ActivityError extends Error {
  override readonly name = 'ActivityError';
  readonly code = 'ActivityError' as const;
  /** The final outcome of every handler, by id. */
  readonly outcomes: ReadonlyMap<string, outcomes.Outcome>;

  constructor(message: string, options: { readonly outcomes: ReadonlyMap<string, outcomes.Outcome>; readonly cause?: unknown }) {
    super(message, { cause: options.cause });
    this.outcomes = options.outcomes;
  }
}

/** A URL of an endpoint is malformed or of a scheme it cannot be served with. */
export class EndpointUrlError extends TypeError {
  override readonly name = 'EndpointUrlError';
  readonly code = 'InvalidEndpointUrl' as const;
}

/** A server cannot listen on its address (in use, not permitted, no such interface, …). */
export class EndpointBindError extends Error {
  override readonly name = 'EndpointBindError';
  readonly code = 'EndpointBindFailed' as const;

  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
  }
}

/** Two endpoints claim the same path on the same server. */
export class EndpointConflictError extends TypeError {
  override readonly name = 'EndpointConflictError';
  readonly code = 'EndpointConflict' as const;
}

/** Options of the endpoints that contradict each other (e.g. a metrics certificate for plain-HTTP metrics). */
export class EndpointOptionsError extends TypeError {
  override readonly name = 'EndpointOptionsError';
  readonly code = 'EndpointOptionsError' as const;
}

/** The serving certificate of an HTTPS endpoint cannot be read or used (R-SEC-9). */
export class EndpointCertificateError extends Error {
  override readonly name = 'EndpointCertificateError';
  readonly code = 'EndpointCertificateError' as const;

  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
  }
}

/** An indexer returned a key that cannot be compared by value. */
export class IndexKeyError extends TypeError {
  override readonly name = 'IndexKeyError';
  readonly code = 'IndexKeyError' as const;
}

/** What is wrong with the admission set-up. */
export type AdmissionSetupProblem =
  | 'no-server' // admission handlers are registered, but `settings.admission.server` is not set
  | 'invalid-server' // `settings.admission.server` is neither a function nor an object with `serve()`
  | 'invalid-managed' // `settings.admission.managed` is not a non-empty string
  | 'invalid-client-config' // the server yielded a client configuration without `url` or `service`
  | 'invalid-name' // a handler's webhook entry name would be refused by Kubernetes
  | 'forbidden'; // the operator may not create or patch its managed webhook configurations

/**
 * The admission webhooks cannot be served or configured as set up (R-ADMISSION-2/7): the operator
 * stops with this error. `problem` tells which part is wrong; the message says what to do.
 */
export class AdmissionSetupError extends Error {
  override readonly name = 'AdmissionSetupError';
  readonly code = 'AdmissionSetupError' as const;
  readonly problem: AdmissionSetupProblem;

  constructor(problem: AdmissionSetupProblem, message: string, options?: ErrorOptions) {
    super(message, options);
    this.problem = problem;
  }
}

/**
 * An object cannot be converted between two versions of its kind (R-CONVERT-203): a converter may
 * throw it (a generated stub does, for a field it has no mapping of yet), and the conversion engine
 * throws it when a converter's result fails the checks. The review is answered with `Failure` and
 * the message; nothing reaches the webhook server as an exception.
 */
export class ConversionError extends Error {
  override readonly name = 'ConversionError';
  readonly code = 'ConversionError' as const;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
