/**
 * The runtime's logger implementation (R-POST-2, R-POST-5): levels, the `full`/`plain`/`json`
 * formats, per-object `[namespace/name] ` prefixes, and posting of per-object messages as k8s-events.
 *
 * Lower layers only know the `Logger` interface (`cogs/structs/loggers`); this module implements
 * it. There are two kinds of loggers:
 *
 * - named framework loggers, `getLogger('kopf.reactor')`, for messages not about one object;
 * - per-object loggers, `objectLogger({ body, settings })`, given to handlers and used by the
 *   framework for messages about one object. In `full`/`plain` output their messages are prefixed
 *   with `[<namespace>/<name>] ` (or `[<name>] ` for cluster-scoped objects); in `json` the object
 *   reference goes under a key (default `object`). Unless created `local` (on-event handlers,
 *   indexers, daemon guards, admission), they also post each message as a k8s-event with reason
 *   `Logging` when `settings.posting.loggers` and `settings.posting.enabled` are on and the level
 *   is at least `settings.posting.level` (R-POST-2; off by default, D-1). Events go to an
 *   `EventSink` (`events`), by default the current operator's (`invocation`).
 *
 * Output is process-wide, as in Python's `logging`: `configure()` (the CLI's `-v`/`-d`/`-q`,
 * `--log-format`, `--log-prefix`, `--log-refkey`) sets the level and format; settings never do.
 * Lines go to stderr unless `setLogSink()` redirects them (the test runner captures them so).
 */

import * as util from 'node:util';

import * as secrets from '../../cogs/configs/secrets.js';
import type * as settings from '../../cogs/configs/settings.js';
import * as timestamps from '../../cogs/configs/timestamps.js';
import * as loggers from '../../cogs/structs/loggers.js';
import * as errors from './errors.js';
import * as events from './events.js';
import * as invocation from './invocation.js';

/** The output formats of R-POST-5. */
export type LogFormat = 'full' | 'plain' | 'json';

/** Options of `configure()` (the CLI's logging flags). */
export interface ConfigureOptions {
  /** DEBUG level, including low-level client/network loggers (`--debug`). */
  readonly debug?: boolean;
  /** DEBUG level for the framework's own loggers (`--verbose`). */
  readonly verbose?: boolean;
  /** WARNING level (`--quiet`). */
  readonly quiet?: boolean;
  /** Default `full`. */
  readonly logFormat?: LogFormat;
  /** Prefix per-object messages with `[ns/name] `; default: yes for `full`/`plain`, no for `json`. */
  readonly logPrefix?: boolean | null;
  /** The key of the object reference in `json` lines; default `object`. */
  readonly logRefkey?: string | null;
}

/** One log message, as formatters and sinks see it. */
export interface LogRecord {
  /** The logger's name (`kopf.objects` for per-object loggers). */
  readonly name: string;
  /** Numeric level: 10 DEBUG, 20 INFO, 30 WARNING, 40 ERROR, 50 CRITICAL. */
  readonly level: number;
  readonly message: string;
  /** Wall-clock time of the message, ms since the epoch. */
  readonly time: number;
  /** The object a per-object message is about. */
  readonly ref?: events.ObjectReference;
  /** An error whose stack trace follows the message. */
  readonly error?: unknown;
  /** Structured fields (shown in `json`). */
  readonly fields?: Readonly<Record<string, unknown>>;
}

interface LoggingConfig {
  readonly level: number;
  readonly lowLevel: boolean;
  readonly format: LogFormat;
  readonly prefix: boolean;
  readonly refkey: string;
}

const LEVEL_NAMES: ReadonlyArray<[number, string]> = [
  [50, 'CRITICAL'],
  [40, 'ERROR'],
  [30, 'WARNING'],
  [20, 'INFO'],
  [10, 'DEBUG'],
];

let config: LoggingConfig = makeConfig({});
let sink: (line: string, record: LogRecord) => void = (line) => {
  process.stderr.write(`${line}\n`);
};

function makeConfig(options: ConfigureOptions): LoggingConfig {
  const format = options.logFormat ?? 'full';
  return {
    level: options.debug || options.verbose ? loggers.LEVELS.debug : options.quiet ? loggers.LEVELS.warning : loggers.LEVELS.info,
    lowLevel: options.debug === true,
    format,
    prefix: options.logPrefix ?? format !== 'json',
    refkey: options.logRefkey || 'object',
  };
}

/**
 * Configures the process-wide log output (Kopf's `kopf.configure()`, R-POST-5). Every call sets
 * all options: unspecified ones take their defaults (INFO, `full`, prefixes on).
 *
 * @example
 * configure({ verbose: true, logFormat: 'plain' });
 */
export function configure(options: ConfigureOptions = {}): void {
  if (options.logFormat !== undefined && !['full', 'plain', 'json'].includes(options.logFormat)) {
    throw new TypeError(`Unknown log format: ${String(options.logFormat)}. Use one of: full, plain, json.`);
  }
  config = makeConfig(options);
}

/**
 * Redirects formatted log lines (without the trailing newline) to `write`; `null` restores stderr.
 * Returns a function that restores the previous destination.
 */
export function setLogSink(write: ((line: string, record: LogRecord) => void) | null): () => void {
  const previous = sink;
  sink =
    write ??
    ((line) => {
      process.stderr.write(`${line}\n`);
    });
  return () => {
    sink = previous;
  };
}

/** `DEBUG`, `INFO`, `WARNING`, `ERROR`, `CRITICAL` (or `Level <n>`). */
export function levelName(level: number): string {
  for (const [threshold, name] of LEVEL_NAMES) if (level === threshold) return name;
  return `Level ${level}`;
}

/** The `severity` of JSON lines: `debug`, `info`, `warn`, `error`, `fatal`. */
export function severityOf(level: number): string {
  return level <= 10 ? 'debug' : level <= 20 ? 'info' : level <= 30 ? 'warn' : level <= 40 ? 'error' : 'fatal';
}

/** The k8s-event type of a posted log message: `Debug`, `Normal`, `Warning`, `Error`, `Fatal`. */
export function eventTypeOf(level: number): string {
  return level <= 10 ? 'Debug' : level <= 20 ? 'Normal' : level <= 30 ? 'Warning' : level <= 40 ? 'Error' : 'Fatal';
}

/**
 * `[namespace/name] `, or `[name] ` for cluster-scoped objects; control characters in either are
 * escaped, so a name cannot forge a line (R-SEC-21).
 */
export function prefixOf(ref: events.ObjectReference): string {
  const name = loggers.escapeForLog(ref.name ?? '');
  return ref.namespace ? `[${loggers.escapeForLog(ref.namespace)}/${name}] ` : `[${name}] `;
}

/** The text of an error for logs: its stack trace (or an inspection of a non-Error value). */
export function traceOf(error: unknown): string {
  const value = error instanceof errors.ThrownValueError ? error.value : error;
  if (value instanceof Error) return value.stack ?? `${value.name}: ${value.message}`;
  return `Thrown value: ${util.inspect(value)}`;
}

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/** Python's `asctime`: `YYYY-MM-DD HH:MM:SS,mmm` in local time. */
function asctime(time: number): string {
  const d = new Date(time);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())},${pad(d.getMilliseconds(), 3)}`
  );
}

function padded(text: string, width: number): string {
  return text.slice(0, width).padEnd(width);
}

/**
 * Formats a record as one line (plus stack-trace lines for errors) in a format:
 * `full` — `[<time>] <name, 20 chars> [<LEVEL, 8 chars>] <prefix><message>`;
 * `plain` — `<prefix><message>`;
 * `json` — `{"message", "timestamp", "<refkey>"?, "severity", ...fields, "exc_info"?}`.
 */
export function formatRecord(record: LogRecord, options?: Partial<Pick<LoggingConfig, 'format' | 'prefix' | 'refkey'>>): string {
  const format = options?.format ?? config.format;
  const usePrefix = options?.prefix ?? (options?.format !== undefined ? format !== 'json' : config.prefix);
  const refkey = options?.refkey ?? config.refkey;
  const prefix = usePrefix && record.ref !== undefined ? prefixOf(record.ref) : '';
  const trace = record.error === undefined ? undefined : traceOf(record.error);
  if (format === 'json') {
    const line: Record<string, unknown> = {
      message: `${prefix}${record.message}`,
      timestamp: timestamps.formatTimestamp(record.time),
    };
    if (record.ref !== undefined) line[refkey] = record.ref;
    line['severity'] = severityOf(record.level);
    for (const [key, value] of Object.entries(record.fields ?? {})) if (!(key in line)) line[key] = value;
    if (trace !== undefined) line['exc_info'] = trace;
    return JSON.stringify(line);
  }
  const text = `${prefix}${record.message}${trace === undefined ? '' : `\n${trace}`}`;
  if (format === 'plain') return text;
  return `[${asctime(record.time)}] ${padded(record.name, 20)} [${padded(levelName(record.level), 8)}] ${text}`;
}

/** Whether a message of `level` is shown (low-level loggers need `--debug` below WARNING). */
function shown(level: number, lowLevel: boolean): boolean {
  return level >= (lowLevel && !config.lowLevel ? Math.max(config.level, loggers.LEVELS.warning) : config.level);
}

function emit(record: LogRecord, lowLevel: boolean): boolean {
  if (!shown(record.level, lowLevel)) return false;
  sink(formatRecord(record), record);
  return true;
}

function splitExtra(extra: loggers.LogExtra | undefined): { error?: unknown; fields?: Record<string, unknown> } {
  if (extra === undefined) return {};
  const { error, ...fields } = extra;
  return { ...('error' in extra ? { error } : {}), ...(Object.keys(fields).length > 0 ? { fields } : {}) };
}

abstract class BaseLogger implements loggers.Logger {
  constructor(readonly name: string) {}

  protected abstract log(level: number, message: string, extra?: loggers.LogExtra): void;

  /** Whether a message of `level` would be shown (see `Logger.isEnabledFor`). */
  abstract isEnabledFor(level: loggers.LogLevel): boolean;

  debug(message: string, extra?: loggers.LogExtra): void {
    this.log(loggers.LEVELS.debug, message, extra);
  }
  info(message: string, extra?: loggers.LogExtra): void {
    this.log(loggers.LEVELS.info, message, extra);
  }
  warning(message: string, extra?: loggers.LogExtra): void {
    this.log(loggers.LEVELS.warning, message, extra);
  }
  error(message: string, extra?: loggers.LogExtra): void {
    this.log(loggers.LEVELS.error, message, extra);
  }
  critical(message: string, extra?: loggers.LogExtra): void {
    this.log(loggers.LEVELS.critical, message, extra);
  }
}

/** A named framework logger (not about one object). */
export class NamedLogger extends BaseLogger {
  /** Low-level loggers (client, network) show DEBUG/INFO only with `configure({ debug: true })`. */
  readonly lowLevel: boolean;

  constructor(name: string, options?: { readonly lowLevel?: boolean }) {
    super(name);
    this.lowLevel = options?.lowLevel ?? false;
  }

  isEnabledFor(level: loggers.LogLevel): boolean {
    return shown(loggers.LEVELS[level], this.lowLevel);
  }

  protected log(level: number, message: string, extra?: loggers.LogExtra): void {
    emit({ name: this.name, level, message, time: Date.now(), ...splitExtra(extra) }, this.lowLevel);
  }
}

/** A named framework logger, e.g. `getLogger('kopf.reactor')`. */
export function getLogger(name: string, options?: { readonly lowLevel?: boolean }): NamedLogger {
  return new NamedLogger(name, options);
}

/** Options of a per-object logger. */
export interface ObjectLoggerOptions {
  /** The object the messages are about (only its apiVersion, kind and metadata are read). */
  readonly body: unknown;
  /** Posting settings; default: the current operator's, if any. */
  readonly settings?: settings.OperatorSettings;
  /** Where posted events go; default: the current operator's sink, if any. */
  readonly sink?: events.EventSink;
  /** Never post messages as k8s-events (on-event, indexing, admission, daemon guards). */
  readonly local?: boolean;
  /** The logger name; default `kopf.objects`. */
  readonly name?: string;
  /**
   * Terse (indexing, R-INDEX-6): INFO messages are shown only in verbose mode (as DEBUG), DEBUG
   * messages only in debug mode (`--debug`). Terse loggers never post k8s-events.
   */
  readonly terse?: boolean;
}

/** The logger handlers receive as `logger` (Kopf: `ObjectLogger` / `LocalObjectLogger`). */
export class ObjectLogger extends BaseLogger {
  readonly local: boolean;
  readonly terse: boolean;
  private readonly settings?: settings.OperatorSettings;
  private readonly sink?: events.EventSink;
  private body: unknown;
  private secretPaths?: readonly (readonly string[])[];
  private reference?: events.ObjectReference;

  /**
   * Keeps only what this logger needs of its object — its reference and its kind (for redaction) —
   * instead of the whole body it was made with: for loggers that live as long as their object (its
   * daemons' and timers'), which would otherwise pin an old body.
   */
  lightened(): this {
    void this.ref;
    const body = this.body;
    if (typeof body === 'object' && body !== null) {
      const { apiVersion, kind } = body as { apiVersion?: unknown; kind?: unknown };
      this.body = { apiVersion, kind };
    }
    return this;
  }

  /** The object reference (also the JSON `object` field); made when first needed (most cycles log nothing). */
  get ref(): events.ObjectReference {
    this.reference ??= Object.freeze(events.buildObjectReference(this.body));
    return this.reference;
  }

  constructor(options: ObjectLoggerOptions) {
    super(options.name ?? 'kopf.objects');
    this.body = options.body;
    this.terse = options.terse ?? false;
    this.local = (options.local ?? false) || this.terse;
    this.settings = options.settings;
    this.sink = options.sink;
  }

  isEnabledFor(level: loggers.LogLevel): boolean {
    const value = loggers.LEVELS[level];
    const terse = this.terse && value <= loggers.LEVELS.info;
    return shown(terse ? loggers.LEVELS.debug : value, terse && value < loggers.LEVELS.info);
  }

  /**
   * `value` at path `at` of this logger's object with the values of its kind's secret-like fields
   * (`settings.persistence.secretFields`) redacted; `value` itself for other kinds (R-SEC-20).
   */
  redact(value: unknown, at: readonly string[] = []): unknown {
    if (this.secretPaths === undefined) {
      const configured = (this.settings ?? invocation.findOperator()?.settings)?.persistence.secretFields ?? secrets.defaultSecretFields();
      this.secretPaths = secrets.secretPathsOf(configured, this.body);
    }
    return secrets.redactSecrets(value, this.secretPaths, at);
  }

  protected log(level: number, message: string, extra?: loggers.LogExtra): void {
    const terse = this.terse && level <= loggers.LEVELS.info;
    const as = terse ? loggers.LEVELS.debug : level;
    const lowLevel = terse && level < loggers.LEVELS.info;
    // A hidden message is neither formatted nor posted: skip building its record (timers log twice a tick).
    if (!shown(as, lowLevel)) return;
    const record: LogRecord = { name: this.name, level: as, message, time: Date.now(), ref: this.ref, ...splitExtra(extra) };
    if (!emit(record, lowLevel) || this.local) return;
    const operator = invocation.findOperator();
    const posting = (this.settings ?? operator?.settings)?.posting;
    const post = this.sink ?? operator?.events;
    if (!posting || !post || !posting.enabled || !posting.loggers || level < posting.level) return;
    const text = record.error === undefined ? message : `${message}\n${traceOf(record.error)}`;
    post({ ref: this.ref, type: eventTypeOf(level), reason: 'Logging', message: text });
  }
}

/**
 * A logger that words execution's `Handler '<id>' …` messages for another kind of handler:
 * `Activity '<id>' …` (R-ACTIVITY-5), `Daemon '<id>' …`, `Timer '<id>' …` (R-DAEMON-5), as Kopf
 * names them. Other messages pass through untouched.
 *
 * @example
 * titledLogger(logger, 'Daemon').warning("Handler 'monitor' is cancelled. Will escalate.")
 * // logs: Daemon 'monitor' is cancelled. Will escalate.
 */
export function titledLogger(base: loggers.Logger, title: string): loggers.Logger {
  return new TitledLogger(base, title);
}

/** Methods on the prototype, two fields per instance: every object with daemons has two of these. */
class TitledLogger implements loggers.Logger {
  constructor(
    private readonly base: loggers.Logger,
    private readonly title: string,
  ) {}
  private rewrite(message: string): string {
    return message.startsWith("Handler '") ? `${this.title} '${message.slice(9)}` : message;
  }
  isEnabledFor(level: loggers.LogLevel): boolean {
    return loggers.isEnabledFor(this.base, level);
  }
  redact(value: unknown, at?: readonly string[]): unknown {
    return loggers.redacted(this.base, value, at);
  }
  debug(message: string, extra?: loggers.LogExtra): void {
    this.base.debug(this.rewrite(message), extra);
  }
  info(message: string, extra?: loggers.LogExtra): void {
    this.base.info(this.rewrite(message), extra);
  }
  warning(message: string, extra?: loggers.LogExtra): void {
    this.base.warning(this.rewrite(message), extra);
  }
  error(message: string, extra?: loggers.LogExtra): void {
    this.base.error(this.rewrite(message), extra);
  }
  critical(message: string, extra?: loggers.LogExtra): void {
    this.base.critical(this.rewrite(message), extra);
  }
}

/** A per-object logger (see `ObjectLoggerOptions`). */
export function objectLogger(options: ObjectLoggerOptions): ObjectLogger {
  return new ObjectLogger(options);
}
