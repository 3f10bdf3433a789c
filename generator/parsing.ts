/**
 * Parsing: a fast path for the YAML that CRD files are written in.
 *
 * CRD files are machine-written block YAML (controller-gen, Helm charts, hand-kept manifests): block
 * mappings and sequences, plain and quoted scalars, `|`/`>` block scalars, one-line flow
 * collections such as `{}` or `[a, b]`, comments, `---` separators. The general YAML parser
 * (the `yaml` package) builds a concrete syntax tree and a document model before it produces data,
 * which makes the largest files (about 1 MB) cost hundreds of milliseconds; this module reads that
 * subset line by line, straight into data.
 *
 * It is only a fast path: anything outside the subset — anchors, aliases, tags, directives,
 * explicit keys, multi-line flow collections, tabs, duplicate keys, non-string keys, `__proto__`,
 * and everything the YAML 1.2 specification calls an error — makes `parseDocuments` return
 * `undefined`, and loading.ts parses the text with the `yaml` package instead (which also words
 * every error). On text it accepts, it returns what `parseAllDocuments(text).map(d => d.toJS())`
 * returns with the default (YAML 1.2 core) schema.
 */

/** Signals text outside the subset; caught in `parseDocuments`, never seen by callers. */
class OutsideSubset extends Error {
  readonly code = 'outside-subset';
}

/** Characters the subset leaves to the full parser: tabs, CR, controls, NEL, LS, PS, BOM. */
const UNUSUAL = /[\x00-\x09\x0b-\x1f\x7f\x85\u2028\u2029\ufeff]/;
const SPACE = 32;
const HASH = 35;
const ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0', a: '\x07', b: '\b', t: '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b', ' ': ' ',
  '"': '"', '/': '/', '\\': '\\', N: '\x85', _: '\xa0', L: '\u2028', P: '\u2029',
};
const HEX_ESCAPES: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/**
 * The data of every document in a YAML text, as the `yaml` package's `toJS()` gives it (an empty
 * document is `null`), or `undefined` when the text is outside the fast subset.
 */
export function parseDocuments(text: string): unknown[] | undefined {
  if (UNUSUAL.test(text)) return undefined;
  try {
    const lines = text.split('\n');
    if (text.endsWith('\n')) lines.pop();  // the final line break ends the last line, it opens none
    return new Reader(lines).documents();
  } catch (error) {
    if (error instanceof OutsideSubset) return undefined;
    throw error;
  }
}

/** The scalar a plain (unquoted) text stands for under the YAML 1.2 core schema. */
export function plainValue(text: string): unknown {
  const first = text.charCodeAt(0);
  // Fast exit: most plain scalars start with a letter that no core-schema value starts with.
  if ((first >= 97 && first <= 122 && first !== 102 && first !== 110 && first !== 116) ||
      (first >= 65 && first <= 90 && first !== 70 && first !== 78 && first !== 84)) return text;
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

function outside(): never {
  throw new OutsideSubset('outside the fast YAML subset');
}

/** Index of the first non-space character at or after `from` (the length when there is none). */
function skipSpaces(text: string, from: number): number {
  let index = from;
  while (text.charCodeAt(index) === SPACE) index += 1;
  return index;
}

/** Whether the rest of a line from `from` is spaces, optionally followed by a comment after a space. */
function restIsBlank(text: string, from: number): boolean {
  const index = skipSpaces(text, from);
  return index === text.length || (text.charCodeAt(index) === HASH && index > from);
}

function isSequenceEntry(text: string, column: number): boolean {
  return text.charCodeAt(column) === 45 && (column + 1 === text.length || text.charCodeAt(column + 1) === SPACE);
}

/** Whether a character cannot start a plain scalar (`-`, `?` and `:` only when a space follows). */
function cannotStartPlain(text: string, index: number): boolean {
  const char = text[index]!;
  if (char === '-' || char === '?' || char === ':') return index + 1 === text.length || text.charCodeAt(index + 1) === SPACE;
  return ',[]{}#&*!|>\'"%@`'.includes(char);
}

/** Sets a key of a mapping, refusing duplicates and `__proto__` (left to the full parser). */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__' || Object.hasOwn(target, key)) outside();
  target[key] = value;
}

/** Reads the documents of a text line by line; one instance per text. */
class Reader {
  /** The current line. */
  private line = 0;
  /** The end (exclusive) of the current document's lines. */
  private end = 0;
  /** When not -1, the current line's content starts here (after a sequence entry's `- `). */
  private column = -1;

  constructor(private readonly lines: readonly string[]) {}

  documents(): unknown[] {
    const documents: unknown[] = [];
    let start = 0;
    let explicit = false;
    for (let index = 0; index <= this.lines.length; index += 1) {
      if (index < this.lines.length) {
        const text = this.lines[index]!;
        if (text.startsWith('%') || (text.startsWith('...') && (text.length === 3 || text[3] === ' '))) outside();
        if (!text.startsWith('---') || (text.length > 3 && text[3] !== ' ')) continue;
        if (!restIsBlank(text, 3)) outside();
      }
      if (explicit || this.hasContent(start, index)) documents.push(this.document(start, index));
      start = index + 1;
      explicit = true;
    }
    return documents;
  }

  private hasContent(start: number, end: number): boolean {
    this.line = start;
    this.end = end;
    this.column = -1;
    return this.peek() >= 0;
  }

  /** A document's data: a block mapping or sequence (or null when empty). */
  private document(start: number, end: number): unknown {
    this.line = start;
    this.end = end;
    this.column = -1;
    const column = this.peek();
    if (column < 0) return null;
    const text = this.lines[this.line]!;
    let value: unknown;
    if (isSequenceEntry(text, column)) value = this.sequence(column);
    else {
      const first = this.keyAt(text, column);
      if (!first) outside();
      value = this.mapping(column, first);
    }
    if (this.peek() >= 0) outside();
    return value;
  }

  /** The column of the next content (skipping blank and comment lines), or -1 at the document's end. */
  private peek(): number {
    if (this.column >= 0) return this.column;
    while (this.line < this.end) {
      const text = this.lines[this.line]!;
      const index = skipSpaces(text, 0);
      if (index < text.length && text.charCodeAt(index) !== HASH) return index;
      this.line += 1;
    }
    return -1;
  }

  private nextLine(): void {
    this.line += 1;
    this.column = -1;
  }

  /**
   * The node that starts on the lines after a `key:` or `-` (whose indentation is `parent`):
   * content indented deeper than the parent, or a sequence at the parent's indentation when
   * `sequenceAtParent`; `null` when there is none.
   */
  private block(parent: number, sequenceAtParent: boolean): unknown {
    const column = this.peek();
    if (column < 0) return null;
    const text = this.lines[this.line]!;
    if (isSequenceEntry(text, column)) {
      return column > parent || (sequenceAtParent && column === parent) ? this.sequence(column) : null;
    }
    if (column <= parent) return null;
    const first = this.keyAt(text, column);
    if (first) return this.mapping(column, first);
    if (text[column] === '|' || text[column] === '>') outside();
    return this.scalar(text, column, parent);
  }

  private sequence(indent: number): unknown[] {
    const items: unknown[] = [];
    for (;;) {
      const column = this.peek();
      if (column < indent) break;
      if (column > indent) outside();
      const text = this.lines[this.line]!;
      if (!isSequenceEntry(text, column)) break;
      const start = skipSpaces(text, column + 1);
      if (restIsBlank(text, column + 1)) {
        this.nextLine();
        items.push(this.block(indent, false));
      } else if (isSequenceEntry(text, start)) {
        this.column = start;
        items.push(this.sequence(start));
      } else {
        const first = this.keyAt(text, start);
        if (first) {
          this.column = start;
          items.push(this.mapping(start, first));
        } else {
          items.push(this.scalar(text, start, indent));
        }
      }
    }
    return items;
  }

  /** A block mapping whose keys are at `indent`; `first` is its first key, already read. */
  private mapping(indent: number, first: [string, number]): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    let entry: [string, number] | undefined = first;
    for (;;) {
      const text = this.lines[this.line]!;
      const [key, after] = entry;
      setKey(result, key, this.value(text, after, indent));
      const column = this.peek();
      if (column < indent) break;
      if (column > indent) outside();
      const next = this.lines[this.line]!;
      if (isSequenceEntry(next, column)) break;
      entry = this.keyAt(next, column);
      if (!entry) outside();
    }
    return result;
  }

  /**
   * The key of a `key: value` line at `column` and the index after its colon, or `undefined` when
   * the line is not a mapping entry.
   */
  private keyAt(text: string, column: number): [string, number] | undefined {
    const char = text[column];
    if (char === '"' || char === "'") {
      const { value: key, after } = char === '"' ? doubleQuotedLine(text, column) : singleQuotedLine(text, column);
      if (after < 0 || text[after] !== ':') return undefined;
      if (after + 1 < text.length && text.charCodeAt(after + 1) !== SPACE) outside();
      return [key, after + 1];
    }
    let colon = text.indexOf(':', column);
    while (colon >= 0 && colon + 1 < text.length && text.charCodeAt(colon + 1) !== SPACE) colon = text.indexOf(':', colon + 1);
    if (colon < 0) return undefined;
    const comment = text.indexOf(' #', column);
    if (comment >= 0 && comment < colon) return undefined;
    if (cannotStartPlain(text, column) || colon - column > 1024) outside();
    const key = text.slice(column, colon).trimEnd();
    if (typeof plainValue(key) !== 'string') outside();
    return [key, colon + 1];
  }

  /** The value after a key's colon (at `from`) of a mapping at `indent`; moves past it. */
  private value(text: string, from: number, indent: number): unknown {
    if (restIsBlank(text, from)) {
      this.nextLine();
      return this.block(indent, true);
    }
    return this.scalar(text, skipSpaces(text, from), indent);
  }

  /** A scalar or a one-line flow collection at `start` whose parent node is at `parent`; moves past it. */
  private scalar(text: string, start: number, parent: number): unknown {
    const char = text[start];
    if (char === '|' || char === '>') return this.blockScalar(text, start, parent);
    if (char === '"' || char === "'") return this.quoted(text, start, parent);
    if (char === '[' || char === '{') {
      const [value, after] = this.flow(text, start);
      if (!restIsBlank(text, after)) outside();
      this.nextLine();
      return value;
    }
    if (cannotStartPlain(text, start)) outside();
    return this.plain(text, start, parent);
  }

  /** A plain scalar, possibly continued on more-indented lines (folded into one string). */
  private plain(text: string, start: number, parent: number): unknown {
    const comment = text.indexOf(' #', start);
    let value = text.slice(start, comment < 0 ? text.length : comment).trimEnd();
    if (value.includes(': ') || value.endsWith(':')) outside();
    this.nextLine();
    if (comment >= 0) return plainValue(value);
    let breaks = 0;
    let folded = false;
    while (this.line < this.end) {
      const next = this.lines[this.line]!;
      const index = skipSpaces(next, 0);
      if (index === next.length) {
        breaks += 1;
        this.line += 1;
        continue;
      }
      if (index <= parent || next.charCodeAt(index) === HASH) break;
      if (next.includes(' #', index)) outside();
      const part = next.slice(index).trimEnd();
      if (part.includes(': ') || part.endsWith(':')) outside();
      value += breaks === 0 ? ` ${part}` : '\n'.repeat(breaks) + part;
      breaks = 0;
      folded = true;
      this.line += 1;
    }
    return folded ? value : plainValue(value);
  }

  /** A `|` or `>` block scalar whose header is at `start`. */
  private blockScalar(text: string, start: number, parent: number): string {
    const literal = text[start] === '|';
    // Header: chomping (`-` strip, `+` keep, else clip) and an indentation indicator, in either order.
    let index = start + 1;
    let chomping = 'clip';
    let indent = -1;
    for (let count = 0; count < 2; count += 1) {
      const char = text[index];
      if (chomping === 'clip' && (char === '-' || char === '+')) chomping = char === '-' ? 'strip' : 'keep';
      else if (indent < 0 && char !== undefined && char >= '1' && char <= '9') indent = parent + Number(char);
      else break;
      index += 1;
    }
    if (!restIsBlank(text, index)) outside();
    this.nextLine();
    const lines: string[] = [];
    let leading = 0;
    while (this.line < this.end) {
      const next = this.lines[this.line]!;
      const spaces = skipSpaces(next, 0);
      if (spaces === next.length) {
        if (indent < 0) leading = Math.max(leading, spaces);
        lines.push(indent >= 0 && spaces > indent ? next.slice(indent) : '');
      } else {
        if (indent < 0) {
          if (spaces <= parent) break;
          if (leading > spaces) outside();
          indent = spaces;
        } else if (spaces < indent) {
          break;
        }
        lines.push(next.slice(indent));
      }
      this.line += 1;
    }
    let last = lines.length - 1;
    while (last >= 0 && lines[last] === '') last -= 1;
    if (last < 0) {
      if (chomping === 'keep' && lines.length > 0) outside();
      return '';
    }
    const content = lines.slice(0, last + 1);
    let body: string;
    if (literal) {
      body = content.join('\n');
    } else {
      if (content[0] === '' || content.some((line) => line.charCodeAt(0) === SPACE)) outside();
      body = content[0]!;
      let breaks = 0;
      for (let position = 1; position < content.length; position += 1) {
        const line = content[position]!;
        if (line === '') {
          breaks += 1;
          continue;
        }
        body += breaks === 0 ? ` ${line}` : '\n'.repeat(breaks) + line;
        breaks = 0;
      }
    }
    if (chomping === 'strip') return body;
    return chomping === 'clip' ? `${body}\n` : `${body}\n${'\n'.repeat(lines.length - 1 - last)}`;
  }

  /** A quoted scalar starting at `start`, possibly over several lines (folded); moves past it. */
  private quoted(text: string, start: number, parent: number): string {
    const double = text[start] === '"';
    let line = double ? doubleQuotedLine(text, start) : singleQuotedLine(text, start);
    let value = line.value;
    let current = text;
    while (line.after < 0) {
      // The line ended inside the quotes: unescaped trailing spaces are dropped, the break is folded
      // (one break is a space, n breaks are n - 1 newlines); an escaped break joins the lines.
      let end = value.length;
      if (!line.escapedBreak) while (end > line.kept && value.charCodeAt(end - 1) === SPACE) end -= 1;
      value = value.slice(0, end);
      let breaks = 0;
      for (;;) {
        this.line += 1;
        if (this.line >= this.end) outside();
        current = this.lines[this.line]!;
        if (skipSpaces(current, 0) < current.length) break;
        breaks += 1;
      }
      const index = skipSpaces(current, 0);
      if (index <= parent || (line.escapedBreak && breaks > 0)) outside();
      if (!line.escapedBreak) value += breaks === 0 ? ' ' : '\n'.repeat(breaks);
      const offset = value.length;
      line = double ? doubleQuotedLine(current, index - 1) : singleQuotedLine(current, index - 1);
      value += line.value;
      line = { ...line, kept: offset + line.kept };
    }
    if (!restIsBlank(current, line.after)) outside();
    this.nextLine();
    return value;
  }

  /** A flow collection closed on its own line: the value and the index after it. */
  private flow(text: string, start: number): [unknown, number] {
    const open = text[start];
    const close = open === '[' ? ']' : '}';
    const items: unknown[] = [];
    const map: Record<string, unknown> = {};
    let index = skipSpaces(text, start + 1);
    if (text[index] === close) return [open === '[' ? items : map, index + 1];
    for (;;) {
      if (open === '[') {
        const [item, after] = this.flowItem(text, index);
        items.push(item);
        index = skipSpaces(text, after);
      } else {
        const [key, afterKey] = this.flowItem(text, index, true);
        if (typeof key !== 'string' || text[afterKey] !== ':' || text.charCodeAt(afterKey + 1) !== SPACE) outside();
        const [value, after] = this.flowItem(text, skipSpaces(text, afterKey + 1));
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
  private flowItem(text: string, start: number, key = false): [unknown, number] {
    const char = text[start];
    if (char === '[' || char === '{') {
      if (key) outside();
      return this.flow(text, start);
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
}

/** What one line of a quoted scalar decodes to. */
interface QuotedLine {
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
function doubleQuotedLine(text: string, start: number): QuotedLine {
  let value = '';
  let kept = 0;
  let index = start + 1;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === 34) return { value, after: index + 1, kept, escapedBreak: false };
    if (code === 92) {
      if (index + 1 === text.length) return { value, after: -1, kept, escapedBreak: true };
      const escape = text[index + 1]!;
      const digits = HEX_ESCAPES[escape];
      if (digits !== undefined) {
        const hex = text.slice(index + 2, index + 2 + digits);
        if (hex.length !== digits || !/^[0-9a-fA-F]+$/.test(hex)) outside();
        value += String.fromCodePoint(parseInt(hex, 16));
        index += 2 + digits;
      } else {
        const decoded = ESCAPES[escape];
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
function singleQuotedLine(text: string, start: number): QuotedLine {
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
