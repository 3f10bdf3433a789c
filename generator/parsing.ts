/**
 * Parsing: a fast path for the YAML that CRD files are written in.
 *
 * CRD files are machine-written block YAML (controller-gen, Helm charts, hand-kept manifests): block
 * mappings and sequences, plain and quoted scalars, `|`/`>` block scalars, one-line flow
 * collections such as `{}` or `[a, b]`, comments, `---` separators. The general YAML parser
 * (the `yaml` package) builds a concrete syntax tree and a document model before it produces data,
 * which makes the largest files (about 1 MB) cost hundreds of milliseconds; this module reads that
 * subset line by line, straight into data (scalars.ts decodes the scalars and one-line flow
 * collections).
 *
 * It is only a fast path: anything outside the subset — anchors, aliases, tags, directives,
 * explicit keys, multi-line flow collections, tabs, duplicate keys, non-string keys, `__proto__`,
 * and everything the YAML 1.2 specification calls an error — makes `parseDocuments` return
 * `undefined`, and loading.ts parses the text with the `yaml` package instead (which also words
 * every error). On text it accepts, it returns what `parseAllDocuments(text).map(d => d.toJS())`
 * returns with the default (YAML 1.2 core) schema.
 */
import * as scalars from './scalars.js';

/** Characters the subset leaves to the full parser: tabs, CR, controls, NEL, LS, PS, BOM. */
const UNUSUAL = /[\x00-\x09\x0b-\x1f\x7f\x85\u2028\u2029\ufeff]/;

/**
 * The data of every document in a YAML text, as the `yaml` package's `toJS()` gives it (an empty
 * document is `null`), or `undefined` when the text is outside the fast subset.
 */
export function parseDocuments(text: string): unknown[] | undefined {
  if (UNUSUAL.test(text)) return undefined;
  try {
    const lines = text.split('\n');
    if (text.endsWith('\n')) lines.pop(); // the final line break ends the last line, it opens none
    return new Reader(lines).documents();
  } catch (error) {
    if (error instanceof scalars.OutsideSubset) return undefined;
    throw error;
  }
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
        if (text.startsWith('%') || (text.startsWith('...') && (text.length === 3 || text[3] === ' '))) scalars.outside();
        if (!text.startsWith('---') || (text.length > 3 && text[3] !== ' ')) continue;
        if (!scalars.restIsBlank(text, 3)) scalars.outside();
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
    if (scalars.isSequenceEntry(text, column)) value = this.sequence(column);
    else {
      const first = this.keyAt(text, column);
      if (!first) scalars.outside();
      value = this.mapping(column, first);
    }
    if (this.peek() >= 0) scalars.outside();
    return value;
  }

  /** The column of the next content (skipping blank and comment lines), or -1 at the document's end. */
  private peek(): number {
    if (this.column >= 0) return this.column;
    while (this.line < this.end) {
      const text = this.lines[this.line]!;
      const index = scalars.skipSpaces(text, 0);
      if (index < text.length && text.charCodeAt(index) !== scalars.HASH) return index;
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
    if (scalars.isSequenceEntry(text, column)) {
      return column > parent || (sequenceAtParent && column === parent) ? this.sequence(column) : null;
    }
    if (column <= parent) return null;
    const first = this.keyAt(text, column);
    if (first) return this.mapping(column, first);
    if (text[column] === '|' || text[column] === '>') scalars.outside();
    return this.scalar(text, column, parent);
  }

  private sequence(indent: number): unknown[] {
    const items: unknown[] = [];
    for (;;) {
      const column = this.peek();
      if (column < indent) break;
      if (column > indent) scalars.outside();
      const text = this.lines[this.line]!;
      if (!scalars.isSequenceEntry(text, column)) break;
      const start = scalars.skipSpaces(text, column + 1);
      if (scalars.restIsBlank(text, column + 1)) {
        this.nextLine();
        items.push(this.block(indent, false));
      } else if (scalars.isSequenceEntry(text, start)) {
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
      scalars.setKey(result, key, this.value(text, after, indent));
      const column = this.peek();
      if (column < indent) break;
      if (column > indent) scalars.outside();
      const next = this.lines[this.line]!;
      if (scalars.isSequenceEntry(next, column)) break;
      entry = this.keyAt(next, column);
      if (!entry) scalars.outside();
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
      const { value: key, after } = char === '"' ? scalars.doubleQuotedLine(text, column) : scalars.singleQuotedLine(text, column);
      if (after < 0 || text[after] !== ':') return undefined;
      if (after + 1 < text.length && text.charCodeAt(after + 1) !== scalars.SPACE) scalars.outside();
      return [key, after + 1];
    }
    let colon = text.indexOf(':', column);
    while (colon >= 0 && colon + 1 < text.length && text.charCodeAt(colon + 1) !== scalars.SPACE) colon = text.indexOf(':', colon + 1);
    if (colon < 0) return undefined;
    const comment = text.indexOf(' #', column);
    if (comment >= 0 && comment < colon) return undefined;
    if (scalars.cannotStartPlain(text, column) || colon - column > 1024) scalars.outside();
    const key = text.slice(column, colon).trimEnd();
    if (typeof scalars.plainValue(key) !== 'string') scalars.outside();
    return [key, colon + 1];
  }

  /** The value after a key's colon (at `from`) of a mapping at `indent`; moves past it. */
  private value(text: string, from: number, indent: number): unknown {
    if (scalars.restIsBlank(text, from)) {
      this.nextLine();
      return this.block(indent, true);
    }
    return this.scalar(text, scalars.skipSpaces(text, from), indent);
  }

  /** A scalar or a one-line flow collection at `start` whose parent node is at `parent`; moves past it. */
  private scalar(text: string, start: number, parent: number): unknown {
    const char = text[start];
    if (char === '|' || char === '>') return this.blockScalar(text, start, parent);
    if (char === '"' || char === "'") return this.quoted(text, start, parent);
    if (char === '[' || char === '{') {
      const [value, after] = scalars.flowCollection(text, start);
      if (!scalars.restIsBlank(text, after)) scalars.outside();
      this.nextLine();
      return value;
    }
    if (scalars.cannotStartPlain(text, start)) scalars.outside();
    return this.plain(text, start, parent);
  }

  /** A plain scalar, possibly continued on more-indented lines (folded into one string). */
  private plain(text: string, start: number, parent: number): unknown {
    const comment = text.indexOf(' #', start);
    let value = text.slice(start, comment < 0 ? text.length : comment).trimEnd();
    if (value.includes(': ') || value.endsWith(':')) scalars.outside();
    this.nextLine();
    if (comment >= 0) return scalars.plainValue(value);
    let breaks = 0;
    let folded = false;
    while (this.line < this.end) {
      const next = this.lines[this.line]!;
      const index = scalars.skipSpaces(next, 0);
      if (index === next.length) {
        breaks += 1;
        this.line += 1;
        continue;
      }
      if (index <= parent || next.charCodeAt(index) === scalars.HASH) break;
      if (next.includes(' #', index)) scalars.outside();
      const part = next.slice(index).trimEnd();
      if (part.includes(': ') || part.endsWith(':')) scalars.outside();
      value += breaks === 0 ? ` ${part}` : '\n'.repeat(breaks) + part;
      breaks = 0;
      folded = true;
      this.line += 1;
    }
    return folded ? value : scalars.plainValue(value);
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
    if (!scalars.restIsBlank(text, index)) scalars.outside();
    this.nextLine();
    const lines: string[] = [];
    let leading = 0;
    while (this.line < this.end) {
      const next = this.lines[this.line]!;
      const spaces = scalars.skipSpaces(next, 0);
      if (spaces === next.length) {
        if (indent < 0) leading = Math.max(leading, spaces);
        lines.push(indent >= 0 && spaces > indent ? next.slice(indent) : '');
      } else {
        if (indent < 0) {
          if (spaces <= parent) break;
          if (leading > spaces) scalars.outside();
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
      if (chomping === 'keep' && lines.length > 0) scalars.outside();
      return '';
    }
    const content = lines.slice(0, last + 1);
    let body: string;
    if (literal) {
      body = content.join('\n');
    } else {
      if (content[0] === '' || content.some((line) => line.charCodeAt(0) === scalars.SPACE)) scalars.outside();
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
    let line = double ? scalars.doubleQuotedLine(text, start) : scalars.singleQuotedLine(text, start);
    let value = line.value;
    let current = text;
    while (line.after < 0) {
      // The line ended inside the quotes: unescaped trailing spaces are dropped, the break is folded
      // (one break is a space, n breaks are n - 1 newlines); an escaped break joins the lines.
      let end = value.length;
      if (!line.escapedBreak) while (end > line.kept && value.charCodeAt(end - 1) === scalars.SPACE) end -= 1;
      value = value.slice(0, end);
      let breaks = 0;
      for (;;) {
        this.line += 1;
        if (this.line >= this.end) scalars.outside();
        current = this.lines[this.line]!;
        if (scalars.skipSpaces(current, 0) < current.length) break;
        breaks += 1;
      }
      const index = scalars.skipSpaces(current, 0);
      if (index <= parent || (line.escapedBreak && breaks > 0)) scalars.outside();
      if (!line.escapedBreak) value += breaks === 0 ? ' ' : '\n'.repeat(breaks);
      const offset = value.length;
      line = double ? scalars.doubleQuotedLine(current, index - 1) : scalars.singleQuotedLine(current, index - 1);
      value += line.value;
      line = { ...line, kept: offset + line.kept };
    }
    if (!scalars.restIsBlank(current, line.after)) scalars.outside();
    this.nextLine();
    return value;
  }
}
