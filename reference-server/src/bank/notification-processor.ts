import type { BankNotification } from '@servicepay/node/protocol';
import type { NotificationResult } from '../db/bank-notifications.ts';
import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import type { SessionLifecycle } from '../sessions/session-lifecycle.ts';
import { isTerminal } from '../sessions/session-lifecycle.ts';

export interface ProcessedNotification {
  result: NotificationResult;
  /** True when this notification id was processed before: nothing changed this time. */
  duplicate: boolean;
}

/**
 * Turns a verified bank notification into at most one session transition. The whole decision runs in one
 * write job, after a check of the notification id, so any number of concurrent copies of a notification make
 * exactly one transition and one event.
 */
export class BankNotificationProcessor {
  constructor(
    private readonly store: Store,
    private readonly lifecycle: SessionLifecycle,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  process(notification: BankNotification): Promise<ProcessedNotification> {
    return this.store.writes.run((context) => {
      const known = this.store.bankNotifications.findResult(notification.id);
      if (known) return { result: known, duplicate: true };

      const now = this.clock.now();
      const { transfer } = notification;
      const account = this.store.virtualAccounts.find(transfer.accountNumber);
      const session = account && this.store.sessions.find(account.sessionId);
      let result: NotificationResult;
      if (!account || !session) {
        result = 'unknown_account';
      } else if (
        isTerminal(session.status) ||
        account.closedAt !== null ||
        session.accountNumber !== account.accountNumber ||
        transfer.returnReason === 'account_closed'
      ) {
        // The session no longer takes money on this account: recorded, never credited to the session.
        result = 'not_credited';
        if (transfer.outcome === 'credited') {
          this.logger.error(
            'bank credited a transfer to an account the session no longer uses: refund needed',
            {
              sessionId: session.id,
              transferId: transfer.id,
              amount: transfer.amount,
            },
          );
        }
      } else if (transfer.outcome === 'credited' && transfer.amount === session.amount) {
        this.lifecycle.transition(context, session, 'successful', { now });
        result = 'credited';
      } else {
        if (transfer.outcome === 'credited') {
          // The bank credits exact amounts only; a credit of another amount is the bank's error to reconcile.
          this.logger.error('bank credited an amount other than the session amount', {
            sessionId: session.id,
            transferId: transfer.id,
            amount: transfer.amount,
            expected: session.amount,
          });
        }
        this.lifecycle.transition(context, session, 'mismatch', { now, mismatchReceived: transfer.amount });
        result = 'mismatch';
      }
      this.store.bankNotifications.insert({
        id: notification.id,
        transferId: transfer.id,
        accountNumber: transfer.accountNumber,
        sessionId: session?.id ?? null,
        amount: transfer.amount,
        currency: transfer.currency,
        bankOutcome: transfer.outcome,
        result,
        receivedAt: now,
      });
      return { result, duplicate: false };
    });
  }
}
