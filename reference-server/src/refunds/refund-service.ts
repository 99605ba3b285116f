import type { CreateRefundParams, Pagination, Refund } from '@servicepay/node/protocol';
import { type ApiCaller, assertOwnedBy } from '../businesses/ownership.ts';
import type { RefundRecord } from '../db/refunds.ts';
import type { Repositories } from '../db/repositories.ts';
import type { SessionRecord } from '../db/sessions.ts';
import type { Store } from '../db/store.ts';
import { DomainError, notFound } from '../domain-errors.ts';
import type { Clock } from '../internal/clock.ts';
import { formatMoney } from '../internal/money-format.ts';
import { toPage, unknownCursor } from '../internal/pagination.ts';
import { newTimeOrderedId } from '../internal/random.ts';

/** An amount as a message in the envelope spells it: `NGN 4,000.00` (a plain space, not Intl's no-break one). */
const spelled = (amount: number, currency: string) => formatMoney(amount, currency).replace(/\s/gu, ' ');

import type { RefundPayouts } from './refund-payouts.ts';
import { toRefundView } from './refund-views.ts';

/** How long a create waits for the bank's answer before answering the refund `pending`. */
const ANSWER_WAIT_MS = 5_000;

/** How many times a create reads its session again after a concurrent refund took what it counted on. */
const ADMIT_ATTEMPTS = 25;

/** How `RefundService.create` is asked, beside the refund's own parameters. */
export interface RefundOptions {
  /**
   * Refund only while the session's refunds still hold exactly this (what the portal's review showed): a
   * second press of the confirm button, or a refund made meanwhile elsewhere, then refunds nothing (409).
   */
  expectedAmountRefunded?: number;
}

/** Live refunds follow the rule of live sessions: a business refunds live money once it passed KYC review. */
function assertMayRefund(caller: ApiCaller): void {
  if (caller.environment === 'live' && !caller.business.kycApproved) {
    throw new DomainError('kyc_required', 'Live refunds work once your business has passed KYC review.');
  }
}

/**
 * The merchant's refunds, behind the routes, the portal and the CLI: create (admitted against what is left
 * to refund, in the database), list, retrieve. The bank's side is `RefundPayouts`.
 */
export class RefundService {
  constructor(
    private readonly store: Store,
    private readonly payouts: RefundPayouts,
    private readonly clock: Clock,
  ) {}

  /**
   * Refunds `params.amount` (default: all that is left) of a successful session of `caller`'s, and answers the
   * refund once the bank answered it (`succeeded` or `failed`), or `pending` if the bank is slow (the webhook
   * tells the outcome). The amount is admitted by one conditional write of the session (`reserveRefund`):
   * refunds racing from any instance never add up to more than was paid. Retries with an `Idempotency-Key`
   * are answered by the idempotency middleware before this runs.
   */
  async create(
    caller: ApiCaller,
    sessionId: string,
    params: CreateRefundParams,
    options: RefundOptions = {},
  ): Promise<Refund> {
    assertMayRefund(caller);
    const actor = caller.actor ?? `secret_key:${caller.environment}`;
    const recorded = await this.store.writes.run(async (tx, context) => {
      const refund = await this.admit(tx, caller, sessionId, params, actor, options);
      await tx.auditLog.record({
        at: refund.createdAt,
        actor,
        action: 'refund.requested',
        businessId: refund.businessId,
        environment: refund.environment,
        target: refund.id,
        details: { sessionId, amount: refund.amount, currency: refund.currency, reason: refund.reason },
      });
      context.afterCommit(() => this.payouts.payoutSoon(refund));
      return refund;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.payouts.settled(recorded.id),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ANSWER_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    return toRefundView((await this.store.refunds.find(recorded.id)) ?? recorded);
  }

  /**
   * What a refund of `requested` (default: all that is left) would take from a session of `caller`'s, checked
   * as `create` checks it, without refunding: the portal's review step. `amountRefunded` is what the confirm
   * step must still find (`RefundOptions.expectedAmountRefunded`).
   */
  async review(
    caller: ApiCaller,
    sessionId: string,
    requested: number | undefined,
  ): Promise<{ amount: number; amountRefunded: number }> {
    assertMayRefund(caller);
    const session = await this.store.sessions.find(sessionId);
    if (!session) throw notFound('session');
    assertOwnedBy(caller, session, 'session');
    return { amount: refundableAmount(session, requested), amountRefunded: session.amountRefunded };
  }

  async retrieve(caller: ApiCaller, id: string): Promise<Refund> {
    const refund = await this.store.refunds.find(id);
    if (!refund) throw notFound('refund');
    assertOwnedBy(caller, refund, 'refund');
    return toRefundView(refund);
  }

  /** One page of a session's refunds (`sessionId`) or of every refund of the caller's, newest first. */
  async list(
    caller: ApiCaller,
    query: { sessionId?: string | undefined; limit: number; startingAfter?: string | undefined },
  ): Promise<{ data: Refund[]; pagination: Pagination }> {
    if (query.sessionId !== undefined) {
      const session = await this.store.sessions.find(query.sessionId);
      if (!session) throw notFound('session');
      assertOwnedBy(caller, session, 'session');
    }
    let beforeSeq: number | undefined;
    if (query.startingAfter !== undefined) {
      const cursor = await this.store.refunds.find(query.startingAfter);
      const inList =
        cursor &&
        cursor.businessId === caller.business.id &&
        cursor.environment === caller.environment &&
        (query.sessionId === undefined || cursor.sessionId === query.sessionId);
      if (!cursor || !inList) throw unknownCursor('a refund of this list');
      beforeSeq = cursor.seq;
    }
    const page = { beforeSeq, limit: query.limit + 1 };
    const rows = await this.store.refunds.list(
      query.sessionId !== undefined
        ? { sessionId: query.sessionId, ...page }
        : { businessId: caller.business.id, environment: caller.environment, ...page },
    );
    return toPage(rows, query.limit, toRefundView);
  }

  /**
   * Checks the session and the amount, then counts the amount as refunded on the session by one conditional
   * write and records the refund `pending`. When a concurrent refund took part of what was left between the
   * read and the write, the session is read again (each statement sees the latest commit) and judged anew.
   */
  private async admit(
    tx: Repositories,
    caller: ApiCaller,
    sessionId: string,
    params: CreateRefundParams,
    requestedBy: string,
    options: RefundOptions,
  ): Promise<RefundRecord> {
    const expected = options.expectedAmountRefunded;
    for (let attempt = 0; attempt < ADMIT_ATTEMPTS; attempt++) {
      const session = await tx.sessions.find(sessionId);
      if (!session) throw notFound('session');
      assertOwnedBy(caller, session, 'session');
      if (expected !== undefined && session.amountRefunded !== expected) {
        throw new DomainError(
          'session_not_refundable',
          "This session's refunds changed since this refund was reviewed (another refund was made). Review it again.",
        );
      }
      const amount = refundableAmount(session, params.amount);
      const now = this.clock.now();
      if (!(await tx.sessions.reserveRefund(session.id, amount, now, expected))) continue;
      const transferId = await tx.settledTransfers.creditedTo(session.id);
      if (transferId === undefined)
        throw new Error(`successful session ${session.id} has no credited transfer`);
      return tx.refunds.insert({
        id: newTimeOrderedId('rfd', now),
        businessId: session.businessId,
        environment: session.environment,
        sessionId: session.id,
        transferId,
        amount,
        currency: session.currency,
        status: 'pending',
        reason: params.reason ?? null,
        failureReason: null,
        requestedBy,
        createdAt: now,
        updatedAt: now,
      });
    }
    throw new DomainError('session_not_refundable', 'The session kept changing; try again.');
  }
}

/**
 * The amount a refund of `session` takes (`requested`, or all that is left), or the error that says what can
 * be refunded: 409 `session_not_refundable` when nothing was paid, 409 `session_fully_refunded` when nothing
 * is left, 400 `refund_exceeds_remaining` for more than is left.
 */
export function refundableAmount(session: SessionRecord, requested: number | undefined): number {
  if (session.status !== 'successful') {
    throw new DomainError(
      'session_not_refundable',
      `The session is ${session.status}: nothing was paid, so there is nothing to refund. Only a successful session can be refunded.`,
    );
  }
  const left = session.amount - session.amountRefunded;
  const paid = spelled(session.amount, session.currency);
  if (left <= 0) {
    throw new DomainError(
      'session_fully_refunded',
      `All ${paid} of this session is refunded or being refunded; nothing is left to refund.`,
    );
  }
  const amount = requested ?? left;
  if (amount > left) {
    throw new DomainError(
      'refund_exceeds_remaining',
      `At most ${spelled(left, session.currency)} (amount ${left}) of this session's ${paid} is left to refund.`,
      [{ path: 'amount', message: `must be at most ${left}` }],
    );
  }
  return amount;
}
