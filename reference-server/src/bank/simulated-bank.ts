import type {
  BankNotification,
  Environment,
  ReturnReason,
  SimulatedTransfer,
  TransferOutcome,
} from '@servicepay/node/protocol';
import type { SqliteDatabase } from '../db/database.ts';
import type { Clock } from '../internal/clock.ts';
import { toIso } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { newId, randomAccountNumber } from '../internal/random.ts';
import { signPayload } from '../internal/signature.ts';
import type {
  AccountRequest,
  BankGateway,
  CloseAccountResult,
  CreditedTransfer,
  ProvisionedAccount,
  RefundResult,
} from './bank-gateway.ts';

export interface SimulatedBankOptions {
  db: SqliteDatabase;
  clock: Clock;
  logger: Logger;
  secret: string;
  bankName: string;
  /** Where the bank posts its notifications; known once the service listens. */
  notificationUrl: () => string | undefined;
  /** How long one delivery attempt may take. */
  deliveryTimeoutMs?: number;
}

type BankAccountRow = {
  account_number: string;
  environment: Environment;
  amount: number;
  currency: string;
  expires_at: number;
  closed_at: number | null;
};

type OutboxRow = { id: string; transfer_id: string; payload: string; attempts: number };

/** The account a transfer was made to does not exist at this bank. */
export class UnknownAccountError extends Error {
  override readonly name = 'UnknownAccountError';
}

/**
 * The partner bank, simulated. It keeps its own books (the `bank_*` tables, which the service never reads),
 * provisions amount-controlled single-use accounts, and tells the service of every transfer by a signed
 * notification over real HTTP, retried from its own outbox until the service acknowledges it.
 */
export class SimulatedBank implements BankGateway {
  private readonly statements;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<string>();
  /** Set by `stop`: deliveries still in flight then leave the (closing) database alone. */
  private stopped = false;

  constructor(private readonly options: SimulatedBankOptions) {
    const { db } = options;
    this.statements = {
      insertAccount: db.prepare(
        `INSERT INTO bank_accounts (account_number, environment, amount, currency, account_name, created_at, expires_at)
         VALUES (@accountNumber, @environment, @amount, @currency, @accountName, @createdAt, @expiresAt)`,
      ),
      accountExists: db.prepare<[string], { found: number }>(
        'SELECT 1 AS found FROM bank_accounts WHERE account_number = ?',
      ),
      findAccount: db.prepare<[string], BankAccountRow>(
        'SELECT * FROM bank_accounts WHERE account_number = ?',
      ),
      closeAccount: db.prepare<[number, string]>(
        'UPDATE bank_accounts SET closed_at = ? WHERE account_number = ? AND closed_at IS NULL',
      ),
      insertTransfer: db.prepare(
        `INSERT INTO bank_transfers (id, account_number, amount, currency, outcome, return_reason, created_at)
         VALUES (@id, @accountNumber, @amount, @currency, @outcome, @returnReason, @createdAt)`,
      ),
      creditedTo: db.prepare<[string], CreditedTransfer>(
        `SELECT id, account_number AS accountNumber, amount, currency FROM bank_transfers
         WHERE account_number = ? AND outcome = 'credited' ORDER BY created_at LIMIT 1`,
      ),
      findTransfer: db.prepare<[string], { amount: number; currency: string; outcome: TransferOutcome }>(
        'SELECT amount, currency, outcome FROM bank_transfers WHERE id = ?',
      ),
      findRefund: db.prepare<[string], { id: string }>('SELECT id FROM bank_refunds WHERE transfer_id = ?'),
      insertRefund: db.prepare(
        `INSERT INTO bank_refunds (id, transfer_id, amount, currency, reason, created_at)
         VALUES (@id, @transferId, @amount, @currency, @reason, @createdAt)`,
      ),
      insertOutbox: db.prepare<[string, string, string, number]>(
        'INSERT INTO bank_outbox (id, transfer_id, payload, next_attempt_at) VALUES (?, ?, ?, ?)',
      ),
      due: db.prepare<[number], OutboxRow>(
        `SELECT id, transfer_id, payload, attempts FROM bank_outbox
         WHERE delivered_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT 100`,
      ),
      delivered: db.prepare<[number, string]>('UPDATE bank_outbox SET delivered_at = ? WHERE id = ?'),
      retryLater: db.prepare<[number, string]>(
        'UPDATE bank_outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE id = ?',
      ),
    };
  }

  provisionAccount(request: AccountRequest): ProvisionedAccount {
    // Account numbers are never reused: the bank keeps every one it ever issued.
    let accountNumber = randomAccountNumber();
    while (this.statements.accountExists.get(accountNumber)) accountNumber = randomAccountNumber();
    this.statements.insertAccount.run({ ...request, accountNumber, createdAt: this.options.clock.now() });
    return {
      accountNumber,
      bankName: this.options.bankName,
      accountName: request.accountName,
      expiresAt: request.expiresAt,
    };
  }

  closeAccount(accountNumber: string): CloseAccountResult {
    // Single use: a credit closed the account, so "closed" alone would hide the payer's money.
    const credited = this.statements.creditedTo.get(accountNumber);
    if (credited) return { alreadyCredited: credited };
    this.statements.closeAccount.run(this.options.clock.now(), accountNumber);
    return { closed: true };
  }

  refund(transferId: string, reason: string): RefundResult {
    const transfer = this.statements.findTransfer.get(transferId);
    if (!transfer) return { refused: 'unknown_transfer' };
    if (transfer.outcome !== 'credited') return { refused: 'not_credited' };
    const earlier = this.statements.findRefund.get(transferId);
    if (earlier) return { refunded: earlier };
    const id = newId('rfd');
    this.statements.insertRefund.run({
      id,
      transferId,
      amount: transfer.amount,
      currency: transfer.currency,
      reason,
      createdAt: this.options.clock.now(),
    });
    return { refunded: { id } };
  }

  /** The environment of an account this bank issued, or undefined. */
  accountEnvironment(accountNumber: string): Environment | undefined {
    return this.statements.findAccount.get(accountNumber)?.environment;
  }

  /**
   * A payer's transfer to one of the bank's accounts. The bank credits only the exact amount to an open
   * account and returns anything else; either way it notifies the service. Resolves once the service
   * acknowledged the notification (`delivered`) or the first attempt failed and the bank will retry (`queued`).
   */
  async transfer(accountNumber: string, amount: number): Promise<SimulatedTransfer> {
    const now = this.options.clock.now();
    const account = this.statements.findAccount.get(accountNumber);
    if (!account) throw new UnknownAccountError(`No account ${accountNumber} at this bank.`);

    let outcome: TransferOutcome = 'credited';
    let returnReason: ReturnReason | null = null;
    if (account.closed_at !== null || account.expires_at <= now) {
      outcome = 'returned';
      returnReason = 'account_closed';
    } else if (amount !== account.amount) {
      outcome = 'returned';
      returnReason = 'amount_mismatch';
    }

    const transfer = {
      id: newId('trf'),
      accountNumber,
      amount,
      currency: account.currency,
      outcome,
      returnReason,
      createdAt: now,
    };
    const notification: BankNotification = {
      id: newId('ntf'),
      type: 'transfer.received',
      occurredAt: toIso(now),
      transfer: { id: transfer.id, accountNumber, amount, currency: account.currency, outcome, returnReason },
    };
    this.options.db.transaction(() => {
      this.statements.insertTransfer.run(transfer);
      this.statements.insertOutbox.run(notification.id, transfer.id, JSON.stringify(notification), now);
      // Single use: a credited account takes nothing more.
      if (outcome === 'credited') this.statements.closeAccount.run(now, accountNumber);
    })();

    const delivered = await this.deliver({
      id: notification.id,
      transfer_id: transfer.id,
      payload: JSON.stringify(notification),
      attempts: 0,
    });
    return {
      id: transfer.id,
      accountNumber,
      amount,
      currency: account.currency,
      outcome,
      returnReason,
      notification: delivered ? 'delivered' : 'queued',
      createdAt: toIso(now),
    };
  }

  /** Starts retrying undelivered notifications, including those left by a previous run. */
  start(intervalMs = 1000): void {
    this.stopped = false;
    this.retryTimer = setInterval(() => void this.retryDue(), intervalMs);
    this.retryTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.retryTimer);
  }

  async retryDue(): Promise<void> {
    const due = this.statements.due.all(this.options.clock.now());
    await Promise.all(due.map((row) => this.deliver(row)));
  }

  private async deliver(row: OutboxRow): Promise<boolean> {
    const url = this.options.notificationUrl();
    if (!url || this.inFlight.has(row.id)) return false;
    this.inFlight.add(row.id);
    try {
      const timestamp = Math.floor(this.options.clock.now() / 1000);
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-bank-signature': signPayload(row.payload, [this.options.secret], timestamp),
        },
        body: row.payload,
        signal: AbortSignal.timeout(this.options.deliveryTimeoutMs ?? 10_000),
      });
      await response.arrayBuffer();
      if (this.stopped) return response.ok;
      if (response.ok) {
        this.statements.delivered.run(this.options.clock.now(), row.id);
        return true;
      }
      this.options.logger.warn('bank notification refused', {
        notificationId: row.id,
        status: response.status,
      });
    } catch (error) {
      this.options.logger.warn('bank notification not delivered', {
        notificationId: row.id,
        error: error instanceof Error ? error.message : String(error),
      });
    } finally {
      this.inFlight.delete(row.id);
    }
    // A stopped bank leaves the row due: the next start retries it.
    if (this.stopped) return false;
    // 1 s, 2 s, 4 s … capped at a minute: the bank keeps trying until the service answers.
    const delay = Math.min(60_000, 1000 * 2 ** Math.min(row.attempts, 6));
    this.statements.retryLater.run(this.options.clock.now() + delay, row.id);
    return false;
  }
}
