import type { IdempotencyClaim } from '../idempotency-keys.ts';
import { IdempotencyKeyTakenError } from '../idempotency-keys.ts';
import {
  type NewSession,
  type SessionRecord,
  SqlSessionRepository,
  sessions,
  storedSession,
} from '../sessions.ts';
import { sql } from '../sql.ts';
import { sqlState } from './postgres-errors.ts';

/** The SQLSTATE `servicepay_refuse` raises for a key held by another request (migration 019). */
const KEY_TAKEN = 'SP409';

/**
 * The session and its remembered `Idempotency-Key` answer in one statement, its own transaction when sent alone
 * (`WriteOptions.oneStatement`): `made` inserts the session (nothing when the reference is used, as `insert`);
 * `claimed` remembers the answer only for a session made, taking over a row older than the TTL as
 * `IdempotencyKeyRepository.claim` does; and where a live row holds the key, `servicepay_refuse` fails the
 * statement, so the session is not made either. The `CASE` makes the refusal run only when it must (a `WHERE`
 * would leave the order of its two tests to the planner). The casts type the parameters of a `SELECT` list,
 * which an `INSERT … SELECT` does not infer from its target.
 */
const insertAnswered = sql<{ seq: number }>(
  `WITH made AS (
     ${sessions.insert('ON CONFLICT (business_id, environment, reference) DO NOTHING RETURNING seq')}
   ), claimed AS (
     INSERT INTO idempotent_requests AS held
       (scope, idempotency_key, request_hash, status_code, response_body, created_at)
     SELECT CAST(@scope AS text), CAST(@idempotencyKey AS text), CAST(@requestHash AS bytea),
            CAST(@statusCode AS integer), CAST(@responseBody AS text), CAST(@claimedAt AS bigint)
       FROM made
     ON CONFLICT (scope, idempotency_key) DO UPDATE SET
       request_hash = excluded.request_hash, status_code = excluded.status_code,
       response_body = excluded.response_body, created_at = excluded.created_at
     WHERE held.created_at <= @notBefore
     RETURNING 1
   )
   SELECT CASE WHEN EXISTS (SELECT 1 FROM claimed) THEN made.seq
               WHEN servicepay_refuse('${KEY_TAKEN}', 'the Idempotency-Key is held by another request') THEN NULL
          END AS seq
     FROM made`,
);

/**
 * `SessionRepository` on PostgreSQL: `SqlSessionRepository`, with `insertAnswered` one statement instead of two
 * (issue 38: with the job's `BEGIN` and `COMMIT` gone too, a create's write is one round trip, not four).
 *
 * @example
 * const made = await new PostgresSessionRepository(runner).insertAnswered(session, claim);
 */
export class PostgresSessionRepository extends SqlSessionRepository {
  override async insertAnswered(
    session: NewSession,
    claim: IdempotencyClaim,
  ): Promise<SessionRecord | undefined> {
    const record = storedSession(session);
    try {
      const inserted = await this.db.get(insertAnswered, {
        ...sessions.encode(record),
        scope: claim.entry.scope,
        idempotencyKey: claim.entry.key,
        requestHash: claim.response.requestHash,
        statusCode: claim.response.statusCode,
        responseBody: claim.response.responseBody,
        claimedAt: claim.entry.createdAt,
        notBefore: claim.notBefore,
      });
      return inserted && { ...record, seq: inserted.seq };
    } catch (error) {
      if (sqlState(error) === KEY_TAKEN) throw new IdempotencyKeyTakenError();
      throw error;
    }
  }
}
