/**
 * The dev-loop benchmark's options: how many saves, the pause between them, the runs of the
 * generated test, the parts skipped. The benchmark itself asserts nothing (its figures are printed
 * next to their targets).
 */
import { describe, expect, it } from 'vitest';
import * as devloop from '../../bench/devloop.js';

describe("the dev-loop benchmark's options", () => {
  it('default to 10 saves, 1500 ms between saves, 3 runs of the generated test, nothing skipped', () => {
    expect(devloop.parseOptions(['devloop'])).toEqual({ saves: 10, pauseMs: 1500, testRuns: 3, skip: new Set(), keep: false });
  });

  it("read skipped parts and the counts, and ignore other benchmarks' options", () => {
    const options = devloop.parseOptions(['devloop', '--saves', '5', '--pause-ms=0', '--skip', 'generated', '--runs', '2', '--keep']);
    expect(options).toEqual({ saves: 5, pauseMs: 0, testRuns: 3, skip: new Set(['generated']), keep: true });
  });

  it('reject an unknown part, no saves and a count that is not a whole number', () => {
    expect(() => devloop.parseOptions(['--skip', 'tests'])).toThrow('--skip tests: the parts are loop, generated');
    expect(() => devloop.parseOptions(['--saves', '0'])).toThrow('--saves must be a positive whole number, not 0');
    expect(() => devloop.parseOptions(['--test-runs', '1.5'])).toThrow('--test-runs must be a positive whole number');
  });
});
