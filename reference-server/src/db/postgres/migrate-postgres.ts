import type { Pool, PoolClient } from 'pg';
import { type Migration, readMigrations } from '../migrations.ts';

/**
 * The advisory lock key every migration transaction holds. Any fixed number works as long as nothing else in
 * the service locks the same one; it spells "SP migrations" loosely (0x5350 = "SP").
 */
export const MIGRATION_LOCK_KEY = 0x5350_0001;

/** What one `migratePostgres` call did. */
export interface PostgresMigrationResult {
  /** The migrations this call applied, in order (empty when another instance, or an earlier start, had). */
  applied: string[];
}

/**
 * Brings a PostgreSQL database's schema up to date: every step of the one history (`readMigrations`, its
 * `postgres` SQL) not yet recorded in
 * `schema_migrations` is applied in its own transaction, which first takes `pg_advisory_xact_lock` and then
 * checks the record again. Several instances starting together on one database therefore apply each migration
 * exactly once: the first to get the lock applies it, the others wait, find it recorded, and move on. A
 * migration that fails rolls back whole (PostgreSQL's DDL is transactional) and the error is thrown; so a
 * migration must not use what cannot run in a transaction (`CREATE INDEX CONCURRENTLY`).
 *
 * A recorded version whose name differs from the file's (a renumbered migration) is refused, since the
 * schema it describes would not be the one this code expects. Versions recorded in the database but unknown
 * to this code (a newer instance migrated it during a rolling deploy) are left alone.
 *
 * @example
 * const pool = new pg.Pool({ connectionString: process.env.SERVICEPAY_DATABASE_URL });
 * pool.on('error', () => {}); // an idle client's lost connection; the next query reconnects
 * const { applied } = await migratePostgres(pool);
 */
export async function migratePostgres(
  pool: Pool,
  options: { migrations?: Migration[] } = {},
): Promise<PostgresMigrationResult> {
  const migrations = options.migrations ?? readMigrations();
  const applied: string[] = [];
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // Outside the lock, a database that is up to date (every start after the first) costs one query.
    const recorded = await recordedVersions(client);
    for (const migration of migrations) {
      if (recorded.get(migration.version) === migration.name) continue;
      if (await applyOne(client, migration)) applied.push(migration.name);
    }
    return { applied };
  } catch (error) {
    broken = error as Error;
    throw error;
  } finally {
    // A client whose transaction failed may be in any state (or its connection gone): destroy it, not reuse it.
    client.release(broken);
  }
}

async function recordedVersions(client: PoolClient): Promise<Map<number, string>> {
  const { rows } = await client.query<{ exists: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS exists",
  );
  if (!rows[0]?.exists) return new Map();
  const recorded = await client.query<{ version: number; name: string }>(
    'SELECT version, name FROM schema_migrations',
  );
  return new Map(recorded.rows.map((row) => [row.version, row.name]));
}

/** Applies one migration under the lock unless it is already recorded; true when this call applied it. */
async function applyOne(client: PoolClient, migration: Migration): Promise<boolean> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    // Created under the lock, so two first starts cannot both create it.
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version    integer PRIMARY KEY,
         name       text NOT NULL,
         applied_at bigint NOT NULL
       )`,
    );
    const { rows } = await client.query<{ name: string }>(
      'SELECT name FROM schema_migrations WHERE version = $1',
      [migration.version],
    );
    const name = rows[0]?.name;
    if (name !== undefined) {
      if (name !== migration.name) {
        throw new Error(
          `schema_migrations records version ${migration.version} as ${name}, but this code has ${migration.name}`,
        );
      }
      await client.query('COMMIT');
      return false;
    }
    // A simple-protocol query (no parameters) may hold several statements: the whole file runs as written.
    await client.query(migration.postgres);
    await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
      migration.version,
      migration.name,
      Date.now(),
    ]);
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw new Error(`PostgreSQL migration ${migration.name} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
