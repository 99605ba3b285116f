import type { Environment } from '@servicepay/node/protocol';
import type {
  CloseAccountResult,
  CreditedTransfer,
  PaymentRefundResult,
  SentBack,
} from '../db/bank-books.ts';

// The bank's books (db/bank-books.ts) and this gateway speak the same answers; they are defined with the books,
// the lower module, and named here too for the gateway's callers.
export type { CloseAccountResult, CreditedTransfer, PaymentRefundResult, SentBack };

export interface AccountRequest {
  environment: Environment;
  amount: number;
  currency: string;
  accountName: string;
  expiresAt: number;
}

export interface ProvisionedAccount {
  accountNumber: string;
  bankName: string;
  accountName: string;
  expiresAt: number;
}

/** What the bank did with a refund request: sent back to the payer, or refused (it holds no such credit). */
export type RefundResult = { refunded: SentBack } | { refused: 'unknown_transfer' | 'not_credited' };

/** A merchant's refund of (part of) a credited transfer, as the service asks the bank for it. */
export interface PaymentRefundRequest {
  /** The service's refund id: the bank moves the money once per id, however often it is asked. */
  refundId: string;
  transferId: string;
  amount: number;
  reason: string;
}

/**
 * What the service asks of its partner bank. The simulated bank implements it over its own books; a real bank
 * integration would implement it over the bank's API. Every call is asked outside any database transaction,
 * as a bank's API is (it may be slow, and a write job on PostgreSQL may run twice), and the write job that
 * follows records the answer:
 * - `provisionAccount` before the job that offers the account; an account no job recorded is closed again.
 * - `closeAccount` before the job that stops offering the account (cancel, expiry, a new account); the job
 *   applies the answer, so a credit that came first makes the session paid, never cancelled.
 * - `refund` after the job that recorded a credit no session can take; the refund's outcome is recorded by a
 *   job of its own, and a refund asked by an instance that died meanwhile is asked again by the sweeper.
 * - `refundPayment` after the job that recorded a merchant's refund, the same way: its answer is recorded by a
 *   job of its own, and the sweeper asks again for refunds still pending.
 *
 * @example
 * const answer = await bank.closeAccount('0123456789');
 * if ('alreadyCredited' in answer) settle(answer.alreadyCredited); // the session is paid, not cancelled
 */
export interface BankGateway {
  /** A new, never-used account that credits exactly `amount` until `expiresAt`. */
  provisionAccount(request: AccountRequest): Promise<ProvisionedAccount>;
  /**
   * Stops the account from crediting; later transfers are returned to the payer. Idempotent. When the account
   * was credited before (single use: a credit closes it), answers that credit instead.
   */
  closeAccount(accountNumber: string): Promise<CloseAccountResult>;
  /** Sends a credited transfer back to the payer, once per transfer; a second request answers the first refund. */
  refund(transferId: string, reason: string): Promise<RefundResult>;
  /**
   * Sends `amount` of a credited transfer back to the account it came from; several refunds of one transfer
   * add up to at most its amount. Idempotent per `refundId`: asked again (after a restart, from another
   * instance), it moves nothing more and answers what it answered the first time.
   */
  refundPayment(request: PaymentRefundRequest): Promise<PaymentRefundResult>;
}
