/**
 * The sharded chaos variant's plan of ring changes: the seeded rotation of scale-ups, SIGKILLs and
 * graceful scale-downs must keep the ring between 2 and 6 replicas whatever the number of changes,
 * and must include each kind of change once there are enough of them.
 */
import { describe, expect, it } from 'vitest';
import * as shardedChaos from '../../bench/sharding-chaos.js';

describe("the sharded chaos variant's ring changes", () => {
  it('keeps the ring between 2 and 6 replicas and uses every kind of change', () => {
    for (const events of [0, 1, 3, 6, 20]) {
      const plan = shardedChaos.ringPlan(events, 4);
      expect(plan).toHaveLength(events);
      let alive = 4;
      for (const action of plan) {
        alive += action === 'up' ? 1 : -1;
        expect(alive).toBeGreaterThanOrEqual(2);
        expect(alive).toBeLessThanOrEqual(6);
      }
    }
    expect(new Set(shardedChaos.ringPlan(6, 4))).toEqual(new Set(['up', 'kill', 'down']));
  });

  it('reads its options, with the Lease duration left to the runtime unless given', () => {
    expect(shardedChaos.parseOptions(['--sharded', '--objects', '50', '--ring-events', '3'])).toMatchObject({
      objects: 50,
      ringEvents: 3,
      leaseDuration: undefined,
    });
    expect(shardedChaos.parseOptions(['--lease-duration', '6']).leaseDuration).toBe(6);
    expect(() => shardedChaos.parseOptions(['--lease-duration', '1'])).toThrow('--lease-duration must be a whole number ≥ 3, not 1');
  });
});
