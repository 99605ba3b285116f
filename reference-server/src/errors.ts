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
