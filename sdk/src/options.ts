import type { Dispatcher } from 'undici';

// The options of the client and of one call. Their own module, below the client, the transport and the
// resources that all read them, so that none of those imports another for a type (they had closed circles).

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
