import { type SqlRunner, sql } from './sql.ts';
import { column, table } from './table.ts';

/**
 * `idempotent_requests`: responses remembered for `Idempotency-Key` (`middleware/idempotency.ts`), per scope:
 * `<business>:<environment>` for key-authenticated calls, `session:<id>` for widget-token calls. The primary
 * key (scope, idempotency_key) makes a key unique across instances.
 */
export const idempotentRequests = table('idempotent_requests', {
  scope: column.text(),
  idempotencyKey: column.text(),
  /** SHA-256 of the method, path and body of the first request. */
  requestHash: column.bytes(),
  /** `0` while the first request runs (see `PENDING_STATUS`), then the status it answered. */
  statusCode: column.int(),
  /** The response body exactly as sent, sealed with the SecretBox. */
  responseBody: column.text(),
  createdAt: column.int(),
});

/** A remembered response to a request sent with an `Idempotency-Key`. */
export interface IdempotentResponse {
  requestHash: Buffer;
  statusCode: number;
  responseBody: string;
}

/** The status of a key whose first request has started and not yet answered. */
export const PENDING_STATUS = 0;

/** Where a remembered response is kept: its scope, its key, and when it was first used. */
export interface IdempotencyEntry {
  scope: string;
  key: string;
  createdAt: number;
}

/**
 * A key to claim in the same write as the effect it answers for (`SessionRepository.insert`): the entry, the
 * answer to remember, and `notBefore`, the TTL's edge (a row older than it may be taken over, as `claim` does).
 */
export interface IdempotencyClaim {
  entry: IdempotencyEntry;
  response: IdempotentResponse;
  notBefore: number;
}

/**
 * A write that claimed an `Idempotency-Key` with its effect found the key held by a live row: another request
 * (another process on the same file, another instance) took it. Thrown inside the write, so the effect is
 * rolled back with it; the edge answers 409 `idempotency_key_reused` unless the holder's answer can be replayed.
 */
export class IdempotencyKeyTakenError extends Error {
  override readonly name = 'IdempotencyKeyTakenError';
  constructor() {
    super('Another request with this Idempotency-Key is being answered.');
  }
}

/** Remembered `Idempotency-Key` answers as the service reads and writes them. */
export interface IdempotencyKeyRepository {
  /** The remembered response, if the key was used in this scope after `notBefore`. */
  find(scope: string, key: string, notBefore: number): Promise<IdempotentResponse | undefined>;
  /** Remembers (or overwrites) the response to a key. */
  remember(entry: IdempotencyEntry, response: IdempotentResponse): Promise<void>;
  /**
   * Takes the key unless a live row (created after `notBefore`) holds it; false, with nothing written, when one
   * does: another request (another process on the same file, another instance) took it since it was looked up,
   * and the caller must roll its effect back. A row older than the TTL that the sweeper has not purged yet is
   * taken over. Across instances exactly one claim of a key answers true: a concurrent claim waits for the
   * first one's row, then re-checks its condition against it.
   */
  claim(entry: IdempotencyEntry, response: IdempotentResponse, notBefore: number): Promise<boolean>;
  /** Forgets one key (its first request failed, so it may be used again). */
  forget(scope: string, key: string): Promise<void>;
  /** Forgets keys older than `before`; returns how many. */
  purge(before: number): Promise<number>;
}

const UPSERT = `${idempotentRequests.insert()}
  ON CONFLICT (scope, idempotency_key) DO UPDATE SET
    request_hash = excluded.request_hash, status_code = excluded.status_code,
    response_body = excluded.response_body, created_at = excluded.created_at`;

const statements = {
  find: sql<IdempotentResponse>(
    `SELECT request_hash AS "requestHash", status_code AS "statusCode", response_body AS "responseBody"
     FROM idempotent_requests WHERE scope = @scope AND idempotency_key = @idempotencyKey AND created_at > @notBefore`,
  ),
  remember: sql(UPSERT),
  claim: sql(`${UPSERT} WHERE idempotent_requests.created_at <= @notBefore`),
  forget: sql('DELETE FROM idempotent_requests WHERE scope = @scope AND idempotency_key = @idempotencyKey'),
  purge: sql('DELETE FROM idempotent_requests WHERE created_at <= @before'),
};

/**
 * `IdempotencyKeyRepository` on either store.
 *
 * @example
 * if (!(await repository.claim({ scope, key, createdAt: now }, answer, now - ttlMs))) throw conflict();
 */
export class SqlIdempotencyKeyRepository implements IdempotencyKeyRepository {
  constructor(private readonly db: SqlRunner) {}

  async find(scope: string, key: string, notBefore: number): Promise<IdempotentResponse | undefined> {
    return this.db.get(statements.find, { scope, idempotencyKey: key, notBefore });
  }

  async remember(entry: IdempotencyEntry, response: IdempotentResponse): Promise<void> {
    await this.db.run(statements.remember, { ...row(entry, response) });
  }

  async claim(entry: IdempotencyEntry, response: IdempotentResponse, notBefore: number): Promise<boolean> {
    return (await this.db.run(statements.claim, { ...row(entry, response), notBefore })) === 1;
  }

  async forget(scope: string, key: string): Promise<void> {
    await this.db.run(statements.forget, { scope, idempotencyKey: key });
  }

  async purge(before: number): Promise<number> {
    return this.db.run(statements.purge, { before });
  }
}

const row = (entry: IdempotencyEntry, response: IdempotentResponse) => ({
  scope: entry.scope,
  idempotencyKey: entry.key,
  createdAt: entry.createdAt,
  requestHash: response.requestHash,
  statusCode: response.statusCode,
  responseBody: response.responseBody,
});
