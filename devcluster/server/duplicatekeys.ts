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
    if (this.text[this.pos] === '}') { this.pos++; return; }
    for (;;) {
      this.skipSpace();
      const key = this.string();
      const child = path ? `${path}.${key}` : key;
      if (seen.has(key)) this.duplicates.add(child);
      seen.add(key);
      this.skipSpace();
      this.expect(':');
      this.value(child);
      this.skipSpace();
      if (this.text[this.pos] === ',') { this.pos++; continue; }
      this.expect('}');
      return;
    }
  }

  private array(path: string): void {
    this.pos++; // [
    this.skipSpace();
    if (this.text[this.pos] === ']') { this.pos++; return; }
    for (let i = 0; ; i++) {
      this.value(`${path}[${i}]`);
      this.skipSpace();
      if (this.text[this.pos] === ',') { this.pos++; continue; }
      this.expect(']');
      return;
    }
  }

  /** Reads a string literal at the cursor and returns its decoded value. */
  private string(): string {
    const start = this.pos;
    this.expect('"');
    while (this.pos < this.text.length) {
      const ch = this.text[this.pos];
      if (ch === '\\') { this.pos += 2; continue; }
      this.pos++;
      if (ch === '"') return JSON.parse(this.text.slice(start, this.pos)) as string;
    }
    throw new Error('unterminated string');
  }

  private scalar(): void {
    const start = this.pos;
    while (this.pos < this.text.length && !',]} \t\r\n'.includes(this.text[this.pos]!)) this.pos++;
    if (this.pos === start) throw new Error('unexpected token');
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && ' \t\r\n'.includes(this.text[this.pos]!)) this.pos++;
  }

  private expect(ch: string): void {
    if (this.text[this.pos] !== ch) throw new Error(`expected ${ch}`);
    this.pos++;
  }
}
