import { z } from 'zod';
import type { RequestOptions, Transport } from '../client.ts';
import { segment } from '../internal/query.ts';
import { MetaSchema, type ResendEventParams } from '../protocol/index.ts';

/** The contract fixes the 202 of a resend, not its `data`: whatever comes is accepted. */
const AcceptedEnvelope = z.object({ meta: MetaSchema, data: z.unknown().optional() }).optional();

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
   * Resolves once the service accepted it (202); the delivery itself follows, see
   * `webhookEndpoints.deliveries`.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * await servicepay.events.resend('evt_123');
   */
  async resend(id: string, params: ResendEventParams = {}, options?: RequestOptions): Promise<void> {
    await this.#transport.send({
      method: 'POST',
      path: `/api/events/${segment(id)}/resend`,
      body: params,
      schema: AcceptedEnvelope,
      options,
    });
  }
}
