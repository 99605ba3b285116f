import type { Queryable } from './notification-channel.ts';

/** What `pg` answers for one statement, as far as a repository reads it. */
export interface QueryRows<R> {
  rows: R[];
  /** Rows the statement inserted, updated, deleted or returned (`null` for statements that count none). */
  rowCount: number | null;
}

/**
 * Runs one statement on a pool or a transaction's client and types its rows. `Queryable` answers `unknown` so
 * that a `pg.Pool` and a `PoolClient` both fit it; this is the one place that says what comes back.
 *
 * @example
 * const { rows } = await runQuery<{ id: string }>(pool, 'SELECT id FROM businesses WHERE id = $1', [id]);
 */
export async function runQuery<R>(db: Queryable, text: string, values?: unknown[]): Promise<QueryRows<R>> {
  return (await db.query(text, values)) as QueryRows<R>;
}

/**
 * A `bigint` column as a number: `pg` hands `int8` over as a string, since it can exceed 2^53; every time,
 * amount and sequence number the service stores is far below that.
 *
 * @example
 * const expiresAt = numberOrNull(row.previous_secret_expires_at); // '1795435200000' -> 1795435200000
 */
export function numberOrNull(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}
