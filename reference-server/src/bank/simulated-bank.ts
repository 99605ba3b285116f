import {
  type BankNotification,
  CLOSED_TEST_PAYER_ACCOUNT,
  DEFAULT_TEST_PAYER_ACCOUNT,
  type Environment,
  type ReturnReason,
  type SimulatedTransfer,
  type TransferOutcome,
} from '@servicepay/node/protocol';
import type { BankAccountRecord, BankBooks, BankOutboxRecord, BookedTransfer } from '../db/bank-books.ts';
import type { Clock } from '../internal/clock.ts';
import { toIso } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { newId, randomAccountNumber } from '../internal/random.ts';
import { signPayload } from '../internal/signature.ts';
import type {
  AccountRequest,
  BankGateway,
  CloseAccountResult,
  PaymentRefundRequest,
  PaymentRefundResult,
  ProvisionedAccount,
  RefundResult,
} from './bank-gateway.ts';

export interface SimulatedBankOptions {
  /** The bank's books: in the service's SQLite file, or in the PostgreSQL database all instances share. */
  books: BankBooks;
  clock: Clock;
  logger: Logger;
  secret: string;
  bankName: string;
  /** Where the bank posts its notifications; known once the service listens. */
  notificationUrl: () => string | undefined;
  /** How long one delivery attempt may take. */
  deliveryTimeoutMs?: number;
}

/** How long a notification is the delivering instance's alone: longer than an attempt may take. */
const DELIVERY_LEASE_MS = 30_000;
const RETRY_BATCH = 100;

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
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<string>();
  /** Set by `stop`: deliveries still in flight then leave the (closing) database alone. */
  private stopped = false;

  constructor(private readonly options: SimulatedBankOptions) {}

  async provisionAccount(request: AccountRequest): Promise<ProvisionedAccount> {
    const { books, clock } = this.options;
    // Account numbers are never reused: the bank keeps every one it ever issued, and draws again on a clash.
    let accountNumber = randomAccountNumber();
    while (!(await books.openAccount({ ...request, accountNumber, createdAt: clock.now() })))
      accountNumber = randomAccountNumber();
    return {
      accountNumber,
      bankName: this.options.bankName,
      accountName: request.accountName,
      expiresAt: request.expiresAt,
    };
  }

  closeAccount(accountNumber: string): Promise<CloseAccountResult> {
    // Single use: a credit closed the account, so "closed" alone would hide the payer's money.
    return this.options.books.closeAccount(accountNumber, this.options.clock.now());
  }

  /** Only a credited transfer goes back, once: a second request answers the first refund. */
  async refund(transferId: string, reason: string): Promise<RefundResult> {
    const { books, clock } = this.options;
    const transfer = await books.findTransfer(transferId);
    if (transfer === undefined) return { refused: 'unknown_transfer' };
    if (transfer.outcome !== 'credited') return { refused: 'not_credited' };
    const id = await books.recordRefund({ id: newId('rfd'), transferId, reason, now: clock.now() });
    // Back to the account the money came from: the service's ledger names it (masked).
    const { payerAccount, amount, currency } = transfer;
    return { refunded: { id, payerAccount, amount, currency } };
  }

  /**
   * A merchant's refund: `amount` of a credited transfer back to the payer's account, booked once per refund
   * id (`BankBooks.bookPayerRefund`). The payer's bank refuses money for `CLOSED_TEST_PAYER_ACCOUNT`.
   */
  refundPayment(request: PaymentRefundRequest): Promise<PaymentRefundResult> {
    return this.options.books.bookPayerRefund({
      id: request.refundId,
      transferId: request.transferId,
      amount: request.amount,
      now: this.options.clock.now(),
      defaultPayerAccount: DEFAULT_TEST_PAYER_ACCOUNT,
      refuse: (payerAccount) =>
        payerAccount === CLOSED_TEST_PAYER_ACCOUNT ? 'payer_account_closed' : undefined,
    });
  }

  /** The environment of an account this bank issued, or undefined. */
  async accountEnvironment(accountNumber: string): Promise<Environment | undefined> {
    return (await this.options.books.findAccount(accountNumber))?.environment;
  }

  /**
   * A payer's transfer to one of the bank's accounts. The bank credits only the exact amount to an open
   * account and returns anything else; either way it notifies the service. Resolves once the service
   * acknowledged the notification (`delivered`) or the first attempt failed and the bank will retry (`queued`).
   */
  async transfer(
    accountNumber: string,
    amount: number,
    payerAccount: string = DEFAULT_TEST_PAYER_ACCOUNT,
  ): Promise<SimulatedTransfer> {
    const now = this.options.clock.now();
    const booked = await this.options.books.bookTransfer(accountNumber, now, (account) =>
      this.decide(account, amount, payerAccount, now),
    );
    if (!booked) throw new UnknownAccountError(`No account ${accountNumber} at this bank.`);
    const { transfer, notification } = booked;
    const delivered = await this.deliver({
      id: notification.id,
      transferId: transfer.id,
      payload: notification.payload,
      attempts: 0,
    });
    return {
      id: transfer.id,
      accountNumber,
      amount,
      currency: transfer.currency,
      payerAccount,
      outcome: transfer.outcome,
      returnReason: transfer.returnReason,
      notification: delivered ? 'delivered' : 'queued',
      createdAt: toIso(now),
    };
  }

  /** Credits exactly the amount an open account asks for; returns anything else, with the reason. */
  private decide(
    account: BankAccountRecord,
    amount: number,
    payerAccount: string,
    now: number,
  ): BookedTransfer {
    let outcome: TransferOutcome = 'credited';
    let returnReason: ReturnReason | null = null;
    if (account.closedAt !== null || account.expiresAt <= now) {
      outcome = 'returned';
      returnReason = 'account_closed';
    } else if (amount !== account.amount) {
      outcome = 'returned';
      returnReason = 'amount_mismatch';
    }
    const transfer = {
      id: newId('trf'),
      accountNumber: account.accountNumber,
      amount,
      currency: account.currency,
      outcome,
      returnReason,
      createdAt: now,
      payerAccount,
    };
    const notification: BankNotification = {
      id: newId('ntf'),
      type: 'transfer.received',
      occurredAt: toIso(now),
      transfer: {
        id: transfer.id,
        accountNumber: account.accountNumber,
        amount,
        currency: account.currency,
        outcome,
        returnReason,
        // The account the money came from, as a bank's credit notification gives it: the ledger keeps it
        // masked, so a bookkeeper can match a line of the bank statement (issue 37).
        payerAccount,
      },
    };
    // This instance delivers it now; the others retry it only if that fails and the lease runs out.
    return {
      transfer,
      notification: { id: notification.id, payload: JSON.stringify(notification) },
      claimedUntil: now + DELIVERY_LEASE_MS,
    };
  }

  /** Starts retrying undelivered notifications, including those left by a previous run or another instance. */
  start(intervalMs = 1000): void {
    this.stopped = false;
    this.retryTimer = setInterval(() => void this.retryDueSafely(), intervalMs);
    this.retryTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.retryTimer);
  }

  async retryDue(): Promise<void> {
    const due = await this.options.books.claimDue(this.options.clock.now(), DELIVERY_LEASE_MS, RETRY_BATCH);
    await Promise.all(due.map((row) => this.deliver(row)));
  }

  private async retryDueSafely(): Promise<void> {
    try {
      await this.retryDue();
    } catch (error) {
      // The books are unreachable (a database outage): the next interval tries again.
      this.options.logger.warn('bank notifications not retried', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  private async deliver(row: BankOutboxRecord): Promise<boolean> {
    const url = this.options.notificationUrl();
    if (!url || this.inFlight.has(row.id)) return false;
    this.inFlight.add(row.id);
    let delivered = false;
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
      delivered = response.ok;
      if (!response.ok)
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
    // A stopped bank leaves the row as it is: due again when its lease ends, at the next start or elsewhere.
    if (this.stopped) return delivered;
    try {
      if (delivered) await this.options.books.markDelivered(row.id, this.options.clock.now());
      else {
        // 1 s, 2 s, 4 s … capped at a minute: the bank keeps trying until the service answers.
        const delay = Math.min(60_000, 1000 * 2 ** Math.min(row.attempts, 6));
        await this.options.books.retryAt(row.id, this.options.clock.now() + delay);
      }
    } catch (error) {
      // Unrecorded: the row comes due again when its lease ends, and the service ignores a second copy.
      this.options.logger.warn('bank outbox not updated', {
        notificationId: row.id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    return delivered;
  }
}
