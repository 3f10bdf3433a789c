import { describe, expect, it } from 'vitest';
import * as patterns from '../../../devcluster/crds/patterns.js';

describe('compilePattern', () => {
  it.each(['^[a-z]+$', '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', '[(?=]', '\\(?=x\\)', '^\\d{3}$'])('D-CRD-6 accepts %s', (pattern) => {
    expect(patterns.compilePattern(pattern).ok).toBe(true);
  });

  it.each(['^(?=a)', '(?!b)c', '(?<=a)b', '(?<!a)b', '(a)\\1', '(?<n>a)\\k<n>', '^[a-z', '(unclosed'])('D-CRD-6 rejects %s', (pattern) => {
    expect(patterns.compilePattern(pattern).ok).toBe(false);
  });

  it('D-CRD-11 matches unanchored like JSON Schema', () => {
    expect(patterns.matchesPattern('[0-9]', 'abc1')).toBe(true);
    expect(patterns.matchesPattern('^[0-9]$', 'abc1')).toBe(false);
  });
});
