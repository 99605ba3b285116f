import { z } from 'zod';
import type { RequestOptions, Transport } from '../client.ts';
import { segment } from '../internal/query.ts';
import { type ListParams, Page, PagePromise } from '../pagination.ts';
import {
  type CreateWebhookEndpointParams,
  envelopeOf,
  type ListWebhookDeliveriesParams as ListWebhookDeliveriesQuery,
  type ListWebhookEndpointsParams as ListWebhookEndpointsQuery,
  listEnvelopeOf,
  MetaSchema,
  type UpdateWebhookEndpointParams,
  type WebhookDelivery,
  WebhookDeliverySchema,
  type WebhookEndpoint,
  WebhookEndpointSchema,
  type WebhookEndpointWithSecret,
  WebhookEndpointWithSecretSchema,
} from '../protocol/index.ts';

/**
 * Filters and page of {@link WebhookEndpoints.list}: `environment`, `limit`, `startingAfter`.
 *
 * @example
 * import type { ListWebhookEndpointsParams } from '@servicepay/node';
 * const params: ListWebhookEndpointsParams = { environment: 'test' };
 */
export type ListWebhookEndpointsParams = ListParams<ListWebhookEndpointsQuery>;

/**
 * Filters and page of {@link WebhookEndpoints.deliveries}: `eventId`, `status`, `limit`, `startingAfter`.
 *
 * @example
 * import type { ListWebhookDeliveriesParams } from '@servicepay/node';
 * const params: ListWebhookDeliveriesParams = { status: 'failed', limit: 10 };
 */
export type ListWebhookDeliveriesParams = ListParams<ListWebhookDeliveriesQuery>;

const EndpointEnvelope = envelopeOf(WebhookEndpointSchema);
const EndpointWithSecretEnvelope = envelopeOf(WebhookEndpointWithSecretSchema);
const EndpointListEnvelope = listEnvelopeOf(WebhookEndpointSchema);
const DeliveryListEnvelope = listEnvelopeOf(WebhookDeliverySchema);
/** The contract does not fix what a deletion answers (204, or an envelope): both are accepted. */
const DeletionEnvelope = z.object({ meta: MetaSchema, data: z.unknown().optional() }).optional();

/**
 * What {@link WebhookEndpoints.delete} returns.
 *
 * @example
 * import type { DeletedWebhookEndpoint } from '@servicepay/node';
 * const gone: DeletedWebhookEndpoint = { id: 'we_123', deleted: true };
 */
export interface DeletedWebhookEndpoint {
  id: string;
  deleted: true;
}

/**
 * The URLs the service sends webhooks to, per environment. Reached as `servicepay.webhookEndpoints`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const endpoint = await servicepay.webhookEndpoints.create({ url: 'https://shop.example.com/webhooks/servicepay' });
 * // store endpoint.secret (whsec_…): it is shown only now, and verifies every webhook
 */
export class WebhookEndpoints {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Registers an endpoint. The answer holds its signing `secret` (`whsec_…`), shown this once.
   * `events` defaults to every event type.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { id, secret } = await servicepay.webhookEndpoints.create({
   *   url: 'https://shop.example.com/webhooks/servicepay',
   *   events: ['session.successful', 'session.mismatch'],
   * });
   */
  async create(
    params: CreateWebhookEndpointParams,
    options?: RequestOptions,
  ): Promise<WebhookEndpointWithSecret> {
    const response = await this.#transport.send({
      method: 'POST',
      path: '/api/webhooks',
      body: params,
      schema: EndpointWithSecretEnvelope,
      options,
    });
    return response.data;
  }

  /**
   * Lists endpoints, by `environment` (`test` or `live`, which must be the key's own). Await for a page or
   * `for await` for all.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * for await (const endpoint of servicepay.webhookEndpoints.list({ environment: 'test' })) console.log(endpoint.url);
   */
  list(params: ListWebhookEndpointsParams = {}, options?: RequestOptions): PagePromise<WebhookEndpoint> {
    const fetchPage = async (startingAfter: string | undefined): Promise<Page<WebhookEndpoint>> => {
      const response = await this.#transport.send({
        method: 'GET',
        path: '/api/webhooks',
        query: { ...params, startingAfter: startingAfter ?? params.startingAfter },
        schema: EndpointListEnvelope,
        options,
      });
      return new Page(response.data, response.pagination, (cursor) => fetchPage(cursor));
    };
    return new PagePromise(fetchPage(undefined));
  }

  /**
   * Retrieves an endpoint (without its secret).
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { enabled, disabledReason } = await servicepay.webhookEndpoints.retrieve('we_123');
   */
  async retrieve(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    const response = await this.#transport.send({
      method: 'GET',
      path: `/api/webhooks/${segment(id)}`,
      schema: EndpointEnvelope,
      options,
    });
    return response.data;
  }

  /**
   * Changes an endpoint's url, events, description, or turns it on or off (turning it on resets its failures).
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * await servicepay.webhookEndpoints.update('we_123', { enabled: true });
   */
  async update(
    id: string,
    params: UpdateWebhookEndpointParams,
    options?: RequestOptions,
  ): Promise<WebhookEndpoint> {
    const response = await this.#transport.send({
      method: 'PATCH',
      path: `/api/webhooks/${segment(id)}`,
      body: params,
      schema: EndpointEnvelope,
      options,
    });
    return response.data;
  }

  /**
   * Deletes an endpoint: nothing more is sent to it.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * await servicepay.webhookEndpoints.delete('we_123');
   */
  async delete(id: string, options?: RequestOptions): Promise<DeletedWebhookEndpoint> {
    await this.#transport.send({
      method: 'DELETE',
      path: `/api/webhooks/${segment(id)}`,
      schema: DeletionEnvelope,
      options,
    });
    return { id, deleted: true };
  }

  /**
   * Replaces the endpoint's signing secret and returns the new one, shown this once. While you switch, pass
   * both secrets to `constructEvent` (it accepts an array).
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { secret } = await servicepay.webhookEndpoints.rollSecret('we_123');
   */
  async rollSecret(id: string, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    const response = await this.#transport.send({
      method: 'POST',
      path: `/api/webhooks/${segment(id)}/roll-secret`,
      schema: EndpointWithSecretEnvelope,
      options,
    });
    return response.data;
  }

  /**
   * Lists the deliveries to an endpoint, each with every attempt (status, latency, error, response excerpt),
   * optionally for one event or one status.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const failed = await servicepay.webhookEndpoints.deliveries('we_123', { status: 'failed' });
   * for (const delivery of failed.data) console.log(delivery.eventId, delivery.attempts.at(-1)?.statusCode);
   */
  deliveries(
    id: string,
    params: ListWebhookDeliveriesParams = {},
    options?: RequestOptions,
  ): PagePromise<WebhookDelivery> {
    const fetchPage = async (startingAfter: string | undefined): Promise<Page<WebhookDelivery>> => {
      const response = await this.#transport.send({
        method: 'GET',
        path: `/api/webhooks/${segment(id)}/deliveries`,
        query: { ...params, startingAfter: startingAfter ?? params.startingAfter },
        schema: DeliveryListEnvelope,
        options,
      });
      return new Page(response.data, response.pagination, (cursor) => fetchPage(cursor));
    };
    return new PagePromise(fetchPage(undefined));
  }
}
