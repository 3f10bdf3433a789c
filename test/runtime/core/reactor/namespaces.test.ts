import { describe, expect, it } from 'vitest';
import * as observation from '../../../../runtime/core/reactor/observation.js';

describe('namespace patterns', () => {
  const table: Array<[pattern: observation.NamespacePattern, name: string, expected: boolean]> = [
    // R-SCOPE-2's own example.
    ['myapp-*,!*-pr-*,*-pr-123', 'myapp-live', true],
    ['myapp-*,!*-pr-*,*-pr-123', 'myapp-pr-123', true],
    ['myapp-*,!*-pr-*,*-pr-123', 'myapp-pr-456', false],
    ['myapp-*,!*-pr-*,*-pr-123', 'otherapp-pr-123', false],
    ['myapp-*,!*-pr-*,*-pr-123', 'myapp-dev', true],
    // a leading exclusion implies a leading `*`.
    ['!*-pr-*,*pr-123', 'myapp-live', true],
    ['!*-pr-*,*pr-123', 'otherapp-pr-123', true],
    ['!*-pr-*,*pr-123', 'myapp-pr-123', true],
    ['!*-pr-*,*pr-123', 'myapp-pr-456', false],
    // Whitespace around commas is ignored; empty globs are skipped.
    [' myapp-* , !*-pr-* ', 'myapp-live', true],
    [' myapp-* , !*-pr-* ', 'myapp-pr-1', false],
    ['myapp-live,', 'myapp-live', true],
    ['', 'anything', false],
    // Plain names, `*` and `?`.
    ['default', 'default', true],
    ['default', 'default2', false],
    ['*', 'kube-system', true],
    ['ns-?', 'ns-1', true],
    ['ns-?', 'ns-12', false],
    // Other characters are literal (no regexp or bracket syntax in globs).
    ['a.b', 'axb', false],
    ['a.b', 'a.b', true],
    ['[ab]', 'a', false],
    // Later inclusions only re-include what the first glob matched; later exclusions always remove.
    ['a*,b*', 'bx', false],
    ['*,!a*,ab*', 'abc', true],
    ['*,!a*,ab*,!abc', 'abc', false],
    // Regular expressions (embedded use) match whole names only.
    [/kube-.+/, 'kube-system', true],
    [/kube/, 'kube-system', false],
    [/KUBE-.+/i, 'kube-system', true],
    [/ns-\d+/g, 'ns-12', true],
  ];

  for (const [pattern, name, expected] of table) {
    it(`R-SCOPE-2 ${String(pattern)} ${expected ? 'matches' : 'does not match'} ${name}`, () => {
      expect(observation.matchNamespace(name, pattern)).toBe(expected);
    });
  }

  it('R-SCOPE-2 a global regexp gives the same answer when asked twice (no lastIndex state)', () => {
    const pattern = /ns-\d+/g;
    expect([observation.matchNamespace('ns-1', pattern), observation.matchNamespace('ns-1', pattern)]).toEqual([true, true]);
  });

  it('R-SCOPE-2 several patterns are OR-ed', () => {
    const patterns = ['myapp-*,!*-pr-*', 'other-1', /x-\d/];
    expect(['myapp-live', 'myapp-pr-1', 'other-1', 'other-2', 'x-1', 'x-12'].filter((n) => observation.matchNamespaces(n, patterns))).toEqual([
      'myapp-live',
      'other-1',
      'x-1',
    ]);
    expect(observation.matchNamespaces('anything', [])).toBe(false);
  });

  it('R-SCOPE-4 only patterns without !, *, ?, or commas count as exact names', () => {
    expect(observation.exactNamespaces(['myapp-live', 'myapp-*', 'a,b', '!x', 'n?', /plain/, 'other', 'myapp-live'])).toEqual(['myapp-live', 'other']);
  });
});
