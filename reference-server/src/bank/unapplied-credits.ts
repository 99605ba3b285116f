import type { UnappliedCredit } from '@servicepay/node/protocol';
import type { Repositories, WriteContext } from '../db/repositories.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { UnappliedCreditRecord, UnappliedReason } from '../db/unapplied-credits.ts';
import type { WebhookOutbox } from '../events/outbox.ts';
import { toIso } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { newId } from '../internal/random.ts';
import { toSessionView } from '../sessions/session-views.ts';
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

/**
 * Money the bank credited that no session can take. Inside the caller's write job it records the credit,
 * asks the bank to send it back to the payer, writes the audit entry and, when the credit belongs to a
 * session, the merchant's `session.credit_unapplied` event with its webhook deliveries: all or nothing, so a
 * credit is never only logged.
 *
 * @example
 * await credits.record(tx, context, { transfer, session, reason: 'session_ended', now }); // inside store.writes.run
 */
export class UnappliedCredits {
  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly bank: BankGateway,
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
    const refund = this.bank.refund(transfer.id, reason);
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
      refundStatus: 'refunded' in refund ? 'refunded' : 'refund_refused',
      refundId: 'refunded' in refund ? refund.refunded.id : null,
      createdAt: now,
    });
    await tx.auditLog.record({
      at: now,
      actor: 'service',
      action: 'refunded' in refund ? 'credit.refunded' : 'credit.refund_refused',
      businessId: credit.businessId,
      environment: credit.environment,
      target: credit.id,
      details: {
        transferId: transfer.id,
        sessionId: credit.sessionId,
        amount: transfer.amount,
        currency: transfer.currency,
        reason,
        ...('refunded' in refund ? { refundId: refund.refunded.id } : { refused: refund.refused }),
      },
    });
    if ('refused' in refund) {
      // Nothing left the bank: an operator must look (a forged or mistaken notification, most likely).
      this.logger.error('unapplied credit not refunded: the bank holds no such credit', {
        creditId: credit.id,
        transferId: transfer.id,
        refused: refund.refused,
      });
    }
    if (session) {
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
    return credit;
  }
}
