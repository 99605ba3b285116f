import type { APIPromise } from '../api-promise.ts';
import { segment } from '../internal/query.ts';
import type { RequestOptions } from '../options.ts';
import type { ListParams, PagePromise } from '../pagination.ts';
import type { CreateSessionParams, ListSessionsParams as ListSessionsQuery } from '../protocol/index.ts';
import { type CreatedSession, Envelopes, type Session } from '../responses.ts';
import { APIResource } from './api-resource.ts';

/**
 * Filters and page of {@link Sessions.list}: `environment`, `status`, `reference`, `limit` (1–100, default 20),
 * `startingAfter` (a `nextCursor`).
 *
 * @example
 * import type { ListSessionsParams } from '@servicepay/node';
 * const params: ListSessionsParams = { status: 'successful', limit: 50 };
 */
export type ListSessionsParams = ListParams<ListSessionsQuery>;

/**
 * Payment sessions: the amount, currency and payer fixed on your server before the widget opens.
 * Reached as `servicepay.sessions`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const session = await servicepay.sessions.retrieve('ses_123');
 * if (session.status === 'successful') console.log('paid', session.reference);
 */
export class Sessions extends APIResource {
  /**
   * Creates a session and returns it with its `clientSecret` (shown this once) for the widget.
   * Sent with an `Idempotency-Key` (random unless you pass `options.idempotencyKey`), so a retry never
   * creates a second session; pass your order id as the key to be safe across your own retries too.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { clientSecret } = await servicepay.sessions.create(
   *   { amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' }, reference: 'order-1042' },
   *   { idempotencyKey: 'order-1042' },
   * );
   */
  create(params: CreateSessionParams, options?: RequestOptions): APIPromise<CreatedSession> {
    return this.call({
      method: 'POST',
      path: '/api/widget/sessions',
      body: params,
      schema: Envelopes.createdSession,
      options,
    });
  }

  /**
   * Retrieves a session by id. Confirm a payment with this (or a verified webhook), never with the browser.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { status, paidAt } = await servicepay.sessions.retrieve('ses_123');
   */
  retrieve(id: string, options?: RequestOptions): APIPromise<Session> {
    return this.call({
      method: 'GET',
      path: `/api/widget/sessions/${segment(id)}`,
      schema: Envelopes.session,
      options,
    });
  }

  /**
   * Lists sessions, newest first. Await it for one page, or `for await` it to walk every page.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const first = await servicepay.sessions.list({ limit: 50 });
   * for await (const session of servicepay.sessions.list({ status: 'successful' })) console.log(session.id);
   */
  list(params: ListSessionsParams = {}, options?: RequestOptions): PagePromise<Session> {
    return this.paginate('/api/widget/sessions', params, Envelopes.sessionList, options);
  }

  /**
   * Cancels a session that is not yet paid; the bank returns any later transfer to its account.
   * A session already in a terminal status answers 409 (`ConflictError`, code `session_not_active`).
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { status } = await servicepay.sessions.cancel('ses_123'); // 'cancelled'
   */
  cancel(id: string, options?: RequestOptions): APIPromise<Session> {
    return this.call({
      method: 'POST',
      path: `/api/widget/sessions/${segment(id)}/cancel`,
      schema: Envelopes.session,
      options,
    });
  }
}
