/**
 * The logger contract every runtime layer writes to. The implementation (formats, per-object
 * prefixes, levels, posting as Kubernetes events) lives in core/actions/logging.ts; lower layers
 * only know this interface, so the client can log its retries without knowing about objects.
 */

export type LogLevel = 'debug' | 'info' | 'warning' | 'error' | 'critical';

/** Numeric levels as in Python's logging (used by `settings.posting.level`). */
export const LEVELS: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warning: 30, error: 40, critical: 50 };

export interface LogExtra {
  /** An error whose stack trace is printed after the message. */
  readonly error?: unknown;
  /** Structured fields for the JSON format. */
  readonly [key: string]: unknown;
}

export interface Logger {
  /**
   * Optional: whether a message of `level` would be shown at all, so that callers skip building
   * costly texts (a whole body as JSON) for hidden messages. Absent means "maybe": build it.
   */
  isEnabledFor?(level: LogLevel): boolean;
  debug(message: string, extra?: LogExtra): void;
  info(message: string, extra?: LogExtra): void;
  warning(message: string, extra?: LogExtra): void;
  error(message: string, extra?: LogExtra): void;
  critical(message: string, extra?: LogExtra): void;
}

/** Whether `logger` would show a message of `level` (`true` when the logger cannot tell). */
export function isEnabledFor(logger: Logger, level: LogLevel): boolean {
  return logger.isEnabledFor?.(level) ?? true;
}

/** A logger that drops everything (for tests of pure code). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warning() {},
  error() {},
  critical() {},
};
