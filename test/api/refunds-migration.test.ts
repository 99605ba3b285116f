import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../reference-server/src/db/database.ts';
import { readMigrations } from '../../reference-server/src/db/migrations.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { PostgresRunner } from '../../reference-server/src/db/postgres/postgres-runner.ts';
import { repositoriesOn } from '../../reference-server/src/db/repositories.ts';
import { SqliteRunner } from '../../reference-server/src/db/sqlite-runner.ts';
import { openPool } from '../support/open-pool.ts';
import { testDatabaseUrl } from '../support/server.ts';

// Step 014 (issue 26) adds the refund events. An endpoint that had subscribed to every event type there was
// asked for everything, so it gets them too (as step 003 did for `session.credit_unapplied`); an endpoint that
// chose some types keeps its choice.

const folder = mkdtempSync(join(tmpdir(), 'servicepay-refunds-migration-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const EVERY_SESSION_EVENT = [
  'session.successful',
  'session.mismatch',
  'session.expired',
  'session.cancelled',
  'session.credit_unapplied',
] as const;

it('subscribes the endpoints that had asked for every event type to the refund events, and only those', async () => {
  const before = readMigrations().filter((step) => step.version < 14);
  const databaseUrl = await testDatabaseUrl(join(folder, 'pg.db'));
  let runner: SqliteRunner | PostgresRunner;
  let finish: () => Promise<void>;
  let close: () => Promise<void>;
  if (databaseUrl === null) {
    // A file the code before step 014 made (`openDatabase` would bring it up to date at once).
    const db = new Database(join(folder, 'refunds.db'));
    db.pragma('foreign_keys = ON');
    migrate(db, before);
    runner = new SqliteRunner(db);
    finish = async () => migrate(db);
    close = async () => {
      db.close();
    };
  } else {
    const pool = openPool(databaseUrl, { max: 2 });
    await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    await migratePostgres(pool, { migrations: before });
    runner = new PostgresRunner(pool);
    finish = async () => {
      await migratePostgres(pool);
    };
    close = () => pool.end();
  }
  try {
    const repositories = repositoriesOn(runner);
    await repositories.businesses.insert({ id: 'biz_1', name: 'Shop', kycApproved: false, createdAt: 1 });
    const endpoint = (id: string, events: readonly (typeof EVERY_SESSION_EVENT)[number][]) =>
      repositories.webhookEndpoints.insert({
        id,
        businessId: 'biz_1',
        environment: 'test',
        url: `https://shop.example/${id}`,
        events,
        description: null,
        secretCiphertext: 'sealed',
        createdAt: 1,
      });
    await endpoint('we_all', EVERY_SESSION_EVENT);
    await endpoint('we_some', ['session.successful', 'session.cancelled']);
    await finish();
    expect((await repositories.webhookEndpoints.find('we_all'))?.events).toEqual([
      ...EVERY_SESSION_EVENT,
      'refund.succeeded',
      'refund.failed',
    ]);
    expect((await repositories.webhookEndpoints.find('we_some'))?.events).toEqual([
      'session.successful',
      'session.cancelled',
    ]);
  } finally {
    await close();
  }
});
