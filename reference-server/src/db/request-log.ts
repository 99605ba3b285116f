import type { Environment } from '@servicepay/node/protocol';
import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/**
 * `request_log`: the recent API requests of each business and environment, as the portal's Requests page shows
 * them. Written in batches off the request's path (`middleware/request-log.ts`), pruned to the last
 * `REQUEST_LOG_KEEP` per business and environment by the expiry sweeper. Never a credential: the key is its
 * prefix and last four, the path has every credential-looking value replaced (`redactCredentials`).
 */
export const requestLog = table('request_log', {
  seq: column.serial(),
  /** The `Request-Id` the answer carried (and its error envelope's `meta.requestId`). */
  requestId: column.text(),
  businessId: column.text(),
  environment: column.text<Environment>(),
  method: column.text(),
  /** Path and query as sent, credentials replaced, at most 2,048 characters. */
  path: column.text(),
  status: column.int(),
  /** The key used, as the portal shows keys: `sk_test_…a1B2`. */
  keyHint: column.text(),
  durationMs: column.int(),
  /** The error envelope of a 4xx or 5xx answer (JSON text), null otherwise. */
  errorBody: column.nullable(column.text()),
  createdAt: column.int(),
});

export type RequestLogEntry = RecordOf<typeof requestLog.columns>;

/** A new entry (its `seq` is the database's). */
export type NewRequestLogEntry = Omit<RequestLogEntry, 'seq'>;

/**
 * How many requests the log keeps per business and environment: about seven minutes of a business at its
 * whole secret-key budget (150 a minute), days of an ordinary integration. Older ones are pruned.
 */
export const REQUEST_LOG_KEEP = 1_000;

/** The status classes the Requests page filters by. */
export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';

export interface RequestLogQuery {
  businessId: string;
  environment: Environment;
  /** Exactly this `Request-Id`. */
  requestId?: string | undefined;
  statusClass?: StatusClass | undefined;
  /** Entries older than this one (the cursor's `seq`). */
  beforeSeq?: number | undefined;
  limit: number;
}

/** The request log as the service reads and writes it. */
export interface RequestLogRepository {
  /** Appends entries (a batch of the writer's). */
  insertMany(entries: readonly NewRequestLogEntry[]): Promise<void>;
  /** One business and environment's entries, newest first. */
  list(query: RequestLogQuery): Promise<RequestLogEntry[]>;
  /** The entry of a `Request-Id`, whoever's (the caller checks whose). */
  find(requestId: string): Promise<RequestLogEntry | undefined>;
  /** Deletes all but the newest `keep` entries of each business and environment; answers how many went. */
  prune(keep: number): Promise<number>;
}

const statements = {
  insert: sql(requestLog.insert()),
  list: sql<RequestLogEntry>(
    `SELECT ${requestLog.select()} FROM request_log
     WHERE business_id = @businessId AND environment = @environment
       AND (CAST(@requestId AS text) IS NULL OR request_id = @requestId)
       AND status >= @statusFrom AND status < @statusTo
       AND seq < @beforeSeq
     ORDER BY seq DESC LIMIT @limit`,
  ),
  find: sql<RequestLogEntry>(
    `SELECT ${requestLog.select()} FROM request_log WHERE request_id = @requestId ORDER BY seq DESC LIMIT 1`,
  ),
  prune: sql(
    `DELETE FROM request_log WHERE seq IN (
       SELECT seq FROM (
         SELECT seq, ROW_NUMBER() OVER (PARTITION BY business_id, environment ORDER BY seq DESC) AS newer
         FROM request_log
       ) ranked WHERE newer > @keep
     )`,
  ),
};

const STATUS_RANGES: Record<StatusClass, [number, number]> = {
  '2xx': [200, 300],
  '3xx': [300, 400],
  '4xx': [400, 500],
  '5xx': [500, 600],
};

/**
 * `RequestLogRepository` on either store.
 *
 * @example
 * const recent = await new SqlRequestLogRepository(runner).list({ businessId, environment: 'test', limit: 20 });
 */
export class SqlRequestLogRepository implements RequestLogRepository {
  constructor(protected readonly db: SqlRunner) {}

  async insertMany(entries: readonly NewRequestLogEntry[]): Promise<void> {
    for (const entry of entries) await this.db.run(statements.insert, entry);
  }

  async list(query: RequestLogQuery): Promise<RequestLogEntry[]> {
    const [statusFrom, statusTo] = query.statusClass ? STATUS_RANGES[query.statusClass] : [0, 1000];
    return this.db.all(statements.list, {
      businessId: query.businessId,
      environment: query.environment,
      requestId: query.requestId ?? null,
      statusFrom,
      statusTo,
      beforeSeq: query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: query.limit,
    });
  }

  async find(requestId: string): Promise<RequestLogEntry | undefined> {
    return this.db.get(statements.find, { requestId });
  }

  async prune(keep: number): Promise<number> {
    return this.db.run(statements.prune, { keep });
  }
}
