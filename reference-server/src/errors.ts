import type { ErrorCode, FieldError } from '@servicepay/node/protocol';

/**
 * What a route throws to answer with an error. The error middleware writes it in the envelope
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

export const notFound = (noun: string) => new HttpError(404, 'not_found', `No such ${noun}.`);

/**
 * A write job's conditional write found its row changed by a concurrent job: another request, or on
 * PostgreSQL another transaction, possibly on another instance, that committed between the job's read and its
 * write. The PostgreSQL write queue runs the job again, which then reads the row as committed and decides
 * anew (a duplicate notification finds the transfer settled; a cancel finds the session paid). On SQLite jobs
 * never overlap, so it does not happen there. Should it reach the client, it is the 409 it was before.
 *
 * @example
 * if (!(await tx.sessions.change(id, session, change))) throw new WriteConflict('session_not_active', 'The session changed meanwhile; try again.');
 */
export class WriteConflict extends HttpError {
  /** What the write queue looks for (it does not depend on the routes' errors): run the job again. */
  readonly retryWrite = true;

  constructor(code: ErrorCode, message: string) {
    super(409, code, message);
  }
}

/**
 * Seconds a client is told to wait (`Retry-After`) when a write failed for lack of space: a full disk is freed
 * by an operator or a cleanup job, in minutes rather than the second a lost connection takes to come back, and
 * every client retrying within a second would only add to the writes that fail (protocol.md, "A full disk").
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
