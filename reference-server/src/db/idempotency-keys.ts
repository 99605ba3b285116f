import type { Environment } from '@servicepay/node/protocol';
import type { SqliteDatabase } from './database.ts';

/** A remembered response to a request sent with an `Idempotency-Key`. */
export interface IdempotentResponse {
  requestHash: Buffer;
  statusCode: number;
  responseBody: string;
}

export class IdempotencyKeyRepository {
  private readonly findStatement;
  private readonly insertStatement;
  private readonly purgeStatement;

  constructor(db: SqliteDatabase) {
    this.findStatement = db.prepare<
      [string, string, string, number],
      { request_hash: Buffer; status_code: number; response_body: string }
    >(
      `SELECT request_hash, status_code, response_body FROM idempotency_keys
       WHERE business_id = ? AND environment = ? AND idempotency_key = ? AND created_at > ?`,
    );
    this.insertStatement = db.prepare(
      `INSERT OR REPLACE INTO idempotency_keys
         (business_id, environment, idempotency_key, request_hash, status_code, response_body, created_at)
       VALUES (@businessId, @environment, @key, @requestHash, @statusCode, @responseBody, @createdAt)`,
    );
    this.purgeStatement = db.prepare<[number]>('DELETE FROM idempotency_keys WHERE created_at <= ?');
  }

  /** The remembered response, if the key was used after `notBefore`. */
  find(
    businessId: string,
    environment: Environment,
    key: string,
    notBefore: number,
  ): IdempotentResponse | undefined {
    const row = this.findStatement.get(businessId, environment, key, notBefore);
    return (
      row && { requestHash: row.request_hash, statusCode: row.status_code, responseBody: row.response_body }
    );
  }

  remember(
    scope: { businessId: string; environment: Environment; key: string; createdAt: number },
    response: IdempotentResponse,
  ): void {
    this.insertStatement.run({ ...scope, ...response });
  }

  /** Forgets keys older than `before`; returns how many. */
  purge(before: number): number {
    return this.purgeStatement.run(before).changes;
  }
}
