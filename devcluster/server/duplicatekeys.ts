/**
 * Duplicate keys in JSON request bodies (D-CRD-9): `JSON.parse` silently keeps the last of two
 * equal keys, while the upstream server treats them like unknown fields — a Warning header per
 * field with `fieldValidation=Warn`, a 400 with `Strict`. This module finds them by scanning the
 * body text once; the request handler decides what to do with them (negotiation and decoding stay
 * in their own modules).
 */

/**
 * Returns the dotted paths (`spec.size`, `spec.items[0].name`) of every key that appears more than
 * once in the same JSON object, in document order, each path once. `text` must be valid JSON (the
 * caller parses it first); on malformed input the result is unspecified but the function never throws.
 */
export function findDuplicateKeys(text: string): string[] {
  const scanner = new Scanner(text);
  try {
    scanner.value('');
  } catch {
    /* malformed input: report what was found so far */
  }
  return [...scanner.duplicates];
}

/** JSON whitespace: space, tab, CR, LF. */
function isSpace(ch: number): boolean {
  return ch === 0x20 || ch === 0x09 || ch === 0x0d || ch === 0x0a;
}

/** What ends a bare scalar: `,` `]` `}` or whitespace. */
function isDelimiter(ch: number): boolean {
  return ch === 0x2c || ch === 0x5d || ch === 0x7d || isSpace(ch);
}

class Scanner {
  private pos = 0;
  readonly duplicates = new Set<string>();

  constructor(private readonly text: string) {}

  value(path: string): void {
    this.skipSpace();
    const ch = this.text[this.pos];
    if (ch === '{') this.object(path);
    else if (ch === '[') this.array(path);
    else if (ch === '"') this.string();
    else this.scalar();
  }

  private object(path: string): void {
    this.pos++; // {
    const seen = new Set<string>();
    this.skipSpace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return;
    }
    for (;;) {
      this.skipSpace();
      const key = this.string();
      const duplicate = seen.has(key);
      seen.add(key);
      this.skipSpace();
      this.expect(':');
      this.skipSpace();
      // Paths are only spelled out where they can be reported: duplicates and containers.
      const child = duplicate || this.atContainer() ? (path ? `${path}.${key}` : key) : '';
      if (duplicate) this.duplicates.add(child);
      this.value(child);
      this.skipSpace();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.expect('}');
      return;
    }
  }

  private array(path: string): void {
    this.pos++; // [
    this.skipSpace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return;
    }
    for (let i = 0; ; i++) {
      this.skipSpace();
      this.value(this.atContainer() ? `${path}[${i}]` : '');
      this.skipSpace();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.expect(']');
      return;
    }
  }

  private atContainer(): boolean {
    const ch = this.text.charCodeAt(this.pos);
    return ch === 0x7b || ch === 0x5b; // { [
  }

  /** Reads a string literal at the cursor and returns its decoded value. */
  private string(): string {
    const start = this.pos;
    this.expect('"');
    let escaped = false;
    while (this.pos < this.text.length) {
      const ch = this.text.charCodeAt(this.pos);
      if (ch === 0x5c) {
        escaped = true;
        this.pos += 2;
        continue;
      } // backslash
      this.pos++;
      if (ch === 0x22) return escaped ? (JSON.parse(this.text.slice(start, this.pos)) as string) : this.text.slice(start + 1, this.pos - 1);
    }
    throw new Error('unterminated string');
  }

  private scalar(): void {
    const start = this.pos;
    while (this.pos < this.text.length && !isDelimiter(this.text.charCodeAt(this.pos))) this.pos++;
    if (this.pos === start) throw new Error('unexpected token');
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && isSpace(this.text.charCodeAt(this.pos))) this.pos++;
  }

  private expect(ch: string): void {
    if (this.text[this.pos] !== ch) throw new Error(`expected ${ch}`);
    this.pos++;
  }
}
