import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { ResponseInfo } from '../api-promise.ts';
import { APIError } from '../errors.ts';
import type { ServicePayOptions } from '../options.ts';
import type { Environment } from '../protocol/index.ts';
import { errorFromResponse, requestIdOf } from './error-from-response.ts';
import { newIdempotencyKey } from './idempotency-key.ts';
import { toQueryString } from './query.ts';
import { DEFAULT_MAX_RETRY_AFTER_MS, parseRetryAfter } from './retry.ts';
import { type Attempt, networkFailure, withRetries } from './retry-loop.ts';
import { fetchSender, loadUndici, type Sender, undiciSender } from './senders.ts';
import { fetchStreamSender, type StreamSender, undiciStreamSender } from './stream-senders.ts';
import { openStream } from './stream-transport.ts';
import type { APIRequest, Method, StreamRequest, Transport } from './transport.ts';
import { VERSION } from './version.ts';

/** Where the SDK sends requests unless told otherwise: a reference server started with `npm start`. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:4242';
/** Milliseconds one attempt may take, from sending to the last byte of the answer. */
export const DEFAULT_TIMEOUT = 30_000;
/** Attempts after the first, for network errors, timeouts, 408, 429 and 5xx. */
export const DEFAULT_MAX_RETRIES = 2;
/** Milliseconds: the longest `Retry-After` a call waits out before retrying; a longer one throws at once. */
export const DEFAULT_MAX_RETRY_AFTER = DEFAULT_MAX_RETRY_AFTER_MS;

/** The environment variables, where the runtime has them (`process.env` is Node's; edge runtimes may lack it). */
export const environmentVariable = (name: string): string | undefined => {
  const value = typeof process === 'undefined' ? undefined : process.env?.[name];
  return value === undefined || value === '' ? undefined : value;
};

const runtimeOf = (): string =>
  typeof process !== 'undefined' && typeof process.version === 'string' ? `node/${process.version}` : 'edge';

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
  readonly #sendStream: StreamSender;
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
    this.#sendStream =
      options.fetch !== undefined
        ? fetchStreamSender(options.fetch)
        : undiciStreamSender(() => this.#agent());
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

    const { value, response } = await withRetries(
      () => this.#attempt(call.method, url, headers, body, timeout, signal),
      { maxRetries, maxRetryAfter, signal, headers },
    );
    return { body: this.#parse(call.schema, value, response), response };
  }

  /**
   * Opens a download (an export): the attempts of {@link HttpTransport.send} up to its first byte, each
   * bounded by `timeout`; after it, the body is the caller's stream, never sent again (stream-transport.ts).
   */
  stream(call: StreamRequest): Promise<{ body: Readable; response: ResponseInfo }> {
    const maxRetries = wholeNumber('maxRetries', call.options?.maxRetries ?? this.#maxRetries);
    const maxRetryAfter = wholeNumber('maxRetryAfter', call.options?.maxRetryAfter ?? this.#maxRetryAfter);
    const timeout = positive('timeout', call.options?.timeout ?? this.#timeout);
    return openStream({
      url: `${this.#baseUrl}${call.path}${toQueryString(call.query ?? {})}`,
      baseUrl: this.#baseUrl,
      headers: {
        authorization: `Bearer ${this.#secretKey}`,
        accept: call.accept,
        'user-agent': this.#userAgent,
      },
      timeout,
      maxRetries,
      maxRetryAfter,
      signal: call.options?.signal,
      send: this.#sendStream,
    });
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
  ): Promise<Attempt<{ value: unknown; response: ResponseInfo }>> {
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
        if (raw.text === '') return { ok: true, value: { value: undefined, response } };
        try {
          return { ok: true, value: { value: JSON.parse(raw.text), response } };
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
      return { ok: false, error: networkFailure(cause, { timedOut, timeout, url, baseUrl: this.#baseUrl }) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
  }
}
