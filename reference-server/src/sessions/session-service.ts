import type {
  AcceptedCurrency,
  BootstrapResult,
  CreatedSession,
  CreateSessionParams,
  Environment,
  NewAccountResult,
  PublicSession,
  Session,
  StatusReason,
  VirtualAccount,
} from '@servicepay/node/protocol';
import type { BankGateway, ProvisionedAccount } from '../bank/bank-gateway.ts';
import { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';
import type { ServerConfig } from '../config.ts';
import type { Repositories, WriteContext } from '../db/repositories.ts';
import type { SessionListQuery, SessionRecord } from '../db/sessions.ts';
import type { Store } from '../db/store.ts';
import { DomainError, notFound, WriteConflict } from '../domain-errors.ts';
import type { Clock } from '../internal/clock.ts';
import { toPage, unknownCursor } from '../internal/pagination.ts';
import { newTimeOrderedId, randomBase62, sha256 } from '../internal/random.ts';
import { sessionCreated } from '../metrics/metrics.ts';
import { isTerminal } from '../views/session-status.ts';
import { toPublicSession, toSessionView } from '../views/session-views.ts';
import { clientSecretLookupKey, newClientSecret } from './client-secret.ts';
import { checkRedirectUrls } from './redirect-urls.ts';
import type { ClosedAccount, SessionLifecycle } from './session-lifecycle.ts';

/** The hosted checkout's address of a session (`widget-hosts/hosted-pages.ts`): made by the service's wiring. */
export type HostedCheckoutUrl = (environment: Environment, sessionId: string, clientSecret: string) => string;

/** The rules of a payment session, behind the routes. Every write runs in the write queue. */
export class SessionService {
  constructor(
    private readonly store: Store,
    private readonly lifecycle: SessionLifecycle,
    private readonly bank: BankGateway,
    private readonly clock: Clock,
    private readonly config: ServerConfig,
    private readonly hostedUrl: HostedCheckoutUrl = () => '',
  ) {}

  /**
   * Creates a session. Retries with an `Idempotency-Key` are answered by `middleware/idempotency.ts` before
   * this runs, so a retried create makes one session. `alongside` runs inside the same write job, after the
   * insert: what it writes commits with the session or not at all, and if it throws, the session is not made
   * (the route remembers its idempotent answer there).
   */
  create(
    caller: ApiCaller,
    params: CreateSessionParams,
    alongside?: (tx: Repositories, created: CreatedSession) => Promise<void>,
    paymentLinkId: string | null = null,
  ): Promise<CreatedSession> {
    this.checkMoney(params);
    checkRedirectUrls(caller.environment, { successUrl: params.successUrl, cancelUrl: params.cancelUrl });
    return this.store.writes.run(async (tx, context) => {
      const now = this.clock.now();
      context.afterCommit(() => sessionCreated(caller.environment));
      const scope = { businessId: caller.business.id, environment: caller.environment };
      const reference = params.reference ?? `ref_${randomBase62(20)}`;
      // Time-ordered, like the id: its lookup key is appended to the index (client-secret.ts).
      const { clientSecret, lookupKey } = newClientSecret(caller.environment, now);
      const session = await tx.sessions.insert({
        // Time-ordered: appended to the id index rather than written on a random page of it (issue 12).
        id: newTimeOrderedId('ses', now),
        businessId: scope.businessId,
        environment: scope.environment,
        reference,
        status: 'pending',
        amount: params.amount,
        currency: params.currency,
        payerName: params.payer.name,
        payerEmail: params.payer.email,
        payerPhone: params.payer.phone ?? null,
        metadata: params.metadata ?? {},
        clientSecretHash: lookupKey,
        createdAt: now,
        updatedAt: now,
        expiresAt: now + (params.expiresInMinutes ?? this.config.sessionLifetimeMinutes) * 60_000,
        paymentLinkId,
        successUrl: params.successUrl ?? null,
        cancelUrl: params.cancelUrl ?? null,
      });
      if (!session) {
        throw new DomainError(
          'reference_already_used',
          `A session with reference "${reference}" already exists.`,
          [{ path: 'reference', message: 'already used by another session' }],
        );
      }
      const url = this.hostedUrl(session.environment, session.id, clientSecret);
      const created: CreatedSession = { ...toSessionView(session, undefined), clientSecret, url };
      await alongside?.(tx, created);
      return created;
    });
  }

  async retrieve(caller: ApiCaller, id: string): Promise<Session> {
    const session = await this.ownedSession(caller, id);
    return this.view(session);
  }

  async list(
    caller: ApiCaller,
    query: Omit<SessionListQuery, 'businessId' | 'environment' | 'beforeSeq'> & {
      startingAfter?: string | undefined;
    },
  ) {
    let beforeSeq: number | undefined;
    if (query.startingAfter !== undefined) {
      const cursor = await this.store.sessions.find(query.startingAfter);
      if (!cursor || cursor.businessId !== caller.business.id || cursor.environment !== caller.environment) {
        throw unknownCursor('a session of this list');
      }
      beforeSeq = cursor.seq;
    }
    const rows = await this.store.sessions.list({
      businessId: caller.business.id,
      environment: caller.environment,
      status: query.status,
      reference: query.reference,
      paymentLinkId: query.paymentLinkId,
      beforeSeq,
      limit: query.limit + 1,
    });
    const page = toPage(rows, query.limit, (session) => session);
    return { ...page, data: await Promise.all(page.data.map((session) => this.view(session))) };
  }

  /**
   * Cancels an open session (merchant or payer). Cancelling a cancelled session answers it again. The account
   * is closed at the bank first: if the payer's transfer was already credited, the session is paid instead
   * and the cancel answers 409 `session_not_active`.
   */
  async cancel(sessionId: string, reason: StatusReason, owner: ApiCaller | undefined): Promise<Session> {
    return this.view(await this.cancelled(sessionId, reason, owner));
  }

  /**
   * The payer's cancel, from the checkout's widget token: `cancel`, answered in the view the browser may see
   * (`PublicSession`: no payer details, no metadata).
   */
  async cancelByPayer(sessionId: string): Promise<PublicSession> {
    const after = await this.cancelled(sessionId, 'cancelled_by_payer', undefined);
    const merchantName = (await this.store.businesses.find(after.businessId))?.name ?? '';
    return toPublicSession(await this.view(after), merchantName);
  }

  private async cancelled(
    sessionId: string,
    reason: StatusReason,
    owner: ApiCaller | undefined,
  ): Promise<SessionRecord> {
    if (owner) await this.ownedSession(owner, sessionId);
    const after = await this.lifecycle.closingFirst(
      async () => {
        const session = await this.store.sessions.find(sessionId);
        return session && !isTerminal(session.status) ? session.accountNumber : undefined;
      },
      (closed) =>
        this.store.writes.run(async (tx, context) => {
          const session = await tx.sessions.find(sessionId);
          if (!session) throw notFound('session');
          if (isTerminal(session.status)) return session;
          const now = this.clock.now();
          const ended = await this.lifecycle.transition(tx, context, session, 'cancelled', {
            now,
            reason,
            closed,
          });
          if (ended.status === 'cancelled') {
            await tx.auditLog.record({
              at: now,
              actor: owner ? `secret_key:${owner.environment}` : 'widget_token',
              action: 'session.cancelled',
              businessId: session.businessId,
              environment: session.environment,
              target: session.id,
              details: { reason, previousStatus: session.status },
            });
          }
          return ended;
        }),
    );
    if (after.status !== 'cancelled') {
      // Thrown after the commit: a payment the bank made while the cancel ran is kept, not rolled back.
      throw new DomainError(
        'session_not_active',
        `The session is ${after.status}; it can no longer be cancelled.`,
      );
    }
    return after;
  }

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
        if (!(await tx.sessions.markClientSecretUsed(session.id, now))) {
          // Another exchange of the same secret committed after this job read it: run again, and answer 409.
          throw new WriteConflict('client_secret_already_used', 'This client secret was already used.');
        }
        const token = `wt_${randomBase62(32)}`;
        await tx.widgetTokens.insert({
          tokenHash: sha256(token),
          sessionId: session.id,
          createdAt: now,
          expiresAt: session.expiresAt,
        });
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
    const before = await this.ownedSession(caller, id);
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
            let session = await this.ownedSession(caller, id, tx);
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
            const view = await this.view(session, tx);
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
    await tx.virtualAccounts.insert({ ...prepared, sessionId: session.id, createdAt: now });
    return this.lifecycle.transition(tx, context, session, 'awaiting_payment', {
      now,
      newAccountNumber: prepared.accountNumber,
      closed,
    });
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
    const view = await this.view(session, repositories);
    if (!view.virtualAccount) throw new Error(`session ${session.id} has no account to show`);
    const merchantName = (await repositories.businesses.find(session.businessId))?.name ?? '';
    return { session: toPublicSession(view, merchantName), virtualAccount: view.virtualAccount };
  }

  /** The session if it belongs to the caller's business and environment; 404 if none, 403 if another's. */
  async ownedSession(
    caller: ApiCaller,
    id: string,
    repositories: Repositories = this.store,
  ): Promise<SessionRecord> {
    const session = await repositories.sessions.find(id);
    if (!session) throw notFound('session');
    assertOwnedBy(caller, session, 'session');
    return session;
  }

  /** `repositories`: the write job's inside one, so that it reads its own uncommitted writes on PostgreSQL. */
  async view(session: SessionRecord, repositories: Repositories = this.store): Promise<Session> {
    const account =
      session.accountNumber === null
        ? undefined
        : await repositories.virtualAccounts.find(session.accountNumber);
    return toSessionView(session, account);
  }

  /** The currencies sessions may be made in, with their amount bounds (the public checkout profile shows them). */
  acceptedCurrencies(): AcceptedCurrency[] {
    return Object.entries(this.config.currencies).map(([currency, bounds]) => ({
      currency,
      minAmount: bounds.minAmount,
      maxAmount: bounds.maxAmount,
    }));
  }

  /** Refuses a currency the service does not take, or an amount outside its bounds (payment links use it too). */
  checkMoney(params: Pick<CreateSessionParams, 'amount' | 'currency'>): void {
    const bounds = this.config.currencies[params.currency];
    if (!bounds) {
      throw new DomainError('unsupported_currency', `Currency ${params.currency} is not supported.`, [
        { path: 'currency', message: `supported: ${Object.keys(this.config.currencies).join(', ')}` },
      ]);
    }
    if (params.amount < bounds.minAmount || params.amount > bounds.maxAmount) {
      throw new DomainError(
        'amount_out_of_range',
        `amount must be between ${bounds.minAmount} and ${bounds.maxAmount} ${params.currency} minor units.`,
        [{ path: 'amount', message: `between ${bounds.minAmount} and ${bounds.maxAmount}` }],
      );
    }
  }
}
