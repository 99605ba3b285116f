import pg from 'pg';
import type { Logger } from '../internal/logger.ts';
import { type RateLimiter, SlidingWindowLimiter } from '../internal/sliding-window-limiter.ts';
import { type BankBooks, SqlBankBooks } from './bank-books.ts';
import { type Broadcaster, InProcessBroadcaster } from './broadcaster.ts';
import { openDatabase, type SqliteDatabase } from './database.ts';
import { EXPIRY_SWEEP_LOCK_KEY, runAlone } from './postgres/advisory-lock.ts';
import { migratePostgres } from './postgres/migrate-postgres.ts';
import { PostgresBroadcaster } from './postgres/postgres-broadcaster.ts';
import { PostgresRateLimiter } from './postgres/postgres-rate-limiter.ts';
import { PostgresPoolRunner } from './postgres/postgres-runner.ts';
import { createPostgresStore } from './postgres/postgres-store.ts';
import { SqliteRunner } from './sqlite-runner.ts';
import { createSqliteStore, type Store } from './store.ts';
import { WalCheckpointer } from './wal-checkpointer.ts';

/** Where the service keeps its data: the SQLite file at `dbPath`, or PostgreSQL at `databaseUrl` when set. */
export interface BackendConfig {
  dbPath: string;
  databaseUrl: string | null;
  /** PostgreSQL: connections in this instance's pool (default 10). */
  databasePoolSize?: number;
}

export interface BackendOptions {
  logger: Logger;
  /** Told of an after-commit effect that threw; the write itself stays committed. */
  onEffectError(error: unknown): void;
  /** PostgreSQL: how long a webhook delivery picked by one instance is kept from the others. */
  deliveryLeaseMs?: number;
  /**
   * PostgreSQL: push updates this instance may have missed (its listening connection was away, or a publish
   * failed): open streams should read them back from `events`.
   */
  onPushGap?(reason: string): void;
  /** The CLI: no broadcaster listening, no WAL checkpoint thread, a pool of two. */
  forCommand?: boolean;
}

/** The work that only one instance at a time runs (`Backend.runAlone`). */
export type ExclusiveTask = 'expiry-sweep';

/**
 * Everything of the service that depends on the database it runs on, chosen in one place (`openBackend`): the
 * store, the simulated bank's books, the push broadcaster, the rate limiters, the exclusive-run lock, and how
 * to migrate, start and close it all. Nothing above `db/` names a database.
 */
export interface Backend {
  readonly kind: 'sqlite' | 'postgres';
  /** True when several instances may share this database (PostgreSQL). */
  readonly shared: boolean;
  readonly store: Store;
  readonly bankBooks: BankBooks;
  readonly broadcaster: Broadcaster;
  /** A rolling-window limiter; on PostgreSQL counted in the database, so every instance spends one budget. */
  limiter(name: string, limit: number, windowMs: number): RateLimiter;
  /**
   * Runs `work` unless another instance is running the same task right now (then answers undefined at once);
   * in one process it always runs it.
   */
  runAlone<T>(task: ExclusiveTask, work: () => Promise<T>): Promise<T | undefined>;
  /** Brings the schema up to date: on PostgreSQL under an advisory lock per step (SQLite did at open). */
  migrate(): Promise<void>;
  /** `migrate`, then listening for other instances' pushes (PostgreSQL). */
  start(): Promise<void>;
  /** Lets queued writes land, stops listening, closes the connections. */
  close(): Promise<void>;
  /** The SQLite file's handle, for the tests and benches that read it directly; undefined on PostgreSQL. */
  readonly sqlite: SqliteDatabase | undefined;
  /** The PostgreSQL pool, for the tests that watch it; undefined on SQLite. */
  readonly pool: pg.Pool | undefined;
}

/**
 * Opens the backend `config` names: SQLite at `dbPath` (migrated on open), or, when `databaseUrl` is set,
 * PostgreSQL shared with the service's other instances (migrated by `start`, under an advisory lock); no SQLite
 * file is opened then, and the simulated bank's books are in PostgreSQL too, so the bank is one party for every
 * instance.
 *
 * @example
 * const backend = openBackend({ dbPath: 'data/servicepay.db', databaseUrl: null }, { logger, onEffectError });
 * await backend.start();
 * await backend.store.sessions.find('ses_…');
 * await backend.close();
 */
export function openBackend(config: BackendConfig, options: BackendOptions): Backend {
  return config.databaseUrl === null
    ? openSqliteBackend(config.dbPath, options)
    : openPostgresBackend(config.databaseUrl, config.databasePoolSize ?? 10, options);
}

function openSqliteBackend(path: string, options: BackendOptions): Backend {
  const db = openDatabase(path);
  // Checkpoints off the event loop (wal-checkpointer.ts); an in-memory database has no WAL, and a CLI command
  // keeps SQLite's own.
  const checkpointer =
    path === ':memory:' || options.forCommand
      ? undefined
      : WalCheckpointer.attach(db, path, (error) =>
          options.logger.error('WAL checkpoint failed', {
            error: error instanceof Error ? error.message : String(error),
          }),
        );
  const store = createSqliteStore(db, options.onEffectError, () => checkpointer?.committed());
  return {
    kind: 'sqlite',
    shared: false,
    store,
    bankBooks: new SqlBankBooks(new SqliteRunner(db)),
    broadcaster: new InProcessBroadcaster(),
    limiter: (_name, limit, windowMs) => new SlidingWindowLimiter(limit, windowMs),
    runAlone: (_task, work) => work(),
    migrate: async () => undefined,
    start: async () => undefined,
    async close() {
      // Let queued writes land before the file closes.
      await store.writes.run(async () => undefined).catch(() => undefined);
      // The thread's connection first: the last connection to close checkpoints the WAL and removes it.
      await checkpointer?.close();
      db.close();
    },
    sqlite: db,
    pool: undefined,
  };
}

const EXCLUSIVE_LOCK_KEYS: Record<ExclusiveTask, number> = { 'expiry-sweep': EXPIRY_SWEEP_LOCK_KEY };

function openPostgresBackend(url: string, poolSize: number, options: BackendOptions): Backend {
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: 5_000,
    max: options.forCommand ? 2 : poolSize,
    // A client writes a statement without waiting for the answers before it: a write job's BEGIN and its
    // first statement, or statements it sends together, cost one round trip (PostgresWriteQueue, issue 38).
    pipeline: true,
  });
  // An idle client that loses its connection is dropped by the pool; the next checkout connects again.
  pool.on('error', (error) =>
    options.logger.warn('an idle PostgreSQL connection was lost', { error: error.message }),
  );
  const store = createPostgresStore(pool, {
    onEffectError: options.onEffectError,
    ...(options.deliveryLeaseMs === undefined ? {} : { deliveryLeaseMs: options.deliveryLeaseMs }),
  });
  // Every instance hears every transition (LISTEN/NOTIFY), whichever instance holds the stream.
  const broadcaster = options.forCommand
    ? undefined
    : new PostgresBroadcaster({
        pool,
        connection: { connectionString: url },
        logger: options.logger,
        onGap: (reason) => options.onPushGap?.(reason),
      });
  // Instances starting together apply each migration once (an advisory lock per step).
  const migrate = async () => {
    await migratePostgres(pool);
  };
  return {
    kind: 'postgres',
    shared: true,
    store,
    bankBooks: new SqlBankBooks(new PostgresPoolRunner(pool)),
    broadcaster: broadcaster ?? new InProcessBroadcaster(),
    limiter: (name, limit, windowMs) => new PostgresRateLimiter(pool, { name, limit, windowMs }),
    runAlone: (task, work) => runAlone(pool, EXCLUSIVE_LOCK_KEYS[task], work),
    migrate,
    async start() {
      await migrate();
      await broadcaster?.start();
    },
    async close() {
      // Each job already has its own transaction; a database that is down must not keep the rest from closing.
      await store.writes.run(async () => undefined).catch(() => undefined);
      await broadcaster?.close();
      await pool.end();
    },
    sqlite: undefined,
    pool,
  };
}
