import type pg from 'pg';
import { type Repositories, repositoriesOn } from '../repositories.ts';
import type { Store } from '../store.ts';
import type { WebhookDeliveryOptions } from '../webhook-deliveries.ts';
import { PostgresApiKeyRepository } from './postgres-api-key-repository.ts';
import { PostgresBankNotificationRepository } from './postgres-bank-notification-repository.ts';
import { PostgresRequestLogRepository } from './postgres-request-log-repository.ts';
import { PostgresRunner, type Queryable } from './postgres-runner.ts';
import { PostgresSessionRepository } from './postgres-session-repository.ts';
import { PostgresWriteQueue } from './postgres-write-queue.ts';

export interface PostgresStoreOptions {
  /** Told of an after-commit effect that threw; the write itself stays committed. */
  onEffectError: (error: unknown) => void;
  /** How long a webhook delivery picked by one instance is kept from the others (default 60 s). */
  deliveryLeaseMs?: number;
  /** How long `ping` waits for `SELECT 1`, a connection from the pool included (default 2 s). */
  pingTimeoutMs?: number;
}

/** How long `Store.ping` waits on PostgreSQL unless told otherwise. */
export const DEFAULT_PING_TIMEOUT_MS = 2_000;

/**
 * The service's `Store` on PostgreSQL: reads through the pool, writes through `PostgresWriteQueue` (one
 * transaction per job, on a client of the same pool, with the repositories bound to it). The schema must be
 * migrated first (`migratePostgres(pool)`).
 *
 * @example
 * const pool = new pg.Pool({ connectionString: process.env.SERVICEPAY_DATABASE_URL });
 * await migratePostgres(pool);
 * const store = createPostgresStore(pool, { onEffectError: (error) => logger.error('effect failed', { error }) });
 */
export function createPostgresStore(pool: pg.Pool, options: PostgresStoreOptions): Store {
  const bind = (db: Queryable) =>
    postgresRepositoriesOn(
      db,
      options.deliveryLeaseMs === undefined ? {} : { leaseMs: options.deliveryLeaseMs },
    );
  return {
    ...bind(pool),
    // Authentication's reads remember keys (confirmed by the limiter's statement); a job's repositories do not.
    apiKeys: new PostgresApiKeyRepository(new PostgresRunner(pool)),
    writes: new PostgresWriteQueue(pool, bind, { onEffectError: options.onEffectError }),
    ping: pinger(pool, options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS),
    probeWrite: () => probeWrite(pool),
  };
}

/**
 * Every repository on PostgreSQL over the pool or a write job's client: `repositoriesOn`, with the sessions'
 * one-statement create (`PostgresSessionRepository`), the request log's one-statement batch
 * (`PostgresRequestLogRepository`) and a bank notification's reads in one statement
 * (`PostgresBankNotificationRepository`).
 *
 * @example
 * const repositories = postgresRepositoriesOn(pool);
 */
export function postgresRepositoriesOn(db: Queryable, options: WebhookDeliveryOptions = {}): Repositories {
  const runner = new PostgresRunner(db);
  return {
    ...repositoriesOn(runner, options),
    sessions: new PostgresSessionRepository(runner),
    requestLog: new PostgresRequestLogRepository(runner),
    bankNotifications: new PostgresBankNotificationRepository(runner),
  };
}

/**
 * `Store.probeWrite` on PostgreSQL: one row into a temporary table made for it, then rolled back. A new table is
 * a new file, so the insert must extend it by a page in the database's tablespace, and fails with `53100`
 * (`disk_full`) while that is full, as a client's insert into a full table does. (An update of a probe row in
 * a table of its own would reuse the space of its page and succeed on a full disk.)
 */
async function probeWrite(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      await client.query('CREATE TEMPORARY TABLE storage_probe (probe integer) ON COMMIT DROP');
      await client.query('INSERT INTO storage_probe (probe) VALUES (1)');
    } finally {
      await client.query('ROLLBACK').catch((error: Error) => {
        broken = error;
      });
    }
  } finally {
    // A connection that could not even roll back is closed rather than lent to the next job.
    client.release(broken);
  }
}

/**
 * `Store.ping` on PostgreSQL: `SELECT 1` through the pool, as every request's query goes, so it fails when
 * requests would (the server down or unreachable, or no connection free for `timeoutMs`). Callers wait at most
 * `timeoutMs` each (a load balancer's probe must not hang for the pool's 5 s connection timeout), and share
 * the one query in flight: probes arriving together, or while a slow one is still waiting, never add queries.
 * The query itself is bounded too (`query_timeout`: a connection that stopped answering is dropped from the
 * pool), so a query in flight ends within the connection timeout plus `timeoutMs`, and the next probe asks
 * again.
 */
function pinger(pool: pg.Pool, timeoutMs: number): () => Promise<void> {
  let inFlight: Promise<void> | undefined;
  return () => {
    inFlight ??= pool
      // `query_timeout` per query is read by pg's client; @types/pg leaves it out of QueryConfig.
      .query({ text: 'SELECT 1', query_timeout: timeoutMs } as pg.QueryConfig)
      .then(() => undefined)
      .finally(() => {
        inFlight = undefined;
      });
    const answer = inFlight;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the database did not answer SELECT 1 within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  };
}
