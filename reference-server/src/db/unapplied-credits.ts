import type { Environment } from '@servicepay/node/protocol';
import type { SqliteDatabase } from './database.ts';

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

/** A credit the bank made that no session could take, and what became of it. */
export interface UnappliedCreditRecord {
  seq: number;
  id: string;
  transferId: string;
  businessId: string | null;
  environment: Environment | null;
  sessionId: string | null;
  accountNumber: string;
  amount: number;
  currency: string;
  reason: UnappliedReason;
  refundStatus: RefundStatus;
  refundId: string | null;
  createdAt: number;
}

type Row = {
  seq: number;
  id: string;
  transfer_id: string;
  business_id: string | null;
  environment: Environment | null;
  session_id: string | null;
  account_number: string;
  amount: number;
  currency: string;
  reason: UnappliedReason;
  refund_status: RefundStatus;
  refund_id: string | null;
  created_at: number;
};

const toRecord = (row: Row): UnappliedCreditRecord => ({
  seq: row.seq,
  id: row.id,
  transferId: row.transfer_id,
  businessId: row.business_id,
  environment: row.environment,
  sessionId: row.session_id,
  accountNumber: row.account_number,
  amount: row.amount,
  currency: row.currency,
  reason: row.reason,
  refundStatus: row.refund_status,
  refundId: row.refund_id,
  createdAt: row.created_at,
});

/**
 * Credits the service could not apply, oldest first: what an operator lists after an incident
 * (`servicepay-server credits list`).
 *
 * @example
 * const credits = new UnappliedCreditRepository(db).list({ businessId: 'biz_…', limit: 100 });
 */
export class UnappliedCreditRepository {
  private readonly insertStatement;
  private readonly listStatement;
  private readonly findStatement;
  private readonly findByTransferStatement;
  private readonly pendingStatement;
  private readonly settleStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO unapplied_credits (id, transfer_id, business_id, environment, session_id, account_number,
         amount, currency, reason, refund_status, refund_id, created_at)
       VALUES (@id, @transferId, @businessId, @environment, @sessionId, @accountNumber, @amount, @currency,
         @reason, @refundStatus, @refundId, @createdAt)`,
    );
    this.listStatement = db.prepare<{ businessId: string | null; limit: number }, Row>(
      `SELECT * FROM unapplied_credits WHERE (@businessId IS NULL OR business_id = @businessId)
       ORDER BY seq LIMIT @limit`,
    );
    this.findStatement = db.prepare<[string], Row>('SELECT * FROM unapplied_credits WHERE id = ?');
    this.findByTransferStatement = db.prepare<[string], Row>(
      'SELECT * FROM unapplied_credits WHERE transfer_id = ?',
    );
    this.pendingStatement = db.prepare<[number], Row>(
      `SELECT * FROM unapplied_credits WHERE refund_status = 'refund_pending' ORDER BY seq LIMIT ?`,
    );
    this.settleStatement = db.prepare<[string, string | null, string]>(
      `UPDATE unapplied_credits SET refund_status = ?, refund_id = ?
       WHERE id = ? AND refund_status = 'refund_pending'`,
    );
  }

  insert(credit: Omit<UnappliedCreditRecord, 'seq'>): UnappliedCreditRecord {
    const { lastInsertRowid } = this.insertStatement.run(credit);
    return { ...credit, seq: Number(lastInsertRowid) };
  }

  list(query: { businessId?: string | undefined; limit: number }): UnappliedCreditRecord[] {
    return this.listStatement.all({ businessId: query.businessId ?? null, limit: query.limit }).map(toRecord);
  }

  find(id: string): UnappliedCreditRecord | undefined {
    const row = this.findStatement.get(id);
    return row && toRecord(row);
  }

  findByTransfer(transferId: string): UnappliedCreditRecord | undefined {
    const row = this.findByTransferStatement.get(transferId);
    return row && toRecord(row);
  }

  /** Credits whose refund is still pending, oldest first. */
  pendingRefunds(limit: number): UnappliedCreditRecord[] {
    return this.pendingStatement.all(limit).map(toRecord);
  }

  /** Records the bank's answer to a pending refund; false when it was recorded already (by anyone). */
  settleRefund(id: string, outcome: RefundOutcome): boolean {
    const refundId = outcome.refundStatus === 'refunded' ? outcome.refundId : null;
    return this.settleStatement.run(outcome.refundStatus, refundId, id).changes === 1;
  }
}
