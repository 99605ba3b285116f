import type { Environment, SessionStatus } from '@servicepay/node/protocol';
import type { QueryResult } from 'pg';
import type { Repositories } from '../repositories.ts';
import type {
  NewSession,
  SessionChange,
  SessionExpectation,
  SessionListQuery,
  SessionRecord,
} from '../sessions.ts';
import { exactInteger, exactIntegerOrNull } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';

/** A `sessions` row as `pg` returns it: `bigint` columns arrive as strings, `bytea` as a Buffer. */
type SessionRow = {
  seq: string;
  id: string;
  business_id: string;
  environment: Environment;
  reference: string;
  status: SessionStatus;
  amount: string;
  currency: string;
  payer_name: string;
  payer_email: string;
  payer_phone: string | null;
  metadata: string;
  client_secret_hash: Buffer;
  client_secret_used_at: string | null;
  account_number: string | null;
  mismatch_received: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string;
  paid_at: string | null;
};

const toSession = (row: SessionRow): SessionRecord => ({
  seq: exactInteger(row.seq),
  id: row.id,
  businessId: row.business_id,
  environment: row.environment,
  reference: row.reference,
  status: row.status,
  amount: exactInteger(row.amount),
  currency: row.currency,
  payerName: row.payer_name,
  payerEmail: row.payer_email,
  payerPhone: row.payer_phone,
  metadata: JSON.parse(row.metadata) as Record<string, string>,
  clientSecretHash: row.client_secret_hash,
  clientSecretUsedAt: exactIntegerOrNull(row.client_secret_used_at),
  accountNumber: row.account_number,
  mismatchReceived: exactIntegerOrNull(row.mismatch_received),
  createdAt: exactInteger(row.created_at),
  updatedAt: exactInteger(row.updated_at),
  expiresAt: exactInteger(row.expires_at),
  paidAt: exactIntegerOrNull(row.paid_at),
});

/**
 * The statement and values `PostgresSessionRepository.list` runs for `query`: one statement per filter, as in
 * SQLite, each reading only the rows it answers through its own index: the owner list through
 * `sessions_by_owner`, a status through `sessions_by_owner_status` (migration 006), a reference through the
 * unique (business_id, environment, reference) index. Exported so that the tests EXPLAIN the very statement
 * `list` sends.
 *
 * Why the column just before `seq` in each index is pinned by a range (`environment >= $2 AND environment <= $2`,
 * `status >= $3 AND status <= $3`) and kept in the `ORDER BY`: with equalities on every column PostgreSQL
 * treats them all as constants, the page's order becomes plain `seq DESC`, and walking the primary key
 * backwards while skipping other owners' rows serves it too. The planner takes that walk whenever the owner
 * holds a large share of the table, assuming the owner's rows spread evenly over time; when they are not (a
 * large merchant that stopped selling) it reads every newer row of everyone else: 100,000 rows for a page of
 * 21 on a 200,000-row table when tried, the very cost issue 12 removed from SQLite. Ordered by the pinned
 * column and `seq`, the page comes only from the owner's index without a sort. Only that one column: the
 * columns before it stay equalities, so the B-tree still stops at the end of the owner's (and status's)
 * entries when a page is not full. For text in a deterministic collation `x >= c AND x <= c` holds exactly
 * when `x = c`. A cursor near the very start may still be served by the primary key's range `seq < $n` and a
 * sort: a range the planner measures exactly, so it only does so when that range is small.
 *
 * @example
 * const { text, values } = sessionListStatement({ businessId, environment: 'test', status: 'pending', limit: 21 });
 * await pool.query(`EXPLAIN (FORMAT JSON) ${text}`, values); // an Index Scan on sessions_by_owner_status
 */
export function sessionListStatement(query: SessionListQuery): { text: string; values: unknown[] } {
  const beforeSeq = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
  const values = [query.businessId, query.environment];
  if (query.reference !== undefined) {
    // At most one row by the unique index, so plain equalities: nothing to order. The status, when given, is a
    // filter on that row; two statements rather than `($n IS NULL OR status = $n)`, so that neither plan
    // depends on how a NULL parameter folds.
    const byReference =
      'SELECT * FROM sessions WHERE business_id = $1 AND environment = $2 AND reference = $3';
    if (query.status !== undefined) {
      return {
        text: `${byReference} AND status = $4 AND seq < $5 ORDER BY seq DESC LIMIT $6`,
        values: [...values, query.reference, query.status, beforeSeq, query.limit],
      };
    }
    return {
      text: `${byReference} AND seq < $4 ORDER BY seq DESC LIMIT $5`,
      values: [...values, query.reference, beforeSeq, query.limit],
    };
  }
  if (query.status !== undefined) {
    // `sessions_by_owner_status` is (business_id, environment, status, seq) ascending: read backwards.
    return {
      text: `SELECT * FROM sessions WHERE business_id = $1 AND environment = $2 AND status >= $3 AND status <= $3
               AND seq < $4 ORDER BY status DESC, seq DESC LIMIT $5`,
      values: [...values, query.status, beforeSeq, query.limit],
    };
  }
  // `sessions_by_owner` is (business_id, environment, seq DESC): read forwards.
  return {
    text: `SELECT * FROM sessions WHERE business_id = $1 AND environment >= $2 AND environment <= $2 AND seq < $3
           ORDER BY environment, seq DESC LIMIT $4`,
    values: [...values, beforeSeq, query.limit],
  };
}

/** What the service calls: `Repositories['sessions']` (a class cannot implement an indexed type directly). */
type SessionsContract = Repositories['sessions'];

/**
 * The PostgreSQL twin of `SessionRepository` (`../sessions.ts`): the same methods answering the same records,
 * each a promise. `db` is the pool for a read, or the client of the write transaction the job runs in.
 * Every conditional write is one statement whose row count is the answer (`UPDATE … WHERE status = $expected`),
 * never a read then a write: under READ COMMITTED a second instance's update of the same row waits for the
 * first to commit and then re-checks its condition against the committed row, so of N concurrent transitions
 * from one status exactly one changes it.
 *
 * @example
 * const sessions = new PostgresSessionRepository(pool);
 * const changed = await sessions.change('ses_1', 'awaiting_payment', {
 *   status: 'successful', updatedAt: now, accountNumber: '0123456789', mismatchReceived: null, paidAt: now,
 * });
 */
export class PostgresSessionRepository implements SessionsContract {
  constructor(private readonly db: Queryable) {}

  /**
   * Inserts a new session and returns it as stored (built from its fields, `seq` from `RETURNING`), or undefined,
   * writing nothing, when its business already has a session with this reference in this environment.
   */
  async insert(session: NewSession): Promise<SessionRecord | undefined> {
    // ON CONFLICT on the reference only: a reference another instance is inserting right now is waited for,
    // then counted as used (no unique-violation retry of the whole job, and no separate read before it).
    const result = (await this.db.query(
      `INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
         payer_email, payer_phone, metadata, client_secret_hash, created_at, updated_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT (business_id, environment, reference) DO NOTHING
       RETURNING seq`,
      [
        session.id,
        session.businessId,
        session.environment,
        session.reference,
        session.status,
        session.amount,
        session.currency,
        session.payerName,
        session.payerEmail,
        session.payerPhone,
        JSON.stringify(session.metadata),
        session.clientSecretHash,
        session.createdAt,
        session.updatedAt,
        session.expiresAt,
      ],
    )) as QueryResult<{ seq: string }>;
    const inserted = result.rows[0];
    if (inserted === undefined) return undefined;
    return {
      ...session,
      seq: exactInteger(inserted.seq),
      clientSecretUsedAt: null,
      accountNumber: null,
      mismatchReceived: null,
      paidAt: null,
    };
  }

  async find(id: string): Promise<SessionRecord | undefined> {
    return this.one('SELECT * FROM sessions WHERE id = $1', [id]);
  }

  async findByClientSecretHash(hash: Buffer): Promise<SessionRecord | undefined> {
    return this.one('SELECT * FROM sessions WHERE client_secret_hash = $1', [hash]);
  }

  /** Marks the client secret exchanged; false when it already was (by this instance or another). */
  async markClientSecretUsed(id: string, at: number): Promise<boolean> {
    const result = (await this.db.query(
      'UPDATE sessions SET client_secret_used_at = $1 WHERE id = $2 AND client_secret_used_at IS NULL',
      [at, id],
    )) as QueryResult;
    return result.rowCount === 1;
  }

  /** Applies a change only if the session is still in `expectedStatus`; false when it was not. */
  async change(id: string, expected: SessionExpectation, change: SessionChange): Promise<boolean> {
    const result = (await this.db.query(
      `UPDATE sessions SET status = $1, updated_at = $2, account_number = $3, mismatch_received = $4, paid_at = $5
       WHERE id = $6 AND status = $7 AND account_number IS NOT DISTINCT FROM $8`,
      [
        change.status,
        change.updatedAt,
        change.accountNumber,
        change.mismatchReceived,
        change.paidAt,
        id,
        expected.status,
        expected.accountNumber,
      ],
    )) as QueryResult;
    return result.rowCount === 1;
  }

  /** Brings an open session's end forward to `at`; false when it has ended or already ends by then. */
  async expireAt(id: string, at: number): Promise<boolean> {
    const result = (await this.db.query(
      `UPDATE sessions SET expires_at = $1
       WHERE id = $2 AND status IN ('pending', 'awaiting_payment', 'mismatch') AND expires_at > $1`,
      [at, id],
    )) as QueryResult;
    return result.rowCount === 1;
  }

  /**
   * Open sessions whose countdown has run out, oldest deadline first. Ties by `seq`: the order SQLite's
   * `sessions_open_by_expiry` index gives them (its entries end with the rowid), so both stores pick the same.
   */
  async overdue(now: number, limit: number): Promise<SessionRecord[]> {
    return this.all(
      `SELECT * FROM sessions WHERE status IN ('pending', 'awaiting_payment', 'mismatch') AND expires_at <= $1
       ORDER BY expires_at, seq LIMIT $2`,
      [now, limit],
    );
  }

  /** One page of an owner's sessions, newest first, through the index that answers the filter. */
  async list(query: SessionListQuery): Promise<SessionRecord[]> {
    const { text, values } = sessionListStatement(query);
    return this.all(text, values);
  }

  private async one(text: string, values: unknown[]): Promise<SessionRecord | undefined> {
    const row = ((await this.db.query(text, values)) as QueryResult<SessionRow>).rows[0];
    return row && toSession(row);
  }

  private async all(text: string, values: unknown[]): Promise<SessionRecord[]> {
    return ((await this.db.query(text, values)) as QueryResult<SessionRow>).rows.map(toSession);
  }
}
