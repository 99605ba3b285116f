import type { Queryable } from './notification-channel.ts';

/** What `pg` answers for one statement, as far as a repository reads it. */
export interface QueryRows<R> {
  rows: R[];
  /** Rows the statement inserted, updated, deleted or returned (`null` for statements that count none). */
  rowCount: number | null;
}

/**
 * Runs one statement on a pool or a transaction's client and types its rows. `Queryable` answers `unknown` so
 * that a `pg.Pool` and a `PoolClient` both fit it; repositories say here what rows they expect.
 *
 * @example
 * const { rows } = await runQuery<{ id: string }>(pool, 'SELECT id FROM businesses WHERE id = $1', [id]);
 */
export async function runQuery<R>(db: Queryable, text: string, values?: unknown[]): Promise<QueryRows<R>> {
  return (await db.query(text, values)) as QueryRows<R>;
}
