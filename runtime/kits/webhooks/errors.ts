/**
 * Why a built-in webhook server or tunnel refuses to start.
 *
 * A server that cannot serve must say so at once, before the operator waits for admission requests
 * that never come: bad options, certificate files it cannot use, a port it cannot bind, or an
 * optional package that is not installed. Each failure is its own class with a literal `code`, so
 * callers can branch on it; the message names the option, file or package at fault. Failures of
 * single requests are not errors here: the request handling answers them with HTTP statuses.
 */

/** An option, or a combination of options, that cannot work (checked when the server is built). */
export class WebhookOptionsError extends TypeError {
  override readonly name = 'WebhookOptionsError';
  readonly code = 'WebhookOptionsError' as const;
}

/** The server's certificate, key or CA bundle cannot be read or used. */
export class WebhookCertificateError extends Error {
  override readonly name = 'WebhookCertificateError';
  readonly code = 'WebhookCertificateError' as const;

  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
  }
}

/** The server cannot listen on the requested address and port. */
export class WebhookListenError extends Error {
  override readonly name = 'WebhookListenError';
  readonly code = 'WebhookListenError' as const;

  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
  }
}

/** A server or tunnel needs an optional package that is not installed (Kopf: `MissingDependencyError`). */
export class MissingDependencyError extends Error {
  override readonly name = 'MissingDependencyError';
  readonly code = 'MissingDependencyError' as const;
  /** The npm package to install. */
  readonly dependency: string;

  constructor(dependency: string, message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.dependency = dependency;
  }
}

/** The message of any thrown value, on one line. */
export function oneLine(error: unknown, limit = 500): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}
