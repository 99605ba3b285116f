import type { Environment } from '@servicepay/node/protocol';
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
  limit: number;
}

/** The pages the exports read, one statement per table, each walking its owner index forward. */
export interface ExportPageRepository {
  /** Sessions created in the range, in creation (`seq`) order. */
  sessions(query: ExportPageQuery): Promise<SessionRecord[]>;
}

// The owner index `sessions_by_owner` (business_id, environment, seq) answers the order; `created_at` is filtered
// as the rows go by (a session's `seq` and `created_at` rise together, so the rows outside the range are those
// before and after it, not interleaved). PostgreSQL: the `environment` range pins that index, as `sessionList`
// explains (db/sessions.ts).
const statements = {
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
    return (await this.db.all(statements.sessions, { ...query })).map((row) => sessions.decode(row));
  }
}
