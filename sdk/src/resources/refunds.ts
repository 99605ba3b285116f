import type { APIPromise } from '../api-promise.ts';
import { segment } from '../internal/query.ts';
import type { RequestOptions } from '../options.ts';
import type { ListParams, PagePromise } from '../pagination.ts';
import type { CreateRefundParams, ListRefundsParams as ListRefundsQuery } from '../protocol/index.ts';
import { Envelopes, type Refund } from '../responses.ts';
import { APIResource } from './api-resource.ts';

/**
 * Page of {@link Refunds.list}: `limit` (1–100, default 20), `startingAfter` (a `nextCursor`), and, for every
 * refund of the key's environment, `environment`.
 *
 * @example
 * import type { ListRefundsParams } from '@servicepay/node';
 * const params: ListRefundsParams = { limit: 50 };
 */
export type ListRefundsParams = ListParams<ListRefundsQuery>;

/**
 * Refunds: money sent back to the account a payer paid from, in part or in full, several times per session
 * if need be. Reached as `servicepay.refunds`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const refund = await servicepay.refunds.create('ses_123', { amount: 250_000, reason: 'requested_by_customer' });
 * if (refund.status === 'failed') console.warn('the bank refused:', refund.failureReason);
 */
export class Refunds extends APIResource {
  /**
   * Refunds `amount` (minor units; default: all that is left to refund) of a successful session. Answers the
   * refund once the bank answered (`succeeded` or `failed`), or `pending` if the bank is slow: the
   * `refund.succeeded` or `refund.failed` webhook tells the outcome. Sent with an `Idempotency-Key` (random
   * unless you pass `options.idempotencyKey`: pass your own refund's id to be safe across your own retries),
   * so a retry never refunds twice. More than is left answers 400 `refund_exceeds_remaining` (its message says
   * how much is left); a session that was not paid, or is refunded in full, answers 409.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * await servicepay.refunds.create('ses_123', { amount: 100_000 }, { idempotencyKey: 'return-77' });
   */
  create(sessionId: string, params: CreateRefundParams = {}, options?: RequestOptions): APIPromise<Refund> {
    return this.call({
      method: 'POST',
      path: `/api/widget/sessions/${segment(sessionId)}/refunds`,
      body: params,
      schema: Envelopes.refund,
      options,
    });
  }

  /**
   * Retrieves a refund by id.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { status } = await servicepay.refunds.retrieve('rfd_123');
   */
  retrieve(id: string, options?: RequestOptions): APIPromise<Refund> {
    return this.call({
      method: 'GET',
      path: `/api/refunds/${segment(id)}`,
      schema: Envelopes.refund,
      options,
    });
  }

  /**
   * Lists refunds, newest first: one session's (`sessionId`), or every refund of the key's environment. Await
   * it for one page, or `for await` it to walk every page.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * for await (const refund of servicepay.refunds.list({ sessionId: 'ses_123' })) console.log(refund.amount);
   */
  list(
    params: ListRefundsParams & { sessionId?: string } = {},
    options?: RequestOptions,
  ): PagePromise<Refund> {
    const { sessionId, ...query } = params;
    const path =
      sessionId === undefined ? '/api/refunds' : `/api/widget/sessions/${segment(sessionId)}/refunds`;
    return this.paginate(path, query, Envelopes.refundList, options);
  }
}
