/**
 * The logger contract every runtime layer writes to. The implementation (formats, per-object
 * prefixes, levels, posting as Kubernetes events) lives in core/actions/logging.ts; lower layers
 * only know this interface, so the client can log its retries without knowing about objects.
 *
 * Two things every log line needs, whoever writes it, are here too: a per-object logger knows its
 * object's secret-like fields and redacts values of them before they are put in a message
 * (`redacted`, R-SEC-20), and `escapeForLog` keeps control characters of untrusted text (an
 * object's name) from forging lines (R-SEC-21).
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
  /**
   * Optional: `value`, found at path `at` of the logger's object (default: the object itself), as
   * it may be logged — the values of secret-like fields replaced by `<redacted N bytes>`.
   * Absent means nothing needs redacting.
   */
  redact?(value: unknown, at?: readonly string[]): unknown;
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

/** `value` (at path `at` of the logger's object) as it may be logged (R-SEC-20); see `Logger.redact`. */
export function redacted(logger: Logger, value: unknown, at: readonly string[] = []): unknown {
  return logger.redact === undefined ? value : logger.redact(value, at);
}

/** A diff of the logger's object (items `[op, field, old, new]`) as it may be logged (R-SEC-20). */
export function redactedDiff(logger: Logger, diff: Iterable<readonly [string, readonly string[], unknown, unknown]>): unknown[] {
  const items = [...diff];
  if (logger.redact === undefined) return items;
  return items.map(([op, field, old, now]) => [op, field, redacted(logger, old, field), redacted(logger, now, field)]);
}

/** A JSON patch of the logger's object (`{op, path, value}` operations) as it may be logged (R-SEC-20). */
export function redactedJsonPatch(logger: Logger, ops: readonly unknown[]): unknown[] {
  if (logger.redact === undefined) return [...ops];
  return ops.map((op) => {
    if (typeof op !== 'object' || op === null || !('value' in op) || !('path' in op) || typeof op.path !== 'string') return op;
    const at = op.path
      .split('/')
      .slice(1)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
    return { ...op, value: redacted(logger, op.value, at) };
  });
}

/**
 * Untrusted text (an object's name or namespace, a request's path) as it may stand in a plain-text
 * log line: control characters (C0, DEL, C1, and the Unicode line and paragraph separators) as
 * escapes — `\n`, `\r`, `\t`, else `\xNN` / `\uNNNN` — so no value can forge a line or move
 * the cursor. Text without them is returned as it is (R-SEC-21).
 *
 * @example
 * escapeForLog('evil\n[default/other] Handler succeeded') // 'evil\\n[default/other] Handler succeeded'
 */
export function escapeForLog(text: string): string {
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROLS, (char) => {
    if (char === '\n') return '\\n';
    if (char === '\r') return '\\r';
    if (char === '\t') return '\\t';
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Control characters: C0, DEL, C1, and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** A logger that drops everything (for tests of pure code). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warning() {},
  error() {},
  critical() {},
};
