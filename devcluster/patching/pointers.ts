/**
 * JSON pointers (RFC 6901): the addressing scheme of JSON patch (`jsonpatch.ts`).
 *
 * A pointer is `""` (the whole document) or a sequence of `/`-prefixed reference tokens in which
 * `~1` stands for `/` and `~0` for `~`. Parsing is separate from resolving because the two fail
 * differently for the API: a pointer that cannot be parsed makes the patch malformed (400), while
 * a well-formed pointer to a place that does not exist makes an operation fail (422).
 */

/**
 * Splits a JSON pointer into its unescaped reference tokens, or returns `undefined` when the
 * text is not a valid pointer (does not start with `/`, or has a `~` not followed by `0` or `1`).
 *
 * @example
 * parseJsonPointer('/metadata/annotations/example.com~1owner') // → ['metadata', 'annotations', 'example.com/owner']
 */
export function parseJsonPointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/');
  if (tokens.some((token) => /~(?![01])/.test(token))) return undefined;
  return tokens.map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Joins reference tokens into a JSON pointer, escaping `~` and `/`. */
export function formatJsonPointer(tokens: readonly string[]): string {
  return tokens.map((token) => `/${token.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Reads an array index token: a non-negative decimal without leading zeros (RFC 6901 section 4).
 * Returns `undefined` for anything else, including `-`.
 */
export function parseArrayIndex(token: string): number | undefined {
  return /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : undefined;
}

/** True when `prefix` addresses a proper ancestor of `tokens`. */
export function isProperPrefix(prefix: readonly string[], tokens: readonly string[]): boolean {
  return prefix.length < tokens.length && prefix.every((token, i) => tokens[i] === token);
}
