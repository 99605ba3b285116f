import type { Environment } from '@servicepay/node/protocol';
import type { Async } from '../repositories.ts';
import type {
  RefundOutcome,
  RefundStatus,
  UnappliedCreditRecord,
  UnappliedCreditRepository,
  UnappliedReason,
} from '../unapplied-credits.ts';
import { exactInteger } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';
import { runQuery } from './run-query.ts';

type Row = {
  seq: string;
  id: string;
  transfer_id: string;
  business_id: string | null;
  environment: Environment | null;
  session_id: string | null;
  account_number: string;
  amount: string;
  currency: string;
  reason: UnappliedReason;
  refund_status: RefundStatus;
  refund_id: string | null;
  created_at: string;
};

const toRecord = (row: Row): UnappliedCreditRecord => ({
  seq: exactInteger(row.seq),
  id: row.id,
  transferId: row.transfer_id,
  businessId: row.business_id,
  environment: row.environment,
  sessionId: row.session_id,
  accountNumber: row.account_number,
  amount: exactInteger(row.amount),
  currency: row.currency,
  reason: row.reason,
  refundStatus: row.refund_status,
  refundId: row.refund_id,
  createdAt: exactInteger(row.created_at),
});

/**
 * `unapplied_credits` on PostgreSQL: the twin of the SQLite `UnappliedCreditRepository`, oldest first.
 * `transfer_id` is unique: a second insert of one transfer fails, whichever instance makes it.
 *
 * @example
 * const credits = await new PostgresUnappliedCreditRepository(pool).list({ businessId: 'biz_…', limit: 100 });
 */
export class PostgresUnappliedCreditRepository implements Async<UnappliedCreditRepository> {
  constructor(private readonly db: Queryable) {}

  async insert(credit: Omit<UnappliedCreditRecord, 'seq'>): Promise<UnappliedCreditRecord> {
    // RETURNING seq is what SQLite's lastInsertRowid was: the identity this very insert took.
    const { rows } = await runQuery<{ seq: string }>(
      this.db,
      `INSERT INTO unapplied_credits (id, transfer_id, business_id, environment, session_id, account_number,
         amount, currency, reason, refund_status, refund_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       RETURNING seq`,
      [
        credit.id,
        credit.transferId,
        credit.businessId,
        credit.environment,
        credit.sessionId,
        credit.accountNumber,
        credit.amount,
        credit.currency,
        credit.reason,
        credit.refundStatus,
        credit.refundId,
        credit.createdAt,
      ],
    );
    const seq = rows[0]?.seq;
    if (seq === undefined) throw new Error('the unapplied credit insert returned no seq');
    return { ...credit, seq: exactInteger(seq) };
  }

  async list(query: { businessId?: string | undefined; limit: number }): Promise<UnappliedCreditRecord[]> {
    const { rows } = await runQuery<Row>(
      this.db,
      `SELECT * FROM unapplied_credits WHERE ($1::text IS NULL OR business_id = $1)
       ORDER BY seq LIMIT $2`,
      [query.businessId ?? null, query.limit],
    );
    return rows.map(toRecord);
  }

  async find(id: string): Promise<UnappliedCreditRecord | undefined> {
    const { rows } = await runQuery<Row>(this.db, 'SELECT * FROM unapplied_credits WHERE id = $1', [id]);
    return rows[0] && toRecord(rows[0]);
  }

  async findByTransfer(transferId: string): Promise<UnappliedCreditRecord | undefined> {
    const { rows } = await runQuery<Row>(this.db, 'SELECT * FROM unapplied_credits WHERE transfer_id = $1', [
      transferId,
    ]);
    return rows[0] && toRecord(rows[0]);
  }

  async pendingRefunds(limit: number): Promise<UnappliedCreditRecord[]> {
    const { rows } = await runQuery<Row>(
      this.db,
      `SELECT * FROM unapplied_credits WHERE refund_status = 'refund_pending' ORDER BY seq LIMIT $1`,
      [limit],
    );
    return rows.map(toRecord);
  }

  async settleRefund(id: string, outcome: RefundOutcome): Promise<boolean> {
    const { rowCount } = await runQuery(
      this.db,
      `UPDATE unapplied_credits SET refund_status = $1, refund_id = $2
       WHERE id = $3 AND refund_status = 'refund_pending'`,
      [outcome.refundStatus, outcome.refundStatus === 'refunded' ? outcome.refundId : null, id],
    );
    return rowCount === 1;
  }
}
