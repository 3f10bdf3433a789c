/**
 * The reconcile benchmark's own arithmetic (`bench/reconcile.ts`), without a cluster: its options
 * refuse what they cannot use, and the latency of a child change is measured to the first call of
 * its parent that started at or after it.
 */
import { describe, expect, it } from 'vitest';

import { latencies, parseOptions } from '../../bench/reconcile.js';

describe('bench/reconcile', () => {
  it('reads its options and refuses a bad value', () => {
    expect(parseOptions(['reconcile', '--objects', '10', '--settle', '1'])).toMatchObject({ objects: 10, settleS: 1, concurrency: 8, timeoutMs: 600_000 });
    expect(() => parseOptions(['--objects', 'many'])).toThrow('--objects must be a positive whole number, not many');
  });

  it('matches each change with the first later call of its parent; unanswered changes are left out', () => {
    const starts = { a: [100, 250, 400], b: [90] };
    expect(
      latencies(
        [
          { parent: 'a', at: 200 },
          { parent: 'a', at: 250 },
          { parent: 'b', at: 95 },
          { parent: 'c', at: 1 },
        ],
        starts,
      ),
    ).toEqual([50, 0]);
  });
});
