import { describe, expect, it } from 'vitest';
import { COPY, Memo, copyMemo } from '../../../../runtime/core/intents/memos.js';

describe('memos', () => {
  it('R-MEMO-1 entries are properties and keys', () => {
    const memo = new Memo({ counter: 1 });
    memo['other'] = 2;
    expect(memo).toMatchObject({ counter: 1, other: 2 });
  });

  it('R-MEMO-2 per-object memos are shallow copies of the operator memo', () => {
    const shared = { list: [1] };
    const memo = new Memo({ counter: 1, shared });
    const copy = copyMemo(memo);
    copy['counter'] = 2;
    expect(memo['counter']).toBe(1);
    expect(copy['shared']).toBe(shared);
    expect(copy).toBeInstanceOf(Memo);
  });

  it('R-MEMO-2 a memo may define its own copy (COPY first, then copy())', () => {
    const global = {
      [COPY]() {
        return this;
      },
      copy() {
        return { other: true };
      },
    };
    expect(copyMemo(global)).toBe(global);
    const custom = {
      copy() {
        return { copied: true };
      },
    };
    expect(copyMemo(custom)).toEqual({ copied: true });
  });
});
