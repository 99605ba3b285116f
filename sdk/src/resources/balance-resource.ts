import type { APIPromise } from '../api-promise.ts';
import type { RequestOptions } from '../client.ts';
import type { RetrieveBalanceParams } from '../protocol/index.ts';
import { type Balance, Envelopes } from '../responses.ts';
import { APIResource } from './api-resource.ts';

/**
 * The balance of the key's environment, per currency: what the ledger sums to. Reached as
 * `servicepay.balance`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const { currencies } = await servicepay.balance.retrieve();
 * for (const row of currencies) console.log(row.currency, row.collected, row.refunded, row.returned, row.net);
 */
export class BalanceResource extends APIResource {
  /**
   * Collected (every movement in), refunded, returned (sent back without a refund) and net, in minor units,
   * one row per currency the environment ever moved.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
   * const ngn = (await servicepay.balance.retrieve()).currencies.find((row) => row.currency === 'NGN');
   */
  retrieve(params: RetrieveBalanceParams = {}, options?: RequestOptions): APIPromise<Balance> {
    return this.call({
      method: 'GET',
      path: '/api/balance',
      query: { environment: params.environment },
      schema: Envelopes.balance,
      options,
    });
  }
}
