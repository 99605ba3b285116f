import { environmentOfSecretKey } from './internal/api-key.ts';
import { environmentVariable, HttpTransport } from './internal/http-transport.ts';
import type { ServicePayOptions } from './options.ts';
import type { Environment } from './protocol/index.ts';
import { BalanceResource } from './resources/balance-resource.ts';
import { BalanceTransactions } from './resources/balance-transactions.ts';
import { Events } from './resources/events.ts';
import { Exports } from './resources/exports.ts';
import { PaymentLinks } from './resources/payment-links.ts';
import { Refunds } from './resources/refunds.ts';
import { Sessions } from './resources/sessions.ts';
import { TestHelpers } from './resources/test-helpers.ts';
import { WebhookEndpoints } from './resources/webhook-endpoints.ts';
import { Webhooks } from './webhooks.ts';

export {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_RETRY_AFTER,
  DEFAULT_TIMEOUT,
} from './internal/http-transport.ts';

/**
 * The ServicePay client. One per secret key; reuse it (it keeps connections alive).
 * The key decides the environment: `sk_test_` talks to test, `sk_live_` to live. A publishable key (`pk_`)
 * or a client secret (`cs_`) is refused at once, with a message saying what to use instead. Without
 * arguments it reads `SERVICEPAY_SECRET_KEY` and `SERVICEPAY_API_URL` from the environment.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(); // SERVICEPAY_SECRET_KEY, SERVICEPAY_API_URL
 * const session = await servicepay.sessions.create({
 *   amount: 500_000, // minor units: ₦5,000.00
 *   currency: 'NGN',
 *   payer: { name: 'Ada Lovelace', email: 'ada@example.com' },
 * });
 * // hand session.clientSecret to the widget: ServicePay.init({ clientSecret, onSuccess, onError })
 */
export class ServicePay {
  /** `test` for an `sk_test_` key, `live` for an `sk_live_` key. */
  readonly environment: Environment;
  /** Payment sessions: create, retrieve, list, cancel. */
  readonly sessions: Sessions;
  /** Refunds of successful sessions: create, retrieve, list. */
  readonly refunds: Refunds;
  /** The ledger: every movement of money once (list, retrieve). */
  readonly balanceTransactions: BalanceTransactions;
  /** The balance per currency of the key's environment (retrieve). */
  readonly balance: BalanceResource;
  /** CSV exports of balance transactions and sessions, streamed (`balanceTransactions`, `sessions`). */
  readonly exports: Exports;
  /** Payment links (a page payers open to pay a fixed amount): create, retrieve, update, list. */
  readonly paymentLinks: PaymentLinks;
  /** Where the service sends webhooks: create, list, retrieve, update, delete, roll secret, deliveries. */
  readonly webhookEndpoints: WebhookEndpoints;
  /** Events: resend one to your endpoints. */
  readonly events: Events;
  /** Test-mode helpers (an `sk_test_` key only): simulate a bank transfer. */
  readonly testHelpers: TestHelpers;
  /** Webhook signature verification: `constructEvent`, `constructEventAsync`, `generateTestHeader`. */
  readonly webhooks: Webhooks;
  readonly #transport: HttpTransport;

  /**
   * @param secretKey Your secret key (`sk_test_…` or `sk_live_…`). Default: the `SERVICEPAY_SECRET_KEY`
   *   environment variable.
   * @param options Address, timeouts, retries, transport. `baseUrl` defaults to `SERVICEPAY_API_URL`.
   */
  constructor(secretKey?: string, options: ServicePayOptions = {}) {
    const key = secretKey ?? environmentVariable('SERVICEPAY_SECRET_KEY') ?? '';
    this.environment = environmentOfSecretKey(key);
    this.#transport = new HttpTransport(key, this.environment, options);
    this.sessions = new Sessions(this.#transport);
    this.refunds = new Refunds(this.#transport);
    this.balanceTransactions = new BalanceTransactions(this.#transport);
    this.balance = new BalanceResource(this.#transport);
    this.exports = new Exports(this.#transport);
    this.paymentLinks = new PaymentLinks(this.#transport);
    this.webhookEndpoints = new WebhookEndpoints(this.#transport);
    this.events = new Events(this.#transport);
    this.testHelpers = new TestHelpers(this.#transport);
    this.webhooks = new Webhooks();
  }

  /** Whether the key is a live key (real money). */
  get livemode(): boolean {
    return this.environment === 'live';
  }

  /**
   * Closes the connections of the client's own agent. A dispatcher passed in options is left to its owner.
   * Not needed for a process to exit: idle connections do not keep it alive.
   */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
