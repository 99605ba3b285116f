import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { openDatabase } from '../../reference-server/src/db/database.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { PostgresRunner } from '../../reference-server/src/db/postgres/postgres-runner.ts';
import { type Repositories, repositoriesOn } from '../../reference-server/src/db/repositories.ts';
import { SqliteRunner } from '../../reference-server/src/db/sqlite-runner.ts';
import { openPool } from './open-pool.ts';
import type { ScratchPostgres } from './postgres.ts';

/** The repositories these suites compare, as the service sees them (`Repositories`, whichever store). */
export type TwinRepositories = Pick<
  Repositories,
  | 'businesses'
  | 'apiKeys'
  | 'portalSessions'
  | 'unappliedCredits'
  | 'auditLog'
  | 'webhookEndpoints'
  | 'webhookDeliveries'
>;

/** One store of a pair: its repositories, and plain SQL for the rows a scenario needs that they do not write. */
export interface TwinStore {
  name: 'sqlite' | 'postgres';
  repos: TwinRepositories;
  /** One statement with `?` placeholders (numbered `$n` for PostgreSQL here), for seeding rows. */
  exec(sql: string, values?: unknown[]): Promise<void>;
}

/** A fresh SQLite file and a fresh PostgreSQL database, both migrated and empty. */
export interface StoreTwins {
  sqlite: TwinStore;
  postgres: TwinStore;
  /** The PostgreSQL database's pool (PostgreSQL-only checks read it directly). */
  pool: pg.Pool;
  /** The PostgreSQL database's URL: another pool on it stands for another instance of the service. */
  url: string;
  /** Runs `scenario` on SQLite, then on PostgreSQL, and returns both answers. */
  both<T>(scenario: (store: TwinStore) => Promise<T>): Promise<{ sqlite: T; postgres: T }>;
  close(): Promise<void>;
}

let databases = 0;

/**
 * Opens a store pair for one test: a real SQLite file in a temporary directory (`openDatabase`) and a new
 * database of the scratch PostgreSQL cluster (`migratePostgres`), the service's one set of repositories
 * (`repositoriesOn`) over each. Both start empty, so the same calls give the same `seq`s on both.
 *
 * @example
 * const twins = await openStoreTwins(postgres);
 * const { sqlite, postgres: pgAnswer } = await twins.both((store) => store.repos.businesses.find('biz_1'));
 * expect(pgAnswer).toEqual(sqlite);
 * await twins.close();
 */
export async function openStoreTwins(postgres: ScratchPostgres): Promise<StoreTwins> {
  const dir = mkdtempSync(join(tmpdir(), 'servicepay-twins-'));
  const db = openDatabase(join(dir, 'servicepay.db'));
  const sqlite: TwinStore = {
    name: 'sqlite',
    repos: repositoriesOn(new SqliteRunner(db)),
    exec: async (sql, values = []) => {
      db.prepare(sql).run(...values);
    },
  };

  databases += 1;
  const url = await postgres.createDatabase(`twins_${process.pid}_${databases}`);
  const pool = openPool(url, { max: 4 });
  await migratePostgres(pool);
  const postgresStore: TwinStore = {
    name: 'postgres',
    repos: repositoriesOn(new PostgresRunner(pool)),
    exec: async (sql, values = []) => {
      let n = 0;
      await pool.query(
        sql.replace(/\?/g, () => `$${++n}`),
        values,
      );
    },
  };

  return {
    sqlite,
    postgres: postgresStore,
    pool,
    url,
    async both(scenario) {
      const sqliteAnswer = await scenario(sqlite);
      const postgresAnswer = await scenario(postgresStore);
      return { sqlite: sqliteAnswer, postgres: postgresAnswer };
    },
    async close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
      await pool.end();
    },
  };
}

/**
 * A business's session and one event of it, inserted with plain SQL (the session and event repositories are
 * not what these suites compare): what a webhook delivery needs to exist.
 *
 * @example
 * await seedSessionEvent(store, { businessId: 'biz_a', environment: 'test', sessionId: 'ses_1', eventId: 'evt_1', type: 'session.successful', at: T0 });
 */
export async function seedSessionEvent(
  store: TwinStore,
  seed: {
    businessId: string;
    environment: 'test' | 'live';
    sessionId: string;
    eventId: string;
    type: string;
    at: number;
    credit?: string | null;
    /** Insert the session too (false when an earlier event of the same session inserted it). */
    withSession?: boolean;
  },
): Promise<void> {
  if (seed.withSession !== false) {
    await store.exec(
      `INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
         payer_email, client_secret_hash, created_at, updated_at, expires_at)
       VALUES (?, ?, ?, ?, 'successful', 150000, 'NGN', 'Ada Payer', 'ada@example.com', ?, ?, ?, ?)`,
      [
        seed.sessionId,
        seed.businessId,
        seed.environment,
        `order-${seed.sessionId}`,
        Buffer.from(seed.sessionId.padEnd(32, '.')),
        seed.at,
        seed.at,
        seed.at + 3_600_000,
      ],
    );
  }
  await store.exec(
    `INSERT INTO events (id, business_id, environment, session_id, type, payload, created_at, credit)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      seed.eventId,
      seed.businessId,
      seed.environment,
      seed.sessionId,
      seed.type,
      JSON.stringify({ id: seed.sessionId, status: 'successful', amount: 150000 }),
      seed.at,
      seed.credit ?? null,
    ],
  );
}
