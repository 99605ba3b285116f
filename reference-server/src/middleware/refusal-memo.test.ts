import { describe, expect, it } from 'vitest';
import { RefusalMemo } from './refusal-memo.ts';

describe('RefusalMemo', () => {
  it('recalls a refusal until its time, then forgets it', () => {
    const memo = new RefusalMemo();
    memo.remember('key-a', 'biz_1:test', 2_000);
    expect(memo.recall('key-a', 1_999)).toBe('biz_1:test');
    expect(memo.recall('key-b', 1_999)).toBeUndefined();
    expect(memo.recall('key-a', 2_000)).toBeUndefined();
    expect(memo.size).toBe(0);
  });

  it('forgets a key whose budget is back', () => {
    const memo = new RefusalMemo();
    memo.remember('key-a', 'biz_1:test', 2_000);
    memo.forget('key-a');
    expect(memo.recall('key-a', 1_000)).toBeUndefined();
  });

  it('never holds more keys than its bound: a full memo starts again from the newest refusal', () => {
    const memo = new RefusalMemo(3);
    for (const key of ['a', 'b', 'c']) memo.remember(key, `biz_${key}:test`, 2_000);
    expect(memo.size).toBe(3);
    // Refused again while full: renewed in place, nothing dropped.
    memo.remember('b', 'biz_b:test', 3_000);
    expect(memo.size).toBe(3);
    expect(memo.recall('a', 1_000)).toBe('biz_a:test');
    // A fourth key empties it first.
    memo.remember('d', 'biz_d:test', 2_000);
    expect(memo.size).toBe(1);
    expect(memo.recall('a', 1_000)).toBeUndefined();
    expect(memo.recall('d', 1_000)).toBe('biz_d:test');
    for (let i = 0; i < 100; i++) memo.remember(`flood-${i}`, 'biz_f:test', 2_000);
    expect(memo.size).toBeLessThanOrEqual(3);
  });
});
