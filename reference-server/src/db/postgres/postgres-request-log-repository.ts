import { type NewRequestLogEntry, SqlRequestLogRepository } from '../request-log.ts';
import { sql } from '../sql.ts';

/**
 * A batch as one statement: each column's values as one array parameter, `unnest` making the rows, inserted in
 * the order given (`WITH ORDINALITY`, so `seq` follows the batch as one insert per entry made it). Ten
 * parameters whatever the batch's size.
 */
const insertBatch = sql(
  `INSERT INTO request_log
     (request_id, business_id, environment, method, path, status, key_hint, duration_ms, error_body, created_at)
   SELECT request_id, business_id, environment, method, path, status, key_hint, duration_ms, error_body, created_at
     FROM unnest(
       CAST(@requestIds AS text[]), CAST(@businessIds AS text[]), CAST(@environments AS text[]),
       CAST(@methods AS text[]), CAST(@paths AS text[]), CAST(@statuses AS integer[]),
       CAST(@keyHints AS text[]), CAST(@durations AS integer[]), CAST(@errorBodies AS text[]),
       CAST(@createdAts AS bigint[])
     ) WITH ORDINALITY AS batch (request_id, business_id, environment, method, path, status, key_hint,
                                 duration_ms, error_body, created_at, position)
    ORDER BY position`,
);

/**
 * The request log on PostgreSQL, whose `insertMany` writes a flush's batch (`middleware/request-log.ts`) in one
 * statement instead of one per entry: every API request makes an entry, so one statement each was one more
 * round trip per request, a socket write on the service's side and a wake-up on PostgreSQL's (issue 38: server
 * CPU per create 555 → 502 and 540 → 533 µs, PostgreSQL's 436 → 415 and 443 → 417 µs, A/B both ways round;
 * `docs/decisions/api-performance.md`). On SQLite the statements stay one per entry: there is no round trip
 * to save, and the multi-row forms measured no gain there.
 *
 * @example
 * await new PostgresRequestLogRepository(runner).insertMany(entries);
 */
export class PostgresRequestLogRepository extends SqlRequestLogRepository {
  override async insertMany(entries: readonly NewRequestLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.run(insertBatch, {
      requestIds: entries.map((entry) => entry.requestId),
      businessIds: entries.map((entry) => entry.businessId),
      environments: entries.map((entry) => entry.environment),
      methods: entries.map((entry) => entry.method),
      paths: entries.map((entry) => entry.path),
      statuses: entries.map((entry) => entry.status),
      keyHints: entries.map((entry) => entry.keyHint),
      durations: entries.map((entry) => entry.durationMs),
      errorBodies: entries.map((entry) => entry.errorBody),
      createdAts: entries.map((entry) => entry.createdAt),
    });
  }
}
