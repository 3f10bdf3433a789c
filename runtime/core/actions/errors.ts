/**
 * Handler errors that say what the caller intends (R-ERRORS-1..6), and how any other thrown value
 * is treated (`ErrorsMode`, R-ERRORS-3).
 *
 * Handlers throw these to steer the framework: `TemporaryError` means "retry later",
 * `PermanentError` means "stop trying for this change". The framework throws the subclasses
 * `HandlerTimeoutError` and `HandlerRetriesError` itself when a handler's limits are exceeded, and
 * `HandlerChildrenRetryError` when sub-handlers are unfinished (R-HANDLERS-13). `AdmissionError` is
 * thrown by admission handlers to reject a request with an HTTP code.
 *
 * Every class has a literal `code`, so callers can `switch (error.code)`; the `execution` module
 * turns them (and any other thrown value) into `Outcome` values and never lets them escape.
 *
 * JavaScript lets code throw anything (strings, plain objects, `undefined`); `describeError()`
 * and `errorMessage()` give such values a message, falling back to their type name when there is
 * no message (R-ERRORS-3: "If an error has an empty message, its type name is used instead").
 */

/** How an arbitrary error (not a `TemporaryError`/`PermanentError`) of a handler is treated. */
export const ErrorsMode = {
  /** Finish as if succeeded, without a result (default for on-event and index handlers). */
  IGNORED: 'IGNORED',
  /** Retry after the handler's `backoff` (default for change handlers, daemons, timers, activities). */
  TEMPORARY: 'TEMPORARY',
  /** Finish as failed (default for admission handlers). */
  PERMANENT: 'PERMANENT',
} as const;

/** One of `ErrorsMode.IGNORED`, `ErrorsMode.TEMPORARY`, `ErrorsMode.PERMANENT`. */
export type ErrorsMode = (typeof ErrorsMode)[keyof typeof ErrorsMode];

/** The literal codes of the framework's handler errors. */
export type KopfErrorCode =
  | 'KopfError'
  | 'TemporaryError'
  | 'HandlerChildrenRetry'
  | 'PermanentError'
  | 'HandlerTimeoutError'
  | 'HandlerRetriesError'
  | 'AdmissionError'
  | 'ThrownValue';

/**
 * The base of the framework's own errors. Its `name` is the class's own (`new.target.name`), so
 * that a user's subclass (`class NotReadyError extends TemporaryError {}`) is named as itself.
 */
export class KopfError extends Error {
  readonly code: KopfErrorCode = 'KopfError';

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * "Retry later": the handler is not finished; it is invoked again after `delay` seconds
 * (default 60; `null` or `0` means as soon as possible, R-ERRORS-1).
 *
 * @example
 * throw new TemporaryError('Not ready yet.', { delay: 10 });
 */
export class TemporaryError extends KopfError {
  override readonly code: 'TemporaryError' | 'HandlerChildrenRetry' = 'TemporaryError';
  /** Seconds until the next attempt; `null` for the next cycle. */
  readonly delay: number | null;
  /**
   * Whether it was made without a message (`undefined` or `null`). Kopf's `TemporaryError(None)`
   * then reads `'None'` in its logs and progress records, and so do ours (`errorMessage()`), while
   * `message` stays `''`.
   */
  readonly messageless: boolean;

  constructor(message?: string | null, options?: { readonly delay?: number | null; readonly cause?: unknown }) {
    super(message ?? '', options?.cause === undefined ? undefined : { cause: options.cause });
    this.delay = options?.delay === undefined ? 60 : options.delay;
    this.messageless = message === undefined || message === null;
  }
}

/** What Kopf stores and logs for an error made without a message: Python's `str(Exception(None))`. */
export const NO_MESSAGE = 'None';

/**
 * "Stop trying": the handler finishes as failed for the current change (R-ERRORS-2). It runs again
 * only on the next essential change of the object (R-ERRORS-7).
 */
export class PermanentError extends KopfError {
  override readonly code: 'PermanentError' | 'HandlerTimeoutError' | 'HandlerRetriesError' | 'AdmissionError' = 'PermanentError';
}

/** The handler's `timeout` was reached (R-ERRORS-5). Thrown by the framework. */
export class HandlerTimeoutError extends PermanentError {
  override readonly code = 'HandlerTimeoutError' as const;
}

/** The handler's `retries` limit was reached (R-ERRORS-4). Thrown by the framework. */
export class HandlerRetriesError extends PermanentError {
  override readonly code = 'HandlerRetriesError' as const;
}

/**
 * Rejects an admission request (R-ADMISSION): the message goes to the user, `status` (default 500)
 * becomes the HTTP code of the admission response. Kopf names this field `code`; here `code` is
 * the literal error code shared by all framework errors, so the HTTP code is `status`.
 */
export class AdmissionError extends PermanentError {
  override readonly code = 'AdmissionError' as const;
  /** The HTTP status code of the rejection (Kopf: `code`). */
  readonly status: number;

  constructor(message = '', status = 500, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
  }
}

/**
 * Internal: some sub-handlers are not finished yet, so their parent is not finished either and is
 * retried after `delay` (the minimal delay of the sub-handlers, R-HANDLERS-13). A pseudo-error, as
 * every `TemporaryError` is: Kopf's `HandlerChildrenRetry`, named by the scheme; its `code` is
 * Kopf's name.
 */
export class HandlerChildrenRetryError extends TemporaryError {
  override readonly code = 'HandlerChildrenRetry' as const;

  constructor(options?: { readonly delay?: number | null }) {
    super(null, { delay: options?.delay ?? null });
  }
}

/**
 * A thrown value that is not an `Error` (a string, a plain object, `undefined`, …), wrapped so that
 * outcomes always carry an `Error`. The original value is kept in `value`; `name` is its type name
 * — the one exception to "`name` is the class name" (docs/architecture.md, "Errors"): the wrapper
 * stands in for the value, and says what was thrown.
 */
export class ThrownValueError extends KopfError {
  override readonly code = 'ThrownValue' as const;
  /** What was actually thrown. */
  readonly value: unknown;

  constructor(value: unknown) {
    super(messageOf(value));
    this.value = value;
    this.name = typeNameOf(value);
  }
}

/** The type name of any value: the class name of objects, `typeof` of primitives, `null`. */
export function typeNameOf(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object' || typeof value === 'function') {
    if (value instanceof Error) {
      const ctor = value.constructor?.name;
      return ctor && ctor !== 'Error' ? ctor : value.name || 'Error';
    }
    const proto: unknown = Object.getPrototypeOf(value);
    const ctor = proto === null ? undefined : (proto as { constructor?: { name?: unknown } }).constructor;
    return typeof ctor?.name === 'string' && ctor.name ? ctor.name : typeof value === 'function' ? 'Function' : 'Object';
  }
  return typeof value;
}

function messageOf(value: unknown): string {
  if (value instanceof TemporaryError && value.messageless) return NO_MESSAGE;
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') {
    const message = (value as { message?: unknown }).message;
    return typeof message === 'string' ? message : '';
  }
  if (typeof value === 'function') return '';
  return String(value);
}

/** Any thrown value as an `Error`: errors as they are, anything else wrapped in `ThrownValueError`. */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new ThrownValueError(value);
}

/**
 * The message of a thrown value as persisted in progress records (Kopf: `str(e)`); may be empty.
 * A `TemporaryError` made without a message (and so `HandlerChildrenRetryError`) gives `'None'`, as in Kopf.
 *
 * @example
 * errorMessage(new Error('Oops!')) // 'Oops!'
 * errorMessage('plain text')      // 'plain text'
 * errorMessage({ code: 1 })       // ''
 */
export function errorMessage(value: unknown): string {
  return value instanceof ThrownValueError ? value.message : messageOf(value);
}

/**
 * The message of a thrown value for logs: its message, or its type name when the message is empty
 * (Kopf: `str(e) or repr(e)`, R-ERRORS-3).
 *
 * @example
 * describeError(new Error())           // 'Error'
 * describeError(new TemporaryError())  // 'None' (as Kopf: `str(TemporaryError())`)
 * describeError(undefined)             // 'undefined'
 * describeError({})                    // 'Object'
 */
export function describeError(value: unknown): string {
  const inner = value instanceof ThrownValueError ? value.value : value;
  return messageOf(inner) || typeNameOf(inner);
}
