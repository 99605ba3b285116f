import type { SqliteDatabase } from './database.ts';

/** A remembered response to a request sent with an `Idempotency-Key`. */
export interface IdempotentResponse {
  /** SHA-256 of the method, path and body of the first request. */
  requestHash: Buffer;
  /** `0` while the first request runs (see `PENDING_STATUS`), then the status it answered. */
  statusCode: number;
  /** The response body exactly as sent, sealed with the SecretBox. */
  responseBody: string;
}

/** The status of a key whose first request has started and not yet answered. */
export const PENDING_STATUS = 0;

/**
 * Responses remembered for `Idempotency-Key` (`middleware/idempotency.ts`), per scope: `<business>:<environment>`
 * for key-authenticated calls, `session:<id>` for widget-token calls.
 *
 * @example
 * repository.find('biz_1:test', 'order-7', clock.now() - 24 * 3_600_000);
 */
export class IdempotencyKeyRepository {
  private readonly findStatement;
  private readonly insertStatement;
  private readonly purgeStatement;
  private readonly forgetStatement;
  private readonly claimStatement;

  constructor(db: SqliteDatabase) {
    this.findStatement = db.prepare<
      [string, string, number],
      { request_hash: Buffer; status_code: number; response_body: string }
    >(
      `SELECT request_hash, status_code, response_body FROM idempotent_requests
       WHERE scope = ? AND idempotency_key = ? AND created_at > ?`,
    );
    // REPLACE: a row older than the TTL may still be there until the sweeper purges it.
    this.insertStatement = db.prepare(
      `INSERT OR REPLACE INTO idempotent_requests
         (scope, idempotency_key, request_hash, status_code, response_body, created_at)
       VALUES (@scope, @key, @requestHash, @statusCode, @responseBody, @createdAt)`,
    );
    // Takes the key unless a live row holds it (one older than the TTL is replaced, as by insertStatement).
    this.claimStatement = db.prepare(
      `INSERT INTO idempotent_requests
         (scope, idempotency_key, request_hash, status_code, response_body, created_at)
       VALUES (@scope, @key, @requestHash, @statusCode, @responseBody, @createdAt)
       ON CONFLICT (scope, idempotency_key) DO UPDATE SET
         request_hash = excluded.request_hash, status_code = excluded.status_code,
         response_body = excluded.response_body, created_at = excluded.created_at
       WHERE idempotent_requests.created_at <= @notBefore`,
    );
    this.purgeStatement = db.prepare<[number]>('DELETE FROM idempotent_requests WHERE created_at <= ?');
    this.forgetStatement = db.prepare<[string, string]>(
      'DELETE FROM idempotent_requests WHERE scope = ? AND idempotency_key = ?',
    );
  }

  /** The remembered response, if the key was used in this scope after `notBefore`. */
  find(scope: string, key: string, notBefore: number): IdempotentResponse | undefined {
    const row = this.findStatement.get(scope, key, notBefore);
    return (
      row && { requestHash: row.request_hash, statusCode: row.status_code, responseBody: row.response_body }
    );
  }

  remember(entry: { scope: string; key: string; createdAt: number }, response: IdempotentResponse): void {
    this.insertStatement.run({ ...entry, ...response });
  }

  /**
   * Remembers the answer to a key inside the write job that made its effect, so both commit together; false
   * (nothing written) when a live row already holds the key: another process on the same file took it since it
   * was looked up, and the caller must roll its effect back.
   *
   * @example
   * if (!repository.claim({ scope, key, createdAt: now }, answer, now - ttlMs)) throw conflict();
   */
  claim(
    entry: { scope: string; key: string; createdAt: number },
    response: IdempotentResponse,
    notBefore: number,
  ): boolean {
    return this.claimStatement.run({ ...entry, ...response, notBefore }).changes === 1;
  }

  /** Forgets one key (its first request failed, so it may be used again). */
  forget(scope: string, key: string): void {
    this.forgetStatement.run(scope, key);
  }

  /** Forgets keys older than `before`; returns how many. */
  purge(before: number): number {
    return this.purgeStatement.run(before).changes;
  }
}
