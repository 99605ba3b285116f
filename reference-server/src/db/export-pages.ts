import type { Environment } from '@servicepay/node/protocol';
import { type SessionRecord, sessions } from './sessions.ts';
import { type SqlRunner, sql } from './sql.ts';

/**
 * One page of the sessions export: an owner's sessions created in `[createdFrom, createdTo)`, in creation
 * order, after the session `afterSeq` (keyset: a page costs the same at row 10 and at row 1,000,000, and
 * nothing is skipped or read twice when rows are added between pages). The ledger export reads the ledger's own
 * keyset pages (`BalanceTransactionRepository.listBalanceTransactions`, oldest first).
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
  limit: number;
}

/** The pages the sessions export reads. */
export interface ExportPageRepository {
  /** Sessions created in the range, in creation (`seq`) order. */
  sessions(query: ExportPageQuery): Promise<SessionRecord[]>;
}

// The owner index `sessions_by_owner` (business_id, environment, seq) answers the order; `created_at` is filtered
// as the rows go by (a session's `seq` and `created_at` rise together, so the rows outside the range are those
// before and after it, not interleaved). PostgreSQL: the `environment` range pins that index, as `sessionList`
// explains (db/sessions.ts).
/**
 * The statements of `SqlExportPageRepository`.
 *
 * @example
 * db.prepare(`EXPLAIN QUERY PLAN ${EXPORT_PAGE_STATEMENTS.sessions.sqlite}`);
 */
export const EXPORT_PAGE_STATEMENTS = {
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
    const rows = await this.db.all(EXPORT_PAGE_STATEMENTS.sessions, { ...query });
    return rows.map((row) => sessions.decode(row));
  }
}
