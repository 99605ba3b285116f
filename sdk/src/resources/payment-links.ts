import type { APIPromise } from '../api-promise.ts';
import type { RequestOptions } from '../client.ts';
import { segment } from '../internal/query.ts';
import type { ListParams, PagePromise } from '../pagination.ts';
import type {
  CreatePaymentLinkParams,
  ListPaymentLinksParams as ListPaymentLinksQuery,
  UpdatePaymentLinkParams,
} from '../protocol/index.ts';
import { Envelopes, type PaymentLink } from '../responses.ts';
import { APIResource } from './api-resource.ts';

/**
 * Filters and page of {@link PaymentLinks.list}: `environment`, `active` (`'true'`/`'false'`), `limit` (1–100,
 * default 20), `startingAfter` (a `nextCursor`).
 *
 * @example
 * import type { ListPaymentLinksParams } from '@servicepay/node';
 * const params: ListPaymentLinksParams = { active: 'true', limit: 50 };
 */
export type ListPaymentLinksParams = ListParams<ListPaymentLinksQuery>;

/**
 * Payment links: a page (`url`) on the widget host of the key's environment where a payer types a name and an
 * email and pays a fixed amount, with no website of yours. Every session made through one names it
 * (`session.paymentLink`). Reached as `servicepay.paymentLinks`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const link = await servicepay.paymentLinks.create({ name: 'Ankara fabric, 6 yards', amount: 500_000, currency: 'NGN' });
 * console.log(link.url); // share it, or its QR code: GET /api/payment-links/{id}/qr.svg
 */
export class PaymentLinks extends APIResource {
  /**
   * Creates a link (`reusable` defaults to true; false closes it after its first successful payment). Sent
   * with an `Idempotency-Key` (random unless you pass `options.idempotencyKey`), so a retry never makes two.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { url } = await servicepay.paymentLinks.create(
   *   { name: 'Invoice 77', amount: 1_250_000, currency: 'NGN', reusable: false, successUrl: 'https://shop.example/thanks?s={SESSION_ID}' },
   *   { idempotencyKey: 'invoice-77' },
   * );
   */
  create(params: CreatePaymentLinkParams, options?: RequestOptions): APIPromise<PaymentLink> {
    return this.call({
      method: 'POST',
      path: '/api/payment-links',
      body: params,
      schema: Envelopes.paymentLink,
      options,
    });
  }

  /**
   * Retrieves a link by id.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { active, url } = await servicepay.paymentLinks.retrieve('pl_123');
   */
  retrieve(id: string, options?: RequestOptions): APIPromise<PaymentLink> {
    return this.call({
      method: 'GET',
      path: `/api/payment-links/${segment(id)}`,
      schema: Envelopes.paymentLink,
      options,
    });
  }

  /**
   * Renames a link or turns it off (`active: false`: its page answers 410) and on again. A one-time link that
   * was paid stays closed (409 `payment_link_completed`).
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * await servicepay.paymentLinks.update('pl_123', { active: false });
   */
  update(id: string, params: UpdatePaymentLinkParams, options?: RequestOptions): APIPromise<PaymentLink> {
    return this.call({
      method: 'PATCH',
      path: `/api/payment-links/${segment(id)}`,
      body: params,
      schema: Envelopes.paymentLink,
      options,
    });
  }

  /**
   * Lists links, newest first. Await it for one page, or `for await` it to walk every page.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * for await (const link of servicepay.paymentLinks.list({ active: 'true' })) console.log(link.name, link.url);
   */
  list(params: ListPaymentLinksParams = {}, options?: RequestOptions): PagePromise<PaymentLink> {
    return this.paginate('/api/payment-links', params, Envelopes.paymentLinkList, options);
  }
}
