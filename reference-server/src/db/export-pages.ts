import type { Environment } from '@servicepay/node/protocol';
import { type BalanceTransactionRecord, balanceTransactions } from './balance-transactions.ts';
import { type SessionRecord, sessions } from './sessions.ts';
import { type SqlRunner, sql } from './sql.ts';

/**
 * One page of an export: an owner's rows created in `[createdFrom, createdTo)`, oldest first, after the row
 * `afterSeq` (keyset: a page costs the same at row 10 and at row 1,000,000, and nothing is skipped or read
 * twice when rows are added between pages).
 */
export interface ExportPageQuery {
  businessId: string;
  environment: Environment;
  /** Epoch milliseconds, included. */
  createdFrom: number;
  /** Epoch milliseconds, excluded. */
  createdTo: number;
  /** The `seq` of the last row of the page before (0 for the first page). */
  afterSeq: number;
  /** The `createdAt` of that row (the ledger's order is `(createdAt, seq)`); the range's start for the first. */
  afterCreatedAt: number;
  limit: number;
}

/** The pages the exports read, one statement per table, each walking its owner index forward. */
export interface ExportPageRepository {
  /** Sessions created in the range, in creation (`seq`) order. */
  sessions(query: ExportPageQuery): Promise<SessionRecord[]>;
  /** Ledger entries created in the range, in the ledger's order `(createdAt, seq)`. */
  balanceTransactions(query: ExportPageQuery): Promise<BalanceTransactionRecord[]>;
}

// The owner index `sessions_by_owner` (business_id, environment, seq) answers the order; `created_at` is filtered
// as the rows go by (a session's `seq` and `created_at` rise together, so the rows outside the range are those
// before and after it, not interleaved). PostgreSQL: the `environment` range pins that index, as `sessionList`
// explains (db/sessions.ts).
/**
 * The statements of `SqlExportPageRepository` (exported for the test that EXPLAINs them).
 *
 * @example
 * db.prepare(`EXPLAIN QUERY PLAN ${EXPORT_PAGE_STATEMENTS.balanceTransactions.sqlite}`);
 */
export const EXPORT_PAGE_STATEMENTS = {
  // The ledger's owner index (business_id, environment, created_at, seq) read from the cursor's own created_at
  // on: a plain lower bound both planners use for the index range, then the few rows of that same millisecond
  // at or before the cursor filtered out. (A row-value bound `(created_at, seq) > (…)` beside the range's own
  // `created_at >= @createdFrom` is not taken as the range's start by SQLite: every page would scan from the
  // range's start, 3 ms a page at the front of 200k entries and 33 ms at the end.)
  balanceTransactions: sql<BalanceTransactionRecord>(
    `SELECT ${balanceTransactions.select()} FROM balance_transactions
     WHERE business_id = @businessId AND environment = @environment
       AND created_at >= @afterCreatedAt AND created_at < @createdTo
       AND (created_at > @afterCreatedAt OR seq > @afterSeq)
     ORDER BY created_at, seq LIMIT @limit`,
  ),
  sessions: sql<SessionRecord>({
    sqlite: `SELECT ${sessions.select()} FROM sessions
             WHERE business_id = @businessId AND environment = @environment AND seq > @afterSeq
               AND created_at >= @createdFrom AND created_at < @createdTo
             ORDER BY seq LIMIT @limit`,
    postgres: `SELECT ${sessions.select()} FROM sessions
               WHERE business_id = @businessId AND environment >= @environment AND environment <= @environment
                 AND seq > @afterSeq AND created_at >= @createdFrom AND created_at < @createdTo
               ORDER BY environment, seq LIMIT @limit`,
  }),
};

/**
 * `ExportPageRepository` on either store.
 *
 * @example
 * const page = await new SqlExportPageRepository(runner).sessions({ businessId, environment: 'test',
 *   createdFrom: 0, createdTo: Date.now(), afterSeq: 0, limit: 500 });
 */
export class SqlExportPageRepository implements ExportPageRepository {
  constructor(private readonly db: SqlRunner) {}

  async sessions(query: ExportPageQuery): Promise<SessionRecord[]> {
    const { afterCreatedAt: _unused, ...params } = query;
    return (await this.db.all(EXPORT_PAGE_STATEMENTS.sessions, params)).map((row) => sessions.decode(row));
  }

  async balanceTransactions(query: ExportPageQuery): Promise<BalanceTransactionRecord[]> {
    const { createdFrom: _first, ...params } = query;
    return this.db.all(EXPORT_PAGE_STATEMENTS.balanceTransactions, params);
  }
}
