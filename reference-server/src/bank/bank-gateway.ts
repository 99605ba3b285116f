import type { Environment } from '@servicepay/node/protocol';

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

/** A transfer the bank credited, as its books show it. */
export interface CreditedTransfer {
  id: string;
  accountNumber: string;
  amount: number;
  currency: string;
}

/**
 * The bank's answer to closing an account: closed (later transfers go back to the payer), or the account had
 * already been credited, in which case that credit is the truth and the caller must settle it.
 */
export type CloseAccountResult = { closed: true } | { alreadyCredited: CreditedTransfer };

/** What the bank did with a refund request: sent back to the payer, or refused (it holds no such credit). */
export type RefundResult = { refunded: { id: string } } | { refused: 'unknown_transfer' | 'not_credited' };

/**
 * What the service asks of its partner bank. The simulated bank implements it in-process; a real bank
 * integration would implement it over the bank's API. `provisionAccount` is asked before the write job that
 * records the account, outside any database transaction, as a bank's API is (it may be slow, and a write job
 * on PostgreSQL may run twice): an account the job then does not use is closed at the bank. `closeAccount` and
 * `refund` still run inside the caller's write job, so nothing interleaves between the bank's answer and what
 * the service records of it (issue 13, step 4: they move out next).
 *
 * @example
 * const answer = bank.closeAccount('0123456789');
 * if ('alreadyCredited' in answer) settle(answer.alreadyCredited); // the session is paid, not cancelled
 */
export interface BankGateway {
  /** A new, never-used account that credits exactly `amount` until `expiresAt`. Never inside a write job. */
  provisionAccount(request: AccountRequest): ProvisionedAccount | Promise<ProvisionedAccount>;
  /**
   * Stops the account from crediting; later transfers are returned to the payer. Idempotent. When the account
   * was credited before (single use: a credit closes it), answers that credit instead.
   */
  closeAccount(accountNumber: string): CloseAccountResult;
  /** Sends a credited transfer back to the payer, once per transfer; a second request answers the first refund. */
  refund(transferId: string, reason: string): RefundResult;
}
