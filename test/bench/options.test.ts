/**
 * The benchmarks' option readers (bench/options.ts): a value a benchmark cannot use is an error
 * naming the option, never a silent fallback to the default.
 */
import { describe, expect, it } from 'vitest';
import { atLeast, skippedParts, wholeNumber } from '../../bench/options.js';

describe('benchmark options', () => {
  it('atLeast takes numbers of at least min (fractions too), the fallback when absent, and refuses the rest', () => {
    expect(atLeast(undefined, 10, 'window', 1)).toBe(10);
    expect(atLeast('2.5', 10, 'window', 1)).toBe(2.5);
    expect(atLeast('1', 10, 'window', 1)).toBe(1);
    for (const bad of ['0.5', 'ten', '', 'Infinity', true]) {
      expect(() => atLeast(bad, 10, 'window', 1)).toThrow(`--window must be a number of at least 1, not ${String(bad)}`);
    }
  });

  it('wholeNumber refuses fractions; skippedParts refuses unknown parts', () => {
    expect(wholeNumber('3', 1, 'objects')).toBe(3);
    expect(() => wholeNumber('2.5', 1, 'objects')).toThrow('--objects must be a positive whole number, not 2.5');
    expect([...skippedParts(['reads,operator'], ['operator', 'reads'])]).toEqual(['reads', 'operator']);
    expect(() => skippedParts('nope', ['operator', 'reads'])).toThrow('--skip nope: the parts are operator, reads');
  });
});
