/**
 * Patterns: a string that a schema's `pattern` accepts, for the sample objects.
 *
 * The API server checks `pattern` with Go's regular expressions (RE2), searching anywhere in the
 * value unless the pattern is anchored. Most patterns in real CRDs are small: a DNS label, a
 * quantity, a version, a few alternatives. For those a matching string can be read off the
 * pattern itself: take each literal, the first allowed character of each class, the first
 * alternative, and the fewest repetitions (more, when the value must be longer). This module does
 * exactly that on a parsed pattern, and gives up (returns undefined) on anything it does not
 * understand — back-references, look-arounds, inline flags — rather than guess. Callers check the
 * result against the pattern with JavaScript's engine, which agrees with RE2 on this subset.
 */

/** A parsed pattern: the subset of RE2 syntax whose shortest match is easy to derive. */
type Node =
  | { readonly type: 'sequence'; readonly items: readonly Node[] }
  | { readonly type: 'alternation'; readonly options: readonly Node[] }
  | { readonly type: 'literal'; readonly text: string }
  | { readonly type: 'class'; readonly ranges: readonly (readonly [number, number])[]; readonly negated: boolean }
  | { readonly type: 'repeat'; readonly item: Node; readonly min: number; readonly max: number };

/** Thrown inside the parser for syntax this module does not handle. */
class Unsupported extends Error {}

/** Characters tried, in order, for a class: friendly ones first. */
const PREFERRED = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-._ ';

const DIGITS: readonly (readonly [number, number])[] = [[48, 57]];
const WORD: readonly (readonly [number, number])[] = [
  [48, 57],
  [65, 90],
  [95, 95],
  [97, 122],
];
const SPACE: readonly (readonly [number, number])[] = [
  [9, 10],
  [12, 13],
  [32, 32],
];

/**
 * A short string that the pattern matches, at least `minLength` characters long where the pattern
 * can repeat something to get there; undefined when the pattern uses syntax this module does not
 * handle or the result does not match.
 */
export function matchingString(pattern: string, minLength = 0): string | undefined {
  let tree: Node;
  try {
    const parser = new Parser(pattern);
    tree = parser.parse();
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  const budget = { missing: 0 };
  const shortest = generate(tree, budget);
  if (shortest === undefined) return undefined;
  let candidate = shortest;
  if (shortest.length < minLength) {
    budget.missing = minLength - shortest.length;
    candidate = generate(tree, budget) ?? shortest;
  }
  return matches(pattern, candidate) ? candidate : undefined;
}

/** Whether JavaScript's engine finds the pattern in the value (as RE2 searches, unanchored). */
export function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    try {
      return new RegExp(pattern).test(value);
    } catch {
      return false;
    }
  }
}

/** Produces the string of a node; repetitions take extra rounds while `budget.missing` > 0. */
function generate(node: Node, budget: { missing: number }): string | undefined {
  switch (node.type) {
    case 'literal':
      return node.text;
    case 'sequence': {
      let text = '';
      for (const item of node.items) {
        const part = generate(item, budget);
        if (part === undefined) return undefined;
        text += part;
      }
      return text;
    }
    case 'alternation': {
      for (const option of node.options) {
        const text = generate(option, budget);
        if (text !== undefined) return text;
      }
      return undefined;
    }
    case 'class':
      return pickCharacter(node.ranges, node.negated);
    case 'repeat': {
      let text = '';
      for (let count = 0; count < node.min; count += 1) {
        const part = generate(node.item, budget);
        if (part === undefined) return undefined;
        text += part;
      }
      for (let count = node.min; count < node.max && budget.missing > 0; count += 1) {
        const before = budget.missing;
        const part = generate(node.item, budget);
        if (part === undefined || part.length === 0) break;
        text += part;
        // Repetitions inside the item took their own share of the budget already.
        budget.missing -= part.length - (before - budget.missing);
      }
      return text;
    }
  }
}

function pickCharacter(ranges: readonly (readonly [number, number])[], negated: boolean): string | undefined {
  const allowed = (code: number): boolean => ranges.some(([low, high]) => code >= low && code <= high) !== negated;
  for (const character of PREFERRED) if (allowed(character.charCodeAt(0))) return character;
  if (!negated && ranges.length > 0) return String.fromCodePoint(ranges[0]![0]);
  return undefined;
}

/** A recursive-descent parser of the supported subset. */
class Parser {
  private position = 0;

  constructor(private readonly pattern: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.position < this.pattern.length) throw new Unsupported(`unexpected ${this.pattern[this.position]}`);
    return node;
  }

  private peek(): string | undefined {
    return this.pattern[this.position];
  }

  private next(): string {
    const character = this.pattern[this.position];
    if (character === undefined) throw new Unsupported('unexpected end');
    this.position += 1;
    return character;
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.position += 1;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : { type: 'alternation', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    for (let character = this.peek(); character !== undefined && character !== '|' && character !== ')'; character = this.peek()) {
      const atom = this.atom();
      if (atom !== undefined) items.push(this.quantified(atom));
    }
    return { type: 'sequence', items };
  }

  /** One atom; undefined for anchors, which match the empty string at the ends. */
  private atom(): Node | undefined {
    const character = this.next();
    switch (character) {
      case '^':
      case '$':
        return undefined;
      case '.':
        return { type: 'class', ranges: [[10, 10]], negated: true };
      case '(': {
        if (this.peek() === '?') {
          this.position += 1;
          if (this.next() !== ':') throw new Unsupported('group flags');
        }
        const inner = this.alternation();
        if (this.next() !== ')') throw new Unsupported('unclosed group');
        return inner;
      }
      case '[':
        return this.characterClass();
      case '\\':
        return this.escape();
      case '*':
      case '+':
      case '?':
        throw new Unsupported('quantifier without an atom');
      default:
        return { type: 'literal', text: character };
    }
  }

  private escape(): Node {
    const character = this.next();
    switch (character) {
      case 'd':
        return { type: 'class', ranges: DIGITS, negated: false };
      case 'D':
        return { type: 'class', ranges: DIGITS, negated: true };
      case 'w':
        return { type: 'class', ranges: WORD, negated: false };
      case 'W':
        return { type: 'class', ranges: WORD, negated: true };
      case 's':
        return { type: 'class', ranges: SPACE, negated: false };
      case 'S':
        return { type: 'class', ranges: SPACE, negated: true };
      case 'A':
      case 'z':
        return { type: 'sequence', items: [] };
      default:
        if (/[A-Za-z0-9]/.test(character)) throw new Unsupported(`escape \\${character}`);
        return { type: 'literal', text: character };
    }
  }

  private characterClass(): Node {
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.position += 1;
    }
    const ranges: (readonly [number, number])[] = [];
    let first = true;
    for (;;) {
      const character = this.next();
      if (character === ']' && !first) break;
      first = false;
      if (character === '[') throw new Unsupported('nested class');
      let low: number;
      if (character === '\\') {
        const escaped = this.next();
        if (escaped === 'd') ranges.push(...DIGITS);
        else if (escaped === 'w') ranges.push(...WORD);
        else if (escaped === 's') ranges.push(...SPACE);
        else if (/[A-Za-z0-9]/.test(escaped)) throw new Unsupported(`escape \\${escaped} in a class`);
        else {
          low = escaped.charCodeAt(0);
          ranges.push(this.rangeFrom(low));
        }
        continue;
      }
      low = character.charCodeAt(0);
      ranges.push(this.rangeFrom(low));
    }
    return { type: 'class', ranges, negated };
  }

  /** A single character or, after `-`, a range up to the next one. */
  private rangeFrom(low: number): readonly [number, number] {
    if (this.peek() === '-' && this.pattern[this.position + 1] !== ']' && this.pattern[this.position + 1] !== undefined) {
      this.position += 1;
      let high = this.next();
      if (high === '\\') high = this.next();
      return [low, high.charCodeAt(0)];
    }
    return [low, low];
  }

  private quantified(atom: Node): Node {
    let node = atom;
    for (;;) {
      const character = this.peek();
      let min: number;
      let max: number;
      if (character === '*') [min, max] = [0, Number.POSITIVE_INFINITY];
      else if (character === '+') [min, max] = [1, Number.POSITIVE_INFINITY];
      else if (character === '?') [min, max] = [0, 1];
      else if (character === '{') {
        const match = /^\{(\d+)(,(\d*))?\}/.exec(this.pattern.slice(this.position));
        if (!match) return node;
        min = Number(match[1]);
        max = match[2] === undefined ? min : match[3] === '' ? Number.POSITIVE_INFINITY : Number(match[3]);
        this.position += match[0].length - 1;
      } else return node;
      this.position += 1;
      if (this.peek() === '?') this.position += 1;
      node = { type: 'repeat', item: node, min, max };
    }
  }
}
