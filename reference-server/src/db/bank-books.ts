import type { Environment, ReturnReason, TransferOutcome } from '@servicepay/node/protocol';
import { type SqlDatabase, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** A transfer the bank credited, as its books show it (also `BankGateway`'s word for it). */
export interface CreditedTransfer {
  id: string;
  accountNumber: string;
  amount: number;
  currency: string;
  /** The account the payer's money came from, as the bank booked it (null: booked before it was kept). */
  payerAccount?: string | null | undefined;
}

/**
 * A credit the bank sent back, as its books have it: the bank's refund id and, for the ledger, what moved
 * (the transfer's own amount and currency, whatever a notification said) and the account it went back to.
 * The optional fields are absent from a bank that does not say.
 */
export interface SentBack {
  id: string;
  payerAccount?: string | null;
  amount?: number;
  currency?: string;
}

/**
 * The bank's answer to closing an account: closed (later transfers go back to the payer), or the account had
 * already been credited, in which case that credit is the truth and the caller must settle it.
 */
export type CloseAccountResult = { closed: true } | { alreadyCredited: CreditedTransfer };

/**
 * What the bank did with a merchant's refund: the payer's account credited back, or refused (nothing moved):
 * `payer_account_closed` (the payer's bank closed the account), or the bank holds no credit it fits.
 */
export type PaymentRefundResult =
  | { refunded: { payerAccount: string } }
  | { refused: 'payer_account_closed' | 'unknown_transfer' | 'not_credited' | 'exceeds_transfer' };

/** `bank_accounts`: an account the simulated bank issued. */
export const bankAccounts = table('bank_accounts', {
  accountNumber: column.text(),
  environment: column.text<Environment>(),
  amount: column.int(),
  currency: column.text(),
  accountName: column.text(),
  createdAt: column.int(),
  expiresAt: column.int(),
  closedAt: column.nullable(column.int()),
});

/** `bank_transfers`: a transfer as the bank booked it: credited to the account, or returned to the payer. */
export const bankTransfers = table('bank_transfers', {
  id: column.text(),
  accountNumber: column.text(),
  amount: column.int(),
  currency: column.text(),
  outcome: column.text<TransferOutcome>(),
  returnReason: column.nullable(column.text<ReturnReason>()),
  createdAt: column.int(),
  /** The account the payer's money came from: where a refund of it goes. Null when booked before it was kept. */
  payerAccount: column.nullable(column.text()),
});

/** `bank_payer_refunds`: money the bank sent back to a payer at a merchant's request, one row per refund id. */
export const bankPayerRefunds = table('bank_payer_refunds', {
  id: column.text(),
  transferId: column.text(),
  payerAccount: column.text(),
  amount: column.int(),
  currency: column.text(),
  outcome: column.text<'credited' | 'refused'>(),
  refusedReason: column.nullable(column.text()),
  createdAt: column.int(),
});

export type BankPayerRefundRecord = RecordOf<typeof bankPayerRefunds.columns>;

export type BankAccountRecord = RecordOf<typeof bankAccounts.columns>;
export type BankTransferRecord = RecordOf<typeof bankTransfers.columns>;

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
  /** A transfer the bank booked, as booked (the payer's account included); undefined when it booked none. */
  findTransfer(transferId: string): Promise<BankTransferRecord | undefined>;
  /**
   * Records the refund of a booked transfer, of its amount and currency, once per transfer: a second request
   * (from any instance) records nothing and answers the first refund's id. The caller decides whether the
   * transfer may be refunded (`SimulatedBank.refund`).
   */
  recordRefund(input: { id: string; transferId: string; reason: string; now: number }): Promise<string>;
  /**
   * Books a merchant's refund of `transferId` under the service's refund id, once: the transfer's row locked
   * meanwhile, so refunds of one transfer from any instances are booked one after the other and never add up
   * to more than it credited. A refund id booked before answers as it was booked, moving nothing more.
   * `refuse` names payer accounts whose bank refuses the money (closed).
   */
  bookPayerRefund(input: {
    id: string;
    transferId: string;
    amount: number;
    now: number;
    defaultPayerAccount: string;
    refuse: (payerAccount: string) => 'payer_account_closed' | undefined;
  }): Promise<PaymentRefundResult>;
  /** Every refund the bank booked to a payer's account, oldest first: what the payer's statement shows. */
  payerRefunds(payerAccount: string): Promise<BankPayerRefundRecord[]>;
  /**
   * Claims up to `limit` notifications due at `now` for `leaseMs`: no other instance picks them meanwhile, and
   * an instance that dies with them leaves them due again when the lease ends.
   */
  claimDue(now: number, leaseMs: number, limit: number): Promise<BankOutboxRecord[]>;
  markDelivered(id: string, now: number): Promise<void>;
  /** One more failed attempt; due again at `at`. */
  retryAt(id: string, at: number): Promise<void>;
}

const FIND_TRANSFER = `SELECT ${bankTransfers.select()} FROM bank_transfers WHERE id = @id`;
const FIND_ACCOUNT = `SELECT ${bankAccounts.select()} FROM bank_accounts WHERE account_number = @accountNumber`;
const CLAIM_DUE = `SELECT id FROM bank_outbox WHERE delivered_at IS NULL AND next_attempt_at <= @now
  ORDER BY next_attempt_at LIMIT @limit`;

const statements = {
  openAccount: sql(bankAccounts.insert('ON CONFLICT (account_number) DO NOTHING')),
  findAccount: sql<BankAccountRecord>(FIND_ACCOUNT),
  // The account's row locked for the booking: on SQLite the transaction is the lock (one writer, one process).
  lockAccount: sql<BankAccountRecord>({ sqlite: FIND_ACCOUNT, postgres: `${FIND_ACCOUNT} FOR UPDATE` }),
  close: sql(
    'UPDATE bank_accounts SET closed_at = @now WHERE account_number = @accountNumber AND closed_at IS NULL',
  ),
  creditedTo: sql<CreditedTransfer>(
    `SELECT id, account_number AS "accountNumber", amount, currency, payer_account AS "payerAccount" FROM bank_transfers
     WHERE account_number = @accountNumber AND outcome = 'credited' ORDER BY created_at LIMIT 1`,
  ),
  insertTransfer: sql(bankTransfers.insert()),
  findTransfer: sql<{ outcome: TransferOutcome }>('SELECT outcome FROM bank_transfers WHERE id = @id'),
  findBookedTransfer: sql<BankTransferRecord>(FIND_TRANSFER),
  // One refund per transfer (unique transfer_id): a request racing another, from any instance, inserts nothing.
  insertRefund: sql(
    `INSERT INTO bank_refunds (id, transfer_id, amount, currency, reason, created_at)
     SELECT @id, id, amount, currency, @reason, @now FROM bank_transfers WHERE id = @transferId
     ON CONFLICT (transfer_id) DO NOTHING`,
  ),
  findRefund: sql<{ id: string }>('SELECT id FROM bank_refunds WHERE transfer_id = @transferId'),
  // The transfer's row locked while a merchant's refund of it is booked: refunds of one transfer in turn.
  lockTransfer: sql<BankTransferRecord>({ sqlite: FIND_TRANSFER, postgres: `${FIND_TRANSFER} FOR UPDATE` }),
  findPayerRefund: sql<BankPayerRefundRecord>(
    `SELECT ${bankPayerRefunds.select()} FROM bank_payer_refunds WHERE id = @id`,
  ),
  payerRefundedOf: sql<{ total: number | null }>(
    `SELECT sum(amount) AS total FROM bank_payer_refunds WHERE transfer_id = @transferId AND outcome = 'credited'`,
  ),
  insertPayerRefund: sql(bankPayerRefunds.insert()),
  payerRefunds: sql<BankPayerRefundRecord>(
    `SELECT ${bankPayerRefunds.select()} FROM bank_payer_refunds WHERE payer_account = @payerAccount
     ORDER BY created_at, id`,
  ),
  insertOutbox: sql(
    'INSERT INTO bank_outbox (id, transfer_id, payload, next_attempt_at) VALUES (@id, @transferId, @payload, @until)',
  ),
  claimDue: sql<BankOutboxRecord>({
    sqlite: `UPDATE bank_outbox SET next_attempt_at = @until WHERE id IN (${CLAIM_DUE})
      RETURNING id, transfer_id AS "transferId", payload, attempts`,
    postgres: `UPDATE bank_outbox SET next_attempt_at = @until WHERE id IN (${CLAIM_DUE} FOR UPDATE SKIP LOCKED)
      RETURNING id, transfer_id AS "transferId", payload, attempts`,
  }),
  delivered: sql('UPDATE bank_outbox SET delivered_at = @now WHERE id = @id'),
  retryAt: sql(
    'UPDATE bank_outbox SET attempts = attempts + 1, next_attempt_at = @at WHERE id = @id AND delivered_at IS NULL',
  ),
};

/**
 * `BankBooks` on either store. A transfer locks its account's row for the transaction that books it and, for
 * a credit, closes the account (on PostgreSQL `FOR UPDATE`; on SQLite the write transaction itself, one
 * process and one writer); `closeAccount` is one conditional `UPDATE` on the same row, which waits for that
 * lock and then sees the credit's commit. So a transfer and a close of one account, from any two instances, are
 * booked one after the other: the close either wins (the transfer is returned to the payer) or answers the
 * credit.
 *
 * @example
 * const bank = new SimulatedBank({ books: new SqlBankBooks(backendDatabase), ... });
 */
export class SqlBankBooks implements BankBooks {
  constructor(private readonly db: SqlDatabase) {}

  async openAccount(account: Omit<BankAccountRecord, 'closedAt'>): Promise<boolean> {
    return (await this.db.run(statements.openAccount, { ...account, closedAt: null })) === 1;
  }

  async findAccount(accountNumber: string): Promise<BankAccountRecord | undefined> {
    return this.db.get(statements.findAccount, { accountNumber });
  }

  async closeAccount(accountNumber: string, now: number): Promise<CloseAccountResult> {
    if ((await this.db.run(statements.close, { accountNumber, now })) === 1) return { closed: true };
    // Closed before: by a credit (booked with its closing, so visible now), or by an earlier close.
    const credited = await this.db.get(statements.creditedTo, { accountNumber });
    return credited ? { alreadyCredited: credited } : { closed: true };
  }

  async bookTransfer(
    accountNumber: string,
    now: number,
    decide: (account: BankAccountRecord) => BookedTransfer,
  ): Promise<BookedTransfer | undefined> {
    return this.db.transaction(async (tx) => {
      const account = await tx.get(statements.lockAccount, { accountNumber });
      if (!account) return undefined;
      const booked = decide(account);
      await tx.run(statements.insertTransfer, booked.transfer);
      await tx.run(statements.insertOutbox, {
        id: booked.notification.id,
        transferId: booked.transfer.id,
        payload: booked.notification.payload,
        until: booked.claimedUntil,
      });
      // Single use: a credited account takes nothing more.
      if (booked.transfer.outcome === 'credited') await tx.run(statements.close, { accountNumber, now });
      return booked;
    });
  }

  async transferOutcome(transferId: string): Promise<TransferOutcome | undefined> {
    return (await this.db.get(statements.findTransfer, { id: transferId }))?.outcome;
  }

  async findTransfer(transferId: string): Promise<BankTransferRecord | undefined> {
    return this.db.get(statements.findBookedTransfer, { id: transferId });
  }

  async recordRefund(input: {
    id: string;
    transferId: string;
    reason: string;
    now: number;
  }): Promise<string> {
    await this.db.run(statements.insertRefund, input);
    const refund = await this.db.get(statements.findRefund, { transferId: input.transferId });
    if (!refund) throw new Error(`the refund of ${input.transferId} was not recorded: no such transfer`);
    return refund.id;
  }

  async bookPayerRefund(input: {
    id: string;
    transferId: string;
    amount: number;
    now: number;
    defaultPayerAccount: string;
    refuse: (payerAccount: string) => 'payer_account_closed' | undefined;
  }): Promise<PaymentRefundResult> {
    return this.db.transaction(async (tx) => {
      const transfer = await tx.get(statements.lockTransfer, { id: input.transferId });
      if (!transfer) return { refused: 'unknown_transfer' };
      const booked = await tx.get(statements.findPayerRefund, { id: input.id });
      if (booked) return answerOf(booked);
      if (transfer.outcome !== 'credited') return { refused: 'not_credited' };
      const refunded = Number((await tx.get(statements.payerRefundedOf, input))?.total ?? 0);
      if (refunded + input.amount > transfer.amount) return { refused: 'exceeds_transfer' };
      const payerAccount = transfer.payerAccount ?? input.defaultPayerAccount;
      const refusal = input.refuse(payerAccount);
      const record: BankPayerRefundRecord = {
        id: input.id,
        transferId: transfer.id,
        payerAccount,
        amount: input.amount,
        currency: transfer.currency,
        outcome: refusal ? 'refused' : 'credited',
        refusedReason: refusal ?? null,
        createdAt: input.now,
      };
      await tx.run(statements.insertPayerRefund, record);
      return answerOf(record);
    });
  }

  async payerRefunds(payerAccount: string): Promise<BankPayerRefundRecord[]> {
    return this.db.all(statements.payerRefunds, { payerAccount });
  }

  async claimDue(now: number, leaseMs: number, limit: number): Promise<BankOutboxRecord[]> {
    return this.db.all(statements.claimDue, { now, until: now + leaseMs, limit });
  }

  async markDelivered(id: string, now: number): Promise<void> {
    await this.db.run(statements.delivered, { id, now });
  }

  async retryAt(id: string, at: number): Promise<void> {
    await this.db.run(statements.retryAt, { id, at });
  }
}

/** A booked payer refund as the bank answers it. */
function answerOf(refund: BankPayerRefundRecord): PaymentRefundResult {
  return refund.outcome === 'credited'
    ? { refunded: { payerAccount: refund.payerAccount } }
    : { refused: 'payer_account_closed' };
}
