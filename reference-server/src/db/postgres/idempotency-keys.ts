import type { QueryResult } from 'pg';
import type { IdempotentResponse } from '../idempotency-keys.ts';
import type { Repositories } from '../repositories.ts';
import type { Queryable } from './notification-channel.ts';

const COLUMNS = '(scope, idempotency_key, request_hash, status_code, response_body, created_at)';
const SET_ALL = `request_hash = excluded.request_hash, status_code = excluded.status_code,
  response_body = excluded.response_body, created_at = excluded.created_at`;

/** What the service calls: `Repositories['idempotencyKeys']` (a class cannot implement an indexed type directly). */
type IdempotencyKeysContract = Repositories['idempotencyKeys'];

/**
 * The PostgreSQL twin of `IdempotencyKeyRepository` (`../idempotency-keys.ts`): responses remembered for
 * `Idempotency-Key`, per scope. The primary key (scope, idempotency_key) is what makes a key unique across
 * instances: `claim` is one `INSERT … ON CONFLICT` whose row count is the answer, never a look-up then a write.
 *
 * @example
 * const keys = new PostgresIdempotencyKeyRepository(transactionClient);
 * if (!(await keys.claim({ scope, key, createdAt: now }, answer, now - ttlMs))) throw conflict();
 */
export class PostgresIdempotencyKeyRepository implements IdempotencyKeysContract {
  constructor(private readonly db: Queryable) {}

  /** The remembered response, if the key was used in this scope after `notBefore`. */
  async find(scope: string, key: string, notBefore: number): Promise<IdempotentResponse | undefined> {
    const result = (await this.db.query(
      `SELECT request_hash, status_code, response_body FROM idempotent_requests
       WHERE scope = $1 AND idempotency_key = $2 AND created_at > $3`,
      [scope, key, notBefore],
    )) as QueryResult<{ request_hash: Buffer; status_code: number; response_body: string }>;
    const row = result.rows[0];
    return (
      row && { requestHash: row.request_hash, statusCode: row.status_code, responseBody: row.response_body }
    );
  }

  /** Remembers (or overwrites, as SQLite's `INSERT OR REPLACE`) the response to a key. */
  async remember(
    entry: { scope: string; key: string; createdAt: number },
    response: IdempotentResponse,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO idempotent_requests ${COLUMNS} VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (scope, idempotency_key) DO UPDATE SET ${SET_ALL}`,
      [
        entry.scope,
        entry.key,
        response.requestHash,
        response.statusCode,
        response.responseBody,
        entry.createdAt,
      ],
    );
  }

  /**
   * Takes the key unless a live row (created after `notBefore`) holds it; false, with nothing written, when one
   * does. A row older than the TTL that the sweeper has not purged yet is taken over, as in SQLite: hence
   * `DO UPDATE … WHERE` rather than `DO NOTHING`, which would refuse it. Across instances the conflict arbiter
   * decides: a concurrent claim waits for the first one's row, then re-checks the `WHERE` against it (now
   * live), so exactly one claim of a key answers true.
   */
  async claim(
    entry: { scope: string; key: string; createdAt: number },
    response: IdempotentResponse,
    notBefore: number,
  ): Promise<boolean> {
    const result = (await this.db.query(
      `INSERT INTO idempotent_requests ${COLUMNS} VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (scope, idempotency_key) DO UPDATE SET ${SET_ALL}
       WHERE idempotent_requests.created_at <= $7`,
      [
        entry.scope,
        entry.key,
        response.requestHash,
        response.statusCode,
        response.responseBody,
        entry.createdAt,
        notBefore,
      ],
    )) as QueryResult;
    return result.rowCount === 1;
  }

  /** Forgets one key (its first request failed, so it may be used again). */
  async forget(scope: string, key: string): Promise<void> {
    await this.db.query('DELETE FROM idempotent_requests WHERE scope = $1 AND idempotency_key = $2', [
      scope,
      key,
    ]);
  }

  /** Forgets keys older than `before`; returns how many. */
  async purge(before: number): Promise<number> {
    const result = (await this.db.query('DELETE FROM idempotent_requests WHERE created_at <= $1', [
      before,
    ])) as QueryResult;
    return result.rowCount ?? 0;
  }
}
