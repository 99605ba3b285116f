import { ConnectionError, type ServicePayError, TimeoutError } from '../errors.ts';
import { backoffDelay, isRetryableStatus } from './retry.ts';
import { sleep } from './sleep.ts';

/** One attempt's outcome: its value, or the error that ended it (with the answer's `Retry-After`). */
export type Attempt<T> =
  | { ok: true; value: T }
  | { ok: false; error: ServicePayError; retryAfterMs?: number };

/** How many times, and how long, a call may try again. */
export interface RetrySettings {
  maxRetries: number;
  maxRetryAfter: number;
  signal: AbortSignal | undefined;
  /** The request's headers: each retry says which it is (`X-ServicePay-Retry-Count`). */
  headers: Record<string, string>;
}

/**
 * Runs `attempt` until it succeeds or fails in a way another try cannot mend: retried on connection errors,
 * timeouts, 408, 429 and 5xx, up to `maxRetries`, after `Retry-After` (when at most `maxRetryAfter`) or an
 * exponential backoff with jitter; an abort ends the wait at once. The JSON calls and the downloads share it.
 *
 * @example
 * const value = await withRetries(() => attemptOnce(), { maxRetries: 2, maxRetryAfter: 5_000, signal, headers });
 */
export async function withRetries<T>(
  attempt: () => Promise<Attempt<T>>,
  settings: RetrySettings,
): Promise<T> {
  const { maxRetries, maxRetryAfter, signal, headers } = settings;
  for (let retry = 0; ; retry++) {
    signal?.throwIfAborted();
    const outcome = await attempt();
    if (outcome.ok) return outcome.value;
    const { error, retryAfterMs } = outcome;
    const retryable =
      error instanceof ConnectionError || (error.statusCode !== null && isRetryableStatus(error.statusCode));
    if (!retryable || retry >= maxRetries) throw error;
    // A long Retry-After is the caller's to wait out (or not), never slept on silently inside the call.
    if (retryAfterMs !== undefined && retryAfterMs > maxRetryAfter) throw error;
    headers['x-servicepay-retry-count'] = String(retry + 1);
    await sleep(retryAfterMs ?? backoffDelay(retry), signal);
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Errors that mean the request was wrong on this side, so sending it again cannot help. */
const NOT_RETRYABLE_CODES = new Set(['UND_ERR_INVALID_ARG', 'ERR_INVALID_URL']);

/** The `code` of an error, or of its `cause` (undici wraps the socket's). */
export const errorCodeOf = (error: unknown): string | undefined => {
  const own = (value: unknown) =>
    typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'string'
      ? value.code
      : undefined;
  return own(error) ?? own((error as { cause?: unknown } | null)?.cause);
};

/**
 * The SDK's error for a request that got no answer: a `TimeoutError` when the attempt's timer ran out (or
 * undici's did), else a `ConnectionError`. A request this side got wrong (an invalid URL) is thrown as it is.
 *
 * @example
 * return { ok: false, error: networkFailure(cause, { timedOut, timeout, url, baseUrl }) };
 */
export function networkFailure(
  cause: unknown,
  { timedOut, timeout, url, baseUrl }: { timedOut: boolean; timeout: number; url: string; baseUrl: string },
): ServicePayError {
  const code = errorCodeOf(cause);
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new TimeoutError({
      code: 'timeout',
      message: `No answer within ${timeout} ms from ${url}.`,
      cause,
    });
  }
  if (code !== undefined && NOT_RETRYABLE_CODES.has(code)) throw cause;
  return new ConnectionError({
    code: 'connection_error',
    message: `Could not reach the service at ${baseUrl}: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause,
  });
}
