import type { BankGateway, PaymentRefundResult } from '../bank/bank-gateway.ts';
import type { RefundRecord, RefundSettlement } from '../db/refunds.ts';
import type { Repositories, WriteContext } from '../db/repositories.ts';
import type { Store } from '../db/store.ts';
import type { WebhookOutbox } from '../events/outbox.ts';
import type { Clock } from '../internal/clock.ts';
import { KeyedTasks } from '../internal/keyed-tasks.ts';
import type { Logger } from '../internal/logger.ts';
import { newId } from '../internal/random.ts';
import { LedgerEntries } from '../ledger/ledger-entries.ts';
import { toSessionView } from '../views/session-views.ts';
import { toRefundView } from './refund-views.ts';

const PENDING_BATCH = 100;

/** The bank's answer as the refund ends: a refusal of any kind fails it, with the payer's-bank reason kept. */
export function settlementOf(answer: PaymentRefundResult): RefundSettlement {
  if ('refunded' in answer) return { status: 'succeeded' };
  return {
    status: 'failed',
    failureReason: answer.refused === 'payer_account_closed' ? 'payer_account_closed' : 'bank_refused',
  };
}

/**
 * Sends merchants' refunds to the bank and records its answers, the way `UnappliedCredits` sends back credits:
 * the refund is recorded `pending` by the job that admits it; after that job commits, outside any
 * transaction, the bank is asked (`BankGateway.refundPayment`, idempotent per refund id); a write job of its
 * own then records the answer once (`succeeded` or `failed`, a failed refund's amount given back to the
 * session), with the audit entry and the `refund.succeeded`/`refund.failed` event and its webhook deliveries.
 * An instance that dies between the two leaves the refund pending; `payPending` (every sweep) asks again, and
 * the bank answers a refund id it booked before without moving the money again.
 *
 * @example
 * context.afterCommit(() => payouts.payoutSoon(refund)); // inside the job that recorded the refund
 * await payouts.settled(refund.id); // the bank's answer is recorded (or the next sweep will ask again)
 */
export class RefundPayouts {
  /** Refunds this instance is asking the bank for, by refund id. */
  private readonly asking = new KeyedTasks();

  constructor(
    private readonly store: Store,
    private readonly outbox: WebhookOutbox,
    private readonly bank: BankGateway,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Asks the bank for `refund` on the next turn (after the job that recorded it has settled). */
  payoutSoon(refund: RefundRecord): void {
    this.asking.start(
      refund.id,
      () => this.payout(refund),
      (error) => {
        this.logger.warn('refund answer not recorded; the next sweep asks again', {
          refundId: refund.id,
          error: error instanceof Error ? error.message : String(error),
        });
      },
    );
  }

  /** Resolves once this instance's ask for `refundId` is over (at once when it asks for none). Never rejects. */
  async settled(refundId: string): Promise<void> {
    await this.asking.settled(refundId);
  }

  /** Asks the bank again for the refunds still pending (an instance died, or the bank was unreachable). */
  async payPending(): Promise<number> {
    return this.asking.askAgain(
      await this.store.refunds.pending(PENDING_BATCH),
      (refund) => refund.id,
      (refund) => this.payoutSoon(refund),
    );
  }

  private async payout(refund: RefundRecord): Promise<void> {
    const answer = await this.bank.refundPayment({
      refundId: refund.id,
      transferId: refund.transferId,
      amount: refund.amount,
      reason: refund.reason ?? 'requested_by_merchant',
    });
    const settlement = settlementOf(answer);
    const recorded = await this.store.writes.run((tx, context) =>
      this.record(tx, context, refund, settlement, answer),
    );
    if (recorded && 'refused' in answer && answer.refused !== 'payer_account_closed') {
      // The service admitted a refund the bank holds no credit for: an operator must look.
      this.logger.error('refund refused by the bank', { refundId: refund.id, refused: answer.refused });
    }
  }

  /** Records the answer once; false when it was recorded already (another instance, an earlier ask). */
  private async record(
    tx: Repositories,
    context: WriteContext,
    refund: RefundRecord,
    settlement: RefundSettlement,
    answer: PaymentRefundResult,
  ): Promise<boolean> {
    const now = this.clock.now();
    if (!(await tx.refunds.settle(refund.id, settlement, now))) return false;
    // A failed refund moved nothing: its amount is refundable again.
    if (settlement.status === 'failed') await tx.sessions.releaseRefund(refund.sessionId, refund.amount, now);
    // Paid out: the ledger's entry, with the account the money went back to. A refused refund moved nothing,
    // so it makes none (docs/decisions/ledger-and-exports.md).
    if ('refunded' in answer) {
      await LedgerEntries.refundPaid(tx, { refund, payerAccount: answer.refunded.payerAccount, now });
    }
    const settled: RefundRecord = {
      ...refund,
      status: settlement.status,
      failureReason: settlement.status === 'failed' ? settlement.failureReason : null,
      updatedAt: now,
    };
    await tx.auditLog.record({
      at: now,
      actor: 'service',
      action: settlement.status === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
      businessId: refund.businessId,
      environment: refund.environment,
      target: refund.id,
      details: {
        sessionId: refund.sessionId,
        amount: refund.amount,
        currency: refund.currency,
        ...('refunded' in answer
          ? { payerAccount: answer.refunded.payerAccount }
          : { refused: answer.refused }),
      },
    });
    const session = await tx.sessions.find(refund.sessionId);
    if (!session) return true;
    const account =
      session.accountNumber === null ? undefined : await tx.virtualAccounts.find(session.accountNumber);
    const last = await tx.events.lastForSession(session.id);
    const event = await tx.events.insert({
      id: newId('evt'),
      businessId: session.businessId,
      environment: session.environment,
      sessionId: session.id,
      type: settlement.status === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
      // Not a transition: it keeps the reason of the session's status, which a reconnecting checkout reads.
      reason: last?.reason ?? null,
      payload: JSON.stringify(toSessionView(session, account)),
      refund: JSON.stringify(toRefundView(settled)),
      createdAt: now,
    });
    await this.outbox.enqueue(tx, context, event);
    return true;
  }
}
