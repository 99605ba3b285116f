import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

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

/** Applies every numbered `.sql` file above `user_version`, each in its own transaction. */
export function migrate(db: SqliteDatabase): void {
  const applied = db.pragma('user_version', { simple: true }) as number;
  const migrations = readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: Number(name.slice(0, 3)), sql: readFileSync(MIGRATIONS_DIR + name, 'utf8') }));
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
