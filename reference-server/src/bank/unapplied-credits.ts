import type { UnappliedCredit } from '@servicepay/node/protocol';
import type { Repositories, WriteContext } from '../db/repositories.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { Store } from '../db/store.ts';
import type { RefundOutcome, UnappliedCreditRecord, UnappliedReason } from '../db/unapplied-credits.ts';
import type { WebhookOutbox } from '../events/outbox.ts';
import type { Clock } from '../internal/clock.ts';
import { toIso } from '../internal/clock.ts';
import { KeyedTasks } from '../internal/keyed-tasks.ts';
import type { Logger } from '../internal/logger.ts';
import { newId } from '../internal/random.ts';
import { LedgerEntries } from '../ledger/ledger-entries.ts';
import { creditUnapplied } from '../metrics/metrics.ts';
import { toSessionView } from '../views/session-views.ts';
import type { BankGateway, CreditedTransfer } from './bank-gateway.ts';

/** The merchant's view of an unapplied credit, as its webhook and the CLI show it. */
export function toUnappliedCreditView(credit: UnappliedCreditRecord): UnappliedCredit {
  return {
    id: credit.id,
    transferId: credit.transferId,
    accountNumber: credit.accountNumber,
    amount: credit.amount,
    currency: credit.currency,
    reason: credit.reason,
    refundStatus: credit.refundStatus,
    refundId: credit.refundId,
    createdAt: toIso(credit.createdAt),
  };
}

const PENDING_BATCH = 100;

/**
 * Money the bank credited that no session can take: recorded, then sent back to the payer.
 *
 * `record`, inside the caller's write job, records the credit as `refund_pending` (with the settled transfer
 * the caller records, all or nothing: a credit is never only logged). After the commit, outside any
 * transaction, the bank is asked to refund it, and a write job of its own records the answer once: the
 * refund's status and id, the audit entry and, when the credit belongs to a session, the merchant's
 * `session.credit_unapplied` event with its webhook deliveries. An instance that dies between the two leaves
 * the credit pending; `refundPending` (run by every sweep) asks again. The bank refunds a transfer once, and
 * the answer is recorded only while the credit is pending, so asking twice, from two instances, changes
 * nothing.
 *
 * @example
 * await credits.record(tx, context, { transfer, session, reason: 'session_ended', now }); // inside store.writes.run
 * await credits.refunded(transfer.id); // after the job: the refund's answer is recorded
 */
export class UnappliedCredits {
  /** Refunds this instance is asking for, by transfer id: `refunded` waits for them. */
  private readonly refunding = new KeyedTasks();

  constructor(
    private readonly store: Store,
    private readonly outbox: WebhookOutbox,
    private readonly bank: BankGateway,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async record(
    tx: Repositories,
    context: WriteContext,
    input: {
      transfer: CreditedTransfer;
      session: SessionRecord | undefined;
      reason: UnappliedReason;
      now: number;
    },
  ): Promise<UnappliedCreditRecord> {
    const { transfer, session, reason, now } = input;
    const credit = await tx.unappliedCredits.insert({
      id: newId('crd'),
      transferId: transfer.id,
      businessId: session?.businessId ?? null,
      environment: session?.environment ?? null,
      sessionId: session?.id ?? null,
      accountNumber: transfer.accountNumber,
      amount: transfer.amount,
      currency: transfer.currency,
      reason,
      refundStatus: 'refund_pending',
      refundId: null,
      createdAt: now,
    });
    context.afterCommit(() => {
      this.refundSoon(credit);
      creditUnapplied(reason);
    });
    return credit;
  }

  /**
   * Resolves once the refund of `transferId`'s credit that this instance asked for is recorded (at once when
   * it asked for none). Never rejects: a refund that failed stays pending for the next sweep.
   */
  async refunded(transferId: string): Promise<void> {
    await this.refunding.settled(transferId);
  }

  /** Asks the bank again for the refunds still pending (recorded by an instance that did not see them through). */
  async refundPending(): Promise<number> {
    return this.refunding.askAgain(
      await this.store.unappliedCredits.pendingRefunds(PENDING_BATCH),
      (credit) => credit.transferId,
      (credit) => this.refundSoon(credit),
    );
  }

  private refundSoon(credit: UnappliedCreditRecord): void {
    this.refunding.start(
      credit.transferId,
      () => this.refund(credit),
      (error) => {
        this.logger.warn('refund not recorded; the next sweep asks again', {
          creditId: credit.id,
          transferId: credit.transferId,
          error: error instanceof Error ? error.message : String(error),
        });
      },
    );
  }

  private async refund(credit: UnappliedCreditRecord): Promise<void> {
    const answer = await this.bank.refund(credit.transferId, credit.reason);
    const outcome: RefundOutcome =
      'refunded' in answer
        ? { refundStatus: 'refunded', refundId: answer.refunded.id }
        : { refundStatus: 'refund_refused' };
    const recorded = await this.store.writes.run(async (tx, context) => {
      // Recorded already (another instance, an earlier ask): the audit entry and the event exist once.
      if (!(await tx.unappliedCredits.settleRefund(credit.id, outcome))) return false;
      const settled: UnappliedCreditRecord = {
        ...credit,
        refundStatus: outcome.refundStatus,
        refundId: outcome.refundStatus === 'refunded' ? outcome.refundId : null,
      };
      const now = this.clock.now();
      await this.recordOutcome(tx, context, settled, answer, now);
      // Sent back: the credit and its return on the ledger. Refused, the bank holds no such money: no entry.
      if ('refunded' in answer) {
        await LedgerEntries.creditReturned(tx, { credit: settled, sentBack: answer.refunded, now });
      }
      return true;
    });
    if (recorded && 'refused' in answer) {
      // Nothing left the bank: an operator must look (a forged or mistaken notification, most likely).
      this.logger.error('unapplied credit not refunded: the bank holds no such credit', {
        creditId: credit.id,
        transferId: credit.transferId,
        refused: answer.refused,
      });
    }
  }

  private async recordOutcome(
    tx: Repositories,
    context: WriteContext,
    credit: UnappliedCreditRecord,
    answer: Awaited<ReturnType<BankGateway['refund']>>,
    now: number,
  ): Promise<void> {
    await tx.auditLog.record({
      at: now,
      actor: 'service',
      action: 'refunded' in answer ? 'credit.refunded' : 'credit.refund_refused',
      businessId: credit.businessId,
      environment: credit.environment,
      target: credit.id,
      details: {
        transferId: credit.transferId,
        sessionId: credit.sessionId,
        amount: credit.amount,
        currency: credit.currency,
        reason: credit.reason,
        ...('refunded' in answer ? { refundId: answer.refunded.id } : { refused: answer.refused }),
      },
    });
    const session = credit.sessionId === null ? undefined : await tx.sessions.find(credit.sessionId);
    if (!session) return;
    const account =
      session.accountNumber === null ? undefined : await tx.virtualAccounts.find(session.accountNumber);
    const last = await tx.events.lastForSession(session.id);
    const event = await tx.events.insert({
      id: newId('evt'),
      businessId: session.businessId,
      environment: session.environment,
      sessionId: session.id,
      type: 'session.credit_unapplied',
      // Not a transition: it keeps the reason of the session's current status, which a reconnecting
      // checkout reads from the session's last event.
      reason: last?.reason ?? null,
      payload: JSON.stringify(toSessionView(session, account)),
      credit: JSON.stringify(toUnappliedCreditView(credit)),
      createdAt: now,
    });
    await this.outbox.enqueue(tx, context, event);
  }
}
