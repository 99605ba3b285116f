import type { BootstrapResult, NewAccountResult, Session, VirtualAccount } from '@servicepay/node/protocol';
import type { BankGateway, ProvisionedAccount } from '../bank/bank-gateway.ts';
import type { ApiCaller } from '../businesses/ownership.ts';
import type { ServerConfig } from '../config.ts';
import type { Repositories, WriteContext } from '../db/repositories.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { Store } from '../db/store.ts';
import { DomainError, notFound, WriteConflict } from '../domain-errors.ts';
import type { Clock } from '../internal/clock.ts';
import { randomBase62, sha256 } from '../internal/random.ts';
import { isTerminal } from '../views/session-status.ts';
import { toPublicSession } from '../views/session-views.ts';
import { clientSecretLookupKey } from './client-secret.ts';
import type { ClosedAccount, SessionLifecycle } from './session-lifecycle.ts';
import { ownedSession, sessionView } from './session-reads.ts';

/**
 * How a session comes to offer a virtual account: the widget's exchange of the client secret (`bootstrap`), a
 * fresh account after the last ran out (`newAccount`), and test mode's checkout without the widget
 * (`openForTest`). Each asks the bank for the account before its write job and closes it again if the job did
 * not record it. `SessionService` answers these for the routes; the rules live here.
 *
 * @example
 * const accounts = new AccountOpening(store, lifecycle, bank, clock, config);
 * const { token, virtualAccount } = await accounts.bootstrap('cs_test_...');
 */
export class AccountOpening {
  constructor(
    private readonly store: Store,
    private readonly lifecycle: SessionLifecycle,
    private readonly bank: BankGateway,
    private readonly clock: Clock,
    private readonly config: ServerConfig,
  ) {}

  /**
   * The widget's one exchange of the client secret: marks it used, issues a widget token bound to the
   * session, and offers the session's first virtual account (AWAITING_PAYMENT). The account is provisioned at
   * the bank before the write job (see `prepareAccount`).
   */
  async bootstrap(clientSecret: string): Promise<BootstrapResult> {
    const hash = clientSecretLookupKey(clientSecret);
    if (!hash) {
      throw new DomainError(
        'invalid_client_secret',
        'That is not a client secret (cs_test_... or cs_live_...).',
        [{ path: 'clientSecret', message: 'not a client secret' }],
      );
    }
    const now = this.clock.now();
    const before = await this.store.sessions.findByClientSecretHash(hash);
    // A secret that will be refused gets no account; the job checks everything again.
    const usable = before && before.clientSecretUsedAt === null && this.takesMoney(before, now);
    const prepared = usable ? await this.prepareAccount(before, now) : undefined;
    try {
      return await this.store.writes.run(async (tx, context) => {
        const session = await tx.sessions.findByClientSecretHash(hash);
        if (!session) throw new DomainError('invalid_client_secret', 'No session has this client secret.');
        if (session.clientSecretUsedAt !== null) {
          throw new DomainError(
            'client_secret_already_used',
            'This client secret was already used to open the checkout. Ask your backend for a new session.',
          );
        }
        if (!this.takesMoney(session, now)) {
          throw new DomainError(
            'client_secret_expired',
            `This checkout has ended (${session.status}). Ask your backend for a new session.`,
          );
        }
        const token = `wt_${randomBase62(32)}`;
        // Sent together (one round trip on PostgreSQL's pipelined connection, issue 38): a token written for a
        // secret another exchange used meanwhile is rolled back with the job.
        const [marked] = await Promise.all([
          tx.sessions.markClientSecretUsed(session.id, now),
          tx.widgetTokens.insert({
            tokenHash: sha256(token),
            sessionId: session.id,
            createdAt: now,
            expiresAt: session.expiresAt,
          }),
        ]);
        if (!marked) {
          // Another exchange of the same secret committed after this job read it: run again, and answer 409.
          throw new WriteConflict('client_secret_already_used', 'This client secret was already used.');
        }
        // A client secret not used yet has never offered an account: there is none to close.
        const opened = await this.offerAccount(tx, context, session, prepared, undefined, now);
        return { token, ...(await this.checkout(opened, tx)) };
      });
    } finally {
      await this.closeUnused(prepared);
    }
  }

  /** A fresh account for a session whose last one ran out (EXPIRED → retry). The current one if it still lives. */
  async newAccount(sessionId: string): Promise<NewAccountResult> {
    const now = this.clock.now();
    const before = await this.store.sessions.find(sessionId);
    const wanted =
      before && this.takesMoney(before, now) && !(await this.liveAccount(before, now, this.store));
    const prepared = wanted ? await this.prepareAccount(before, now) : undefined;
    let result: { ended: SessionRecord } | { checkout: NewAccountResult };
    try {
      result = await this.lifecycle.closingFirst(
        // The old account may have been credited before it ran out: the bank is asked before another is offered.
        () => this.spentAccount(sessionId, now),
        (closed) =>
          this.store.writes.run(async (tx, context) => {
            const session = await tx.sessions.find(sessionId);
            if (!session) throw notFound('session');
            if (!this.takesMoney(session, now)) return { ended: session };
            if (await this.liveAccount(session, now, tx))
              return { checkout: await this.checkout(session, tx) };
            const paid = await this.lifecycle.settle(tx, context, session, closed, now);
            if (paid) return { ended: paid };
            const offered = await this.offerAccount(tx, context, session, prepared, closed, now);
            return { checkout: await this.checkout(offered, tx) };
          }),
      );
    } finally {
      await this.closeUnused(prepared);
    }
    if ('ended' in result) {
      throw new DomainError(
        'session_not_active',
        `The session is ${result.ended.status}; it takes no more transfers.`,
      );
    }
    return result.checkout;
  }

  /**
   * Test mode's checkout without the widget (`POST /api/test/sessions/{id}/account`): for a session whose
   * client secret was never used, what bootstrap does (marks it used, so no checkout opens it later, and
   * provisions the first account) without issuing a widget token; for one already open, its current account,
   * or a fresh one if the last ran out (as `newAccount`). The caller must own the session; an ended session
   * answers 409 `session_not_active`.
   */
  async openForTest(
    caller: ApiCaller,
    id: string,
  ): Promise<{ session: Session; virtualAccount: VirtualAccount }> {
    const now = this.clock.now();
    const before = await ownedSession(caller, id, this.store);
    const wanted =
      this.takesMoney(before, now) &&
      (before.clientSecretUsedAt === null || !(await this.liveAccount(before, now, this.store)));
    const prepared = wanted ? await this.prepareAccount(before, now) : undefined;
    try {
      return await this.lifecycle.closingFirst(
        // An account that ran out may have been credited first: the bank is asked before another is offered.
        () => this.spentAccount(id, now),
        (closed) =>
          this.store.writes.run(async (tx, context) => {
            let session = await ownedSession(caller, id, tx);
            if (this.takesMoney(session, now)) {
              if (session.clientSecretUsedAt === null) {
                if (!(await tx.sessions.markClientSecretUsed(session.id, now))) {
                  throw new WriteConflict(
                    'session_not_active',
                    'The checkout was opened meanwhile; try again.',
                  );
                }
                session = await this.offerAccount(tx, context, session, prepared, closed, now);
              } else if (!(await this.liveAccount(session, now, tx))) {
                session =
                  (await this.lifecycle.settle(tx, context, session, closed, now)) ??
                  (await this.offerAccount(tx, context, session, prepared, closed, now));
              }
            }
            const view = await sessionView(session, tx);
            if (!this.takesMoney(session, now) || !view.virtualAccount) {
              throw new DomainError(
                'session_not_active',
                `The session is ${session.status}; it takes no more transfers.`,
              );
            }
            return { session: view, virtualAccount: view.virtualAccount };
          }),
      );
    } finally {
      await this.closeUnused(prepared);
    }
  }

  /**
   * The account the session offers if its countdown ran out while the session still takes money: the one to
   * close at the bank before another is offered. Never a live account: a concurrent request may have offered
   * a fresh one since the caller looked, and closing that would return the payer's transfer.
   */
  private async spentAccount(sessionId: string, now: number): Promise<string | undefined> {
    const session = await this.store.sessions.find(sessionId);
    if (!session || session.accountNumber === null || !this.takesMoney(session, now)) return undefined;
    return (await this.liveAccount(session, now, this.store)) ? undefined : session.accountNumber;
  }

  /** Whether the session can still be paid at `now`: not ended, not past its lifetime. */
  private takesMoney(session: SessionRecord, now: number): boolean {
    return !isTerminal(session.status) && session.expiresAt > now;
  }

  /** Whether the session's current account still takes a transfer at `now`. */
  private async liveAccount(
    session: SessionRecord,
    now: number,
    repositories: Repositories,
  ): Promise<boolean> {
    if (session.accountNumber === null) return false;
    const current = await repositories.virtualAccounts.find(session.accountNumber);
    return current !== undefined && current.closedAt === null && current.expiresAt > now;
  }

  /**
   * Asks the bank for a new account for `session`, before the write job that will offer it and outside any
   * database transaction, as a real bank's API is asked: the call may be slow, and on PostgreSQL the job may
   * run more than once (it then offers this same account).
   */
  private async prepareAccount(session: SessionRecord, now: number): Promise<ProvisionedAccount> {
    const business = await this.store.businesses.find(session.businessId);
    return this.bank.provisionAccount({
      environment: session.environment,
      amount: session.amount,
      currency: session.currency,
      accountName: `${business?.name ?? 'ServicePay'} checkout`,
      expiresAt: Math.min(now + this.config.accountLifetimeMinutes * 60_000, session.expiresAt),
    });
  }

  /**
   * Records the account provisioned before the job and offers it (the session moves to AWAITING_PAYMENT);
   * `closed`: the bank's answer to closing the account it offered before, if any.
   */
  private async offerAccount(
    tx: Repositories,
    context: WriteContext,
    session: SessionRecord,
    prepared: ProvisionedAccount | undefined,
    closed: ClosedAccount | undefined,
    now: number,
  ): Promise<SessionRecord> {
    // The session needs an account although none seemed needed before the job: it changed meanwhile.
    if (!prepared) throw new WriteConflict('session_not_active', 'The session changed meanwhile; try again.');
    // The account's insert leaves with the transition's first statement and runs before it.
    const [, offered] = await Promise.all([
      tx.virtualAccounts.insert({ ...prepared, sessionId: session.id, createdAt: now }),
      this.lifecycle.transition(tx, context, session, 'awaiting_payment', {
        now,
        newAccountNumber: prepared.accountNumber,
        closed,
      }),
    ]);
    return offered;
  }

  /**
   * An account provisioned for a job that did not record it (the job failed, or found it needed none after
   * all) is closed at the bank, so no account the service does not know of ever takes money. Nobody was shown
   * its number, so nothing can have been paid into it.
   */
  private async closeUnused(prepared: ProvisionedAccount | undefined): Promise<void> {
    if (!prepared) return;
    try {
      if (await this.store.virtualAccounts.find(prepared.accountNumber)) return;
      await this.bank.closeAccount(prepared.accountNumber);
    } catch {
      // The database or the bank is unreachable (the job's own error is what the caller gets): the account
      // stays open at the bank until its countdown ends, unknown to the service and never shown to anyone.
    }
  }

  /** What the checkout shows: the public session and the account it offers now. */
  private async checkout(session: SessionRecord, repositories: Repositories): Promise<NewAccountResult> {
    const [view, business] = await Promise.all([
      sessionView(session, repositories),
      repositories.businesses.find(session.businessId),
    ]);
    if (!view.virtualAccount) throw new Error(`session ${session.id} has no account to show`);
    const merchantName = business?.name ?? '';
    return { session: toPublicSession(view, merchantName), virtualAccount: view.virtualAccount };
  }
}
