import type { Dispatcher } from 'undici';
import { environmentOfSecretKey } from './internal/api-key.ts';
import { environmentVariable, HttpTransport } from './internal/http-transport.ts';
import type { Environment } from './protocol/index.ts';
import { Events } from './resources/events.ts';
import { PaymentLinks } from './resources/payment-links.ts';
import { Refunds } from './resources/refunds.ts';
import { Sessions } from './resources/sessions.ts';
import { TestHelpers } from './resources/test-helpers.ts';
import { WebhookEndpoints } from './resources/webhook-endpoints.ts';
import { Webhooks } from './webhooks.ts';

export {
  type APIRequest,
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_RETRY_AFTER,
  DEFAULT_TIMEOUT,
  type Transport,
} from './internal/http-transport.ts';

/**
 * A `fetch` to send with instead of undici: the runtime's own (edge runtimes, Deno, Bun), one that msw
 * intercepts in tests, or a wrapper that adds tracing. Called as `fetch(url, init)` with a string URL.
 *
 * @example
 * import { ServicePay, type FetchLike } from '@servicepay/node';
 * const traced: FetchLike = (url, init) => fetch(url, init);
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY, { fetch: traced });
 */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/**
 * Options of {@link ServicePay}.
 *
 * @example
 * import { Agent } from 'undici';
 * import { ServicePay, type ServicePayOptions } from '@servicepay/node';
 * const options: ServicePayOptions = { baseUrl: 'https://api.example.com', timeout: 10_000, maxRetries: 3, dispatcher: new Agent({ connections: 20 }) };
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY, options);
 */
export interface ServicePayOptions {
  /**
   * The API's address. Default: the `SERVICEPAY_API_URL` environment variable, else `http://127.0.0.1:4242`
   * (the reference server of `npm start`).
   */
  baseUrl?: string;
  /** Milliseconds one attempt may take before it fails with a `TimeoutError` (and is retried). Default 30 000. */
  timeout?: number;
  /** Retries after the first attempt on network errors, timeouts, 408, 429 and 5xx. Default 2; 0 turns them off. */
  maxRetries?: number;
  /**
   * Milliseconds: the longest `Retry-After` (a 429's, a 503's) the call waits out before retrying. Default
   * 5 000. A longer one is not slept on inside your request: the error (`RateLimitError` with `retryAfter`)
   * is thrown at once, for you to decide. `0` never waits for `Retry-After`.
   */
  maxRetryAfter?: number;
  /**
   * The undici dispatcher to send with: your own `Agent` (proxy, TLS, pool size) or a `MockAgent` in tests.
   * Default: a keep-alive `Agent` owned by this client and closed by {@link ServicePay.close}.
   */
  dispatcher?: Dispatcher;
  /**
   * A `fetch` to send with instead of undici (then `dispatcher` is not used and undici is never loaded): an
   * edge runtime's, or one msw intercepts (`fetch: (url, init) => fetch(url, init)`, read at each call).
   */
  fetch?: FetchLike;
}

/**
 * Options of a single call, given as the last argument of any resource method.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const session = await servicepay.sessions.create(
 *   { amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
 *   { idempotencyKey: 'order-1042', timeout: 5_000 },
 * );
 */
export interface RequestOptions {
  /** For a POST: the `Idempotency-Key` to send (default: a random UUID, kept across the call's retries). */
  idempotencyKey?: string;
  /** Overrides the client's `timeout` for this call. */
  timeout?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
  /** Overrides the client's `maxRetryAfter` (milliseconds) for this call. */
  maxRetryAfter?: number;
  /**
   * Aborts the call at once, whether a request is in flight or the call is waiting to retry; the call then
   * rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

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
