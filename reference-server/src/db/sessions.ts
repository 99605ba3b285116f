import type { Environment, SessionStatus } from '@servicepay/node/protocol';
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.ts';

/** A payment session as stored. Times in epoch milliseconds. */
export interface SessionRecord {
  seq: number;
  id: string;
  businessId: string;
  environment: Environment;
  reference: string;
  status: SessionStatus;
  amount: number;
  currency: string;
  payerName: string;
  payerEmail: string;
  payerPhone: string | null;
  metadata: Record<string, string>;
  /** The client secret's lookup key: its SHA-256, after 8 digits of its creation time (`client-secret.ts`). */
  clientSecretHash: Buffer;
  clientSecretUsedAt: number | null;
  /** The account currently offered to the payer, if any. */
  accountNumber: string | null;
  /** Amount of the last transfer of the wrong amount, shown on MISMATCH. */
  mismatchReceived: number | null;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
  paidAt: number | null;
}

type SessionRow = {
  seq: number;
  id: string;
  business_id: string;
  environment: Environment;
  reference: string;
  status: SessionStatus;
  amount: number;
  currency: string;
  payer_name: string;
  payer_email: string;
  payer_phone: string | null;
  metadata: string;
  client_secret_hash: Buffer;
  client_secret_used_at: number | null;
  account_number: string | null;
  mismatch_received: number | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
  paid_at: number | null;
};

const toSession = (row: SessionRow): SessionRecord => ({
  seq: row.seq,
  id: row.id,
  businessId: row.business_id,
  environment: row.environment,
  reference: row.reference,
  status: row.status,
  amount: row.amount,
  currency: row.currency,
  payerName: row.payer_name,
  payerEmail: row.payer_email,
  payerPhone: row.payer_phone,
  metadata: JSON.parse(row.metadata) as Record<string, string>,
  clientSecretHash: row.client_secret_hash,
  clientSecretUsedAt: row.client_secret_used_at,
  accountNumber: row.account_number,
  mismatchReceived: row.mismatch_received,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  expiresAt: row.expires_at,
  paidAt: row.paid_at,
});

export type NewSession = Omit<
  SessionRecord,
  'seq' | 'clientSecretUsedAt' | 'accountNumber' | 'mismatchReceived' | 'paidAt'
>;

export interface SessionListQuery {
  businessId: string;
  environment: Environment;
  status?: SessionStatus | undefined;
  reference?: string | undefined;
  /** Only sessions older than this one (cursor). */
  beforeSeq?: number | undefined;
  limit: number;
}

/** The fields a status transition may change, all at once. */
/**
 * The session as the caller read it: a change applies only while its status and its account are still these,
 * so two writers that read the same session cannot both apply a change (on PostgreSQL two instances, or two
 * jobs of one; the second finds the row changed and runs again).
 */
export interface SessionExpectation {
  status: SessionStatus;
  accountNumber: string | null;
}

export interface SessionChange {
  status: SessionStatus;
  updatedAt: number;
  accountNumber: string | null;
  mismatchReceived: number | null;
  paidAt: number | null;
}

export class SessionRepository {
  private readonly insertStatement;
  private readonly findStatement;
  private readonly findByClientSecretStatement;
  private readonly markClientSecretUsedStatement;
  private readonly changeStatement;
  private readonly expireAtStatement;
  private readonly overdueStatement;
  private readonly listStatement;
  private readonly listByStatusStatement;
  private readonly listByReferenceStatement;

  constructor(private readonly db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
         payer_email, payer_phone, metadata, client_secret_hash, created_at, updated_at, expires_at)
       VALUES (@id, @businessId, @environment, @reference, @status, @amount, @currency, @payerName,
         @payerEmail, @payerPhone, @metadata, @clientSecretHash, @createdAt, @updatedAt, @expiresAt)
       ON CONFLICT (business_id, environment, reference) DO NOTHING`,
    );
    this.findStatement = db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?');
    this.findByClientSecretStatement = db.prepare<[Buffer], SessionRow>(
      'SELECT * FROM sessions WHERE client_secret_hash = ?',
    );
    this.markClientSecretUsedStatement = db.prepare<[number, string]>(
      'UPDATE sessions SET client_secret_used_at = ? WHERE id = ? AND client_secret_used_at IS NULL',
    );
    // Guarded by the expected current status: a transition that lost a race changes nothing.
    this.changeStatement = db.prepare(
      `UPDATE sessions SET status = @status, updated_at = @updatedAt, account_number = @accountNumber,
         mismatch_received = @mismatchReceived, paid_at = @paidAt
       WHERE id = @id AND status = @expectedStatus AND account_number IS @expectedAccountNumber`,
    );
    this.expireAtStatement = db.prepare<[number, string, number]>(
      `UPDATE sessions SET expires_at = ?
       WHERE id = ? AND status IN ('pending', 'awaiting_payment', 'mismatch') AND expires_at > ?`,
    );
    this.overdueStatement = db.prepare<[number, number], SessionRow>(
      `SELECT * FROM sessions WHERE status IN ('pending', 'awaiting_payment', 'mismatch') AND expires_at <= ?
       ORDER BY expires_at LIMIT ?`,
    );
    // One statement per filter, not one with `(@status IS NULL OR status = @status)`: SQLite plans a statement
    // once, and that catch-all form can only walk the owner index and skip rows, which at 1M sessions took 272 ms
    // for a rare status or a reference (issue 12). Each statement below reads only the rows it answers; the
    // plans are checked by db/sessions.test.ts (EXPLAIN QUERY PLAN).
    const page = 'seq < @beforeSeq ORDER BY seq DESC LIMIT @limit';
    // The owner index: newest first from the cursor on.
    this.listStatement = db.prepare<Record<string, unknown>, SessionRow>(
      `SELECT * FROM sessions WHERE business_id = @businessId AND environment = @environment AND ${page}`,
    );
    // `sessions_by_owner_status` (migration 006): that status's sessions, newest first from the cursor on.
    this.listByStatusStatement = db.prepare<Record<string, unknown>, SessionRow>(
      `SELECT * FROM sessions WHERE business_id = @businessId AND environment = @environment
         AND status = @status AND ${page}`,
    );
    // The unique (business_id, environment, reference) index: at most one row, then the other conditions on it.
    // `+status` keeps SQLite from weighing the status index for this one row.
    this.listByReferenceStatement = db.prepare<Record<string, unknown>, SessionRow>(
      `SELECT * FROM sessions WHERE business_id = @businessId AND environment = @environment
         AND reference = @reference AND (@status IS NULL OR +status = @status) AND ${page}`,
    );
  }

  /**
   * Inserts a new session and returns it as stored (built from its fields: no read-back on the create path), or
   * undefined, writing nothing, when its business already has a session with this reference in this
   * environment: the unique index decides, in the same statement, so no check can go stale before the write.
   */
  insert(session: NewSession): SessionRecord | undefined {
    const { changes, lastInsertRowid } = this.insertStatement.run({
      ...session,
      metadata: JSON.stringify(session.metadata),
    });
    if (changes === 0) return undefined;
    return {
      ...session,
      seq: Number(lastInsertRowid),
      clientSecretUsedAt: null,
      accountNumber: null,
      mismatchReceived: null,
      paidAt: null,
    };
  }

  find(id: string): SessionRecord | undefined {
    const row = this.findStatement.get(id);
    return row && toSession(row);
  }

  findByClientSecretHash(hash: Buffer): SessionRecord | undefined {
    const row = this.findByClientSecretStatement.get(hash);
    return row && toSession(row);
  }

  /** Marks the client secret exchanged; false when it already was. */
  markClientSecretUsed(id: string, at: number): boolean {
    return this.markClientSecretUsedStatement.run(at, id).changes === 1;
  }

  /** Applies a change only if the session is still as `expected` (status and account); false when it was not. */
  change(id: string, expected: SessionExpectation, change: SessionChange): boolean {
    return (
      this.changeStatement.run({
        id,
        expectedStatus: expected.status,
        expectedAccountNumber: expected.accountNumber,
        ...change,
      }).changes === 1
    );
  }

  /**
   * Brings an open session's end forward to `at` (test mode's "expire now"); false when the session has ended
   * or already ends by then. The sweeper's own code then ends it as at its natural end.
   */
  expireAt(id: string, at: number): boolean {
    return this.expireAtStatement.run(at, id, at).changes === 1;
  }

  overdue(now: number, limit: number): SessionRecord[] {
    return this.overdueStatement.all(now, limit).map(toSession);
  }

  /** One page of an owner's sessions, newest first, through the index that answers the filter (see above). */
  list(query: SessionListQuery): SessionRecord[] {
    const { statement, params } = this.listQuery(query);
    return statement.all(params).map(toSession);
  }

  /**
   * How SQLite runs `list(query)`: the `detail` lines of `EXPLAIN QUERY PLAN` for the very statement and
   * parameters `list` uses. For the tests that hold each filter to its index, and for an operator's question.
   *
   * @example
   * repository.explainList({ businessId, environment: 'test', status: 'pending', limit: 21 });
   * // ['SEARCH sessions USING INDEX sessions_by_owner_status (business_id=? AND environment=? AND status=? AND seq<?)']
   */
  explainList(query: SessionListQuery): string[] {
    const { statement, params } = this.listQuery(query);
    return this.db
      .prepare<Record<string, unknown>, { detail: string }>(`EXPLAIN QUERY PLAN ${statement.source}`)
      .all(params)
      .map((row) => row.detail);
  }

  private listQuery(query: SessionListQuery): {
    statement: Statement<Record<string, unknown>, SessionRow>;
    params: Record<string, unknown>;
  } {
    const params = {
      businessId: query.businessId,
      environment: query.environment,
      beforeSeq: query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: query.limit,
    };
    if (query.reference !== undefined) {
      return {
        statement: this.listByReferenceStatement,
        params: { ...params, reference: query.reference, status: query.status ?? null },
      };
    }
    if (query.status !== undefined) {
      return { statement: this.listByStatusStatement, params: { ...params, status: query.status } };
    }
    return { statement: this.listStatement, params };
  }
}
