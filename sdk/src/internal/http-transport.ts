import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { ResponseInfo } from '../api-promise.ts';
import { APIError, ConnectionError, type ServicePayError, TimeoutError } from '../errors.ts';
import type { ServicePayOptions } from '../options.ts';
import type { Environment } from '../protocol/index.ts';
import { errorFromResponse, requestIdOf } from './error-from-response.ts';
import { newIdempotencyKey } from './idempotency-key.ts';
import { toQueryString } from './query.ts';
import { backoffDelay, DEFAULT_MAX_RETRY_AFTER_MS, isRetryableStatus, parseRetryAfter } from './retry.ts';
import { fetchSender, loadUndici, type Sender, undiciSender } from './senders.ts';
import { sleep } from './sleep.ts';
import type { APIRequest, Method, Transport } from './transport.ts';
import { VERSION } from './version.ts';

/** Where the SDK sends requests unless told otherwise: a reference server started with `npm start`. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:4242';
/** Milliseconds one attempt may take, from sending to the last byte of the answer. */
export const DEFAULT_TIMEOUT = 30_000;
/** Attempts after the first, for network errors, timeouts, 408, 429 and 5xx. */
export const DEFAULT_MAX_RETRIES = 2;
/** Milliseconds: the longest `Retry-After` a call waits out before retrying; a longer one throws at once. */
export const DEFAULT_MAX_RETRY_AFTER = DEFAULT_MAX_RETRY_AFTER_MS;

type Attempt =
  | { ok: true; value: unknown; response: ResponseInfo }
  | { ok: false; error: ServicePayError; retryAfterMs?: number };

/** The environment variables, where the runtime has them (`process.env` is Node's; edge runtimes may lack it). */
export const environmentVariable = (name: string): string | undefined => {
  const value = typeof process === 'undefined' ? undefined : process.env?.[name];
  return value === undefined || value === '' ? undefined : value;
};

const runtimeOf = (): string =>
  typeof process !== 'undefined' && typeof process.version === 'string' ? `node/${process.version}` : 'edge';

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Errors that mean the request was wrong on this side, so sending it again cannot help. */
const NOT_RETRYABLE_CODES = new Set(['UND_ERR_INVALID_ARG', 'ERR_INVALID_URL']);

const errorCodeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;

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
export class HttpTransport implements Transport {
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

  /** The dispatcher given, else one keep-alive agent of this client's, made on first use. */
  #agent(): Promise<Dispatcher> | Dispatcher {
    if (this.#dispatcher !== undefined) return this.#dispatcher;
    return loadUndici().then(({ Agent }) => {
      this.#dispatcher ??= new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 });
      return this.#dispatcher;
    });
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
      headers['idempotency-key'] = call.options?.idempotencyKey ?? newIdempotencyKey();

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
    const exchange = this.#send(url, { method, headers: { ...headers }, body });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      exchange.abort(new Error(`No answer within ${timeout} ms.`));
    }, timeout);
    const forwardAbort = () => exchange.abort(signal?.reason);
    signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const raw = await exchange.response;
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
