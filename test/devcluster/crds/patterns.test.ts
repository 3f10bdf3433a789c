import { describe, expect, it } from 'vitest';
import * as patterns from '../../../devcluster/crds/patterns.js';
import { AZURE_RESOURCE_ID, MAINTENANCE_WINDOW } from './regex-samples.js';

const reason = (pattern: string): string => {
  const compiled = patterns.compilePattern(pattern);
  return compiled.ok ? 'ok' : compiled.reason;
};

describe('compilePattern', () => {
  it.each(['^[a-z]+$', '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', '[(?=]', '\\(?=x\\)', '^\\d{3}$'])('D-CRD-6 accepts %s', (pattern) => {
    expect(patterns.compilePattern(pattern).ok).toBe(true);
  });

  it.each([
    AZURE_RESOURCE_ID,
    MAINTENANCE_WINDOW,
    '(?i)^abc$',
    '(?s)a.b',
    '(?m)^a$',
    '(?U)a+',
    '(?i:a)b',
    String.raw`^\pL+$`,
    String.raw`^\p{Greek}+$`,
    String.raw`\PN`,
    '[[:alpha:]][[:^digit:]]',
    String.raw`\Aa\z`,
    String.raw`\Qa.b\E`,
    String.raw`\x{1F600}`,
    String.raw`a\-b\ c\/d`,
    '(?P<n>a)(?<m>b)',
    '(?P<n>a)(?P<n>b)',
    'a{2,1000}',
  ])('D-CRD-18 accepts what Go accepts: %s', (pattern) => {
    expect(reason(pattern)).toBe('ok');
  });

  it.each([
    ['^(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
    ['(?!b)c', 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`'],
    ['(?<=a)b', 'error parsing regexp: invalid named capture: `(?<=a)b`'],
    ['(?<!a)b', 'error parsing regexp: invalid named capture: `(?<!a)b`'],
    ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
    ['(?<n>a)\\k<n>', 'error parsing regexp: invalid escape sequence: `\\k`'],
    ['a++', 'error parsing regexp: invalid nested repetition operator: `++`'],
    ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
    ['a\\Z', 'error parsing regexp: invalid escape sequence: `\\Z`'],
    ['a\\C', 'error parsing regexp: invalid escape sequence: `\\C`'],
    ['a{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
    ['(a{1000}){1000}', 'error parsing regexp: invalid repeat count: `{1000}`'],
    ['^[a-z', 'error parsing regexp: missing closing ]: `[a-z`'],
    ['(unclosed', 'error parsing regexp: missing closing ): `(unclosed`'],
    ['a)', 'error parsing regexp: unexpected ): `a)`'],
    ['*a', 'error parsing regexp: missing argument to repetition operator: `*`'],
    ['[z-a]', 'error parsing regexp: invalid character class range: `z-a`'],
    ['[[:word2:]]', 'error parsing regexp: invalid character class range: `[:word2:]`'],
    [String.raw`\p{Klingon}`, 'error parsing regexp: invalid character class range: `\\p{Klingon}`'],
    ['a\\', 'error parsing regexp: trailing backslash at end of expression: ``'],
    [`${'('.repeat(1001)}a${')'.repeat(1001)}`, `error parsing regexp: expression nests too deeply: \`${'('.repeat(1001)}a${')'.repeat(1001)}\``],
  ])('D-CRD-19 rejects %s with Go’s error', (pattern, message) => {
    expect(reason(pattern)).toBe(message);
  });
});

describe('matchesPattern', () => {
  it('D-CRD-11 matches unanchored like JSON Schema', () => {
    expect(patterns.matchesPattern('[0-9]', 'abc1')).toBe(true);
    expect(patterns.matchesPattern('^[0-9]$', 'abc1')).toBe(false);
  });

  it.each<[string, string, boolean]>([
    [AZURE_RESOURCE_ID, '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg', true],
    [AZURE_RESOURCE_ID, '/SUBSCRIPTIONS/s/RESOURCEGROUPS/rg/providers/Microsoft.Network/virtualNetworks/vn', true],
    [AZURE_RESOURCE_ID, 'subscriptions/s', false],
    [MAINTENANCE_WINDOW, ' Mon-Fri:01:00-Sat:03:00 ', true],
    [MAINTENANCE_WINDOW, '01:00-06:00', true],
    [MAINTENANCE_WINDOW, 'Mon:24:00-01:00', false],
    ['(?i)^abc$', 'AbC', true],
    ['^abc$', 'AbC', false],
    ['(?i)k', '\u212a', true],
    [String.raw`^\pL+$`, 'héllo', true],
    [String.raw`^\pL+$`, 'h3llo', false],
    [String.raw`^\p{Greek}+$`, 'αβγ', true],
    [String.raw`^\d+$`, '١٢٣', false],
    [String.raw`^\w+$`, 'é', false],
    ['^.$', '😀', true],
    ['^[^a]$', '😀', true],
    ['a$', 'a\n', false],
    [String.raw`a\z`, 'a\n', false],
    [String.raw`a\z`, 'ba', true],
    ['(?m)^b$', 'a\nb\nc', true],
    ['a.b', 'a\nb', false],
    ['(?s)a.b', 'a\nb', true],
    [String.raw`\Qa.b\E`, 'axb', false],
    [String.raw`\Qa.b\E`, 'a.b', true],
    ['(?P<n>a)(?P<n>b)', 'xab', true],
  ])('D-CRD-18 %s on %j is %s, as in Go', (pattern, value, expected) => {
    expect(patterns.matchesPattern(pattern, value)).toBe(expected);
  });
});
