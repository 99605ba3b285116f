import type { BankNotification, SessionStatus } from '@servicepay/node/protocol';
import type { NotificationResult } from '../db/bank-notifications.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { UnappliedReason } from '../db/unapplied-credits.ts';
import type { VirtualAccountRecord } from '../db/virtual-accounts.ts';
import { isTerminal } from '../views/session-status.ts';

/**
 * What a bank notification of a transfer not settled before does, decided from what the service holds before
 * writing anything: its result, the unapplied credit to record (money the session cannot take, refunded through
 * the bank), and the session's transition. Decided first so that the writes can leave together
 * (`BankNotificationProcessor`: one round trip on PostgreSQL's pipelined connection, issue 38).
 */
export interface NotificationDecision {
  result: NotificationResult;
  unapplied?: UnappliedReason;
  /** The session's transition, with the amount a `mismatch` shows as received. */
  transition?: { to: SessionStatus; options?: { mismatchReceived: number } };
}

/**
 * The rules of a notification (docs/protocol.md, "Bank notifications"): a credit pays only the session whose
 * open account it names, in its currency, for its exact amount; any other credit is recorded unapplied and
 * refunded; a credit of another amount also shows the session as `mismatch`, as a returned transfer of that
 * session does.
 *
 * @example
 * decideNotification(transfer, account, session); // { result: 'credited', transition: { to: 'successful' } }
 */
export function decideNotification(
  transfer: Pick<BankNotification['transfer'], 'outcome' | 'amount' | 'currency' | 'returnReason'>,
  account: VirtualAccountRecord | undefined,
  session: SessionRecord | undefined,
): NotificationDecision {
  const credited = transfer.outcome === 'credited';
  if (!account || !session) {
    return credited
      ? { result: 'unknown_account', unapplied: 'unknown_account' }
      : { result: 'unknown_account' };
  }
  const ended = isTerminal(session.status);
  const notOffered =
    account.closedAt !== null ||
    session.accountNumber !== account.accountNumber ||
    transfer.returnReason === 'account_closed';
  if (ended || notOffered) {
    // The session no longer takes money on this account: never credited to it.
    if (!credited) return { result: 'not_credited' };
    return { result: 'unapplied', unapplied: ended ? 'session_ended' : 'account_closed' };
  }
  if (transfer.currency !== session.currency) {
    // Another currency never pays a session, whatever the amount.
    return credited ? { result: 'unapplied', unapplied: 'currency_mismatch' } : { result: 'not_credited' };
  }
  if (credited && transfer.amount === session.amount) {
    return { result: 'credited', transition: { to: 'successful' } };
  }
  // The bank credits exact amounts only; a credit of another amount is its error, refunded like any other.
  const transition = { to: 'mismatch' as const, options: { mismatchReceived: transfer.amount } };
  return credited
    ? { result: 'mismatch', unapplied: 'amount_mismatch', transition }
    : { result: 'mismatch', transition };
}
