import type { TransferOutcome } from '@servicepay/node/protocol';
import type { BalanceTransactionRecord } from '../db/balance-transactions.ts';
import type { SentBack } from '../db/bank-books.ts';
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
 * The entries a settled transfer makes now (docs/decisions/ledger-and-exports.md): a credit that paid the
 * session is a `payment`; a transfer the bank returned as it arrived is a `transfer_received` and its
 * `transfer_return`, both at once. A credit no session took makes none yet: its pair is written when the bank
 * has sent it back (`creditReturned`), so the ledger never shows money the bank says it does not hold.
 */
function entriesOf(transfer: SettledTransfer, result: NotificationResult): Entry[] {
  if (transfer.outcome === 'returned') {
    return [
      { type: 'transfer_received', amount: transfer.amount },
      { type: 'transfer_return', amount: -transfer.amount },
    ];
  }
  return result === 'credited' ? [{ type: 'payment', amount: transfer.amount }] : [];
}

/**
 * Writes the ledger, always inside the write job that records the money's movement, so an entry exists exactly
 * when its movement is recorded: the settled transfer, the refund's `succeeded`, the unapplied credit's
 * `refunded`.
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
   * An unapplied credit the bank sent back: its `unapplied_credit` and its `unapplied_credit_return`, both
   * now, called as its `refunded` is recorded, with the amount, currency and payer account the bank says moved
   * (the credit's own where the bank does not say). None for a credit on an account no business owns. A credit
   * the bank refused to send back (it holds no such credit) makes none: nothing moved.
   */
  async creditReturned(
    tx: Repositories,
    input: { credit: UnappliedCreditRecord; sentBack: SentBack; now: number },
  ): Promise<BalanceTransactionRecord[]> {
    const { credit, sentBack, now } = input;
    if (credit.businessId === null || credit.environment === null) return [];
    const amount = sentBack.amount ?? credit.amount;
    const written: BalanceTransactionRecord[] = [];
    for (const entry of [
      { type: 'unapplied_credit', amount },
      { type: 'unapplied_credit_return', amount: -amount },
    ] satisfies Entry[]) {
      written.push(
        await tx.balanceTransactions.insert({
          id: newId('txn'),
          businessId: credit.businessId,
          environment: credit.environment,
          ...entry,
          currency: sentBack.currency ?? credit.currency,
          sessionId: credit.sessionId,
          refundId: null,
          transferId: credit.transferId,
          payerAccount: maskAccount(sentBack.payerAccount),
          createdAt: now,
        }),
      );
    }
    return written;
  },
};
