import { describe, expect, it } from 'vitest';

import * as patches from '../../../../runtime/cogs/structs/patches.js';
import * as outcomes from '../../../../runtime/core/actions/outcomes.js';

describe('delivering results', () => {
  it('R-STORAGE-14 results: objects merge key by key, other values replace, failures and nulls write nothing', () => {
    const patch = new patches.Patch();
    patch.setAt(['status', 'merged'], { kept: 1 });
    outcomes.deliverResults(
      new Map<string, outcomes.Outcome>([
        ['merged', { final: true, result: { message: 'hello world' } }],
        ['scalar', { final: true, result: 42 }],
        ['list', { final: true, result: ['a'] }],
        ['date', { final: true, result: new Date(0) }],
        ['parent/child', { final: true, result: true }],
        ['none', { final: true, result: null }],
        ['failed', { final: false, result: { x: 1 }, error: new Error('x') }],
      ]),
      patch,
    );
    expect(patch.toMergePatch()).toEqual({
      status: {
        merged: { kept: 1, message: 'hello world' },
        scalar: 42,
        list: ['a'],
        date: '1970-01-01T00:00:00.000Z',
        'parent/child': true,
      },
    });
  });
});
