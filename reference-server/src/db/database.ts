import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database, { type SqliteConnection } from '../internal/sqlite-driver.ts';

export type SqliteDatabase = SqliteConnection;

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * Opens (creating if needed) the service's SQLite file and brings its schema up to date.
 * WAL with `synchronous=FULL`: a commit that returned has been fsynced, so no acknowledged write is lost on a
 * power loss; the write queue batches commits to keep that affordable.
 */
export function openDatabase(path: string): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // The CLI writes to the same file as a running server; wait for the other writer instead of failing. Set
  // first: switching a new file to WAL already needs the lock another process may hold.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}

/** One numbered migration file: `NNN_name.sql`, its number the `user_version` it brings the file to. */
export interface SqliteMigration {
  version: number;
  sql: string;
}

/**
 * The numbered `.sql` files of a folder (the service's own by default), in numeric order.
 *
 * @example
 * const throughSeven = readSqliteMigrations().filter((migration) => migration.version <= 7);
 */
export function readSqliteMigrations(dir: string = MIGRATIONS_DIR): SqliteMigration[] {
  const folder = dir.endsWith('/') ? dir : `${dir}/`;
  return readdirSync(folder)
    .filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: Number(name.slice(0, 3)), sql: readFileSync(folder + name, 'utf8') }));
}

/**
 * Applies every migration above `user_version`, each in its own transaction: the service's own unless
 * `migrations` says otherwise (a test that stops at an older schema, writes rows as it was, then migrates).
 *
 * @example
 * migrate(db);
 */
export function migrate(db: SqliteDatabase, migrations: SqliteMigration[] = readSqliteMigrations()): void {
  const applied = db.pragma('user_version', { simple: true }) as number;
  for (const { version, sql } of migrations) {
    if (version <= applied) continue;
    db.transaction(() => {
      // Read again under the write lock: another process opening the same new file (two CLI commands, the CLI
      // beside a starting server) may have applied this one while this process waited for the lock.
      if ((db.pragma('user_version', { simple: true }) as number) >= version) return;
      db.exec(sql);
      db.pragma(`user_version = ${version}`);
    }).immediate();
  }
}
