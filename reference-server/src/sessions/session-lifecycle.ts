import type { SessionStatus, StatusReason } from '@servicepay/node/protocol';
import type { BankGateway, CloseAccountResult, CreditedTransfer } from '../bank/bank-gateway.ts';
import type { UnappliedCredits } from '../bank/unapplied-credits.ts';
import type { Broadcaster } from '../db/broadcaster.ts';
import type { Repositories, WriteContext } from '../db/repositories.ts';
import type { SessionRecord } from '../db/sessions.ts';
import { DomainError, WriteConflict } from '../domain-errors.ts';
import type { WebhookOutbox } from '../events/outbox.ts';
import { newId } from '../internal/random.ts';
import { LedgerEntries } from '../ledger/ledger-entries.ts';
import { sessionEnded } from '../metrics/metrics.ts';
import { isTerminal } from '../views/session-status.ts';
import { toSessionView, toStatusMessage } from '../views/session-views.ts';

export interface TransitionOptions {
  now: number;
  reason?: StatusReason | null;
  /** A new account offered from now on; the previous one is closed. */
  newAccountNumber?: string;
  /** Close the current account without offering another (its countdown ran out). Implied by terminal statuses. */
  closeAccount?: boolean;
  /**
   * The bank's answer to closing the account this transition stops offering, asked before the job
   * (`SessionLifecycle.closeAtBank`). Required for every transition that closes an account, except to
   * `successful`.
   */
  closed?: ClosedAccount | undefined;
  /** Amount of a wrong-amount transfer, for MISMATCH. */
  mismatchReceived?: number;
}

/** An account closed at the bank before the write job that records it, with the bank's answer. */
export interface ClosedAccount {
  accountNumber: string;
  answer: CloseAccountResult;
}

/**
 * The job was to stop offering an account the bank was not asked to close first: the session moved to
 * another account after the caller read it. `closingFirst` closes the new one and runs the job again.
 */
export class AccountNotClosed extends DomainError {
  override readonly name = 'AccountNotClosed';
  constructor() {
    super('session_not_active', 'The session changed meanwhile; try again.');
  }
}

const CLOSING_ATTEMPTS = 3;

/**
 * The only way a session's status changes. Inside the caller's write job it updates the session (guarded by
 * its current status), records the event, queues its webhook deliveries and records the closing of the
 * account the session stops offering: all in one transaction. The push to open checkouts happens at commit.
 *
 * The bank's books are the truth about money, and the bank is asked outside any transaction, as a real
 * bank's API is: a transition that stops offering an account (cancel, expiry, the countdown running out, a
 * new account) needs the bank's answer to closing it, asked before the job (`closingFirst`). When the bank
 * answers that the account was already credited, the session is paid instead: the transition returns the
 * `successful` session, and the caller must look at the status it got back.
 *
 * @example
 * const after = await lifecycle.closingFirst(
 *   async () => (await store.sessions.find(id))?.accountNumber,
 *   (closed) => store.writes.run(async (tx, context) => {
 *     const session = await tx.sessions.find(id); // read again inside the job: it may have moved on
 *     return lifecycle.transition(tx, context, session, 'cancelled', { now, reason: 'cancelled_by_payer', closed });
 *   }),
 * );
 * if (after.status === 'successful') { ... } // the payer's transfer came first
 */
export class SessionLifecycle {
  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly broadcaster: Broadcaster,
    private readonly bank: BankGateway,
    private readonly credits: UnappliedCredits,
  ) {}

  /** Closes `accountNumber` at the bank, outside any transaction; undefined for no account. */
  async closeAtBank(accountNumber: string | null | undefined): Promise<ClosedAccount | undefined> {
    if (accountNumber === null || accountNumber === undefined) return undefined;
    return { accountNumber, answer: await this.bank.closeAccount(accountNumber) };
  }

  /**
   * Closes at the bank the account `accountToClose` names (read outside the job; none: nothing is closed),
   * then runs `job` with the answer. A job that finds the session moved to another account meanwhile
   * (`AccountNotClosed`) is run again after closing that one. Afterwards, waits for the refund of a credit the
   * bank answered and the job could not apply, so the caller sees it recorded.
   */
  async closingFirst<T>(
    accountToClose: () => Promise<string | null | undefined>,
    job: (closed: ClosedAccount | undefined) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const closed = await this.closeAtBank(await accountToClose());
      try {
        const result = await job(closed);
        if (closed && 'alreadyCredited' in closed.answer)
          await this.credits.refunded(closed.answer.alreadyCredited.id);
        return result;
      } catch (error) {
        if (!(error instanceof AccountNotClosed) || attempt === CLOSING_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Applies the bank's answer to closing the session's current account: a credit not settled yet pays the
   * session (returned, `successful`) if it fits it, or is recorded and refunded if not. Undefined when the
   * session was not paid by it. `closed` must be the answer for the session's current account.
   */
  async settle(
    tx: Repositories,
    context: WriteContext,
    session: SessionRecord,
    closed: ClosedAccount | undefined,
    now: number,
  ): Promise<SessionRecord | undefined> {
    if (session.accountNumber === null) return undefined;
    if (closed?.accountNumber !== session.accountNumber) throw new AccountNotClosed();
    if (!('alreadyCredited' in closed.answer)) return undefined;
    const transfer = closed.answer.alreadyCredited;
    if ((await tx.settledTransfers.findResult(transfer.id)) !== undefined) return undefined;
    const fits =
      !isTerminal(session.status) &&
      transfer.accountNumber === session.accountNumber &&
      transfer.amount === session.amount &&
      transfer.currency === session.currency;
    await this.recordSettled(tx, transfer, session, fits ? 'credited' : 'unapplied', now);
    if (fits) return this.transition(tx, context, session, 'successful', { now });
    await this.credits.record(tx, context, {
      transfer,
      session,
      reason: isTerminal(session.status)
        ? 'session_ended'
        : transfer.currency !== session.currency
          ? 'currency_mismatch'
          : 'amount_mismatch',
      now,
    });
    return undefined;
  }

  /**
   * An open account the session no longer offers, found by the sweeper and closed at the bank before the
   * job (`closed`): recorded closed, and a credit on it that nobody settled is recorded and refunded (it
   * cannot pay a session that moved on).
   */
  async closeStrayAccount(
    tx: Repositories,
    context: WriteContext,
    closed: ClosedAccount,
    session: SessionRecord | undefined,
    now: number,
  ): Promise<void> {
    await tx.virtualAccounts.close(closed.accountNumber, now);
    if (!('alreadyCredited' in closed.answer)) return;
    const transfer = closed.answer.alreadyCredited;
    if ((await tx.settledTransfers.findResult(transfer.id)) !== undefined) return;
    await this.recordSettled(tx, transfer, session, 'unapplied', now);
    await this.credits.record(tx, context, {
      transfer,
      session,
      reason: session && isTerminal(session.status) ? 'session_ended' : 'account_closed',
      now,
    });
  }

  private async recordSettled(
    tx: Repositories,
    transfer: CreditedTransfer,
    session: SessionRecord | undefined,
    result: 'credited' | 'unapplied',
    now: number,
  ): Promise<void> {
    await tx.settledTransfers.insert({
      transferId: transfer.id,
      accountNumber: transfer.accountNumber,
      sessionId: session?.id ?? null,
      amount: transfer.amount,
      currency: transfer.currency,
      bankOutcome: 'credited',
      result,
      source: 'account_close',
      settledAt: now,
    });
    // The bank answered the credit as the account closed: its ledger entry, in the job that settles it.
    await LedgerEntries.transferSettled(tx, {
      transfer: { ...transfer, outcome: 'credited' },
      session,
      result,
      now,
    });
  }

  async transition(
    tx: Repositories,
    context: WriteContext,
    session: SessionRecord,
    to: SessionStatus,
    options: TransitionOptions,
  ): Promise<SessionRecord> {
    const { now } = options;
    const reason = options.reason ?? null;
    const previousAccount = session.accountNumber;
    // The session keeps the number of the last account it offered (merchants see it); whether that account
    // still takes money is the account's own `closed_at`.
    const accountNumber = options.newAccountNumber ?? previousAccount;
    const closing =
      previousAccount !== null &&
      (previousAccount !== accountNumber || options.closeAccount || isTerminal(to));
    if (closing && to !== 'successful') {
      // Settled with the bank before the session stops taking money: a credit that came first wins.
      const paid = await this.settle(tx, context, session, options.closed, now);
      if (paid) return paid;
    }
    const updated = await tx.sessions.change(session.id, session, {
      status: to,
      updatedAt: now,
      accountNumber,
      mismatchReceived: options.mismatchReceived ?? session.mismatchReceived,
      paidAt: to === 'successful' ? now : session.paidAt,
    });
    if (!updated) throw new WriteConflict('session_not_active', 'The session changed meanwhile; try again.');

    // Sent together, run in this order (one round trip on PostgreSQL's pipelined connection, issue 38): the
    // account is read after its closing, so the view shows it closed.
    const [, , account, business] = await Promise.all([
      // Paid: the bank closed the account with the credit itself (single use, `BankGateway.closeAccount`), so
      // the bank is asked nothing more here.
      closing ? tx.virtualAccounts.close(previousAccount, now) : undefined,
      // A one-time payment link closes with its first payment, in the payment's own transaction.
      to === 'successful' && updated.paymentLinkId !== null
        ? tx.paymentLinks.completeIfSingleUse(updated.paymentLinkId, now)
        : undefined,
      accountNumber === null ? undefined : tx.virtualAccounts.find(accountNumber),
      tx.businesses.find(updated.businessId),
    ]);
    const view = toSessionView(updated, account);
    const event = {
      id: newId('evt'),
      businessId: updated.businessId,
      environment: updated.environment,
      sessionId: updated.id,
      type: `session.${to}`,
      reason,
      payload: JSON.stringify(view),
      createdAt: now,
    };
    // The deliveries name the event by id, known before its insert: both leave together, the event first.
    const [{ seq }] = await Promise.all([tx.events.insert(event), this.outbox.enqueue(tx, context, event)]);
    if (isTerminal(to)) context.afterCommit(() => sessionEnded(updated.environment, to));

    const message = toStatusMessage(view, business?.name ?? '', reason);
    // Delivered at commit, never for a rollback: on PostgreSQL the NOTIFY is part of this transaction, sent
    // with its COMMIT (one round trip fewer).
    this.broadcaster.publishOnCommit(context, { sessionId: updated.id, seq, message });
    return updated;
  }
}
