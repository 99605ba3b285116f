import type {
  CreatedSession,
  CreatePaymentLinkParams,
  Environment,
  Pagination,
  Payer,
  PaymentLink,
  UpdatePaymentLinkParams,
} from '@servicepay/node/protocol';
import { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';
import type { IdempotencyClaim } from '../db/idempotency-keys.ts';
import type { PaymentLinkRecord } from '../db/payment-links.ts';
import type { Store } from '../db/store.ts';
import { DomainError, notFound } from '../domain-errors.ts';
import { type Clock, toIso, toIsoOrNull } from '../internal/clock.ts';
import { toPage, unknownCursor } from '../internal/pagination.ts';
import { newTimeOrderedId } from '../internal/random.ts';
import { checkRedirectUrls } from '../sessions/redirect-urls.ts';
import type { SessionService } from '../sessions/session-service.ts';

/** A payment link's `url` (`widget-hosts/hosted-paths.ts`), from the wiring that knows the hosts' addresses. */
export type PaymentLinkUrl = (environment: Environment, linkId: string) => string;

/**
 * Payment links (issue 36), behind the API, the portal, the command line and the link's own page: create,
 * list, retrieve, update, and the session a payer opens through a link, made on the merchant's behalf.
 *
 * @example
 * const link = await paymentLinks.create(caller, { name: 'Ankara fabric', amount: 500000, currency: 'NGN' });
 * link.url; // 'https://js.test.example/links/pl_…'
 */
export class PaymentLinkService {
  constructor(
    private readonly store: Store,
    private readonly sessions: SessionService,
    private readonly clock: Clock,
    private readonly linkUrl: PaymentLinkUrl,
  ) {}

  /** A link as the merchant sees it. */
  view(link: PaymentLinkRecord): PaymentLink {
    return {
      id: link.id,
      name: link.name,
      environment: link.environment,
      amount: link.amount,
      currency: link.currency,
      reusable: link.reusable,
      active: link.active,
      url: this.linkUrl(link.environment, link.id),
      successUrl: link.successUrl,
      metadata: link.metadata,
      completedAt: toIsoOrNull(link.completedAt),
      createdAt: toIso(link.createdAt),
      updatedAt: toIso(link.updatedAt),
    };
  }

  /**
   * Makes a link in the caller's environment. Its amount and currency are checked as a session's would be,
   * so every payer who opens it can pay. Retries with an `Idempotency-Key` are answered before this runs.
   */
  async create(caller: ApiCaller, params: CreatePaymentLinkParams): Promise<PaymentLink> {
    this.sessions.checkMoney(params);
    checkRedirectUrls(caller.environment, { successUrl: params.successUrl });
    const now = this.clock.now();
    const link = await this.store.writes.run(async (tx) => {
      const inserted = await tx.paymentLinks.insert({
        id: newTimeOrderedId('pl', now),
        businessId: caller.business.id,
        environment: caller.environment,
        name: params.name,
        amount: params.amount,
        currency: params.currency,
        reusable: params.reusable ?? true,
        active: true,
        successUrl: params.successUrl ?? null,
        metadata: params.metadata ?? {},
        createdAt: now,
        updatedAt: now,
      });
      await tx.auditLog.record({
        at: now,
        actor: caller.actor ?? `secret_key:${caller.environment}`,
        action: 'payment_link.created',
        businessId: inserted.businessId,
        environment: inserted.environment,
        target: inserted.id,
        details: { amount: inserted.amount, currency: inserted.currency, reusable: inserted.reusable },
      });
      return inserted;
    });
    return this.view(link);
  }

  async retrieve(caller: ApiCaller, id: string): Promise<PaymentLink> {
    return this.view(await this.owned(caller, id));
  }

  /** One page of the caller's links, newest first (`active` filters). */
  async list(
    caller: ApiCaller,
    query: { limit: number; startingAfter?: string | undefined; active?: 'true' | 'false' | undefined },
  ): Promise<{ data: PaymentLink[]; pagination: Pagination }> {
    let beforeSeq: number | undefined;
    if (query.startingAfter !== undefined) {
      const cursor = await this.store.paymentLinks.find(query.startingAfter);
      if (!cursor || cursor.businessId !== caller.business.id || cursor.environment !== caller.environment) {
        throw unknownCursor('a payment link of this list');
      }
      beforeSeq = cursor.seq;
    }
    const rows = await this.store.paymentLinks.list({
      businessId: caller.business.id,
      environment: caller.environment,
      active: query.active === undefined ? undefined : query.active === 'true',
      beforeSeq,
      limit: query.limit + 1,
    });
    return toPage(rows, query.limit, (link) => this.view(link));
  }

  /**
   * Renames a link, or turns it off and on. A one-time link that was paid stays closed: turning it on answers
   * 409 `payment_link_completed`.
   */
  async update(caller: ApiCaller, id: string, params: UpdatePaymentLinkParams): Promise<PaymentLink> {
    await this.owned(caller, id);
    const now = this.clock.now();
    const change = {
      ...(params.name === undefined ? {} : { name: params.name }),
      ...(params.active === undefined ? {} : { active: params.active }),
    };
    const link = await this.store.writes.run(async (tx) => {
      if (!(await tx.paymentLinks.update(id, change, now))) {
        throw new DomainError(
          'payment_link_completed',
          'This one-time link was paid and stays closed; make a new link.',
          [{ path: 'active', message: 'a completed one-time link cannot be turned on again' }],
        );
      }
      await tx.auditLog.record({
        at: now,
        actor: caller.actor ?? `secret_key:${caller.environment}`,
        action: 'payment_link.updated',
        businessId: caller.business.id,
        environment: caller.environment,
        target: id,
        details: change,
      });
      const updated = await tx.paymentLinks.find(id);
      if (!updated) throw notFound('payment link');
      return updated;
    });
    return this.view(link);
  }

  /** The link a payer opened, for its page: undefined when there is none. */
  find(id: string): Promise<PaymentLinkRecord | undefined> {
    return this.store.paymentLinks.find(id);
  }

  /**
   * A payer's session through an active link, made on the merchant's behalf in the link's environment (a test
   * link never makes a live session), with the link's amount, currency, metadata and `successUrl`. An
   * inactive link answers `payment_link_inactive` (410); a live link of a business whose KYC is not approved
   * `kyc_required`. The caller (the link's page) has spent the link's and the address's budgets first.
   * `remember` gives the claim written with the session, as `SessionService.create`'s does (the page claims the
   * form's submission so: one submission, one session).
   */
  async openSession(
    linkId: string,
    payer: Payer,
    remember?: (created: CreatedSession) => IdempotencyClaim | undefined,
  ): Promise<CreatedSession> {
    const link = await this.store.paymentLinks.find(linkId);
    if (!link) throw notFound('payment link');
    if (!link.active) {
      throw new DomainError('payment_link_inactive', 'This payment link no longer takes payments.');
    }
    const business = await this.store.businesses.find(link.businessId);
    if (!business) throw notFound('payment link');
    if (link.environment === 'live' && !business.kycApproved) {
      throw new DomainError('kyc_required', 'This business cannot take live payments yet.');
    }
    const caller: ApiCaller = {
      kind: 'secret',
      business,
      environment: link.environment,
      actor: `payment_link:${link.id}`,
    };
    const params = {
      amount: link.amount,
      currency: link.currency,
      payer,
      metadata: link.metadata,
      ...(link.successUrl === null ? {} : { successUrl: link.successUrl }),
    };
    return this.sessions.create(caller, params, remember, link.id);
  }

  private async owned(caller: ApiCaller, id: string): Promise<PaymentLinkRecord> {
    const link = await this.store.paymentLinks.find(id);
    if (!link) throw notFound('payment link');
    assertOwnedBy(caller, link, 'payment link');
    return link;
  }
}
