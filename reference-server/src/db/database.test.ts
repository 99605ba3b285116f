import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { migrate, openDatabase, type SqliteDatabase } from './database.ts';
import { readMigrations } from './migrations.ts';
import { SqliteRunner } from './sqlite-runner.ts';
import { SqlWebhookDeliveryRepository } from './webhook-deliveries.ts';

// Migration 011 (issue 8; SQLite's 008 before the one history): excerpts stored before the worker withheld the
// answers of non-public receivers may hold what a loopback service said; no row tells which, so every excerpt
// stored before it is cleared and the attempt says why. Its PostgreSQL side is tested in
// test/postgres/migrate-postgres.test.ts.

const WITHHOLDING_MIGRATION = 11;

let db: SqliteDatabase | undefined;

afterEach(() => {
  db?.close();
  db = undefined;
});

/** A database whose schema stops before migration 011, with one delivery and three attempts as 010 kept them. */
function databaseBeforeWithholding(): SqliteDatabase {
  const opened = new Database(':memory:');
  opened.pragma('foreign_keys = ON');
  migrate(
    opened,
    readMigrations().filter((migration) => migration.version < WITHHOLDING_MIGRATION),
  );
  expect(opened.pragma('user_version', { simple: true })).toBe(WITHHOLDING_MIGRATION - 1);
  opened.exec(`
    INSERT INTO businesses (id, name, created_at) VALUES ('biz_1', 'Shop', 1);
    INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
      payer_email, client_secret_hash, created_at, updated_at, expires_at)
      VALUES ('ses_1', 'biz_1', 'test', 'order-1', 'cancelled', 500000, 'NGN', 'Ada', 'ada@example.com',
      x'01', 1, 2, 3);
    INSERT INTO events (id, business_id, environment, session_id, type, payload, created_at)
      VALUES ('evt_1', 'biz_1', 'test', 'ses_1', 'session.cancelled', '{}', 2);
    INSERT INTO webhook_endpoints (id, business_id, environment, url, events, secret_ciphertext, created_at,
      updated_at) VALUES ('we_1', 'biz_1', 'test', 'http://127.0.0.1:8080/hooks', '[]', 'sealed', 1, 1);
    INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, created_at, updated_at)
      VALUES ('wd_1', 'we_1', 'evt_1', 'failed', 3, 2, 5);
    -- Before the fix: a loopback receiver's answer, kept.
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
      VALUES ('wd_1', 3, 500, 4, NULL, '{"secret":"what the local service said"}');
    -- After it: the answer withheld, the reason in error.
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
      VALUES ('wd_1', 4, 500, 4, 'withheld:receiver_not_public', NULL);
    -- No answer at all.
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
      VALUES ('wd_1', 5, NULL, 1000, 'timed out after 1000 ms', NULL);
  `);
  return opened;
}

describe('migration 011: excerpts stored before answers were withheld', () => {
  it('clears every stored excerpt and marks the attempt receiver_not_checked; other attempts are untouched', async () => {
    db = databaseBeforeWithholding();
    migrate(db);

    expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(WITHHOLDING_MIGRATION);
    expect(
      db.prepare('SELECT count(*) AS n FROM webhook_attempts WHERE response_excerpt IS NOT NULL').get(),
    ).toEqual({ n: 0 });
    const attempts = (await new SqlWebhookDeliveryRepository(new SqliteRunner(db)).attemptsOf(['wd_1'])).get(
      'wd_1',
    );
    expect(attempts).toEqual([
      {
        deliveryId: 'wd_1',
        attemptedAt: 3,
        statusCode: 500,
        latencyMs: 4,
        error: null,
        responseExcerpt: null,
        responseExcerptWithheld: 'receiver_not_checked',
      },
      {
        deliveryId: 'wd_1',
        attemptedAt: 4,
        statusCode: 500,
        latencyMs: 4,
        error: null,
        responseExcerpt: null,
        responseExcerptWithheld: 'receiver_not_public',
      },
      {
        deliveryId: 'wd_1',
        attemptedAt: 5,
        statusCode: null,
        latencyMs: 1000,
        error: 'timed out after 1000 ms',
        responseExcerpt: null,
        responseExcerptWithheld: null,
      },
    ]);
  });

  it('runs once: an excerpt a public receiver answered after it is kept', async () => {
    db = databaseBeforeWithholding();
    migrate(db);
    const deliveries = new SqlWebhookDeliveryRepository(new SqliteRunner(db));
    await deliveries.recordAttempt({
      deliveryId: 'wd_1',
      attemptedAt: 6,
      statusCode: 200,
      latencyMs: 4,
      error: null,
      responseExcerpt: 'thanks',
      responseExcerptWithheld: null,
    });
    migrate(db);
    expect((await deliveries.attemptsOf(['wd_1'])).get('wd_1')?.at(-1)).toMatchObject({
      responseExcerpt: 'thanks',
      responseExcerptWithheld: null,
    });
  });
});

// openDatabase's `switchToWal` (the "database is locked" of two `business create` runs on one new file): while
// another process holds the new file's RESERVED lock, `PRAGMA journal_mode = WAL` is answered SQLITE_BUSY at
// once, whatever the busy timeout (this connection already reads the file, and waiting for the other writer could
// deadlock), so the open tries again until the holder lets go, for up to 5 s. The holder is a second node
// process with its own better-sqlite3 connection on a real file: its `BEGIN IMMEDIATE` is where a concurrent
// open stands while it switches. (A SHARED or EXCLUSIVE lock is waited out by the busy timeout alone, so it
// would not show the retry.)

const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');

describe('openDatabase on a new file another process holds the write lock of', () => {
  let folder: string | undefined;
  let holder: ChildProcess | undefined;

  afterEach(() => {
    holder?.kill();
    holder = undefined;
    if (folder) rmSync(folder, { recursive: true, force: true });
    folder = undefined;
  });

  /** A child process that creates `file`, holds its RESERVED lock (`BEGIN IMMEDIATE`) for `holdMs`, then ends. */
  async function holdWriteLock(file: string, holdMs: number): Promise<{ exited: Promise<number | null> }> {
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const Database = require(${JSON.stringify(betterSqlite3)});
         const db = new Database(${JSON.stringify(file)});
         db.exec('BEGIN IMMEDIATE');
         process.stdout.write('locked\\n');
         setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${holdMs});`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    holder = child;
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout?.once('data', () => resolve());
      void exited.then((code) => reject(new Error(`the lock holder exited (${code}) first: ${stderr}`)));
    });
    return { exited };
  }

  /** A plain connection with the same 5 s busy timeout: how SQLite answers the switch without the retry. */
  function switchOnce(file: string): unknown {
    const probe = new Database(file);
    try {
      probe.pragma('busy_timeout = 5000');
      probe.pragma('journal_mode = WAL');
      return undefined;
    } catch (error) {
      return error;
    } finally {
      probe.close();
    }
  }

  it('tries the switch to WAL again until the other process lets go: the open succeeds, in WAL, migrated', async () => {
    folder = mkdtempSync(join(tmpdir(), 'servicepay-open-locked-'));
    const file = join(folder, 'new.db');
    const HOLD_MS = 250;
    const { exited } = await holdWriteLock(file, HOLD_MS);
    const held = Date.now();

    // The premise: without trying again, this lock makes the switch fail at once, not after the busy timeout.
    const started = Date.now();
    expect(switchOnce(file)).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(Date.now() - started).toBeLessThan(HOLD_MS / 2);

    db = openDatabase(file);
    // It could only have finished once the holder committed.
    expect(Date.now() - held).toBeGreaterThanOrEqual(HOLD_MS - 20);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    const migrations = readMigrations();
    expect(
      db.prepare<[], { version: number }>('SELECT version FROM schema_migrations ORDER BY version').all(),
    ).toEqual(migrations.map(({ version }) => ({ version })));
    expect(db.pragma('user_version', { simple: true })).toBe(Math.max(...migrations.map((m) => m.version)));
    expect(await exited).toBe(0);

    // WAL is the file's mode, not only this connection's: a new connection finds it.
    const again = new Database(file, { readonly: true });
    try {
      expect(again.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      again.close();
    }
  });

  // Five seconds of a real clock would make this the slowest test of the folder; the clock here is Date.now run
  // 100 times fast (stubbed), the lock and SQLite's answers are real.
  it('gives up after 5 s (clock stubbed to run 100× fast) with the SQLite error when the lock is held past that', async () => {
    folder = mkdtempSync(join(tmpdir(), 'servicepay-open-locked-'));
    const file = join(folder, 'new.db');
    // Held 3 real seconds, 300 s of the stubbed clock: an open that never gave up would end with the lock.
    await holdWriteLock(file, 3_000);
    const realNow = Date.now.bind(Date);
    const start = realNow();
    vi.spyOn(Date, 'now').mockImplementation(() => start + (realNow() - start) * 100);

    let failure: unknown;
    try {
      openDatabase(file);
    } catch (error) {
      failure = error;
    }
    const waited = Date.now() - start;
    expect(failure).toBeInstanceOf(Database.SqliteError);
    expect(failure).toMatchObject({ code: 'SQLITE_BUSY' });
    // It did try again for the whole 5 s of that clock, and stopped soon after (one sleep of 10-30 real ms).
    expect(waited).toBeGreaterThanOrEqual(5_000);
    expect(waited).toBeLessThan(5_000 + 100 * 100);
  });
});
