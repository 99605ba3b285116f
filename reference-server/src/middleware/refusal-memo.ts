import { BoundedMap } from '../internal/bounded-map.ts';

/**
 * Secret keys recently found live and over their business's budget, by the hex SHA-256 of the key (never the
 * key itself): the budget that refused each, and until when (clock ms) a refusal may skip reading the key. A
 * client over its budget may send thousands of requests a second, and reading its key was the largest part of
 * refusing each (a read transaction on SQLite, a round trip on PostgreSQL). Only refusals are remembered, never
 * admissions: a key rolled within the memo's time may get a 429 instead of its 401, and is let in by neither.
 *
 * Bounded: past `maxKeys` keys the memo is emptied and filled again by the keys still refused, so a flood of
 * distinct keys costs at most one read each per second, never memory without end.
 *
 * @example
 * const memo = new RefusalMemo();
 * memo.remember(keyHash, 'biz_1:test', now + 1_000);
 * memo.recall(keyHash, now); // 'biz_1:test' until then, undefined (and forgotten) after
 */
export class RefusalMemo {
  private readonly refusals: BoundedMap<string, { budget: string; until: number }>;

  constructor(maxKeys = 10_000) {
    this.refusals = new BoundedMap(maxKeys);
  }

  /** How many keys are remembered now. */
  get size(): number {
    return this.refusals.size;
  }

  /** The budget that refused this key, if that refusal still stands at `now`; an expired one is forgotten. */
  recall(keyHash: string, now: number): string | undefined {
    const refusal = this.refusals.get(keyHash);
    if (refusal === undefined) return undefined;
    if (refusal.until > now) return refusal.budget;
    this.refusals.delete(keyHash);
    return undefined;
  }

  /** Remembers a refusal until `until` (clock ms), emptying the memo first when it is full. */
  remember(keyHash: string, budget: string, until: number): void {
    this.refusals.set(keyHash, { budget, until });
  }

  /** Forgets a key: its budget is back, so the next request reads it again. */
  forget(keyHash: string): void {
    this.refusals.delete(keyHash);
  }
}
