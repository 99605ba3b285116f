import { APIPromise } from '../api-promise.ts';
import type { RequestOptions } from '../client.ts';
import { PermissionError } from '../errors.ts';
import type { SimulateTransferParams } from '../protocol/index.ts';
import { Envelopes, type SimulatedTransfer } from '../responses.ts';
import { APIResource } from './api-resource.ts';

/**
 * Test-mode helpers, for an `sk_test_` key only. Reached as `servicepay.testHelpers`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_TEST_SECRET_KEY ?? '');
 * await servicepay.testHelpers.simulateTransfer({ accountNumber: '0123456789', amount: 500_000 });
 */
export class TestHelpers extends APIResource {
  /**
   * Makes the simulated bank transfer `amount` (minor units) to a virtual account, as a payer would: the
   * bank then sends the service a real, signed notification. The exact session amount is credited and pays
   * the session; another amount is returned and marks it `mismatch`. Refused with a live key
   * (`PermissionError`, code `test_mode_only`) before anything is sent.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_TEST_SECRET_KEY ?? '');
   * const transfer = await servicepay.testHelpers.simulateTransfer({ accountNumber: '0123456789', amount: 500_000 });
   * console.log(transfer.outcome); // 'credited' or 'returned'
   */
  simulateTransfer(params: SimulateTransferParams, options?: RequestOptions): APIPromise<SimulatedTransfer> {
    if (this.environment !== 'test') {
      const refused = new PermissionError({
        code: 'test_mode_only',
        message:
          'Simulated transfers exist only in test mode: this client holds a live key (sk_live_…). Use your sk_test_ key.',
      });
      return new APIPromise(Promise.reject(refused));
    }
    return this.call({
      method: 'POST',
      path: '/api/test/transfers',
      body: params,
      schema: Envelopes.simulatedTransfer,
      options,
    });
  }
}
