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
import type { BankGateway } from '../bank/bank-gateway.ts';
import type { ApiCaller } from '../businesses/ownership.ts';
import type { ServerConfig } from '../config.ts';
import type { IdempotencyClaim } from '../db/idempotency-keys.ts';
import type { Repositories } from '../db/repositories.ts';
import { type SessionListQuery, type SessionRecord, storedSession } from '../db/sessions.ts';
import type { Store } from '../db/store.ts';
import { DomainError, notFound } from '../domain-errors.ts';
import type { Clock } from '../internal/clock.ts';
import { toPage, unknownCursor } from '../internal/pagination.ts';
import { newTimeOrderedId, randomBase62 } from '../internal/random.ts';
import { sessionCreated } from '../metrics/metrics.ts';
import { isTerminal } from '../views/session-status.ts';
import { toPublicSession, toSessionView } from '../views/session-views.ts';
import { AccountOpening } from './account-opening.ts';
import { newClientSecret } from './client-secret.ts';
import { checkRedirectUrls } from './redirect-urls.ts';
import type { SessionLifecycle } from './session-lifecycle.ts';
import { ownedSession, sessionView } from './session-reads.ts';

/** The hosted checkout's address of a session (`widget-hosts/hosted-pages.ts`): made by the service's wiring. */
export type HostedCheckoutUrl = (environment: Environment, sessionId: string, clientSecret: string) => string;

/**
 * The rules of a payment session, behind the routes: create, read, list, cancel. Every write runs in the write
 * queue. How a session comes to offer an account (the checkout's bootstrap, a fresh account, test mode's
 * checkout) is `AccountOpening`'s, answered here so that the routes keep one sessions service.
 */
export class SessionService {
  private readonly accounts: AccountOpening;

  constructor(
    private readonly store: Store,
    private readonly lifecycle: SessionLifecycle,
    bank: BankGateway,
    private readonly clock: Clock,
    private readonly config: ServerConfig,
    private readonly hostedUrl: HostedCheckoutUrl = () => '',
  ) {
    this.accounts = new AccountOpening(store, lifecycle, bank, clock, config);
  }

  /**
   * Creates a session. Retries with an `Idempotency-Key` are answered by `middleware/idempotency.ts` before
   * this runs, so a retried create makes one session. `remember` is given the answer before the session is
   * written and returns the key's claim to write with it (`middleware/idempotency.ts`, `idempotencyClaimFor`):
   * both commit together or not at all. The write is one statement on PostgreSQL (`oneStatement`, issue 38).
   */
  create(
    caller: ApiCaller,
    params: CreateSessionParams,
    remember?: (created: CreatedSession) => IdempotencyClaim | undefined,
    paymentLinkId: string | null = null,
  ): Promise<CreatedSession> {
    this.checkMoney(params);
    checkRedirectUrls(caller.environment, { successUrl: params.successUrl, cancelUrl: params.cancelUrl });
    return this.store.writes.run(
      async (tx, context) => {
        const now = this.clock.now();
        context.afterCommit(() => sessionCreated(caller.environment));
        const reference = params.reference ?? `ref_${randomBase62(20)}`;
        // Time-ordered, like the id: its lookup key is appended to the index (client-secret.ts).
        const { clientSecret, lookupKey } = newClientSecret(caller.environment, now);
        const session = storedSession({
          // Time-ordered: appended to the id index rather than written on a random page of it (issue 12).
          id: newTimeOrderedId('ses', now),
          businessId: caller.business.id,
          environment: caller.environment,
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
        const url = this.hostedUrl(session.environment, session.id, clientSecret);
        const created: CreatedSession = { ...toSessionView(session, undefined), clientSecret, url };
        const claim = remember?.(created);
        const made = claim
          ? await tx.sessions.insertAnswered(session, claim)
          : await tx.sessions.insert(session);
        if (!made) {
          throw new DomainError(
            'reference_already_used',
            `A session with reference "${reference}" already exists.`,
            [{ path: 'reference', message: 'already used by another session' }],
          );
        }
        return created;
      },
      { oneStatement: true },
    );
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

  /** The widget's one exchange of the client secret (`AccountOpening.bootstrap`). */
  bootstrap(clientSecret: string): Promise<BootstrapResult> {
    return this.accounts.bootstrap(clientSecret);
  }

  /** A fresh account for a session whose last one ran out (`AccountOpening.newAccount`). */
  newAccount(sessionId: string): Promise<NewAccountResult> {
    return this.accounts.newAccount(sessionId);
  }

  /** Test mode's checkout without the widget (`AccountOpening.openForTest`). */
  openForTest(caller: ApiCaller, id: string): Promise<{ session: Session; virtualAccount: VirtualAccount }> {
    return this.accounts.openForTest(caller, id);
  }

  /** The session if it belongs to the caller's business and environment; 404 if none, 403 if another's. */
  ownedSession(
    caller: ApiCaller,
    id: string,
    repositories: Repositories = this.store,
  ): Promise<SessionRecord> {
    return ownedSession(caller, id, repositories);
  }

  /** `repositories`: the write job's inside one, so that it reads its own uncommitted writes on PostgreSQL. */
  view(session: SessionRecord, repositories: Repositories = this.store): Promise<Session> {
    return sessionView(session, repositories);
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
