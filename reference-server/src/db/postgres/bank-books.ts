import type { TransferOutcome } from '@servicepay/node/protocol';
import type pg from 'pg';
import type { CloseAccountResult, CreditedTransfer } from '../../bank/bank-gateway.ts';
import {
  type BankAccountRecord,
  type BankBooks,
  type BankOutboxRecord,
  type BankOutboxRow,
  type BookedTransfer,
  toBankOutbox,
} from '../bank-books.ts';
import { exactInteger, exactIntegerOrNull } from './exact-integer.ts';
import { runQuery } from './run-query.ts';

type AccountRow = {
  account_number: string;
  environment: BankAccountRecord['environment'];
  amount: string | number;
  currency: string;
  account_name: string;
  created_at: string | number;
  expires_at: string | number;
  closed_at: string | number | null;
};

type CreditedRow = { id: string; account_number: string; amount: string | number; currency: string };

const toAccount = (row: AccountRow): BankAccountRecord => ({
  accountNumber: row.account_number,
  environment: row.environment,
  amount: exactInteger(row.amount),
  currency: row.currency,
  accountName: row.account_name,
  createdAt: exactInteger(row.created_at),
  expiresAt: exactInteger(row.expires_at),
  closedAt: exactIntegerOrNull(row.closed_at),
});

const toCredited = (row: CreditedRow): CreditedTransfer => ({
  id: row.id,
  accountNumber: row.account_number,
  amount: exactInteger(row.amount),
  currency: row.currency,
});

/**
 * `BankBooks` in the PostgreSQL database every instance shares: the simulated bank is one party for all of
 * them, so a payer's transfer may reach any instance. A transfer locks its account's row (`FOR UPDATE`) for
 * the transaction that books it and, for a credit, closes the account; `closeAccount` is one conditional
 * `UPDATE` on the same row, which waits for that lock and then sees the credit's commit. So a transfer and a
 * close of one account, from any two instances, are booked one after the other: the close either wins (the
 * transfer is returned to the payer) or answers the credit.
 *
 * @example
 * const bank = new SimulatedBank({ books: new PostgresBankBooks(pool), ... });
 */
export class PostgresBankBooks implements BankBooks {
  constructor(private readonly pool: pg.Pool) {}

  async openAccount(account: Omit<BankAccountRecord, 'closedAt'>): Promise<boolean> {
    const { rowCount } = await runQuery(
      this.pool,
      `INSERT INTO bank_accounts
         (account_number, environment, amount, currency, account_name, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_number) DO NOTHING`,
      [
        account.accountNumber,
        account.environment,
        account.amount,
        account.currency,
        account.accountName,
        account.createdAt,
        account.expiresAt,
      ],
    );
    return rowCount === 1;
  }

  async findAccount(accountNumber: string): Promise<BankAccountRecord | undefined> {
    const { rows } = await runQuery<AccountRow>(
      this.pool,
      'SELECT * FROM bank_accounts WHERE account_number = $1',
      [accountNumber],
    );
    return rows[0] && toAccount(rows[0]);
  }

  async closeAccount(accountNumber: string, now: number): Promise<CloseAccountResult> {
    const closed = await runQuery(
      this.pool,
      'UPDATE bank_accounts SET closed_at = $1 WHERE account_number = $2 AND closed_at IS NULL',
      [now, accountNumber],
    );
    if (closed.rowCount === 1) return { closed: true };
    // Closed before: by a credit, committed with its closing (this statement started after), or by a close.
    const { rows } = await runQuery<CreditedRow>(
      this.pool,
      `SELECT id, account_number, amount, currency FROM bank_transfers
       WHERE account_number = $1 AND outcome = 'credited' ORDER BY created_at LIMIT 1`,
      [accountNumber],
    );
    return rows[0] ? { alreadyCredited: toCredited(rows[0]) } : { closed: true };
  }

  async bookTransfer(
    accountNumber: string,
    now: number,
    decide: (account: BankAccountRecord) => BookedTransfer,
  ): Promise<BookedTransfer | undefined> {
    const client = await this.pool.connect();
    let release: Error | undefined;
    try {
      await client.query('BEGIN');
      const { rows } = await runQuery<AccountRow>(
        client,
        'SELECT * FROM bank_accounts WHERE account_number = $1 FOR UPDATE',
        [accountNumber],
      );
      if (!rows[0]) {
        await client.query('ROLLBACK');
        return undefined;
      }
      const booked = decide(toAccount(rows[0]));
      const { transfer, notification } = booked;
      await client.query(
        `INSERT INTO bank_transfers (id, account_number, amount, currency, outcome, return_reason, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          transfer.id,
          transfer.accountNumber,
          transfer.amount,
          transfer.currency,
          transfer.outcome,
          transfer.returnReason,
          transfer.createdAt,
        ],
      );
      await client.query(
        'INSERT INTO bank_outbox (id, transfer_id, payload, next_attempt_at) VALUES ($1, $2, $3, $4)',
        [notification.id, transfer.id, notification.payload, booked.claimedUntil],
      );
      // Single use: a credited account takes nothing more.
      if (transfer.outcome === 'credited') {
        await client.query('UPDATE bank_accounts SET closed_at = $1 WHERE account_number = $2', [
          now,
          accountNumber,
        ]);
      }
      await client.query('COMMIT');
      return booked;
    } catch (error) {
      // A connection that failed mid-transaction is not handed to anyone else.
      release = error instanceof Error ? error : new Error(String(error));
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(release);
    }
  }

  async transferOutcome(transferId: string): Promise<TransferOutcome | undefined> {
    const { rows } = await runQuery<{ outcome: TransferOutcome }>(
      this.pool,
      'SELECT outcome FROM bank_transfers WHERE id = $1',
      [transferId],
    );
    return rows[0]?.outcome;
  }

  async recordRefund(input: {
    id: string;
    transferId: string;
    reason: string;
    now: number;
  }): Promise<string> {
    // One refund per transfer (unique transfer_id): a request racing another, from any instance, inserts
    // nothing and reads the refund that won.
    await runQuery(
      this.pool,
      `INSERT INTO bank_refunds (id, transfer_id, amount, currency, reason, created_at)
       SELECT $1, id, amount, currency, $3, $4 FROM bank_transfers WHERE id = $2
       ON CONFLICT (transfer_id) DO NOTHING`,
      [input.id, input.transferId, input.reason, input.now],
    );
    const { rows } = await runQuery<{ id: string }>(
      this.pool,
      'SELECT id FROM bank_refunds WHERE transfer_id = $1',
      [input.transferId],
    );
    if (!rows[0]) throw new Error(`the refund of ${input.transferId} was not recorded: no such transfer`);
    return rows[0].id;
  }

  async claimDue(now: number, leaseMs: number, limit: number): Promise<BankOutboxRecord[]> {
    const { rows } = await runQuery<BankOutboxRow>(
      this.pool,
      `UPDATE bank_outbox SET next_attempt_at = $2
       WHERE id IN (
         SELECT id FROM bank_outbox WHERE delivered_at IS NULL AND next_attempt_at <= $1
         ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING id, transfer_id, payload, attempts`,
      [now, now + leaseMs, limit],
    );
    return rows.map(toBankOutbox);
  }

  async markDelivered(id: string, now: number): Promise<void> {
    await runQuery(this.pool, 'UPDATE bank_outbox SET delivered_at = $1 WHERE id = $2', [now, id]);
  }

  async retryAt(id: string, at: number): Promise<void> {
    await runQuery(
      this.pool,
      'UPDATE bank_outbox SET attempts = attempts + 1, next_attempt_at = $1 WHERE id = $2 AND delivered_at IS NULL',
      [at, id],
    );
  }
}
