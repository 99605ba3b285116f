import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../reference-server/src/db/database.ts';
import { readMigrations } from '../../reference-server/src/db/migrations.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { PostgresRunner } from '../../reference-server/src/db/postgres/postgres-runner.ts';
import { SqlWebhookDeliveryRepository } from '../../reference-server/src/db/webhook-deliveries.ts';
import { openPool } from '../support/open-pool.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// Issue 13: migrations as numbered SQL, run on start under an advisory lock so that instances starting together
// do not race; the PostgreSQL schema holds what the SQLite one holds (same tables, columns, keys, uniqueness,
// indexes), so the repositories written next can keep one meaning for every value.

reportIfPostgresMissing();

/**
 * Tables only PostgreSQL has: the runner's record, and what one process kept in memory with SQLite
 * (`rate_limit_windows` is 007's, left by 009 for instances still on the previous code during a deploy).
 */
const POSTGRES_ONLY = ['rate_limit_windows', 'rate_limit_buckets', 'push_overflow'];

/**
 * Tables only SQLite has: `storage_probe` (013), the row `/health` writes to learn that a full disk has space
 * again, which PostgreSQL does with a temporary table of its own. (`credentials_version`, SQLite's since 012, is
 * PostgreSQL's too since 020.)
 */
const SQLITE_ONLY = ['storage_probe'];

describe.runIf(postgresAvailable)('PostgreSQL migrations on a real PostgreSQL', () => {
  const scratch = useScratchDatabase();
  const pools: pg.Pool[] = [];
  const poolFor = (url: string) => {
    const pool = openPool(url, { max: 2 });
    pools.push(pool);
    return pool;
  };

  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
  });

  it('three instances starting together apply every migration exactly once; a later start applies none', async () => {
    const url = await scratch.postgres.createDatabase('three_instances');
    const instances = [poolFor(url), poolFor(url), poolFor(url)];
    const names = readMigrations().map((migration) => migration.name);
    expect(names.length).toBeGreaterThanOrEqual(8);

    const results = await Promise.all(instances.map((pool) => migratePostgres(pool)));

    // Between them the three applied each migration once, and none failed on another's half-made schema.
    expect(results.flatMap((result) => result.applied).sort()).toEqual(names);
    const recorded = await instances[0]?.query(
      'SELECT version, name FROM schema_migrations ORDER BY version',
    );
    expect(recorded?.rows.map((row) => row.name)).toEqual(names);
    expect(recorded?.rows.map((row) => row.version)).toEqual(names.map((name) => Number(name.slice(0, 3))));

    const again = await Promise.all(instances.map((pool) => migratePostgres(pool)));
    expect(again.map((result) => result.applied)).toEqual([[], [], []]);
    const count = await instances[1]?.query('SELECT count(*)::int AS n FROM schema_migrations');
    expect(count?.rows[0].n).toBe(names.length);
  });

  it('a failing migration rolls back whole, is not recorded, and the next start applies it once fixed', async () => {
    const url = await scratch.postgres.createDatabase('failing_migration');
    const pool = poolFor(url);
    const dir = mkdtempSync(join(tmpdir(), 'servicepay-pg-migrations-'));
    try {
      // Each step has its SQLite side too; this test runs only the PostgreSQL one.
      for (const name of ['001_first', '002_broken', '002_renamed', '002_other']) {
        writeFileSync(join(dir, `${name}.sqlite.sql`), 'SELECT 1;');
      }
      writeFileSync(
        join(dir, '001_first.postgres.sql'),
        'CREATE TABLE first_table (id integer PRIMARY KEY);',
      );
      rmSync(join(dir, '002_renamed.sqlite.sql'));
      rmSync(join(dir, '002_other.sqlite.sql'));
      writeFileSync(
        join(dir, '002_broken.postgres.sql'),
        'CREATE TABLE half_made (id integer PRIMARY KEY);\nINSERT INTO no_such_table VALUES (1);',
      );
      await expect(migratePostgres(pool, { migrations: readMigrations(dir) })).rejects.toThrow(
        /002_broken failed/,
      );
      const tables = await pool.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual(['first_table', 'schema_migrations']);

      writeFileSync(join(dir, '002_broken.postgres.sql'), 'CREATE TABLE half_made (id integer PRIMARY KEY);');
      const fixed = await migratePostgres(pool, { migrations: readMigrations(dir) });
      expect(fixed.applied).toEqual(['002_broken']);

      // A renumbered file (another name under a recorded version) is refused: the schema is not what it says.
      for (const dialect of ['postgres', 'sqlite']) {
        rmSync(join(dir, `002_broken.${dialect}.sql`));
        writeFileSync(join(dir, `002_renamed.${dialect}.sql`), 'SELECT 1;');
      }
      await expect(migratePostgres(pool, { migrations: readMigrations(dir) })).rejects.toThrow(
        /records version 2 as 002_broken/,
      );
      writeFileSync(join(dir, '002_other.postgres.sql'), 'SELECT 1;');
      expect(() => readMigrations(dir)).toThrow(/002_other needs both/);
      writeFileSync(join(dir, '002_other.sqlite.sql'), 'SELECT 1;');
      expect(() => readMigrations(dir)).toThrow(/two migrations are numbered 2/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the schema has the tables, columns, keys, uniqueness, foreign keys and indexes of the SQLite schema', async () => {
    const url = await scratch.postgres.createDatabase('compare_sqlite');
    const pool = poolFor(url);
    await migratePostgres(pool);
    const sqliteSchema = describeSqlite();
    const postgresSchema = await describePostgres(pool);
    expect(Object.keys(postgresSchema.tables).sort()).toEqual(
      [
        ...Object.keys(sqliteSchema.tables).filter((table) => !SQLITE_ONLY.includes(table)),
        ...POSTGRES_ONLY,
      ].sort(),
    );
    expect(Object.keys(sqliteSchema.tables)).toEqual(expect.arrayContaining(SQLITE_ONLY));
    for (const [table, expected] of Object.entries(sqliteSchema.tables)) {
      if (SQLITE_ONLY.includes(table)) continue;
      expect({ table, ...postgresSchema.tables[table] }).toEqual({ table, ...expected });
    }
  });

  it('011 clears every webhook excerpt stored before answers were withheld, and says why (the twin of SQLite 008)', async () => {
    // Issue 8: no row tells whether a stored excerpt came from a public receiver, so all of them go; see the
    // migration's header. Rows written as 010 left them: a loopback answer kept, a withheld one, no answer.
    const url = await scratch.postgres.createDatabase('withhold_excerpts');
    const pool = poolFor(url);
    const before = readMigrations().filter((migration) => migration.version < 11);
    await migratePostgres(pool, { migrations: before });
    await pool.query(`
      INSERT INTO businesses (id, name, created_at) VALUES ('biz_1', 'Shop', 1);
      INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
        payer_email, client_secret_hash, created_at, updated_at, expires_at)
        VALUES ('ses_1', 'biz_1', 'test', 'order-1', 'cancelled', 500000, 'NGN', 'Ada', 'ada@example.com',
        '\\x01', 1, 2, 3);
      INSERT INTO events (id, business_id, environment, session_id, type, payload, created_at)
        VALUES ('evt_1', 'biz_1', 'test', 'ses_1', 'session.cancelled', '{}', 2);
      INSERT INTO webhook_endpoints (id, business_id, environment, url, events, secret_ciphertext, created_at,
        updated_at) VALUES ('we_1', 'biz_1', 'test', 'http://127.0.0.1:8080/hooks', '[]', 'sealed', 1, 1);
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, created_at, updated_at)
        VALUES ('wd_1', 'we_1', 'evt_1', 'failed', 3, 2, 5);
      INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
        VALUES ('wd_1', 3, 500, 4, NULL, '{"secret":"what the local service said"}'),
               ('wd_1', 4, 500, 4, 'withheld:receiver_not_public', NULL),
               ('wd_1', 5, NULL, 1000, 'timed out after 1000 ms', NULL);
    `);

    expect((await migratePostgres(pool)).applied).toContain('011_withhold_unchecked_excerpts');

    const kept = await pool.query(
      'SELECT count(*)::int AS n FROM webhook_attempts WHERE response_excerpt IS NOT NULL',
    );
    expect(kept.rows[0].n).toBe(0);
    const attempts = (
      await new SqlWebhookDeliveryRepository(new PostgresRunner(pool)).attemptsOf(['wd_1'])
    ).get('wd_1');
    expect(
      attempts?.map(({ statusCode, error, responseExcerpt, responseExcerptWithheld }) => ({
        statusCode,
        error,
        responseExcerpt,
        responseExcerptWithheld,
      })),
    ).toEqual([
      {
        statusCode: 500,
        error: null,
        responseExcerpt: null,
        responseExcerptWithheld: 'receiver_not_checked',
      },
      { statusCode: 500, error: null, responseExcerpt: null, responseExcerptWithheld: 'receiver_not_public' },
      {
        statusCode: null,
        error: 'timed out after 1000 ms',
        responseExcerpt: null,
        responseExcerptWithheld: null,
      },
    ]);
  });

  it('constraints hold as in SQLite: references unique per business and environment, money positive', async () => {
    const url = await scratch.postgres.createDatabase('constraints');
    const pool = poolFor(url);
    await migratePostgres(pool);
    await pool.query("INSERT INTO businesses (id, name, created_at) VALUES ('biz_1', 'Shop', 1)");
    const insertSession = (id: string, environment: string, reference: string, amount = 500_000) =>
      pool.query(
        `INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
           payer_email, client_secret_hash, created_at, updated_at, expires_at)
         VALUES ($1, 'biz_1', $2, $3, 'pending', $4, 'NGN', 'Ada', 'ada@example.com', $5, 1, 1, 2)
         RETURNING seq`,
        [id, environment, reference, amount, Buffer.from(id)],
      );
    const first = await insertSession('ses_1', 'test', 'order-1');
    // Amounts past 2^31 (₦100,000,000 is 10,000,000,000 kobo) fit: money is bigint.
    const second = await insertSession('ses_2', 'live', 'order-1', 10_000_000_000);
    expect(Number(second.rows[0].seq)).toBe(Number(first.rows[0].seq) + 1);
    await expect(insertSession('ses_3', 'test', 'order-1')).rejects.toMatchObject({
      code: '23505',
      constraint: 'sessions_business_id_environment_reference_key',
    });
    await expect(insertSession('ses_4', 'test', 'order-4', 0)).rejects.toMatchObject({ code: '23514' });
    await expect(pool.query("UPDATE sessions SET status = 'paid' WHERE id = 'ses_1'")).rejects.toMatchObject({
      code: '23514',
    });

    const remember = () =>
      pool.query(
        `INSERT INTO idempotent_requests (scope, idempotency_key, request_hash, status_code, response_body, created_at)
         VALUES ('biz_1:test', 'key-1', '\\x00', 201, 'sealed', 1)`,
      );
    await remember();
    await expect(remember()).rejects.toMatchObject({ code: '23505', constraint: 'idempotent_requests_pkey' });
  });
});

interface TableShape {
  columns: Record<string, { notNull: boolean }>;
  primaryKey: string[];
  /** Column lists of every unique constraint and unique index (the primary key included), sorted. */
  unique: string[];
  /** `column -> table.column` for each foreign key, sorted. */
  foreignKeys: string[];
  /** Named indexes (not those behind constraints): columns, unique, partial. */
  indexes: Record<string, { columns: string[]; unique: boolean; partial: boolean }>;
}

function describeSqlite(): { tables: Record<string, TableShape> } {
  const db = openDatabase(':memory:');
  try {
    const tables: Record<string, TableShape> = {};
    const names = db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    for (const table of names) {
      const info = db.pragma(`table_info(${table})`) as Array<{ name: string; notnull: number; pk: number }>;
      const primaryKey = info
        .filter((column) => column.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((column) => column.name);
      const columns = Object.fromEntries(
        info.map((column) => [column.name, { notNull: column.notnull === 1 || column.pk > 0 }]),
      );
      const unique = [primaryKey.join(',')];
      const indexes: TableShape['indexes'] = {};
      const list = db.pragma(`index_list(${table})`) as Array<{
        name: string;
        unique: number;
        origin: string;
        partial: number;
      }>;
      for (const index of list) {
        const indexColumns = (
          db.pragma(`index_info(${index.name})`) as Array<{ seqno: number; name: string }>
        )
          .sort((a, b) => a.seqno - b.seqno)
          .map((column) => column.name);
        if (index.unique && index.origin !== 'pk' && !index.partial) unique.push(indexColumns.join(','));
        if (index.origin === 'c') {
          indexes[index.name] = {
            columns: indexColumns,
            unique: index.unique === 1,
            partial: index.partial === 1,
          };
        }
      }
      const foreignKeys = (
        db.pragma(`foreign_key_list(${table})`) as Array<{ from: string; table: string; to: string }>
      )
        .map((fk) => `${fk.from} -> ${fk.table}.${fk.to}`)
        .sort();
      tables[table] = { columns, primaryKey, unique: [...new Set(unique)].sort(), foreignKeys, indexes };
    }
    return { tables };
  } finally {
    db.close();
  }
}

async function describePostgres(pool: pg.Pool): Promise<{ tables: Record<string, TableShape> }> {
  const columns = await pool.query<{ table_name: string; column_name: string; is_nullable: string }>(
    "SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public'",
  );
  const indexes = await pool.query<{
    table: string;
    index: string;
    unique: boolean;
    primary: boolean;
    partial: boolean;
    constraint: boolean;
    columns: string[];
  }>(
    `SELECT t.relname AS table, i.relname AS index, x.indisunique AS unique, x.indisprimary AS primary,
            x.indpred IS NOT NULL AS partial,
            EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid) AS constraint,
            ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
       FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_namespace ns ON ns.oid = t.relnamespace WHERE ns.nspname = 'public'`,
  );
  const foreignKeys = await pool.query<{ table: string; fk: string }>(
    `SELECT t.relname AS table, a.attname || ' -> ' || rt.relname || '.' || ra.attname AS fk
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class rt ON rt.oid = c.confrelid
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
       JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[1]
       JOIN pg_namespace ns ON ns.oid = t.relnamespace WHERE c.contype = 'f' AND ns.nspname = 'public'`,
  );
  const tables: Record<string, TableShape> = {};
  const shape = (table: string): TableShape => {
    tables[table] ??= { columns: {}, primaryKey: [], unique: [], foreignKeys: [], indexes: {} };
    return tables[table];
  };
  for (const row of columns.rows)
    shape(row.table_name).columns[row.column_name] = { notNull: row.is_nullable === 'NO' };
  for (const row of indexes.rows) {
    const table = shape(row.table);
    if (row.primary) table.primaryKey = row.columns;
    if (row.unique && !row.partial) table.unique.push(row.columns.join(','));
    if (!row.constraint) {
      table.indexes[row.index] = { columns: row.columns, unique: row.unique, partial: row.partial };
    }
  }
  for (const row of foreignKeys.rows) shape(row.table).foreignKeys.push(row.fk);
  for (const table of Object.values(tables)) {
    table.unique = [...new Set(table.unique)].sort();
    table.foreignKeys.sort();
  }
  return { tables };
}
