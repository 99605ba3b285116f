import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createBusiness } from '../../reference-server/src/businesses/onboarding.ts';
import { type Migration, readMigrations } from '../../reference-server/src/db/migrations.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { PostgresRunner } from '../../reference-server/src/db/postgres/postgres-runner.ts';
import { createPostgresStore } from '../../reference-server/src/db/postgres/postgres-store.ts';
import { sql } from '../../reference-server/src/db/sql.ts';
import { SqliteRunner } from '../../reference-server/src/db/sqlite-runner.ts';
import { createSqliteStore, type Store } from '../../reference-server/src/db/store.ts';
import { sha256 } from '../../reference-server/src/internal/random.ts';
import { call, createSession } from '../support/api.ts';
import { openPool } from '../support/open-pool.ts';
import { startServer, testDatabaseUrl } from '../support/server.ts';

// Issue 25: SQLite and PostgreSQL had a migration history each (SQLite 001–009, PostgreSQL 001–011, their
// numbers apart from 007 on); now there is one, numbered as PostgreSQL's was. A database made by the code before
// it (a SQLite file at user_version 9, a PostgreSQL database with 001–011 recorded) must open under the one
// history and keep working: its rows read, new rows written, nothing applied twice.

const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const folder = mkdtempSync(join(tmpdir(), 'servicepay-one-history-'));

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

/** SQLite's own numbers before the one history, in the order that code applied them. */
const SQLITE_BEFORE: Array<[oldVersion: number, step: number]> = [
  [1, 1],
  [2, 2],
  [3, 3],
  [4, 4],
  [5, 5],
  [6, 6],
  [7, 10],
  [8, 11],
  [9, 12],
];

/**
 * A database as the code before the one history left it: on SQLite each of its nine files applied and counted in
 * `user_version` (no `schema_migrations`); on PostgreSQL 001–011 recorded under the names that code gave them.
 * Then, through the service's own repositories, a business with its keys and one session, as that code wrote.
 */
async function legacyDatabase(dbPath: string, databaseUrl: string | null) {
  const steps = new Map<number, Migration>(readMigrations().map((step) => [step.version, step]));
  let store: Store;
  let runner: SqliteRunner | PostgresRunner;
  let close: () => Promise<void>;
  if (databaseUrl === null) {
    const db = new Database(dbPath);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    for (const [oldVersion, step] of SQLITE_BEFORE) {
      db.exec(steps.get(step)?.sqlite ?? '');
      db.pragma(`user_version = ${oldVersion}`);
    }
    runner = new SqliteRunner(db);
    store = createSqliteStore(db, () => undefined);
    close = async () => {
      db.close();
    };
  } else {
    const pool = openPool(databaseUrl, { max: 2 });
    // The test project's databases are copies of a migrated one: start this one empty, as it was then.
    await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    const applied = await migratePostgres(pool, {
      migrations: [...steps.values()].filter((step) => step.version <= 11),
    });
    expect(applied.applied).toHaveLength(11);
    store = createPostgresStore(pool, { onEffectError: () => undefined });
    runner = new PostgresRunner(pool);
    close = () => pool.end();
  }
  const created = await createBusiness(store, 'Old Shop', false, T0);
  // The session as that code wrote it: its columns then (the current repository's insert names later ones).
  const session = {
    id: 'ses_made_before',
    businessId: created.business.id,
    reference: 'order-before',
    metadata: JSON.stringify({ order: 'before' }),
    clientSecretHash: sha256('cs_test_before'),
    createdAt: T0,
    expiresAt: Date.now() + 3_600_000,
  };
  const insert = `INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
      payer_email, payer_phone, metadata, client_secret_hash, created_at, updated_at, expires_at)
    VALUES (@id, @businessId, 'test', @reference, 'pending', 250000, 'NGN', 'Ada Lovelace', 'ada@example.com', NULL,
      @metadata, @clientSecretHash, @createdAt, @createdAt, @expiresAt)`;
  await runner.run(sql(insert), session);
  await close();
  return created;
}

describe('a database made before the one migration history', () => {
  it('opens under it: every step recorded once, its rows read, new rows written, a restart applies nothing', async () => {
    const dbPath = join(folder, 'before.db');
    const databaseUrl = await testDatabaseUrl(join(folder, 'before-pg.db'));
    const { keys } = await legacyDatabase(dbPath, databaseUrl);

    let recordedAt: number | undefined;
    const first = await startServer({ databaseUrl }, { dbPath });
    try {
      const steps = await first.rows<{ version: number; name: string }>(
        'SELECT version, name FROM schema_migrations ORDER BY version',
      );
      expect(steps).toEqual(readMigrations().map(({ version, name }) => ({ version, name })));
      recordedAt = (
        await first.rows<{ at: number }>('SELECT sum(applied_at) AS at FROM schema_migrations')
      )[0]?.at;
      // user_version follows the history's last step, so the code before it (which reads only user_version) sees
      // a database newer than itself.
      if (!first.onPostgres)
        expect(first.service.db.pragma('user_version', { simple: true })).toBe(
          readMigrations().at(-1)?.version,
        );

      const before = await call(first.baseUrl, 'GET', '/api/widget/sessions/ses_made_before', {
        token: keys.test.secretKey,
      });
      expect(before.status).toBe(200);
      expect(before.body.data).toMatchObject({
        id: 'ses_made_before',
        reference: 'order-before',
        amount: 250_000,
        metadata: { order: 'before' },
      });
      const made = await createSession(first.baseUrl, keys.test.secretKey, { reference: 'order-after' });
      expect(made).toMatchObject({ reference: 'order-after', status: 'pending' });
    } finally {
      await first.close();
    }

    const again = await startServer({ databaseUrl }, { dbPath });
    try {
      const applied = await again.rows<{ n: number; at: number }>(
        'SELECT count(*) AS n, sum(applied_at) AS at FROM schema_migrations',
      );
      expect(applied[0]).toEqual({ n: readMigrations().length, at: recordedAt });
      const list = await call(again.baseUrl, 'GET', '/api/widget/sessions?limit=10', {
        token: keys.test.secretKey,
      });
      expect((list.body.data as Array<{ reference: string }>).map((session) => session.reference)).toEqual([
        'order-after',
        'order-before',
      ]);
    } finally {
      await again.close();
    }
  });
});
