/**
 * Regular expressions of schema `pattern` keywords.
 *
 * Upstream compiles patterns with Go's `regexp` (RE2 syntax: no look-around, no back-references)
 * and matches them unanchored. `regexes` gives the devcluster the same engine semantics, so a CRD
 * that installs here also installs on a real cluster and its objects pass or fail alike.
 * `structural` and `junctors` use `compilePattern` to refuse invalid patterns in CRDs, with Go's
 * error text; `validation` uses `matchesPattern` on values.
 */
import * as regexes from './regexes.js';

export type CompiledPattern = regexes.Compiled;

/** Compiles a schema pattern, or explains why it is not acceptable (`error parsing regexp: …`). Cached. */
export function compilePattern(pattern: string): CompiledPattern {
  return regexes.compile(pattern);
}

/** True when `value` matches `pattern` (unanchored, as in JSON Schema); invalid patterns match everything. */
export function matchesPattern(pattern: string, value: string): boolean {
  const compiled = compilePattern(pattern);
  return !compiled.ok || compiled.regex.test(value);
}
