/**
 * Namespace patterns: which namespaces a namespaced operator serves (R-SCOPE-2, R-SCOPE-4).
 *
 * Users pass one or more patterns (`--namespace` options, or `namespaces` when embedded). A string
 * pattern is a comma-separated list of globs (`*`, `?`), where `!` marks exclusions; a `RegExp`
 * (embedded use only) must match the whole name. Several patterns are OR-ed. The functions here are
 * pure: `observation` applies them to the namespaces it lists and watches, and falls back to
 * `exactNamespaces()` when it may not list namespaces at all. Kopf: `references.match_namespace`
 * and `references.select_specific_namespaces`.
 */

/** A namespace pattern: globs with exclusions, or a regular expression matching whole names. */
export type NamespacePattern = string | RegExp;

/** Converts one glob (`*` any characters, `?` one character; nothing else is special) to a RegExp. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const char of glob) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else source += char.replace(/[\\^$.|+()[\]{}/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/** Whether `name` matches a RegExp as a whole (flags kept, except the stateful `g`/`y`). */
function fullMatch(name: string, pattern: RegExp): boolean {
  const flags = pattern.flags.replace(/[gy]/g, '');
  return new RegExp(`^(?:${pattern.source})$`, flags).test(name);
}

/** The globs of a string pattern, trimmed, without empty ones. */
function globsOf(pattern: string): string[] {
  return pattern
    .split(',')
    .map((glob) => glob.trim())
    .filter((glob) => glob !== '');
}

/**
 * Whether a namespace name matches one pattern (R-SCOPE-2). For string patterns: if the first glob
 * is an exclusion, an implicit leading `*` is assumed; the first glob decides the initial match;
 * each later exclusion removes a match; each later inclusion re-includes only if the first glob
 * matched. A pattern without globs matches nothing.
 *
 * @example
 * matchNamespace('myapp-pr-123', 'myapp-*,!*-pr-*,*-pr-123')    // true
 * matchNamespace('otherapp-pr-123', 'myapp-*,!*-pr-*,*-pr-123') // false
 * matchNamespace('kube-system', /kube-[a-z]+/)               // true (whole-name match)
 */
export function matchNamespace(name: string, pattern: NamespacePattern): boolean {
  if (pattern instanceof RegExp) return fullMatch(name, pattern);
  const globs = globsOf(pattern);
  if (globs.length === 0) return false;
  if (globs[0]!.startsWith('!')) globs.unshift('*');
  const [first, ...rest] = globs as [string, ...string[]];
  const initial = globToRegExp(first).test(name);
  let matched = initial;
  for (const glob of rest) {
    if (glob.startsWith('!')) {
      if (globToRegExp(glob.slice(1)).test(name)) matched = false;
    } else if (initial && globToRegExp(glob).test(name)) {
      matched = true;
    }
  }
  return matched;
}

/** Whether a namespace name matches any of the patterns (several `--namespace` options are OR-ed). */
export function matchNamespaces(name: string, patterns: readonly NamespacePattern[]): boolean {
  return patterns.some((pattern) => matchNamespace(name, pattern));
}

/**
 * The patterns that are plain names: strings containing none of `!`, `*`, `?`, `,` (R-SCOPE-4).
 * These are the namespaces assumed to exist when namespaces cannot be listed. In order, without
 * duplicates; RegExp patterns never count.
 *
 * @example
 * exactNamespaces(['myapp-live', 'myapp-*', /x/]) // ['myapp-live']
 */
export function exactNamespaces(patterns: readonly NamespacePattern[]): string[] {
  const names = patterns.filter((p): p is string => typeof p === 'string' && !/[!*?,]/.test(p)).map((p) => p.trim());
  return [...new Set(names.filter((name) => name !== ''))];
}
