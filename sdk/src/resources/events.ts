import type { RequestOptions, Transport } from '../client.ts';
import { segment } from '../internal/query.ts';
import {
  envelopeOf,
  type ResendEventParams,
  type ResendEventResult,
  ResendEventResultSchema,
} from '../protocol/index.ts';

const ResendEnvelope = envelopeOf(ResendEventResultSchema);

/**
 * Events the service recorded (`evt_…`, the `id` of every webhook body). Reached as `servicepay.events`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * await servicepay.events.resend('evt_123', { endpointId: 'we_123' });
 */
export class Events {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

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
  async resend(
    id: string,
    params: ResendEventParams = {},
    options?: RequestOptions,
  ): Promise<ResendEventResult> {
    const response = await this.#transport.send({
      method: 'POST',
      path: `/api/events/${segment(id)}/resend`,
      body: params,
      schema: ResendEnvelope,
      options,
    });
    return response.data;
  }
}
