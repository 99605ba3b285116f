import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { ResponseInfo } from '../api-promise.ts';
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
} from '../errors.ts';
import type { FetchLike, ServicePayOptions } from '../options.ts';
import type { Environment, FieldError } from '../protocol/index.ts';
import { newIdempotencyKey } from './idempotency-key.ts';
import { toQueryString } from './query.ts';
import { backoffDelay, DEFAULT_MAX_RETRY_AFTER_MS, isRetryableStatus, parseRetryAfter } from './retry.ts';
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

/** One HTTP exchange, whichever way it was sent. */
interface RawResponse {
  statusCode: number;
  headers: Record<string, string>;
  text: string;
}

/** One request on its way: its answer, and how to end it early (the answer then rejects with `reason`). */
interface Exchange {
  response: Promise<RawResponse>;
  abort(reason: unknown): void;
}

type Sender = (
  url: string,
  init: { method: Method; headers: Record<string, string>; body: string | undefined },
) => Exchange;

const requestIdOf = (headers: Record<string, string>): string | null =>
  headers['request-id'] ?? headers['x-request-id'] ?? null;

/** The environment variables, where the runtime has them (`process.env` is Node's; edge runtimes may lack it). */
export const environmentVariable = (name: string): string | undefined => {
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

/** The body as text, as undici's `body.text()` reads it: UTF-8, a leading byte-order mark dropped. */
const utf8Text = (chunks: Buffer[]): string => {
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  const start = bytes.length > 2 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return bytes.toString('utf8', start);
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

let undiciModule: Promise<typeof import('undici')> | undefined;
/**
 * undici, imported on first use so that a client given `fetch` never loads it, and once: an `import()` per
 * request is a module-loader round trip each time (under a loader such as tsx, a message to its worker
 * thread), which made `retrieve` 3× slower than a raw `undici.request` (bench/sdk-request-overhead.ts).
 */
const loadUndici = (): Promise<typeof import('undici')> => {
  if (undiciModule === undefined) {
    const loading = import('undici');
    // A failed load is not kept, so the next request tries again.
    loading.catch(() => {
      if (undiciModule === loading) undiciModule = undefined;
    });
    undiciModule = loading;
  }
  return undiciModule;
};

/**
 * Sends through the dispatcher's own `dispatch`, with a handler that gathers the answer: the exchange undici's
 * `request` + `body.text()` make, without the response stream, the async resource and the `AbortSignal` (and
 * its listener) those build for every request. They were most of what a call cost beyond a raw request
 * (`bench/sdk-request-overhead.ts`: 1.40x a raw `request` with them, issue 12). The timeout and the caller's
 * signal end the exchange through the handler's controller instead.
 */
const undiciSender = (dispatcher: () => Promise<Dispatcher> | Dispatcher): Sender => {
  return (url, { method, headers, body }) => {
    let controller: Dispatcher.DispatchController | undefined;
    let abortedWith: { reason: unknown } | undefined;
    // Settled from the handler below, or at once by `abort` while the request is not yet on a connection.
    let resolve!: (answer: RawResponse) => void;
    let reject!: (error: unknown) => void;
    const response = new Promise<RawResponse>((settleWith, failWith) => {
      resolve = settleWith;
      reject = failWith;
    });
    const send = async (): Promise<void> => {
      const target = await dispatcher();
      if (abortedWith) return;
      const { origin, pathname, search } = new URL(url);
      const chunks: Buffer[] = [];
      let statusCode = 0;
      let answerHeaders: Record<string, string> = {};
      target.dispatch(
        { origin, path: pathname + search, method, headers, body: body ?? null },
        {
          onRequestStart(started) {
            // Ended before the request was on a connection: the call has already rejected; drop the request.
            if (abortedWith) started.abort(abortedWith.reason as Error);
            else controller = started;
          },
          onResponseStart(_controller, status, responseHeaders) {
            // An informational 1xx (a proxy's 103) may come first: the final answer's start replaces it.
            statusCode = status;
            answerHeaders = normaliseHeaders(responseHeaders);
          },
          onResponseData(_controller, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            resolve({
              statusCode,
              headers: answerHeaders,
              text: chunks.length === 0 ? '' : utf8Text(chunks),
            });
          },
          onResponseError(_controller, error) {
            reject(error);
          },
        },
      );
    };
    send().catch(reject);
    return {
      response,
      abort(reason) {
        if (abortedWith) return;
        abortedWith = { reason };
        // On a connection: undici ends it and answers onResponseError with the reason. Not yet (the agent is
        // loading, or the pool has not connected): nothing would answer until it did, so the call ends here.
        if (controller) controller.abort(reason as Error);
        else reject(reason);
      },
    };
  };
};

const fetchSender = (fetchImpl: FetchLike): Sender => {
  return (url, { method, headers, body }) => {
    const controller = new AbortController();
    const response = (async () => {
      const answer = await fetchImpl(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: controller.signal,
      });
      const text = await answer.text();
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        out[name.toLowerCase()] = value;
      });
      return { statusCode: answer.status, headers: out, text };
    })();
    return { response, abort: (reason) => controller.abort(reason) };
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
