/**
 * Scalars of the fast YAML path (parsing.ts): what a plain scalar stands for under the YAML 1.2 core
 * schema, the decoding of one line of a quoted scalar, one-line flow collections (`{}`, `[a, b]`),
 * and the small line-scanning helpers parsing.ts's line reader shares with them.
 *
 * Everything here is pure. Text outside the subset (an escape the subset does not know, a flow
 * collection that does not close on its line, a duplicate key) throws `OutsideSubset`, which
 * parsing.ts turns into "use the full parser".
 */

/** Signals text outside the subset; caught in `parseDocuments`, never seen by callers. */
export class OutsideSubset extends Error {
  readonly code = 'outside-subset';
}

export const SPACE = 32;
export const HASH = 35;

/** The one-character escapes of double-quoted scalars, and the hex ones with their digit counts. */
const ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
};
const HEX_ESCAPES: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/** The scalar a plain (unquoted) text stands for under the YAML 1.2 core schema. */
export function plainValue(text: string): unknown {
  const first = text.charCodeAt(0);
  // Fast exit: most plain scalars start with a letter that no core-schema value starts with.
  if (
    (first >= 97 && first <= 122 && first !== 102 && first !== 110 && first !== 116) ||
    (first >= 65 && first <= 90 && first !== 70 && first !== 78 && first !== 84)
  )
    return text;
  if (/^(?:~|[Nn]ull|NULL)?$/.test(text)) return null;
  if (/^(?:[Tt]rue|TRUE)$/.test(text)) return true;
  if (/^(?:[Ff]alse|FALSE)$/.test(text)) return false;
  if (/^0o[0-7]+$/.test(text)) return parseInt(text.slice(2), 8);
  if (/^[-+]?[0-9]+$/.test(text)) return parseInt(text, 10);
  if (/^0x[0-9a-fA-F]+$/.test(text)) return parseInt(text.slice(2), 16);
  if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(text)) {
    if (text.slice(-3).toLowerCase() === 'nan') return Number.NaN;
    return text[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/.test(text) || /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/.test(text)) return parseFloat(text);
  return text;
}

/** Throws `OutsideSubset`. */
export function outside(): never {
  throw new OutsideSubset('outside the fast YAML subset');
}

/** Index of the first non-space character at or after `from` (the length when there is none). */
export function skipSpaces(text: string, from: number): number {
  let index = from;
  while (text.charCodeAt(index) === SPACE) index += 1;
  return index;
}

/** Whether the rest of a line from `from` is spaces, optionally followed by a comment after a space. */
export function restIsBlank(text: string, from: number): boolean {
  const index = skipSpaces(text, from);
  return index === text.length || (text.charCodeAt(index) === HASH && index > from);
}

/** Whether a block sequence entry (`- ` or a lone `-`) starts at `column`. */
export function isSequenceEntry(text: string, column: number): boolean {
  return text.charCodeAt(column) === 45 && (column + 1 === text.length || text.charCodeAt(column + 1) === SPACE);
}

/** Whether a character cannot start a plain scalar (`-`, `?` and `:` only when a space follows). */
export function cannotStartPlain(text: string, index: number): boolean {
  const char = text[index]!;
  if (char === '-' || char === '?' || char === ':') return index + 1 === text.length || text.charCodeAt(index + 1) === SPACE;
  return ',[]{}#&*!|>\'"%@`'.includes(char);
}

/** Sets a key of a mapping, refusing duplicates and `__proto__` (left to the full parser). */
export function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__' || Object.hasOwn(target, key)) outside();
  target[key] = value;
}

/** A flow collection that closes on its own line, from its bracket at `start`: the value and the index after it. */
export function flowCollection(text: string, start: number): [unknown, number] {
  const open = text[start];
  const close = open === '[' ? ']' : '}';
  const items: unknown[] = [];
  const map: Record<string, unknown> = {};
  let index = skipSpaces(text, start + 1);
  if (text[index] === close) return [open === '[' ? items : map, index + 1];
  for (;;) {
    if (open === '[') {
      const [item, after] = flowItem(text, index);
      items.push(item);
      index = skipSpaces(text, after);
    } else {
      const [key, afterKey] = flowItem(text, index, true);
      if (typeof key !== 'string' || text[afterKey] !== ':' || text.charCodeAt(afterKey + 1) !== SPACE) outside();
      const [value, after] = flowItem(text, skipSpaces(text, afterKey + 1));
      setKey(map, key, value);
      index = skipSpaces(text, after);
    }
    if (text[index] === close) return [open === '[' ? items : map, index + 1];
    if (text[index] !== ',') outside();
    index = skipSpaces(text, index + 1);
    if (text[index] === close) outside();
  }
}

/** One item (or key) of a flow collection at `start`: the value and the index after it. */
function flowItem(text: string, start: number, key = false): [unknown, number] {
  const char = text[start];
  if (char === '[' || char === '{') {
    if (key) outside();
    return flowCollection(text, start);
  }
  if (char === '"' || char === "'") {
    const { value, after } = char === '"' ? doubleQuotedLine(text, start) : singleQuotedLine(text, start);
    if (after < 0) outside();
    return [value, after];
  }
  if (start >= text.length || cannotStartPlain(text, start)) outside();
  let stop = start;
  while (stop < text.length && !',[]{}#'.includes(text[stop]!) && !(text[stop] === ':' && (key || text.charCodeAt(stop + 1) === SPACE))) stop += 1;
  if (text[stop] === '#' || (text[stop] === ':' && !key)) outside();
  const plain = text.slice(start, stop).trimEnd();
  const value = plainValue(plain);
  if (key && typeof value !== 'string') outside();
  return [value, stop];
}

/** What one line of a quoted scalar decodes to. */
export interface QuotedLine {
  readonly value: string;
  /** The index after the closing quote, or -1 when the line ends inside the quotes. */
  readonly after: number;
  /** The length of `value` up to the end of its last escape sequence (escaped spaces are kept). */
  readonly kept: number;
  /** Whether the line ends with a backslash (an escaped line break). */
  readonly escapedBreak: boolean;
}

/**
 * Decodes a double-quoted scalar from `start` (its opening quote, or the character before a
 * continuation line's content) to its closing quote or the end of the line.
 */
export function doubleQuotedLine(text: string, start: number): QuotedLine {
  let value = '';
  let kept = 0;
  let index = start + 1;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === 34) return { value, after: index + 1, kept, escapedBreak: false };
    if (code === 92) {
      if (index + 1 === text.length) return { value, after: -1, kept, escapedBreak: true };
      const escapeChar = text[index + 1]!;
      const digits = HEX_ESCAPES[escapeChar];
      if (digits !== undefined) {
        const hex = text.slice(index + 2, index + 2 + digits);
        if (hex.length !== digits || !/^[0-9a-fA-F]+$/.test(hex)) outside();
        value += String.fromCodePoint(parseInt(hex, 16));
        index += 2 + digits;
      } else {
        const decoded = ESCAPES[escapeChar];
        if (decoded === undefined) outside();
        value += decoded;
        index += 2;
      }
      kept = value.length;
      continue;
    }
    let stop = index + 1;
    while (stop < text.length && text.charCodeAt(stop) !== 34 && text.charCodeAt(stop) !== 92) stop += 1;
    value += text.slice(index, stop);
    index = stop;
  }
  return { value, after: -1, kept, escapedBreak: false };
}

/** As `doubleQuotedLine`, for single quotes (`''` is a quote; there are no other escapes). */
export function singleQuotedLine(text: string, start: number): QuotedLine {
  let value = '';
  let index = start + 1;
  for (;;) {
    const quote = text.indexOf("'", index);
    if (quote < 0) return { value: value + text.slice(index), after: -1, kept: 0, escapedBreak: false };
    value += text.slice(index, quote);
    if (text[quote + 1] !== "'") return { value, after: quote + 1, kept: 0, escapedBreak: false };
    value += "'";
    index = quote + 2;
  }
}
