import type { Environment, ReturnReason, TransferOutcome } from '@servicepay/node/protocol';
import type { CloseAccountResult, CreditedTransfer } from '../bank/bank-gateway.ts';
import type { SqliteDatabase } from './database.ts';

/** An account the simulated bank issued. */
export interface BankAccountRecord {
  accountNumber: string;
  environment: Environment;
  amount: number;
  currency: string;
  accountName: string;
  createdAt: number;
  expiresAt: number;
  closedAt: number | null;
}

/** A transfer as the bank booked it: credited to the account, or returned to the payer. */
export interface BankTransferRecord {
  id: string;
  accountNumber: string;
  amount: number;
  currency: string;
  outcome: TransferOutcome;
  returnReason: ReturnReason | null;
  createdAt: number;
}

/** A notification in the bank's outbox, waiting for the service to acknowledge it. */
export interface BankOutboxRecord {
  id: string;
  transferId: string;
  payload: string;
  attempts: number;
}

/** What the bank decided about a transfer to `account`: the transfer to book and the notification telling it. */
export interface BookedTransfer {
  transfer: BankTransferRecord;
  notification: { id: string; payload: string };
  /** Until when the notification is the booking instance's to deliver (the others' retries leave it alone). */
  claimedUntil: number;
}

/**
 * The simulated bank's own books (the `bank_*` tables, which the service never reads): on SQLite in the
 * service's file, on PostgreSQL in the database every instance shares, so that the bank is one party for all
 * of them, as a real bank is. Every method is one transaction of its own, never part of a service write job.
 *
 * The two rules that keep a payer's money from being lost are the books' to hold, under any concurrency:
 * a credit closes its account in the same transaction that books it (single use), and `closeAccount` either
 * closes an account no credit reached or answers the credit that did. Both lock the account's row, so a
 * transfer and a close of one account are booked one after the other, never interleaved.
 *
 * @example
 * const booked = await books.bookTransfer('0123456789', now, (account) => decide(account));
 * if (!booked) throw new UnknownAccountError('No such account.');
 */
export interface BankBooks {
  /** Records a new account; false when its number is taken (the caller draws another). */
  openAccount(account: Omit<BankAccountRecord, 'closedAt'>): Promise<boolean>;
  findAccount(accountNumber: string): Promise<BankAccountRecord | undefined>;
  /**
   * Closes the account at `now` unless it is closed already. An account a credit closed answers that credit;
   * one closed before, or unknown, answers `closed`. Idempotent.
   */
  closeAccount(accountNumber: string, now: number): Promise<CloseAccountResult>;
  /**
   * Books a transfer to `accountNumber` as `decide` makes it from the account's row, locked meanwhile: the
   * transfer, its notification (claimed until `claimedUntil`) and, for a credit, the account's closing, in one
   * transaction. Undefined when the bank has no such account.
   */
  bookTransfer(
    accountNumber: string,
    now: number,
    decide: (account: BankAccountRecord) => BookedTransfer,
  ): Promise<BookedTransfer | undefined>;
  /** What the bank did with a transfer it booked; undefined when it booked no such transfer. */
  transferOutcome(transferId: string): Promise<TransferOutcome | undefined>;
  /**
   * Records the refund of a booked transfer, of its amount and currency, once per transfer: a second request
   * (from any instance) records nothing and answers the first refund's id. The caller decides whether the
   * transfer may be refunded (`SimulatedBank.refund`).
   */
  recordRefund(input: { id: string; transferId: string; reason: string; now: number }): Promise<string>;
  /**
   * Claims up to `limit` notifications due at `now` for `leaseMs`: no other instance picks them meanwhile, and
   * an instance that dies with them leaves them due again when the lease ends.
   */
  claimDue(now: number, leaseMs: number, limit: number): Promise<BankOutboxRecord[]>;
  markDelivered(id: string, now: number): Promise<void>;
  /** One more failed attempt; due again at `at`. */
  retryAt(id: string, at: number): Promise<void>;
}

type BankAccountRow = {
  account_number: string;
  environment: Environment;
  amount: number;
  currency: string;
  account_name: string;
  created_at: number;
  expires_at: number;
  closed_at: number | null;
};

export type BankOutboxRow = { id: string; transfer_id: string; payload: string; attempts: number };

export const toBankAccount = (row: BankAccountRow): BankAccountRecord => ({
  accountNumber: row.account_number,
  environment: row.environment,
  amount: row.amount,
  currency: row.currency,
  accountName: row.account_name,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  closedAt: row.closed_at,
});

export const toBankOutbox = (row: BankOutboxRow): BankOutboxRecord => ({
  id: row.id,
  transferId: row.transfer_id,
  payload: row.payload,
  attempts: row.attempts,
});

/**
 * `BankBooks` in the service's SQLite file. Each method runs synchronously inside one transaction of its own
 * (better-sqlite3), so nothing interleaves with it in the one process: that is the row lock here. The promises
 * it answers are already settled.
 *
 * @example
 * const bank = new SimulatedBank({ books: new SqliteBankBooks(db), ... });
 */
export class SqliteBankBooks implements BankBooks {
  private readonly statements;
  private readonly bookTransferTransaction;
  private readonly claimTransaction;

  constructor(db: SqliteDatabase) {
    this.statements = {
      insertAccount: db.prepare(
        `INSERT OR IGNORE INTO bank_accounts
           (account_number, environment, amount, currency, account_name, created_at, expires_at)
         VALUES (@accountNumber, @environment, @amount, @currency, @accountName, @createdAt, @expiresAt)`,
      ),
      findAccount: db.prepare<[string], BankAccountRow>(
        'SELECT * FROM bank_accounts WHERE account_number = ?',
      ),
      close: db.prepare<[number, string]>(
        'UPDATE bank_accounts SET closed_at = ? WHERE account_number = ? AND closed_at IS NULL',
      ),
      creditedTo: db.prepare<[string], CreditedTransfer>(
        `SELECT id, account_number AS accountNumber, amount, currency FROM bank_transfers
         WHERE account_number = ? AND outcome = 'credited' ORDER BY created_at LIMIT 1`,
      ),
      insertTransfer: db.prepare(
        `INSERT INTO bank_transfers (id, account_number, amount, currency, outcome, return_reason, created_at)
         VALUES (@id, @accountNumber, @amount, @currency, @outcome, @returnReason, @createdAt)`,
      ),
      findTransfer: db.prepare<[string], { outcome: TransferOutcome }>(
        'SELECT outcome FROM bank_transfers WHERE id = ?',
      ),
      findRefund: db.prepare<[string], { id: string }>('SELECT id FROM bank_refunds WHERE transfer_id = ?'),
      insertRefund: db.prepare<{ id: string; transferId: string; reason: string; now: number }>(
        `INSERT OR IGNORE INTO bank_refunds (id, transfer_id, amount, currency, reason, created_at)
         SELECT @id, id, amount, currency, @reason, @now FROM bank_transfers WHERE id = @transferId`,
      ),
      insertOutbox: db.prepare<[string, string, string, number]>(
        'INSERT INTO bank_outbox (id, transfer_id, payload, next_attempt_at) VALUES (?, ?, ?, ?)',
      ),
      due: db.prepare<[number, number], BankOutboxRow>(
        `SELECT id, transfer_id, payload, attempts FROM bank_outbox
         WHERE delivered_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`,
      ),
      lease: db.prepare<[number, string]>('UPDATE bank_outbox SET next_attempt_at = ? WHERE id = ?'),
      delivered: db.prepare<[number, string]>('UPDATE bank_outbox SET delivered_at = ? WHERE id = ?'),
      retryAt: db.prepare<[number, string]>(
        'UPDATE bank_outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE id = ?',
      ),
    };
    this.bookTransferTransaction = db.transaction(
      (accountNumber: string, now: number, decide: (account: BankAccountRecord) => BookedTransfer) => {
        const row = this.statements.findAccount.get(accountNumber);
        if (!row) return undefined;
        const booked = decide(toBankAccount(row));
        this.statements.insertTransfer.run(booked.transfer);
        this.statements.insertOutbox.run(
          booked.notification.id,
          booked.transfer.id,
          booked.notification.payload,
          booked.claimedUntil,
        );
        // Single use: a credited account takes nothing more.
        if (booked.transfer.outcome === 'credited') this.statements.close.run(now, accountNumber);
        return booked;
      },
    );
    this.claimTransaction = db.transaction((now: number, leaseMs: number, limit: number) => {
      const rows = this.statements.due.all(now, limit);
      for (const row of rows) this.statements.lease.run(now + leaseMs, row.id);
      return rows.map(toBankOutbox);
    });
  }

  async openAccount(account: Omit<BankAccountRecord, 'closedAt'>): Promise<boolean> {
    return this.statements.insertAccount.run(account).changes === 1;
  }

  async findAccount(accountNumber: string): Promise<BankAccountRecord | undefined> {
    const row = this.statements.findAccount.get(accountNumber);
    return row && toBankAccount(row);
  }

  async closeAccount(accountNumber: string, now: number): Promise<CloseAccountResult> {
    if (this.statements.close.run(now, accountNumber).changes === 1) return { closed: true };
    // Closed before: by a credit (booked with its closing, so visible now), or by an earlier close.
    const credited = this.statements.creditedTo.get(accountNumber);
    return credited ? { alreadyCredited: credited } : { closed: true };
  }

  async bookTransfer(
    accountNumber: string,
    now: number,
    decide: (account: BankAccountRecord) => BookedTransfer,
  ): Promise<BookedTransfer | undefined> {
    return this.bookTransferTransaction(accountNumber, now, decide);
  }

  async transferOutcome(transferId: string): Promise<TransferOutcome | undefined> {
    return this.statements.findTransfer.get(transferId)?.outcome;
  }

  async recordRefund(input: {
    id: string;
    transferId: string;
    reason: string;
    now: number;
  }): Promise<string> {
    // One statement, so a refund inserted by nobody in between is inserted here (one process: nothing runs between).
    this.statements.insertRefund.run(input);
    const refund = this.statements.findRefund.get(input.transferId);
    if (!refund) throw new Error(`the refund of ${input.transferId} was not recorded: no such transfer`);
    return refund.id;
  }

  async claimDue(now: number, leaseMs: number, limit: number): Promise<BankOutboxRecord[]> {
    return this.claimTransaction(now, leaseMs, limit);
  }

  async markDelivered(id: string, now: number): Promise<void> {
    this.statements.delivered.run(now, id);
  }

  async retryAt(id: string, at: number): Promise<void> {
    this.statements.retryAt.run(at, id);
  }
}
