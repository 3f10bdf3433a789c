/**
 * Time formats of the wire (D-WIRE-19): `Time` fields are RFC 3339 UTC at second precision
 * (`2024-05-01T10:00:00Z`), `MicroTime` fields at microsecond precision
 * (`2024-05-01T10:00:00.123456Z`).
 *
 * Built-in strategies normalise their typed time fields with {@link normalizeTime} and
 * {@link normalizeMicroTime} on every write, so that clients may send any RFC 3339 form (Kopf sends
 * `2024-05-01T10:00:00.123456+00:00`); the server stamps its own times (creationTimestamp,
 * deletionTimestamp, managedFields) with {@link formatTime}. Precision is reduced by truncation,
 * as upstream's Go formatting does. Values inside CR bodies are never touched.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** A point in time with microsecond resolution: whole seconds since the epoch plus microseconds (0–999999). */
interface Instant {
  readonly seconds: number;
  readonly micros: number;
}

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysInMonth = (year: number, month: number): number => [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;

/** Epoch seconds of a UTC calendar date and time (valid for years 0–9999, unlike `Date.UTC`). */
function epochSeconds(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime() / 1000;
}

function parseText(text: string): Instant | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (m[8]) {
    const offHours = Number(m[9]);
    const offMinutes = Number(m[10]);
    if (offHours > 23 || offMinutes > 59) return undefined;
    offset = (m[8] === '-' ? -1 : 1) * (offHours * 3600 + offMinutes * 60);
  }
  const micros = m[7] ? Number(m[7].slice(0, 6).padEnd(6, '0')) : 0;
  return { seconds: epochSeconds(year, month, day, hour, minute, second) - offset, micros };
}

function fromDate(date: Date): Instant | undefined {
  const ms = date.getTime();
  if (Number.isNaN(ms)) return undefined;
  const seconds = Math.floor(ms / 1000);
  return { seconds, micros: (ms - seconds * 1000) * 1000 };
}

const parse = (value: unknown): Instant | undefined => (typeof value === 'string' ? parseText(value) : value instanceof Date ? fromDate(value) : undefined);

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** `YYYY-MM-DDTHH:MM:SS` in UTC, or undefined outside the years 0–9999 (which upstream cannot serialise). */
function formatSeconds(seconds: number): string | undefined {
  const d = new Date(seconds * 1000);
  const year = d.getUTCFullYear();
  if (year < 0 || year > 9999) return undefined;
  return `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
}

/**
 * Normalises a `Time` value: any RFC 3339 string (offsets, fractions, lowercase `t`/`z`) or a `Date`
 * → UTC at second precision with `Z`. Anything else (invalid dates, non-strings) → undefined.
 *
 * @example normalizeTime('2024-05-01T12:00:00.999+02:00') // → '2024-05-01T10:00:00Z'
 */
export function normalizeTime(value: unknown): string | undefined {
  const instant = parse(value);
  if (!instant) return undefined;
  const text = formatSeconds(instant.seconds);
  return text === undefined ? undefined : `${text}Z`;
}

/**
 * Normalises a `MicroTime` value like {@link normalizeTime} but keeps six fractional digits
 * (truncating finer ones, padding coarser ones).
 *
 * @example normalizeMicroTime('2024-05-01T10:00:00.5+00:00') // → '2024-05-01T10:00:00.500000Z'
 */
export function normalizeMicroTime(value: unknown): string | undefined {
  const instant = parse(value);
  if (!instant) return undefined;
  const text = formatSeconds(instant.seconds);
  return text === undefined ? undefined : `${text}.${pad(instant.micros, 6)}Z`;
}

/** Parses any RFC 3339 text to a `Date` (millisecond precision); undefined when invalid. */
export function parseTime(value: unknown): Date | undefined {
  const instant = parse(value);
  return instant ? new Date(instant.seconds * 1000 + Math.floor(instant.micros / 1000)) : undefined;
}

function formatOrThrow(date: Date, micro: boolean): string {
  const text = micro ? normalizeMicroTime(date) : normalizeTime(date);
  if (text === undefined) throw new RangeError(`cannot format ${String(date)} as an RFC 3339 time`);
  return text;
}

/**
 * Formats a server timestamp as a `Time` (`2024-05-01T10:00:00Z`), dropping the milliseconds.
 * @throws {RangeError} for an invalid date or a year outside 0–9999.
 */
export function formatTime(date: Date): string {
  return formatOrThrow(date, false);
}

/**
 * Formats a server timestamp as a `MicroTime` (`2024-05-01T10:00:00.123000Z`; a `Date` holds milliseconds).
 * @throws {RangeError} for an invalid date or a year outside 0–9999.
 */
export function formatMicroTime(date: Date): string {
  return formatOrThrow(date, true);
}
