/**
 * What PostgreSQL's errors mean to the service: which ones a write job runs again after (a serialization
 * failure, a deadlock, a duplicate key), which ones say the connection is gone, and which ones the edge answers
 * 503 (`databaseUnavailable`). Used by both write paths of `PostgresWriteQueue`, and by the error handler
 * through `db/database-errors.ts`.
 */

/**
 * `COMMIT` was sent and the connection broke before PostgreSQL answered it: the transaction may have committed
 * or not, and nothing on this side can tell. Never retried (running the job again could apply it twice); the
 * caller answers as for a database outage, and the client's retry with its idempotency key finds out.
 */
export class CommitOutcomeUnknownError extends Error {
  override readonly name = 'CommitOutcomeUnknownError';
  readonly code = 'commit_outcome_unknown';
}

/** Serialization failure and deadlock: PostgreSQL rolled the transaction back and says to run it again. */
const RETRYABLE = new Set(['40001', '40P01']);

/**
 * A statement refused for a duplicate key (23505). Under READ COMMITTED, two instances that both read "not
 * there yet" and insert it (the same bank notification, the same settled transfer) collide here: run the loser
 * again, and it reads the winner's row and answers as a repeat would. A job that inserts a true duplicate gets
 * the same refusal each time and fails after `maxAttempts`. At COMMIT (a deferred check) it is not retried.
 */
export const isUniqueViolation = (error: unknown): boolean => sqlState(error) === '23505';

/** The error's SQLSTATE, when it is one PostgreSQL sent (five digits or capitals). */
export const sqlState = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/**
 * A serialization failure or deadlock in `error` or in its `cause` chain (a repository may wrap one), or a
 * job's own "my conditional write lost to a concurrent commit" (`retryWrite: true`, `WriteConflict`).
 */
export function isRetryable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    const code = sqlState(current);
    if (code && RETRYABLE.has(code)) return true;
    if ((current as { retryWrite?: unknown }).retryWrite === true) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * An error that says the connection is gone: a FATAL or PANIC from the server (it ends the session), a
 * connection-class SQLSTATE (08…, and 57P…: terminated by an administrator, shutdown, crash), a socket error
 * (`ECONNRESET`, `EPIPE`…), or `pg` refusing a statement on a client whose connection ended.
 */
export function connectionLost(error: unknown): boolean {
  const { code, severity, message } = (error ?? {}) as {
    code?: unknown;
    severity?: unknown;
    message?: unknown;
  };
  const state = sqlState(error);
  return (
    severity === 'FATAL' ||
    severity === 'PANIC' ||
    (state !== undefined && (state.startsWith('08') || state.startsWith('57P'))) ||
    (typeof code === 'string' && /^E[A-Z]+$/.test(code)) ||
    (state === undefined &&
      typeof message === 'string' &&
      /Connection terminated|not queryable|Client was closed/.test(message))
  );
}

/**
 * Whether `error` means the database could not be reached or answered for: a lost or refused connection, a
 * pool that could not connect in time, a server shutting down, or a COMMIT whose outcome is unknown. The
 * service answers these 503 `service_unavailable` (retry later, with the same `Idempotency-Key`), not 500.
 *
 * @example
 * if (databaseUnavailable(error)) return sendError(res, new HttpError(503, 'service_unavailable', '…'));
 */
export function databaseUnavailable(error: unknown): boolean {
  if (error instanceof CommitOutcomeUnknownError || connectionLost(error)) return true;
  const message = (error as { message?: unknown } | null)?.message;
  return (
    typeof message === 'string' &&
    /timeout exceeded when trying to connect|Connection terminated/.test(message)
  );
}
