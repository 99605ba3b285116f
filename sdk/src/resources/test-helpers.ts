import type { RequestOptions, Transport } from '../client.ts';
import { PermissionError } from '../errors.ts';
import {
  envelopeOf,
  type SimulatedTransfer,
  SimulatedTransferSchema,
  type SimulateTransferParams,
} from '../protocol/index.ts';

const TransferEnvelope = envelopeOf(SimulatedTransferSchema);

/**
 * Test-mode helpers, for an `sk_test_` key only. Reached as `servicepay.testHelpers`.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_TEST_SECRET_KEY ?? '');
 * await servicepay.testHelpers.simulateTransfer({ accountNumber: '0123456789', amount: 500_000 });
 */
export class TestHelpers {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

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
  async simulateTransfer(
    params: SimulateTransferParams,
    options?: RequestOptions,
  ): Promise<SimulatedTransfer> {
    if (this.#transport.environment !== 'test') {
      throw new PermissionError({
        code: 'test_mode_only',
        message:
          'Simulated transfers exist only in test mode: this client holds a live key (sk_live_…). Use your sk_test_ key.',
      });
    }
    const response = await this.#transport.send({
      method: 'POST',
      path: '/api/test/transfers',
      body: params,
      schema: TransferEnvelope,
      options,
    });
    return response.data;
  }
}
