import type { Pagination } from '@servicepay/node/protocol';
import { DomainError } from '../domain-errors.ts';

/**
 * A list page from `limit + 1` rows fetched newest first: the extra row only says there is more, and the last
 * row shown is the next cursor (`startingAfter`).
 */
export function toPage<Row extends { id: string }, View>(
  rows: readonly Row[],
  limit: number,
  view: (row: Row) => View,
): { data: View[]; pagination: Pagination } {
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  return {
    data: page.map(view),
    pagination: { hasMore, nextCursor: hasMore ? (page.at(-1)?.id ?? null) : null },
  };
}

/** 400 for a `startingAfter` that names nothing in this list (unknown, or another owner's). */
export const unknownCursor = (what: string) =>
  new DomainError('validation_failed', `startingAfter is not ${what}.`, [
    { path: 'startingAfter', message: 'unknown cursor' },
  ]);
