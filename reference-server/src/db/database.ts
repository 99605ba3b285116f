import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { legacySqliteSteps, type Migration, readMigrations } from './migrations.ts';

export type SqliteDatabase = Database.Database;

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
  try {
    switchToWal(db);
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db);
  } catch (error) {
    // Not left open behind the error: a caller that retries (or a test) would hold the file's locks twice.
    db.close();
    throw error;
  }
  return db;
}

/** What a blocked open waits between two tries (a synchronous sleep: opening is synchronous). */
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * `journal_mode = WAL`, tried again while another process opening the same new file holds it. Two processes
 * switching one new file at once can each hold a shared lock and want the exclusive one; SQLite then answers one
 * of them SQLITE_BUSY at once, without its busy timeout (waiting would be a deadlock). Two `business create` runs
 * on one new file saw "database is locked" once in a full CI run (not reproduced since: which statement it was
 * is not known; this and the write queue's `BEGIN IMMEDIATE` close the two places where SQLite refuses without
 * waiting). Gives up after 5 s, as the busy timeout does.
 */
function switchToWal(db: SqliteDatabase): void {
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(sleeper, 0, 0, 10 + Math.random() * 20);
    }
  }
}

/**
 * Applies every step of the history (`readMigrations`, unless `migrations` says otherwise: a test that stops at
 * an older schema) not yet recorded in `schema_migrations`, each in its own immediate transaction, its
 * `sqlite` SQL. A file made before the one history (its steps counted only by `user_version`) has its steps
 * recorded first, under the same lock (`legacySqliteSteps`). `user_version` is set to the highest step applied,
 * so code from before the history opening the file finds nothing to do. A recorded version under another name is
 * refused.
 *
 * @example
 * migrate(db);
 */
export function migrate(db: SqliteDatabase, migrations: Migration[] = readMigrations()): void {
  const recorded = () => {
    const known = db
      .prepare<[], { found: number }>(
        "SELECT count(*) AS found FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
      )
      .get();
    if (!known?.found) return undefined;
    return new Map(
      db
        .prepare<[], { version: number; name: string }>('SELECT version, name FROM schema_migrations')
        .all()
        .map((row) => [row.version, row.name]),
    );
  };
  const before = recorded();
  if (before && migrations.every((migration) => before.get(migration.version) === migration.name)) return;
  db.transaction(() => {
    // Read again under the write lock: another process opening the same file may have done this meanwhile.
    if (recorded()) return;
    const legacy = new Set(legacySqliteSteps(db.pragma('user_version', { simple: true }) as number));
    db.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
    );
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const { version, name } of readMigrations())
      if (legacy.has(version)) record.run(version, name, Date.now());
  }).immediate();
  for (const migration of migrations) {
    db.transaction(() => {
      const name = recorded()?.get(migration.version);
      if (name === migration.name) return;
      if (name !== undefined) {
        throw new Error(
          `schema_migrations records version ${migration.version} as ${name}, but this code has ${migration.name}`,
        );
      }
      db.exec(migration.sqlite);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        Date.now(),
      );
      const highest =
        db.prepare<[], { v: number }>('SELECT max(version) AS v FROM schema_migrations').get()?.v ?? 0;
      db.pragma(`user_version = ${highest}`);
    }).immediate();
  }
}
