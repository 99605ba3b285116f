import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { ResponseInfo } from './api-promise.ts';
import {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  type ServicePayError,
  type ServicePayErrorInit,
  TimeoutError,
} from './errors.ts';
import { environmentOfSecretKey } from './internal/api-key.ts';
import { toQueryString } from './internal/query.ts';
import {
  backoffDelay,
  DEFAULT_MAX_RETRY_AFTER_MS,
  isRetryableStatus,
  parseRetryAfter,
} from './internal/retry.ts';
import { sleep } from './internal/sleep.ts';
import { VERSION } from './internal/version.ts';
import type { Environment, FieldError } from './protocol/index.ts';
import { Events } from './resources/events.ts';
import { Sessions } from './resources/sessions.ts';
import { TestHelpers } from './resources/test-helpers.ts';
import { WebhookEndpoints } from './resources/webhook-endpoints.ts';
import { Webhooks } from './webhooks.ts';

/** Where the SDK sends requests unless told otherwise: a reference server started with `npm start`. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:4242';
/** Milliseconds one attempt may take, from sending to the last byte of the answer. */
export const DEFAULT_TIMEOUT = 30_000;
/** Attempts after the first, for network errors, timeouts, 408, 429 and 5xx. */
export const DEFAULT_MAX_RETRIES = 2;
/** Milliseconds: the longest `Retry-After` a call waits out before retrying; a longer one throws at once. */
export const DEFAULT_MAX_RETRY_AFTER = DEFAULT_MAX_RETRY_AFTER_MS;

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

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One call as the resources describe it to the transport. @internal */
export interface APIRequest<S extends z.ZodType> {
  method: Method;
  path: string;
  query?: Readonly<Record<string, string | number | boolean | undefined>>;
  body?: unknown;
  /** Schema of the whole response envelope. */
  schema: S;
  options?: RequestOptions | undefined;
}

/** What the resources send through. Not part of the public API. @internal */
export interface Transport {
  readonly environment: Environment;
  send<S extends z.ZodType>(call: APIRequest<S>): Promise<{ body: z.output<S>; response: ResponseInfo }>;
}

type Attempt =
  | { ok: true; value: unknown; response: ResponseInfo }
  | { ok: false; error: ServicePayError; retryAfterMs?: number };

/** One HTTP exchange, whichever way it was sent. */
interface RawResponse {
  statusCode: number;
  headers: Record<string, string>;
  text: string;
}

type Sender = (
  url: string,
  init: { method: Method; headers: Record<string, string>; body: string | undefined; signal: AbortSignal },
) => Promise<RawResponse>;

const requestIdOf = (headers: Record<string, string>): string | null =>
  headers['request-id'] ?? headers['x-request-id'] ?? null;

/** The environment variables, where the runtime has them (`process.env` is Node's; edge runtimes may lack it). */
const environmentVariable = (name: string): string | undefined => {
  const value = typeof process === 'undefined' ? undefined : process.env?.[name];
  return value === undefined || value === '' ? undefined : value;
};

const runtimeOf = (): string =>
  typeof process !== 'undefined' && typeof process.version === 'string' ? `node/${process.version}` : 'edge';

const firstHeader = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

const normaliseHeaders = (headers: Record<string, string | string[] | undefined>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const first = firstHeader(value);
    if (first !== undefined) out[name.toLowerCase()] = first;
  }
  return out;
};

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Errors that mean the request was wrong on this side, so sending it again cannot help. */
const NOT_RETRYABLE_CODES = new Set(['UND_ERR_INVALID_ARG', 'ERR_INVALID_URL']);

const errorCodeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;

interface ErrorEnvelope {
  message?: string;
  code?: string;
  requestId?: string;
  errors?: FieldError[];
}

/** Reads an error body leniently: a code added to the service later still reaches the caller as it is. */
const readErrorEnvelope = (text: string): ErrorEnvelope => {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof json !== 'object' || json === null) return {};
  const { meta, errors } = json as { meta?: Record<string, unknown>; errors?: unknown };
  const out: ErrorEnvelope = {};
  if (typeof meta?.message === 'string') out.message = meta.message;
  if (typeof meta?.code === 'string') out.code = meta.code;
  if (typeof meta?.requestId === 'string') out.requestId = meta.requestId;
  if (Array.isArray(errors)) {
    out.errors = errors
      .filter(
        (item): item is FieldError =>
          typeof item === 'object' &&
          item !== null &&
          typeof (item as FieldError).path === 'string' &&
          typeof (item as FieldError).message === 'string',
      )
      .map(({ path, message }) => ({ path, message }));
  }
  return out;
};

/** The error class and fields for an error status. */
const errorFromResponse = (
  statusCode: number,
  headers: Record<string, string>,
  text: string,
  retryAfterMs: number | undefined,
): ServicePayError => {
  const envelope = readErrorEnvelope(text);
  const init: ServicePayErrorInit = {
    statusCode,
    headers,
    code: envelope.code ?? 'unknown_error',
    message: envelope.message ?? `The service answered ${statusCode}.`,
    requestId: envelope.requestId ?? requestIdOf(headers),
  };
  if (envelope.errors !== undefined) init.errors = envelope.errors;
  switch (statusCode) {
    case 401:
      return new AuthenticationError(init);
    case 403:
      return new PermissionError(init);
    case 404:
      return new NotFoundError(init);
    case 409:
      return new ConflictError(init);
    case 429:
      return new RateLimitError({
        ...init,
        retryAfter: retryAfterMs === undefined ? null : Math.ceil(retryAfterMs / 1000),
      });
    default:
      if (statusCode >= 400 && statusCode < 500 && statusCode !== 408) return new InvalidRequestError(init);
      return new APIError(init);
  }
};

/** Sends with undici's `request`, loaded on first use so that a client given `fetch` never loads undici. */
const undiciSender = (dispatcher: () => Promise<Dispatcher>): Sender => {
  return async (url, { method, headers, body, signal }) => {
    const { request } = await import('undici');
    const response = await request(url, {
      method,
      headers,
      body: body ?? null,
      dispatcher: await dispatcher(),
      signal,
    });
    const text = await response.body.text();
    return { statusCode: response.statusCode, headers: normaliseHeaders(response.headers), text };
  };
};

const fetchSender = (fetchImpl: FetchLike): Sender => {
  return async (url, { method, headers, body, signal }) => {
    const response = await fetchImpl(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal,
    });
    const text = await response.text();
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name.toLowerCase()] = value;
    });
    return { statusCode: response.status, headers: out, text };
  };
};

const positive = (name: string, value: number): number => {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  return value;
};

const wholeNumber = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 0)
    throw new RangeError(`${name} must be a whole number, 0 or more`);
  return value;
};

/**
 * The HTTP transport: undici `request` on a keep-alive agent (or the `fetch` given), a timeout per attempt,
 * retries with exponential backoff and jitter that an abort ends at once, `Retry-After` honoured up to
 * `maxRetryAfter`, and one `Idempotency-Key` per POST reused by all its retries.
 */
class HttpTransport implements Transport {
  readonly environment: Environment;
  readonly #secretKey: string;
  readonly #baseUrl: string;
  readonly #timeout: number;
  readonly #maxRetries: number;
  readonly #maxRetryAfter: number;
  readonly #userAgent = `servicepay-node/${VERSION} ${runtimeOf()}`;
  readonly #send: Sender;
  #dispatcher: Dispatcher | undefined;
  readonly #ownsDispatcher: boolean;

  constructor(secretKey: string, environment: Environment, options: ServicePayOptions) {
    this.#secretKey = secretKey;
    this.environment = environment;
    const baseUrl = options.baseUrl ?? environmentVariable('SERVICEPAY_API_URL') ?? DEFAULT_BASE_URL;
    if (!URL.canParse(baseUrl)) throw new TypeError(`baseUrl is not a URL: ${JSON.stringify(baseUrl)}`);
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#timeout = positive('timeout', options.timeout ?? DEFAULT_TIMEOUT);
    this.#maxRetries = wholeNumber('maxRetries', options.maxRetries ?? DEFAULT_MAX_RETRIES);
    this.#maxRetryAfter = wholeNumber('maxRetryAfter', options.maxRetryAfter ?? DEFAULT_MAX_RETRY_AFTER);
    this.#dispatcher = options.dispatcher;
    this.#ownsDispatcher = options.dispatcher === undefined && options.fetch === undefined;
    this.#send = options.fetch !== undefined ? fetchSender(options.fetch) : undiciSender(() => this.#agent());
  }

  async #agent(): Promise<Dispatcher> {
    if (this.#dispatcher === undefined) {
      const { Agent } = await import('undici');
      this.#dispatcher ??= new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 });
    }
    return this.#dispatcher;
  }

  async close(): Promise<void> {
    if (this.#ownsDispatcher && this.#dispatcher !== undefined) {
      const agent = this.#dispatcher;
      this.#dispatcher = undefined;
      await agent.close();
    }
  }

  async send<S extends z.ZodType>(
    call: APIRequest<S>,
  ): Promise<{ body: z.output<S>; response: ResponseInfo }> {
    const maxRetries = wholeNumber('maxRetries', call.options?.maxRetries ?? this.#maxRetries);
    const maxRetryAfter = wholeNumber('maxRetryAfter', call.options?.maxRetryAfter ?? this.#maxRetryAfter);
    const timeout = positive('timeout', call.options?.timeout ?? this.#timeout);
    const signal = call.options?.signal;
    const url = `${this.#baseUrl}${call.path}${toQueryString(call.query ?? {})}`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#secretKey}`,
      accept: 'application/json',
      'user-agent': this.#userAgent,
    };
    let body: string | undefined;
    if (call.method === 'POST' || call.method === 'PATCH') {
      // The service requires a JSON content type on every POST and PATCH, even those without fields.
      body = JSON.stringify(call.body ?? {});
      headers['content-type'] = 'application/json';
    }
    if (call.method === 'POST')
      headers['idempotency-key'] = call.options?.idempotencyKey ?? crypto.randomUUID();

    for (let retry = 0; ; retry++) {
      signal?.throwIfAborted();
      const outcome = await this.#attempt(call.method, url, headers, body, timeout, signal);
      if (outcome.ok)
        return {
          body: this.#parse(call.schema, outcome.value, outcome.response),
          response: outcome.response,
        };
      const { error, retryAfterMs } = outcome;
      const retryable =
        error instanceof ConnectionError ||
        (error.statusCode !== null && isRetryableStatus(error.statusCode));
      if (!retryable || retry >= maxRetries) throw error;
      // A long Retry-After is the caller's to wait out (or not), never slept on silently inside the call.
      if (retryAfterMs !== undefined && retryAfterMs > maxRetryAfter) throw error;
      headers['x-servicepay-retry-count'] = String(retry + 1);
      await sleep(retryAfterMs ?? backoffDelay(retry), signal);
    }
  }

  #parse<S extends z.ZodType>(schema: S, value: unknown, response: ResponseInfo): z.output<S> {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    throw new APIError({
      code: 'invalid_response',
      statusCode: response.statusCode,
      headers: response.headers,
      requestId: response.requestId,
      message: 'The service answered with a body this SDK version does not understand.',
      cause: parsed.error,
    });
  }

  async #attempt(
    method: Method,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    timeout: number,
    signal: AbortSignal | undefined,
  ): Promise<Attempt> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const forwardAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const raw = await this.#send(url, { method, headers: { ...headers }, body, signal: controller.signal });
      const response: ResponseInfo = {
        statusCode: raw.statusCode,
        headers: raw.headers,
        requestId: requestIdOf(raw.headers),
      };
      if (raw.statusCode >= 200 && raw.statusCode < 300) {
        if (raw.text === '') return { ok: true, value: undefined, response };
        try {
          return { ok: true, value: JSON.parse(raw.text), response };
        } catch (cause) {
          return {
            ok: false,
            error: new APIError({
              code: 'invalid_response',
              statusCode: raw.statusCode,
              headers: raw.headers,
              requestId: response.requestId,
              message: 'The service answered with a body that is not JSON.',
              cause,
            }),
          };
        }
      }
      const retryAfterMs = parseRetryAfter(raw.headers['retry-after']);
      const error = errorFromResponse(raw.statusCode, raw.headers, raw.text, retryAfterMs);
      return retryAfterMs === undefined ? { ok: false, error } : { ok: false, error, retryAfterMs };
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      const code = errorCodeOf(cause) ?? errorCodeOf((cause as { cause?: unknown } | null)?.cause);
      if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
        return {
          ok: false,
          error: new TimeoutError({
            code: 'timeout',
            message: `No answer within ${timeout} ms from ${url}.`,
            cause,
          }),
        };
      }
      if (code !== undefined && NOT_RETRYABLE_CODES.has(code)) throw cause;
      return {
        ok: false,
        error: new ConnectionError({
          code: 'connection_error',
          message: `Could not reach the service at ${this.#baseUrl}: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause,
        }),
      };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
  }
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
