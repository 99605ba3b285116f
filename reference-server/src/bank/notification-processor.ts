import type { BankNotification, SessionStatus } from '@servicepay/node/protocol';
import type { NotificationResult } from '../db/bank-notifications.ts';
import type { Repositories, WriteContext } from '../db/repositories.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import { LedgerEntries } from '../ledger/ledger-entries.ts';
import { bankNotificationStarted, notificationMatched } from '../metrics/metrics.ts';
import { notificationContext } from './notification-context.ts';
import { decideNotification, type NotificationDecision } from './notification-decision.ts';
import type { UnappliedCredits } from './unapplied-credits.ts';

/**
 * The one thing the processor asks of the sessions (`SessionLifecycle` in sessions/ has it): make the transition
 * a credit decides, inside the processor's write job. Declared here so bank/ does not import sessions/.
 */
export interface SessionTransitions {
  transition(
    tx: Repositories,
    context: WriteContext,
    session: SessionRecord,
    to: SessionStatus,
    options: { now: number; mismatchReceived?: number },
  ): Promise<SessionRecord>;
}

export interface ProcessedNotification {
  result: NotificationResult;
  /**
   * True when this notification id, or another notification of the same transfer (or the closing of its
   * account), was processed before: nothing changed this time.
   */
  duplicate: boolean;
}

/**
 * Turns a verified bank notification into at most one session transition. The whole decision runs in one
 * write job, after a check of the notification id and of the transfer id, so any number of copies of a
 * notification, under one id or several, make exactly one transition and one event. A credit the session
 * cannot take (it ended, the account closed, another currency or amount) is recorded in the same job and
 * refunded through the bank after it (`UnappliedCredits`), never only logged.
 *
 * @example
 * const { result, duplicate } = await processor.process(notification); // result: 'credited' | …
 */
export class BankNotificationProcessor {
  constructor(
    private readonly store: Store,
    private readonly lifecycle: SessionTransitions,
    private readonly credits: UnappliedCredits,
    private readonly clock: Clock,
  ) {}

  async process(notification: BankNotification): Promise<ProcessedNotification> {
    const timed = bankNotificationStarted(notification.id);
    const processed = await this.decideOnce(notification);
    timed(processed.result);
    // A credit this notification could not apply is refunded after the commit: answered once that is recorded.
    await this.credits.refunded(notification.transfer.id);
    return processed;
  }

  private decideOnce(notification: BankNotification): Promise<ProcessedNotification> {
    return this.store.writes.run(async (tx, context) => {
      const { transfer } = notification;
      // The four reads of the decision together: one statement, one round trip, on PostgreSQL (issue 38).
      const { known, account, session, settled } = await notificationContext(tx, {
        id: notification.id,
        transferId: transfer.id,
        accountNumber: transfer.accountNumber,
      });
      if (known) return { result: known, duplicate: true };

      const now = this.clock.now();
      if (session) notificationMatched(notification.id, session.id);
      const settling = settled === undefined;
      const decision: NotificationDecision = settling
        ? decideNotification(transfer, account, session)
        : { result: settled };
      const { result, unapplied, transition } = decision;
      // What both records say of the transfer: the settled transfer's (once per transfer) and the notification's.
      const recorded = {
        transferId: transfer.id,
        accountNumber: transfer.accountNumber,
        sessionId: session?.id ?? null,
        amount: transfer.amount,
        currency: transfer.currency,
        bankOutcome: transfer.outcome,
        result,
      };
      // Every write of the notification sent together (one round trip on PostgreSQL's pipelined connection,
      // issue 38) and run in this order: the settled transfer and the ledger's entries of it (once, as the
      // settling is), the notification's record, the unapplied credit, the session's transition. A transfer
      // settled before gets the notification's record alone.
      await Promise.all([
        settling && tx.settledTransfers.insert({ ...recorded, source: 'notification', settledAt: now }),
        settling && LedgerEntries.transferSettled(tx, { transfer, session, result, now }),
        tx.bankNotifications.insert({ id: notification.id, ...recorded, receivedAt: now }),
        unapplied &&
          this.credits.record(tx, context, {
            transfer: {
              id: transfer.id,
              accountNumber: transfer.accountNumber,
              amount: transfer.amount,
              currency: transfer.currency,
            },
            session,
            reason: unapplied,
            now,
          }),
        transition &&
          session &&
          this.lifecycle.transition(tx, context, session, transition.to, { ...transition.options, now }),
      ]);
      return { result, duplicate: settled !== undefined };
    });
  }
}
