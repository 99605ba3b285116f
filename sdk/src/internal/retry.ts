/** Statuses worth another attempt: the service was busy or failed, not the request. */
export const isRetryableStatus = (status: number): boolean =>
  status === 408 || status === 429 || status >= 500;

/** First wait between attempts, doubled each time, capped at {@link MAX_BACKOFF_MS}. */
export const INITIAL_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
/**
 * Default longest `Retry-After` the SDK waits out inside a call (`maxRetryAfter`): a longer one is not slept
 * on inside a merchant's request; the error is thrown at once, with `retryAfter`.
 */
export const DEFAULT_MAX_RETRY_AFTER_MS = 5_000;

/**
 * Exponential backoff with jitter: 500 ms, 1 s, 2 s … up to 8 s, each shortened by up to 25 % at random so
 * that many clients failing together do not come back together.
 */
export const backoffDelay = (retry: number, random: () => number = Math.random): number => {
  const base = Math.min(INITIAL_BACKOFF_MS * 2 ** retry, MAX_BACKOFF_MS);
  return Math.round(base * (1 - random() * 0.25));
};

/**
 * `Retry-After` in milliseconds: delta-seconds or an HTTP date. `undefined` when absent or unreadable.
 */
export const parseRetryAfter = (value: string | undefined, now: number = Date.now()): number | undefined => {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
};
