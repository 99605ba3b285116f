import type { SqliteDatabase } from './database.ts';
import { type Repositories, repositoriesOn, type Writes } from './repositories.ts';
import { SqliteRunner } from './sqlite-runner.ts';
import { WriteQueue } from './write-queue.ts';

/**
 * The service's storage, whichever database is behind it: the repositories for reads, and `writes`, the
 * queue every write goes through (a job gets the repositories bound to its transaction).
 */
export interface Store extends Repositories {
  writes: Writes<Repositories>;
  /**
   * Resolves when the database answers one trivial query, rejects when it does not (`GET /health`). On
   * PostgreSQL: `SELECT 1` through the pool, given up after 2 s (waiting for a connection included), one query
   * in flight at a time however many callers ask; on SQLite: a statement on the open handle.
   */
  ping(): Promise<void>;
  /**
   * Resolves once one small write that needs new space on disk has been committed, rejects with the store's
   * error when it cannot be (`storageFull` tells a full disk): how `StorageHealth` finds out that space is back.
   * On SQLite: a counter bumped through the write queue (each commit appends to the WAL); on PostgreSQL: a row
   * in a fresh temporary table (a new file in the database's tablespace), rolled back.
   */
  probeWrite(): Promise<void>;
}

/**
 * The embedded store on one SQLite connection: the repositories run their statements on it synchronously, and
 * a write job's `tx` is the same repositories (the write queue's batch is the transaction).
 *
 * @example
 * const store = createSqliteStore(openDatabase(path), (error) => logger.error('after-commit effect failed', { error }));
 * const session = await store.sessions.find('ses_…');
 */
export function createSqliteStore(
  db: SqliteDatabase,
  onEffectError: (error: unknown) => void,
  /** Told after each committed batch of writes (the service's `WalCheckpointer`). */
  afterCommit?: () => void,
): Store {
  const repositories = repositoriesOn(new SqliteRunner(db));
  const probe = db.prepare('SELECT 1');
  // Prepared on first use: a store may be opened on a file not yet migrated to step 013 (the migration test
  // writes through one as the code before that step did), and only the health probe needs the table.
  let bumpProbe: { run(): unknown } | undefined;
  const writes = new WriteQueue(db, repositories, onEffectError, undefined, afterCommit);
  return {
    ...repositories,
    writes,
    // Throws once the handle is closed ("The database connection is not open").
    ping: async () => {
      probe.get();
    },
    probeWrite: () =>
      writes.run(async () => {
        bumpProbe ??= db.prepare('UPDATE storage_probe SET probes = probes + 1 WHERE only_row = 1');
        bumpProbe.run();
      }),
  };
}
