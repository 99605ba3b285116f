import type { SessionStatus, StatusReason } from '@servicepay/node/protocol';
import { TERMINAL_SESSION_STATUSES } from '@servicepay/node/protocol';
import type { BankGateway } from '../bank/bank-gateway.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { Store } from '../db/store.ts';
import type { WriteContext } from '../db/write-queue.ts';
import { HttpError } from '../errors.ts';
import type { Broadcaster } from '../events/broadcaster.ts';
import type { WebhookOutbox } from '../events/outbox.ts';
import { newId } from '../internal/random.ts';
import { toSessionView, toStatusMessage } from './session-views.ts';

export interface TransitionOptions {
  now: number;
  reason?: StatusReason | null;
  /** A new account offered from now on; the previous one is closed. */
  newAccountNumber?: string;
  /** Close the current account without offering another (its countdown ran out). Implied by terminal statuses. */
  closeAccount?: boolean;
  /** Amount of a wrong-amount transfer, for MISMATCH. */
  mismatchReceived?: number;
}

export const isTerminal = (status: SessionStatus): boolean => TERMINAL_SESSION_STATUSES.includes(status);

/**
 * The only way a session's status changes. Inside the caller's write job it updates the session (guarded by
 * its current status), records the event, queues its webhook deliveries and, for a terminal status, closes
 * the session's account: all in one transaction. The push to open checkouts and the bank's account closing
 * happen after the commit.
 */
export class SessionLifecycle {
  constructor(
    private readonly store: Store,
    private readonly outbox: WebhookOutbox,
    private readonly broadcaster: Broadcaster,
    private readonly bank: BankGateway,
  ) {}

  transition(
    context: WriteContext,
    session: SessionRecord,
    to: SessionStatus,
    options: TransitionOptions,
  ): SessionRecord {
    const { now } = options;
    const reason = options.reason ?? null;
    const previousAccount = session.accountNumber;
    // The session keeps the number of the last account it offered (merchants see it); whether that account
    // still takes money is the account's own `closed_at`.
    const accountNumber = options.newAccountNumber ?? previousAccount;
    const changed = this.store.sessions.change(session.id, session.status, {
      status: to,
      updatedAt: now,
      accountNumber,
      mismatchReceived: options.mismatchReceived ?? session.mismatchReceived,
      paidAt: to === 'successful' ? now : session.paidAt,
    });
    if (!changed) throw new HttpError(409, 'session_not_active', 'The session changed meanwhile; try again.');

    const closing =
      previousAccount !== null &&
      (previousAccount !== accountNumber || options.closeAccount || isTerminal(to));
    if (closing) {
      this.store.virtualAccounts.close(previousAccount, now);
      context.afterCommit(() => this.bank.closeAccount(previousAccount));
    }

    const updated = this.store.sessions.find(session.id);
    if (!updated) throw new Error(`session ${session.id} vanished inside its transition`);
    const account = accountNumber === null ? undefined : this.store.virtualAccounts.find(accountNumber);
    const view = toSessionView(updated, account);
    const event = this.store.events.insert({
      id: newId('evt'),
      businessId: updated.businessId,
      environment: updated.environment,
      sessionId: updated.id,
      type: `session.${to}`,
      reason,
      payload: JSON.stringify(view),
      createdAt: now,
    });
    this.outbox.enqueue(event);

    const merchantName = this.store.businesses.find(updated.businessId)?.name ?? '';
    const message = toStatusMessage(view, merchantName, reason);
    context.afterCommit(() => this.broadcaster.publish({ sessionId: updated.id, seq: event.seq, message }));
    return updated;
  }
}
