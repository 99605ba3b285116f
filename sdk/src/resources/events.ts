import type { APIPromise } from '../api-promise.ts';
import { segment } from '../internal/query.ts';
import type { RequestOptions } from '../options.ts';
import type { ResendEventParams } from '../protocol/index.ts';
import { Envelopes, type ResendEventResult } from '../responses.ts';
import { APIResource } from './api-resource.ts';

/**
 * Events the service recorded (`evt_…`, the `id` of every webhook body). Reached as `servicepay.events`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * await servicepay.events.resend('evt_123', { endpointId: 'we_123' });
 */
export class Events extends APIResource {
  /**
   * Queues the event again for one endpoint (`endpointId`) or for every endpoint subscribed to its type.
   * Resolves once the service accepted it (202) with the ids of the deliveries it queued; the deliveries
   * themselves follow, see `webhookEndpoints.deliveries`.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const { deliveries } = await servicepay.events.resend('evt_123');
   */
  resend(
    id: string,
    params: ResendEventParams = {},
    options?: RequestOptions,
  ): APIPromise<ResendEventResult> {
    return this.call({
      method: 'POST',
      path: `/api/events/${segment(id)}/resend`,
      body: params,
      schema: Envelopes.resendResult,
      options,
    });
  }
}
