import { APIPromise } from '../api-promise.ts';
import { PermissionError } from '../errors.ts';
import { segment } from '../internal/query.ts';
import type { RequestOptions } from '../options.ts';
import type { SimulateTransferParams } from '../protocol/index.ts';
import {
  Envelopes,
  type Session,
  type SimulatedTransfer,
  type TestAccount,
  type TestPayment,
} from '../responses.ts';
import { APIResource } from './api-resource.ts';

/** Options of `testHelpers.pay`. */
export interface TestPayParams {
  /** Minor units to transfer. Default: the session's amount (pays it); any other amount makes it `mismatch`. */
  amount?: number;
}

/**
 * Test-mode helpers, for an `sk_test_` key only. Reached as `servicepay.testHelpers`. With them a merchant's
 * automated tests pay a session with the SDK alone, without a browser or the widget.
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
    const refused = this.refuseLive<never>();
    if (refused) return refused;
    return this.call({
      method: 'POST',
      path: '/api/test/transfers',
      body: params,
      schema: Envelopes.simulatedTransfer,
      options,
    });
  }

  /**
   * Opens a session's checkout without the widget: what the widget's bootstrap does when a payer opens it
   * (the client secret is marked used, the first virtual account is provisioned, the session awaits payment).
   * Called again, it answers the session's current account, or a fresh one if the last ran out. Refused with
   * a live key (`PermissionError`, `test_mode_only`) before anything is sent; `PermissionError` `forbidden`
   * for another business's session; `ConflictError` `session_not_active` once the session has ended.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_TEST_SECRET_KEY ?? '');
   * const { virtualAccount } = await servicepay.testHelpers.openAccount('ses_...');
   * console.log(virtualAccount.accountNumber);
   */
  openAccount(sessionId: string, options?: RequestOptions): APIPromise<TestAccount> {
    const refused = this.refuseLive<never>();
    if (refused) return refused;
    return this.call({
      method: 'POST',
      path: `/api/test/sessions/${segment(sessionId)}/account`,
      schema: Envelopes.testAccount,
      options,
    });
  }

  /**
   * Pays a test session as a payer would, with the SDK alone: opens its account (`openAccount`), has the
   * simulated bank transfer the session's amount (or `amount`) to it, and reads the session back. The exact
   * amount makes it `successful` and sends your endpoints `session.successful`; another amount is returned
   * by the bank and makes it `mismatch`. Three requests; `options` applies to each.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_TEST_SECRET_KEY ?? '');
   * const created = await servicepay.sessions.create({ amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } });
   * const { session } = await servicepay.testHelpers.pay(created.id);
   * console.log(session.status); // 'successful'
   */
  async pay(sessionId: string, params: TestPayParams = {}, options?: RequestOptions): Promise<TestPayment> {
    const opened = await this.openAccount(sessionId, options);
    const transfer = await this.simulateTransfer(
      {
        accountNumber: opened.virtualAccount.accountNumber,
        amount: params.amount ?? opened.session.amount,
      },
      options,
    );
    const session = await this.call({
      method: 'GET',
      path: `/api/widget/sessions/${segment(sessionId)}`,
      schema: Envelopes.session,
      options,
    });
    return { virtualAccount: opened.virtualAccount, transfer, session };
  }

  /**
   * Ends a test session's lifetime now, as if its `expiresAt` had come: the account is closed at the bank,
   * the session turns `expired` (terminal), your endpoints get `session.expired`, and an open checkout shows
   * "This payment has ended". So a suite reaches the expired ending (a shop's failed order) in seconds. If the
   * bank answers that the account was already credited, the session is paid instead: `ConflictError`
   * `session_not_active`, as for a session that has ended. Refused with a live key (`PermissionError`,
   * `test_mode_only`) before anything is sent.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_TEST_SECRET_KEY ?? '');
   * const session = await servicepay.testHelpers.expire('ses_...');
   * console.log(session.status); // 'expired'
   */
  expire(sessionId: string, options?: RequestOptions): APIPromise<Session> {
    return this.end(`/api/test/sessions/${segment(sessionId)}/expire`, options);
  }

  /**
   * Ends a test session's current account countdown now, as if the payer let it run out: the account is
   * closed at the bank and the session goes back to `pending` (reason `account_expired`); an open checkout
   * shows EXPIRED with "Get a new account number", and `openAccount` offers a fresh account. `ConflictError`
   * `no_open_account` when the session has no open account, `session_not_active` once it has ended. Refused
   * with a live key (`PermissionError`, `test_mode_only`) before anything is sent.
   *
   * @example
   * import { ServicePay } from '@servicepay/node';
   * const servicepay = new ServicePay(process.env.SERVICEPAY_TEST_SECRET_KEY ?? '');
   * const session = await servicepay.testHelpers.expireAccount('ses_...');
   * console.log(session.status); // 'pending'
   */
  expireAccount(sessionId: string, options?: RequestOptions): APIPromise<Session> {
    return this.end(`/api/test/sessions/${segment(sessionId)}/account/expire`, options);
  }

  private end(path: string, options: RequestOptions | undefined): APIPromise<Session> {
    const refused = this.refuseLive<never>();
    if (refused) return refused;
    return this.call({ method: 'POST', path, schema: Envelopes.session, options });
  }

  /** A rejected call for a live key: simulated money exists only in test mode. */
  private refuseLive<T>(): APIPromise<T> | undefined {
    if (this.environment === 'test') return undefined;
    const refused = new PermissionError({
      code: 'test_mode_only',
      message:
        'Test helpers exist only in test mode: this client holds a live key (sk_live_…). Use your sk_test_ key.',
    });
    return new APIPromise(Promise.reject(refused));
  }
}
