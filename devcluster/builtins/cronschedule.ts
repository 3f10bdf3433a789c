/**
 * CronJob schedules and time zones as upstream checks them (D-BI-14). A schedule is the standard
 * five-field crontab syntax, or a descriptor (`@hourly`, `@every 5m`), parsed with the rules and
 * the error texts of the cron library the API server uses, so that a client sees the message a
 * real cluster gives (`expected exactly 5 fields, found 1: [foo]`, `end of range (60) above
 * maximum (59): 60`). Time zones must be names of the IANA database the platform knows.
 *
 * Only validity is computed here: nothing in the devcluster runs CronJobs.
 */

/** The error of a schedule that does not parse, or undefined when it parses. */
export function scheduleError(spec: string): string | undefined {
  try {
    parseSchedule(spec);
    return undefined;
  } catch (err) {
    if (err instanceof ScheduleError) return err.message;
    throw err;
  }
}

class ScheduleError extends Error {
  readonly code = 'ScheduleInvalid' as const;
}

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const MONTH_NAMES: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAY_NAMES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

/** minute, hour, day of month, month, day of week. */
const FIELDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTH_NAMES },
  { min: 0, max: 6, names: DAY_NAMES },
];

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

function parseSchedule(input: string): void {
  let spec = input;
  if (spec.length === 0) throw new ScheduleError('empty spec string');
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const zone = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space);
    const problem = timeZoneProblem(zone);
    if (problem) throw new ScheduleError(`provided bad location ${zone}: ${problem}`);
    spec = space < 0 ? '' : spec.slice(space).trim();
  }
  if (spec.startsWith('@')) {
    parseDescriptor(spec);
    return;
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== FIELDS.length) throw new ScheduleError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  fields.forEach((field, i) => {
    for (const expr of field.split(',').filter((e) => e !== '')) parseRange(expr, FIELDS[i]!);
  });
}

function parseDescriptor(spec: string): void {
  if (DESCRIPTORS.has(spec)) return;
  const every = '@every ';
  if (spec.startsWith(every)) {
    const text = spec.slice(every.length);
    if (!isGoDuration(text)) throw new ScheduleError(`failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(text)}`);
    return;
  }
  throw new ScheduleError(`unrecognized descriptor: ${spec}`);
}

/** Go's time.ParseDuration syntax: `300ms`, `1.5h`, `2h45m`. */
function isGoDuration(text: string): boolean {
  return /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(text) || text === '0';
}

/** `number | number "-" number` with an optional `"/" step`, or `*`/`?`, within the field's bounds. */
function parseRange(expr: string, bounds: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = bounds.min;
    end = bounds.max;
  } else {
    start = intOrName(lowAndHigh[0]!, bounds);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = intOrName(lowAndHigh[1]!, bounds);
    else throw new ScheduleError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1]!);
    if (lowAndHigh.length === 1) end = bounds.max; // "N/step" means "N-max/step"
  } else if (rangeAndStep.length > 2) {
    throw new ScheduleError(`too many slashes: ${expr}`);
  }
  if (start < bounds.min) throw new ScheduleError(`beginning of range (${start}) below minimum (${bounds.min}): ${expr}`);
  if (end > bounds.max) throw new ScheduleError(`end of range (${end}) above maximum (${bounds.max}): ${expr}`);
  if (start > end) throw new ScheduleError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new ScheduleError(`step of range should be a positive number: ${expr}`);
}

function intOrName(expr: string, bounds: Bounds): number {
  const named = bounds.names?.[expr.toLowerCase()];
  return named ?? mustParseInt(expr);
}

/** Go's strconv.Atoi with the cron library's messages. */
function mustParseInt(expr: string): number {
  if (!/^[+-]?\d+$/.test(expr)) throw new ScheduleError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`);
  const num = Number(expr);
  if (!Number.isSafeInteger(num) || Math.abs(num) > 2 ** 63 - 1)
    throw new ScheduleError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: value out of range`);
  if (num < 0) throw new ScheduleError(`negative number (${num}) not allowed: ${expr}`);
  return num;
}

let knownZones: ReadonlySet<string> | undefined;

/**
 * Why a time zone name is not loadable (Go's `unknown time zone <name>`), or undefined when it is.
 * Names are checked against the platform's IANA database, case-sensitively for canonical names.
 */
export function timeZoneProblem(name: string): string | undefined {
  if (name === 'UTC' || name === '') return undefined; // Go loads both as UTC
  knownZones ??= new Set(Intl.supportedValuesOf('timeZone'));
  if (knownZones.has(name)) return undefined;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return `unknown time zone ${name}`;
  }
  // Intl accepts any letter case; Go's zoneinfo lookup does not. A canonical name in another case is unknown.
  const canonicalMatch = [...knownZones].find((z) => z.toLowerCase() === name.toLowerCase());
  if (canonicalMatch !== undefined && canonicalMatch !== name) return `unknown time zone ${name}`;
  return resolved ? undefined : `unknown time zone ${name}`;
}
