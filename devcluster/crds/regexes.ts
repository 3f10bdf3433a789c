/**
 * Regular expressions with Go's semantics, as a real API server evaluates schema `pattern`s and
 * CEL's `matches`, `find` and `findAll`: RE2 syntax (no look-around, no back-references, `(?i)`
 * and other inline flags, `\pL`, `\z`, `\Q…\E`), leftmost-first matching, linear time.
 *
 * The engine is the `re2js` package, a JavaScript port of RE2/J, itself a port of Go's `regexp`: the
 * same parser, so the same accepted syntax and the same error texts (`error parsing regexp: missing
 * closing ): `(a``). It is loaded on first use, synchronously (validation is synchronous), so a
 * cluster that never meets a regular expression does not pay for it. Compiled expressions are
 * cached, a bounded number of them.
 *
 * Two gaps of the port are closed here: errors it reports without the offending text get Go's text
 * (`trailing backslash at end of expression: ```), and Go accepts two capture groups of the same
 * name where the port refuses them, so such a pattern is compiled again without group names (names
 * never change what matches).
 */
import { createRequire } from 'node:module';
import type * as re2js from 're2js';

/** A compiled expression. Positions and results are in JavaScript (UTF-16) strings. */
export interface Regex {
  /** Whether the expression matches anywhere in `text` (Go's `MatchString`). */
  test(text: string): boolean;
  /** The leftmost match, or undefined (Go's `FindString`, which says "" for both). */
  find(text: string): string | undefined;
  /** Successive non-overlapping matches, at most `limit` of them when `limit` ≥ 0 (Go's `FindAllString`). */
  findAll(text: string, limit: number): string[];
}

/** An expression, or Go's error text for it (`error parsing regexp: …`). */
export type Compiled = { readonly ok: true; readonly regex: Regex } | { readonly ok: false; readonly reason: string };

const CACHE_LIMIT = 1000;
const cache = new Map<string, Compiled>();
let engine: typeof re2js | undefined;

/** Compiles `pattern` as Go's `regexp.Compile` does, or explains why Go refuses it. Cached. */
export function compile(pattern: string): Compiled {
  let compiled = cache.get(pattern);
  if (compiled) return compiled;
  compiled = compileUncached(pattern);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(pattern, compiled);
  return compiled;
}

/** The engine, loaded on first use. */
function load(): typeof re2js {
  engine ??= createRequire(import.meta.url)('re2js') as typeof re2js;
  return engine;
}

function compileUncached(pattern: string): Compiled {
  const { RE2JS, RE2JSSyntaxException } = load();
  try {
    return { ok: true, regex: wrap(RE2JS.compile(pattern)) };
  } catch (error) {
    if (!(error instanceof RE2JSSyntaxException)) return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    const unnamed = error.error === DUPLICATE_NAME ? withoutGroupNames(pattern) : pattern;
    if (unnamed !== pattern) return compileUncached(unnamed);
    return { ok: false, reason: `error parsing regexp: ${error.error}: \`${error.input ?? goExpr(error.error, pattern)}\`` };
  }
}

const DUPLICATE_NAME = 'duplicate capture group name';
const TRAILING_BACKSLASH = 'trailing backslash at end of expression';

/** The text Go shows for errors the port reports without one: none for a trailing backslash, else the whole pattern. */
const goExpr = (code: string, pattern: string): string => (code === TRAILING_BACKSLASH ? '' : pattern);

/**
 * `(?P<name>` and `(?<name>` turned into `(`, leaving escapes, `\Q…\E` and character classes
 * alone. Only used on a pattern the parser read up to a repeated name, so the scan can be simple.
 */
function withoutGroupNames(pattern: string): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    if (pattern.startsWith('\\Q', i)) {
      const end = pattern.indexOf('\\E', i + 2);
      const stop = end < 0 ? pattern.length : end + 2;
      out += pattern.slice(i, stop);
      i = stop;
    } else if (pattern[i] === '\\') {
      out += pattern.slice(i, i + 2);
      i += 2;
    } else if (pattern[i] === '[') {
      const stop = classEnd(pattern, i);
      out += pattern.slice(i, stop);
      i = stop;
    } else {
      const named = /^\(\?P?<[^>=!]*>/.exec(pattern.slice(i));
      out += named ? '(' : pattern[i];
      i += named ? named[0].length : 1;
    }
  }
  return out;
}

/** The index after the character class opening at `start` (`]` first is literal, `[:name:]` is one unit). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length && pattern[i] !== ']') {
    if (pattern[i] === '\\') i += 2;
    else if (pattern.startsWith('[:', i) && pattern.indexOf(':]', i + 2) > 0) i = pattern.indexOf(':]', i + 2) + 2;
    else i++;
  }
  return i + 1;
}

function wrap(re: re2js.RE2JS): Regex {
  return {
    test: (text) => re.test(text),
    find(text) {
      const m = re.matcher(text);
      return m.find(0) ? (m.group() ?? '') : undefined;
    },
    findAll: (text, limit) => findAll(re, text, limit),
  };
}

/**
 * Go's `FindAllString`: after a match, search again from its end; an empty match right after the
 * previous match is skipped, and after an empty match the search moves on by one character.
 */
function findAll(re: re2js.RE2JS, text: string, limit: number): string[] {
  const out: string[] = [];
  const m = re.matcher(text);
  let pos = 0;
  let previousEnd = -1;
  while (pos <= text.length && (limit < 0 || out.length < limit)) {
    if (!m.find(pos)) break;
    const start = m.start();
    const end = m.end();
    const accept = !(end === pos && start === previousEnd);
    pos = end === pos ? pos + charWidth(text, pos) : end;
    previousEnd = end;
    if (accept) out.push(text.slice(start, end));
  }
  return out;
}

/** UTF-16 units of the character at `i` (1 past the end, so the search ends there). */
function charWidth(text: string, i: number): number {
  const code = text.codePointAt(i);
  return code !== undefined && code > 0xffff ? 2 : 1;
}
