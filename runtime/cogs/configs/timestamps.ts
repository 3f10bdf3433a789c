/**
 * Timestamps as Kopf persists them (R-STORAGE-5).
 *
 * Progress records (`progress`) carry `started`, `stopped` and `delayed` as strings. Kopf writes
 * UTC with microseconds and an explicit offset, `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`, but older
 * versions wrote naive timestamps and other tools may write `Z` or other offsets, so reading accepts
 * any ISO-8601 form. Times are numbers of milliseconds since the epoch, as `Clock.now()` returns
 * them (see `aio/clocks`); fractions of a millisecond are kept to the microsecond.
 */

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/**
 * Formats a time (ms since the epoch, fractions kept to the microsecond) as Kopf writes it:
 * `YYYY-MM-DDTHH:MM:SS.ffffff+00:00` (R-STORAGE-5).
 */
export function formatTimestamp(ms: number): string {
  const micros = Math.round(ms * 1000);
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = micros - seconds * 1_000_000;
  const date = new Date(seconds * 1000);
  const day = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  return `${day}T${time}.${pad(fraction, 6)}+00:00`;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Parses any ISO-8601 timestamp (with `Z`, `±HH:MM`, any fraction digits, or no offset = UTC) into
 * ms since the epoch; `undefined` if unparseable (R-STORAGE-5).
 */
export function parseTimestamp(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const match = ISO.exec(text.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, offset] = match;
  const base = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second ?? 0));
  if (Number.isNaN(base)) return undefined;
  const micros = fraction ? Math.round(Number(`0.${fraction}`) * 1_000_000) : 0;
  let shift = 0;
  if (offset && offset.toUpperCase() !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    shift = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || 0)) * 60_000;
  }
  return base + micros / 1000 - shift;
}
