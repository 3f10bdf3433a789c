/**
 * Regular expressions of schema `pattern` keywords.
 *
 * Upstream compiles patterns with Go's RE2, which has no look-around and no back-references. The
 * devcluster compiles them as ECMA-262 expressions with the `u` flag and rejects the constructs RE2
 * would reject, so a CRD that installs here also installs on a real cluster. `structural` uses
 * `compilePattern` to reject invalid patterns in CRDs; `validation` uses `matchesPattern` on values.
 */

export type CompiledPattern = { ok: true; regexp: RegExp } | { ok: false; reason: string };

const cache = new Map<string, CompiledPattern>();

/** Compiles a schema pattern, or explains why it is not acceptable. Results are cached. */
export function compilePattern(pattern: string): CompiledPattern {
  let compiled = cache.get(pattern);
  if (!compiled) {
    compiled = compile(pattern);
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, compiled);
  }
  return compiled;
}

/** True when `value` matches `pattern` (unanchored, as in JSON Schema); invalid patterns match everything. */
export function matchesPattern(pattern: string, value: string): boolean {
  const compiled = compilePattern(pattern);
  return !compiled.ok || compiled.regexp.test(value);
}

function compile(pattern: string): CompiledPattern {
  const unsupported = findUnsupportedConstruct(pattern);
  if (unsupported) return { ok: false, reason: `invalid or unsupported Perl syntax: \`${unsupported}\`` };
  try {
    return { ok: true, regexp: new RegExp(pattern, 'u') };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** Finds look-around groups and back-references outside character classes (RE2 has neither). */
function findUnsupportedConstruct(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<'))) return pattern.slice(i, i + 2);
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      if (pattern[i + 1] === ']') i++; // a leading `]` is literal inside a class
      continue;
    }
    if (ch === '(' && pattern[i + 1] === '?') {
      const head = pattern.slice(i, i + 4);
      if (head.startsWith('(?=') || head.startsWith('(?!')) return head.slice(0, 3);
      if (head === '(?<=' || head === '(?<!') return head;
    }
  }
  return undefined;
}
