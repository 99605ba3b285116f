import type { Environment } from '@servicepay/node/protocol';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** Why a credit could not be applied to a session. */
export type UnappliedReason =
  | 'session_ended'
  | 'account_closed'
  | 'currency_mismatch'
  | 'amount_mismatch'
  | 'unknown_account';

/**
 * `refund_pending`: recorded, the bank's answer to the refund not recorded yet; `refunded`: the bank sent it
 * back to the payer; `refund_refused`: the bank holds no such credit.
 */
export type RefundStatus = 'refund_pending' | 'refunded' | 'refund_refused';

/** What the bank answered to a refund: the two outcomes a pending refund ends in. */
export type RefundOutcome =
  | { refundStatus: 'refunded'; refundId: string }
  | { refundStatus: 'refund_refused' };

/** `unapplied_credits`: a credit the bank made that no session could take, and what became of it. */
export const unappliedCredits = table('unapplied_credits', {
  seq: column.serial(),
  id: column.text(),
  transferId: column.text(),
  /** Null when the account is unknown to the service: no merchant to tell, the operator sees it. */
  businessId: column.nullable(column.text()),
  environment: column.nullable(column.text<Environment>()),
  sessionId: column.nullable(column.text()),
  accountNumber: column.text(),
  amount: column.int(),
  currency: column.text(),
  reason: column.text<UnappliedReason>(),
  refundStatus: column.text<RefundStatus>(),
  refundId: column.nullable(column.text()),
  createdAt: column.int(),
});

export type UnappliedCreditRecord = RecordOf<typeof unappliedCredits.columns>;

/**
 * Credits the service could not apply, oldest first: what an operator lists after an incident
 * (`servicepay-server credits list`). `transfer_id` is unique: a second insert of one transfer fails.
 */
export interface UnappliedCreditRepository {
  insert(credit: Omit<UnappliedCreditRecord, 'seq'>): Promise<UnappliedCreditRecord>;
  list(query: { businessId?: string | undefined; limit: number }): Promise<UnappliedCreditRecord[]>;
  find(id: string): Promise<UnappliedCreditRecord | undefined>;
  findByTransfer(transferId: string): Promise<UnappliedCreditRecord | undefined>;
  /** Credits whose refund is still pending, oldest first. */
  pendingRefunds(limit: number): Promise<UnappliedCreditRecord[]>;
  /** Records the bank's answer to a pending refund; false when it was recorded already (by anyone). */
  settleRefund(id: string, outcome: RefundOutcome): Promise<boolean>;
}

const SELECT = `SELECT ${unappliedCredits.select()} FROM unapplied_credits`;

const statements = {
  insert: sql<{ seq: number }>(unappliedCredits.insert('RETURNING seq')),
  list: sql<UnappliedCreditRecord>(
    `${SELECT} WHERE (CAST(@businessId AS text) IS NULL OR business_id = @businessId) ORDER BY seq LIMIT @limit`,
  ),
  find: sql<UnappliedCreditRecord>(`${SELECT} WHERE id = @id`),
  findByTransfer: sql<UnappliedCreditRecord>(`${SELECT} WHERE transfer_id = @transferId`),
  pending: sql<UnappliedCreditRecord>(
    `${SELECT} WHERE refund_status = 'refund_pending' ORDER BY seq LIMIT @limit`,
  ),
  settle: sql(
    `UPDATE unapplied_credits SET refund_status = @refundStatus, refund_id = @refundId
     WHERE id = @id AND refund_status = 'refund_pending'`,
  ),
};

/**
 * `UnappliedCreditRepository` on either store.
 *
 * @example
 * const credits = await new SqlUnappliedCreditRepository(runner).list({ businessId: 'biz_…', limit: 100 });
 */
export class SqlUnappliedCreditRepository implements UnappliedCreditRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(credit: Omit<UnappliedCreditRecord, 'seq'>): Promise<UnappliedCreditRecord> {
    const inserted = await this.db.get(statements.insert, credit);
    if (!inserted) throw new Error('the unapplied credit insert returned no seq');
    return { ...credit, seq: inserted.seq };
  }

  async list(query: { businessId?: string | undefined; limit: number }): Promise<UnappliedCreditRecord[]> {
    return this.db.all(statements.list, { businessId: query.businessId ?? null, limit: query.limit });
  }

  async find(id: string): Promise<UnappliedCreditRecord | undefined> {
    return this.db.get(statements.find, { id });
  }

  async findByTransfer(transferId: string): Promise<UnappliedCreditRecord | undefined> {
    return this.db.get(statements.findByTransfer, { transferId });
  }

  async pendingRefunds(limit: number): Promise<UnappliedCreditRecord[]> {
    return this.db.all(statements.pending, { limit });
  }

  async settleRefund(id: string, outcome: RefundOutcome): Promise<boolean> {
    const refundId = outcome.refundStatus === 'refunded' ? outcome.refundId : null;
    return (await this.db.run(statements.settle, { id, refundStatus: outcome.refundStatus, refundId })) === 1;
  }
}
