/**
 * Text from outside the operator, made safe to put into a log line.
 *
 * Names, namespaces, user names and URL paths of requests are chosen by whoever sends the request.
 * A newline in one of them, put into a plain-text log line as it is, starts a second line that
 * looks like the operator's own (a forged log line); an escape sequence can rewrite a terminal.
 * `printable()` escapes every control character (C0, DEL, C1) and the Unicode line and paragraph
 * separators the way JSON does (`\n`, `\u001b`), and the backslash itself so that an escaped text
 * cannot be confused with one that merely looks escaped. Everything else, non-ASCII letters
 * included, stays as it is.
 */

// Control characters (C0, DEL, C1), the line/paragraph separators, and the backslash.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

function escapeChar(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * The text with control characters escaped (see the module's comment); non-strings are shown
 * with `String()` first.
 *
 * @example
 * printable('web\n[ns/x] Handler succeeded') // 'web\\n[ns/x] Handler succeeded' (one line)
 */
export function printable(text: unknown): string {
  const value = typeof text === 'string' ? text : String(text);
  return value.replace(UNSAFE, escapeChar);
}
