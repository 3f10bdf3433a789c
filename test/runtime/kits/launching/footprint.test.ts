/**
 * The heap policy of operator processes: V8's growing factor is lowered unless `node` was given
 * its own. (What the policy buys is measured by `npm run bench -- operator`, not here.)
 */
import { describe, expect, it } from 'vitest';
import * as footprint from '../../../../runtime/kits/launching/footprint.js';

describe('heap policy', () => {
  it('lowers the heap growing factor of an operator process', () => {
    expect(footprint.tuneHeap([])).toEqual({ kind: 'tuned', percent: footprint.HEAP_GROWING_PERCENT });
    expect(footprint.tuneHeap(['--conditions=x', '--inspect'])).toEqual({ kind: 'tuned', percent: 30 });
  });

  it('keeps a growing factor given to node, in either spelling', () => {
    expect(footprint.tuneHeap(['--heap-growing-percent=50'])).toEqual({ kind: 'kept', reason: '--heap-growing-percent=50 is given to node' });
    expect(footprint.tuneHeap(['--heap_growing_percent=80']).kind).toBe('kept');
  });
});
