import type { APIPromise } from '../api-promise.ts';
import { segment } from '../internal/query.ts';
import type { RequestOptions } from '../options.ts';
import type { ListParams, PagePromise } from '../pagination.ts';
import type {
  CreateWebhookEndpointParams,
  ListWebhookDeliveriesParams as ListWebhookDeliveriesQuery,
  ListWebhookEndpointsParams as ListWebhookEndpointsQuery,
  UpdateWebhookEndpointParams,
} from '../protocol/index.ts';
import {
  type DeletedWebhookEndpoint,
  Envelopes,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
} from '../responses.ts';
import { APIResource } from './api-resource.ts';

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

/**
 * What {@link WebhookEndpoints.upsert} answers: the endpoint at the URL, whether this call created it, and its
 * signing `secret` only when it did (otherwise use the one you stored when it was created).
 *
 * @example
 * import type { UpsertedWebhookEndpoint } from '@servicepay/node';
 * const secretToStore = (result: UpsertedWebhookEndpoint) => (result.created ? result.secret : null);
 */
export type UpsertedWebhookEndpoint =
  | { created: true; endpoint: WebhookEndpoint; secret: string }
  | { created: false; endpoint: WebhookEndpoint; secret: null };

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item) => b.includes(item)) && b.every((item) => a.includes(item));

/**
 * The URLs the service sends webhooks to, per environment. Reached as `servicepay.webhookEndpoints`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const endpoint = await servicepay.webhookEndpoints.create({ url: 'https://shop.example.com/webhooks/servicepay' });
 * // store endpoint.secret (whsec_…): it is shown only now, and verifies every webhook
 */
export class WebhookEndpoints extends APIResource {
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
  create(
    params: CreateWebhookEndpointParams,
    options?: RequestOptions,
  ): APIPromise<WebhookEndpointWithSecret> {
    return this.call({
      method: 'POST',
      path: '/api/webhooks',
      body: params,
      schema: Envelopes.endpointWithSecret,
      options,
    });
  }

  /**
   * Registers the endpoint at `url` once, for an app that registers itself at every start: finds the
   * endpoint already registered at exactly this URL (the newest, if several) and, if `events` or
   * `description` are given and differ, updates it; creates it only when none exists. The answer's `secret`
   * is set only when this call created the endpoint: store it then, and keep using it on later starts (a lost
   * secret: `rollSecret(endpoint.id)`). Never touches `enabled`: an endpoint you turned off stays off.
   * Twenty starts leave one endpoint, and the endpoint limit (16 per environment) is never reached this way.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { created, endpoint, secret } = await servicepay.webhookEndpoints.upsert({
   *   url: 'https://shop.example.com/webhooks/servicepay',
   *   events: ['session.successful', 'session.mismatch'],
   * });
   * if (created) console.log(`store this signing secret for ${endpoint.id}: ${secret}`);
   */
  async upsert(
    params: CreateWebhookEndpointParams,
    options?: RequestOptions,
  ): Promise<UpsertedWebhookEndpoint> {
    const found = await this.list({ url: params.url, limit: 1 }, options);
    const existing = found.data[0];
    if (!existing) {
      const { secret, ...endpoint } = await this.create(params, options);
      return { created: true, endpoint, secret };
    }
    const change: UpdateWebhookEndpointParams = {};
    if (params.events !== undefined && !sameSet(params.events, existing.events))
      change.events = params.events;
    if (params.description !== undefined && params.description !== existing.description) {
      change.description = params.description;
    }
    const endpoint =
      Object.keys(change).length === 0 ? existing : await this.update(existing.id, change, options);
    return { created: false, endpoint, secret: null };
  }

  /**
   * Lists endpoints, by `environment` (`test` or `live`, which must be the key's own) and, with `url`, only
   * those registered at exactly that URL. Await for a page or `for await` for all.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * for await (const endpoint of servicepay.webhookEndpoints.list({ environment: 'test' })) console.log(endpoint.url);
   */
  list(params: ListWebhookEndpointsParams = {}, options?: RequestOptions): PagePromise<WebhookEndpoint> {
    return this.paginate('/api/webhooks', params, Envelopes.endpointList, options);
  }

  /**
   * Retrieves an endpoint (without its secret).
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { enabled, disabledReason } = await servicepay.webhookEndpoints.retrieve('we_123');
   */
  retrieve(id: string, options?: RequestOptions): APIPromise<WebhookEndpoint> {
    return this.call({
      method: 'GET',
      path: `/api/webhooks/${segment(id)}`,
      schema: Envelopes.endpoint,
      options,
    });
  }

  /**
   * Changes an endpoint's url, events, description, or turns it on or off (turning it on resets its failures).
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * await servicepay.webhookEndpoints.update('we_123', { enabled: true });
   */
  update(
    id: string,
    params: UpdateWebhookEndpointParams,
    options?: RequestOptions,
  ): APIPromise<WebhookEndpoint> {
    return this.call({
      method: 'PATCH',
      path: `/api/webhooks/${segment(id)}`,
      body: params,
      schema: Envelopes.endpoint,
      options,
    });
  }

  /**
   * Deletes an endpoint: nothing more is sent to it, and its pending deliveries become `failed`. Answers
   * `{ id, deleted: true }` as the service sent it (the contract's `DeletedWebhookEndpointSchema`).
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * await servicepay.webhookEndpoints.delete('we_123');
   */
  delete(id: string, options?: RequestOptions): APIPromise<DeletedWebhookEndpoint> {
    return this.call({
      method: 'DELETE',
      path: `/api/webhooks/${segment(id)}`,
      schema: Envelopes.deletedEndpoint,
      options,
    });
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
  rollSecret(id: string, options?: RequestOptions): APIPromise<WebhookEndpointWithSecret> {
    return this.call({
      method: 'POST',
      path: `/api/webhooks/${segment(id)}/roll-secret`,
      schema: Envelopes.endpointWithSecret,
      options,
    });
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
    return this.paginate(`/api/webhooks/${segment(id)}/deliveries`, params, Envelopes.deliveryList, options);
  }
}
