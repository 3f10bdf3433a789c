/**
 * The rollouts benchmark's model (bench/rollouts.ts): its replay counts owner changes on the
 * runtime's assignment, so the figures it prints are what the protocol would do.
 */
import { describe, expect, it } from 'vitest';
import { replay, rollouts } from '../../bench/rollouts.js';

const keys = Array.from({ length: 2000 }, (_, i) => `uid-${i}`);

describe('bench/rollouts', () => {
  it('counts nothing when nothing changes, and every object once when the only member is replaced', () => {
    expect(replay(keys, ['a', 'b'], [])).toBe(0);
    expect(replay(keys, ['a'], [{ join: 'b' }, { leave: 'a' }])).toBe(1);
  });

  it('a StatefulSet rollout moves each object out and back: exactly 2 moves per object', () => {
    const { members, steps } = rollouts(4).statefulset;
    expect(replay(keys, members, steps)).toBe(2);
  });

  it('a surging Deployment rollout moves fewer objects than a StatefulSet one, but more than one per object', () => {
    const { members, steps } = rollouts(4).surge;
    const moves = replay(keys, members, steps);
    expect(moves).toBeGreaterThan(1);
    expect(moves).toBeLessThan(2);
  });
});
