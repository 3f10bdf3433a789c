/**
 * Reading a benchmark's own options: every benchmark receives all the arguments of `npm run bench`
 * and takes what is its own. A value a benchmark cannot use is an error naming the option, never a
 * silent fallback to the default (a run that measured something else than asked is worse than no run).
 */

/**
 * A whole number of at least `min` from an option's value; `fallback` when the option is absent.
 *
 * @throws Error `--<name> must be a positive whole number, not <value>` (or `… a whole number ≥ <min>`).
 */
export function wholeNumber(value: unknown, fallback: number, name: string, min = 1): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (typeof value === 'string' && value.trim() !== '' && Number.isInteger(parsed) && parsed >= min) return parsed;
  const wanted = min === 1 ? 'a positive whole number' : `a whole number ≥ ${min}`;
  throw new Error(`--${name} must be ${wanted}, not ${String(value)}`);
}

/**
 * A number (not necessarily whole: `--window 2.5`) of at least `min` from an option's value;
 * `fallback` when the option is absent.
 *
 * @throws Error `--<name> must be a number of at least <min>, not <value>`.
 */
export function atLeast(value: unknown, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(parsed) || parsed < min) {
    throw new Error(`--${name} must be a number of at least ${min}, not ${String(value)}`);
  }
  return parsed;
}

/**
 * The parts that `--skip` names (repeatable, comma-separated), each one of `parts`.
 *
 * @throws Error `--skip <name>: the parts are …` for a name that is not a part.
 */
export function skippedParts<P extends string>(given: unknown, parts: readonly P[]): ReadonlySet<P> {
  const skip = new Set<P>();
  for (const value of (Array.isArray(given) ? given : given === undefined ? [] : [given]) as unknown[]) {
    for (const name of String(value).split(',').filter(Boolean)) {
      if (!(parts as readonly string[]).includes(name)) throw new Error(`--skip ${name}: the parts are ${parts.join(', ')}`);
      skip.add(name as P);
    }
  }
  return skip;
}
