import type { Environment, RefundFailureReason, RefundReason, RefundStatus } from '@servicepay/node/protocol';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/**
 * `refunds`: a merchant's refund of a successful session, in minor units of the session's currency. Recorded
 * `pending` in the write job that admits it (`SessionRepository.reserveRefund`), `succeeded` or `failed` once
 * the bank's answer is recorded.
 */
export const refunds = table('refunds', {
  seq: column.serial(),
  id: column.text(),
  businessId: column.text(),
  environment: column.text<Environment>(),
  sessionId: column.text(),
  /** The bank transfer that paid the session: the money goes back to the account it came from. */
  transferId: column.text(),
  amount: column.int(),
  currency: column.text(),
  status: column.text<RefundStatus>(),
  reason: column.nullable(column.text<RefundReason>()),
  failureReason: column.nullable(column.text<RefundFailureReason>()),
  /** Who asked: `secret_key:<environment>`, `portal:<key id>`, `cli:<os user>`. */
  requestedBy: column.text(),
  createdAt: column.int(),
  updatedAt: column.int(),
});

export type RefundRecord = RecordOf<typeof refunds.columns>;

/** The bank's answer to a pending refund: what it ends as. */
export type RefundSettlement =
  | { status: 'succeeded' }
  | { status: 'failed'; failureReason: RefundFailureReason };

/** One page of refunds, newest first: a session's, or an owner's. */
export type RefundListQuery = ({ sessionId: string } | { businessId: string; environment: Environment }) & {
  beforeSeq?: number | undefined;
  limit: number;
};

/** Merchants' refunds as the service reads and writes them. */
export interface RefundRepository {
  insert(refund: Omit<RefundRecord, 'seq'>): Promise<RefundRecord>;
  find(id: string): Promise<RefundRecord | undefined>;
  list(query: RefundListQuery): Promise<RefundRecord[]>;
  /** The newest refunds of every business, or of one business or session: what an operator lists. */
  recent(query: {
    businessId?: string | undefined;
    sessionId?: string | undefined;
    limit: number;
  }): Promise<RefundRecord[]>;
  /** Refunds whose bank answer is not recorded yet, oldest first (the sweeper asks the bank again). */
  pending(limit: number): Promise<RefundRecord[]>;
  /** Records the bank's answer while the refund is pending; false when it was recorded already (by anyone). */
  settle(id: string, settlement: RefundSettlement, now: number): Promise<boolean>;
}

const SELECT = `SELECT ${refunds.select()} FROM refunds`;
const PAGE = 'seq < @beforeSeq ORDER BY seq DESC LIMIT @limit';

const statements = {
  insert: sql<{ seq: number }>(refunds.insert('RETURNING seq')),
  find: sql<RefundRecord>(`${SELECT} WHERE id = @id`),
  bySession: sql<RefundRecord>(`${SELECT} WHERE session_id = @sessionId AND ${PAGE}`),
  byOwner: sql<RefundRecord>(
    `${SELECT} WHERE business_id = @businessId AND environment = @environment AND ${PAGE}`,
  ),
  recent: sql<RefundRecord>(
    `${SELECT} WHERE (CAST(@businessId AS text) IS NULL OR business_id = @businessId)
       AND (CAST(@sessionId AS text) IS NULL OR session_id = @sessionId) ORDER BY seq DESC LIMIT @limit`,
  ),
  pending: sql<RefundRecord>(`${SELECT} WHERE status = 'pending' ORDER BY seq LIMIT @limit`),
  settle: sql(
    `UPDATE refunds SET status = @status, failure_reason = @failureReason, updated_at = @now
     WHERE id = @id AND status = 'pending'`,
  ),
};

/**
 * `RefundRepository` on either store.
 *
 * @example
 * const page = await new SqlRefundRepository(runner).list({ sessionId: 'ses_…', limit: 21 });
 */
export class SqlRefundRepository implements RefundRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(refund: Omit<RefundRecord, 'seq'>): Promise<RefundRecord> {
    const inserted = await this.db.get(statements.insert, refund);
    if (!inserted) throw new Error('the refund insert returned no seq');
    return { ...refund, seq: inserted.seq };
  }

  async find(id: string): Promise<RefundRecord | undefined> {
    return this.db.get(statements.find, { id });
  }

  async list(query: RefundListQuery): Promise<RefundRecord[]> {
    const page = { beforeSeq: query.beforeSeq ?? Number.MAX_SAFE_INTEGER, limit: query.limit };
    return 'sessionId' in query
      ? this.db.all(statements.bySession, { sessionId: query.sessionId, ...page })
      : this.db.all(statements.byOwner, {
          businessId: query.businessId,
          environment: query.environment,
          ...page,
        });
  }

  async recent(query: {
    businessId?: string | undefined;
    sessionId?: string | undefined;
    limit: number;
  }): Promise<RefundRecord[]> {
    return this.db.all(statements.recent, {
      businessId: query.businessId ?? null,
      sessionId: query.sessionId ?? null,
      limit: query.limit,
    });
  }

  async pending(limit: number): Promise<RefundRecord[]> {
    return this.db.all(statements.pending, { limit });
  }

  async settle(id: string, settlement: RefundSettlement, now: number): Promise<boolean> {
    const failureReason = settlement.status === 'failed' ? settlement.failureReason : null;
    return (
      (await this.db.run(statements.settle, { id, status: settlement.status, failureReason, now })) === 1
    );
  }
}
