import type { BalanceTransactionType, TransferOutcome } from '@servicepay/node/protocol';
import type { BalanceTransactionRecord } from '../db/balance-transactions.ts';
import type { NotificationResult } from '../db/bank-notifications.ts';
import type { RefundRecord } from '../db/refunds.ts';
import type { Repositories } from '../db/repositories.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { UnappliedCreditRecord } from '../db/unapplied-credits.ts';
import { newId } from '../internal/random.ts';

/**
 * A payer's account masked to its last four digits, the rest as `*` (`0123456789` → `******6789`): what the
 * ledger keeps and shows. Null stays null (a transfer the bank named no payer account for).
 *
 * @example
 * maskAccount('0123456789'); // '******6789'
 */
export function maskAccount(account: string | null | undefined): string | null {
  if (account === null || account === undefined) return null;
  const last = account.slice(-4);
  return `${'*'.repeat(Math.max(account.length - last.length, 0))}${last}`;
}

/** A payer's transfer as the service settles it: the bank's outcome and the account the money came from. */
export interface SettledTransfer {
  id: string;
  amount: number;
  currency: string;
  outcome: TransferOutcome;
  /** As the bank gave it (full); masked before it is stored. */
  payerAccount?: string | null | undefined;
}

type Entry = Pick<BalanceTransactionRecord, 'type' | 'amount'>;

/**
 * The entries a settled transfer makes (docs/decisions/ledger-and-exports.md): a credit that paid the session
 * is a `payment`; a credit no session took an `unapplied_credit` (its return is booked when the bank sends it
 * back); a transfer the bank returned as it arrived a `transfer_received` and its `transfer_return`, both now.
 */
function entriesOf(transfer: SettledTransfer, result: NotificationResult): Entry[] {
  if (transfer.outcome === 'returned') {
    return [
      { type: 'transfer_received', amount: transfer.amount },
      { type: 'transfer_return', amount: -transfer.amount },
    ];
  }
  return [{ type: result === 'credited' ? 'payment' : 'unapplied_credit', amount: transfer.amount }];
}

/**
 * Writes the ledger, always inside the write job that moved the money, so an entry exists exactly when its
 * movement is recorded: the settled transfer, the refund's `succeeded`, the unapplied credit's `refunded`.
 * Each of those is recorded once (a unique transfer id, a conditional update), and the ledger's unique
 * indexes hold the same line underneath. Money on an account no business owns (the service knows no session
 * for it) has no ledger to go to: it stays the operator's, in the unapplied credits.
 *
 * @example
 * await LedgerEntries.transferSettled(tx, { transfer, session, result: 'credited', now }); // inside store.writes.run
 */
export const LedgerEntries = {
  /** Called beside `settledTransfers.insert`: the once-per-transfer record of what the bank did with it. */
  async transferSettled(
    tx: Repositories,
    input: {
      transfer: SettledTransfer;
      session: SessionRecord | undefined;
      result: NotificationResult;
      now: number;
    },
  ): Promise<BalanceTransactionRecord[]> {
    const { transfer, session, result, now } = input;
    if (!session) return [];
    const written: BalanceTransactionRecord[] = [];
    for (const entry of entriesOf(transfer, result)) {
      written.push(
        await tx.balanceTransactions.insert({
          id: newId('txn'),
          businessId: session.businessId,
          environment: session.environment,
          ...entry,
          currency: transfer.currency,
          sessionId: session.id,
          refundId: null,
          transferId: transfer.id,
          payerAccount: maskAccount(transfer.payerAccount),
          createdAt: now,
        }),
      );
    }
    return written;
  },

  /** A merchant's refund the bank paid out to `payerAccount`: called as its `succeeded` is recorded. */
  async refundPaid(
    tx: Repositories,
    input: { refund: RefundRecord; payerAccount: string | null; now: number },
  ): Promise<BalanceTransactionRecord> {
    const { refund, now } = input;
    return tx.balanceTransactions.insert({
      id: newId('txn'),
      businessId: refund.businessId,
      environment: refund.environment,
      type: 'refund',
      amount: -refund.amount,
      currency: refund.currency,
      sessionId: refund.sessionId,
      refundId: refund.id,
      transferId: refund.transferId,
      payerAccount: maskAccount(input.payerAccount),
      createdAt: now,
    });
  },

  /**
   * An unapplied credit the bank sent back: the mirror of its `unapplied_credit` entry (same owner, session,
   * amount and payer account), called as its `refunded` is recorded. None when the credit made no entry.
   */
  async creditReturned(
    tx: Repositories,
    input: { credit: UnappliedCreditRecord; now: number },
  ): Promise<BalanceTransactionRecord | undefined> {
    const { credit, now } = input;
    const received = (await tx.balanceTransactions.forTransfer(credit.transferId)).find(
      (entry) => entry.type === 'unapplied_credit',
    );
    if (!received) return undefined;
    const { seq: _seq, ...mirrored } = received;
    return tx.balanceTransactions.insert({
      ...mirrored,
      id: newId('txn'),
      type: 'unapplied_credit_return' satisfies BalanceTransactionType,
      amount: -received.amount,
      createdAt: now,
    });
  },
};
