/**
 * A cheap look at a JSON body's shape while it arrives, before anything parses it (R-SEC-7).
 *
 * `JSON.parse` runs on the event loop and cannot be interrupted. Its time grows with the number of
 * objects and arrays far more than with the bytes: 6 MB of `[[[[…]]]]` or of `[],[],[],…` takes
 * it a second or more, during which the operator answers nothing — not the API server's other
 * admission requests, not the kubelet's probes. And a body nested ten thousand levels deep overflows
 * the stack of whatever walks it recursively afterwards. A webhook server therefore looks at each
 * chunk as it arrives and counts two things, without building anything: how deep the nesting is,
 * and how many items (objects, arrays, and the members and items that follow a comma) the body has.
 * Past a limit the body is refused before it is parsed, at the cost of one pass over its bytes in
 * chunk-sized slices.
 *
 * The scan follows JSON's grammar only as far as needed: strings (with their escapes) are skipped,
 * so brackets and commas inside them do not count. It does not validate: a malformed body passes
 * the scan and fails the parse.
 */

/** Why a body's shape is refused. */
export type ShapeProblem = 'too-deep' | 'too-many-items';

/** The limits of a body's shape. */
export interface ShapeLimits {
  /** The deepest nesting of objects and arrays. */
  readonly depth: number;
  /** The most items: objects and arrays, and every further member or item (each comma). */
  readonly items: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * Scans a JSON text in chunks, in arrival order; remembers where it stopped (inside a string,
 * after a backslash) between chunks.
 *
 * @example
 * const scanner = new ShapeScanner({ depth: 1000, items: 1_000_000 });
 * req.on('data', (chunk) => { if (scanner.feed(chunk) !== null) refuse(); });
 */
export class ShapeScanner {
  private depth = 0;
  private items = 0;
  private inString = false;
  private escaped = false;

  constructor(readonly limits: ShapeLimits) {}

  /** The deepest nesting or the count of items seen so far, if either is past its limit; else `null`. */
  feed(chunk: Uint8Array): ShapeProblem | null {
    const { depth: maxDepth, items: maxItems } = this.limits;
    let { depth, items, inString, escaped } = this;
    let problem: ShapeProblem | null = null;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) {
        inString = true;
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        depth += 1;
        items += 1;
        if (depth > maxDepth) {
          problem = 'too-deep';
          break;
        }
        if (items > maxItems) {
          problem = 'too-many-items';
          break;
        }
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        depth -= 1;
      } else if (byte === COMMA) {
        items += 1;
        if (items > maxItems) {
          problem = 'too-many-items';
          break;
        }
      }
    }
    this.depth = depth;
    this.items = items;
    this.inString = inString;
    this.escaped = escaped;
    return problem;
  }
}
