import type { ErrorCode, FieldError } from '@servicepay/node/protocol';

/**
 * What the HTTP edge throws to answer with an error (the services throw `DomainError`s, which the edge maps to
 * one of these in `middleware/domain-error-status.ts`). The error middleware writes it in the envelope
 * `{ meta: { statusCode, message, code, requestId }, errors? }`; nothing else ever reaches the client.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

// The portal's pages still name `notFound` here; it is a refusal of the services (`domain-errors.ts`).
export { notFound } from './domain-errors.ts';

/**
 * Seconds a client is told to wait (`Retry-After`) when a write failed for lack of space: a full disk is freed
 * by an operator or a cleanup job, in minutes rather than the second a lost connection takes to come back, and
 * every client retrying within a second would only add to the writes that fail (docs/decisions/durability-and-storage.md, "A full disk").
 */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 30;

/**
 * The answer to a request whose write found no space: 503 `service_unavailable` with `Retry-After`. Nothing of
 * the request was kept, so the same request (with the same `Idempotency-Key`) succeeds once there is space.
 *
 * @example
 * if (storageFull(error)) return sendError(res, storageFullError());
 */
export const storageFullError = (
  message = 'The service cannot store anything right now: its disk is full. Nothing of this request was kept; retry after Retry-After seconds (with the same Idempotency-Key for a POST).',
): HttpError =>
  new HttpError(503, 'service_unavailable', message, undefined, {
    'Retry-After': String(STORAGE_FULL_RETRY_AFTER_SECONDS),
  });
