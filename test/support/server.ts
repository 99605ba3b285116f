import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreatedBusiness } from '@servicepay/node/protocol';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openBackend } from '../../reference-server/src/db/backend.ts';
import type { BankBooks } from '../../reference-server/src/db/bank-books.ts';
import type { SqliteDatabase } from '../../reference-server/src/db/database.ts';
import {
  type Clock,
  createBusiness,
  createService,
  type Logger,
  type ServerConfigOverrides,
  type Service,
  silentLogger,
} from '../../reference-server/src/index.ts';
import { openPool } from './open-pool.ts';
import { type ScratchPostgres, startPostgres } from './postgres.ts';

export interface RunningServer {
  baseUrl: string;
  /** The widget hosts' base URLs (`${widgetUrls.test}/latest/widget.js`). */
  widgetUrls: { test: string; live: string };
  /** `GET /metrics` of the service's own listener, when started with `metricsPort` (issue 28). */
  metricsUrl: string | undefined;
  /** Drops every open connection to the API (push streams included), as a network cut would. */
  dropConnections(): void;
  dbPath: string;
  service: Service;
  /** True when this server keeps its data in PostgreSQL (`SERVICEPAY_TEST_STORE=postgres` or `databaseUrl`). */
  onPostgres: boolean;
  /**
   * Runs one statement on the service's own store, SQLite or PostgreSQL, and answers its rows (none for a
   * statement that returns nothing). Write it once for both: `?` placeholders (turned into `$1…` on
   * PostgreSQL), and SQL that means the same in both dialects. Integers come back as numbers on both stores,
   * so rows compare equal. On PostgreSQL it reads through a small pool of its own: what it sees is committed.
   *
   * @example
   * const [row] = await server.rows<{ n: number }>('SELECT count(*) AS n FROM events WHERE session_id = ?', id);
   */
  rows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /**
   * Like `rows`, through a connection the service does not use (a read-only SQLite connection on the file, the
   * pool on PostgreSQL): what another process or instance sees, so only what was committed.
   */
  committedRows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /**
   * Runs one statement on the simulated bank's own books (`bank_accounts`, `bank_transfers`, `bank_outbox`,
   * `bank_refunds`), which live beside the service's tables on either store (the SQLite file, or the
   * PostgreSQL database every instance shares) and which the service never reads. Committed rows only.
   *
   * @example
   * const [outbox] = await server.bankRows<{ n: number }>('SELECT count(*) AS n FROM bank_outbox');
   */
  bankRows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** The simulated bank's books, for a second `SimulatedBank` over the same books (`books: server.bankBooks`). */
  bankBooks: BankBooks;
  createBusiness(options?: { name?: string; kycApproved?: boolean }): Promise<CreatedBusiness>;
  close(): Promise<void>;
}

/** `pg` answers int8 and numeric as strings; the SQLite rows carry numbers. Exact integers only. */
const numericTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC)
      return (value: string) => {
        const number = Number(value);
        if (oid === pg.types.builtins.INT8 && !Number.isSafeInteger(number))
          throw new Error(`${value} does not fit a JavaScript number`);
        return number;
      };
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * `?` placeholders outside quoted text and identifiers become `$1`, `$2`, …
 *
 * @example
 * toPostgresPlaceholders("SELECT id FROM events WHERE session_id = ? AND type <> '?'"); // … = $1 AND type <> '?'
 */
export function toPostgresPlaceholders(sql: string): string {
  let out = '';
  let quote: string | undefined;
  let n = 0;
  for (const char of sql) {
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '?') {
      out += `$${++n}`;
      continue;
    }
    out += char;
  }
  return out;
}

/** One statement on a SQLite connection: its rows, or none for a statement that returns nothing. */
function sqliteRows<T>(db: SqliteDatabase, sql: string, params: unknown[]): T[] {
  const statement = db.prepare(sql);
  if (!statement.reader) {
    statement.run(...params);
    return [];
  }
  return statement.all(...params) as T[];
}

export interface StartOptions {
  clock?: Clock;
  logger?: Logger;
  /** Reuse a database file (restart tests); a fresh temporary one otherwise. */
  dbPath?: string;
}

/**
 * `SERVICEPAY_TEST_STORE=postgres` runs a suite's servers on PostgreSQL instead of SQLite: on the `postgres`
 * project's one scratch cluster (else one per test file, stopped after it), one database per database file the
 * suite asks for, so a restart on the same `dbPath` finds the same data. The file at `dbPath` then keeps the
 * simulated bank's books.
 */
const onPostgres = process.env.SERVICEPAY_TEST_STORE === 'postgres';
let cluster: Promise<ScratchPostgres> | undefined;
const databases = new Map<string, Promise<string>>();
if (onPostgres) {
  // A cluster this file started itself (run outside the `postgres` project) is stopped after its tests: a
  // test worker is ended without running its exit hooks, and each file left a PostgreSQL server behind.
  // Registered while the file is collected, before its own hooks, so it runs after them.
  const { afterAll } = await import('vitest');
  afterAll(() => cluster?.then((postgres) => postgres.stop()));
}

function databaseFor(dbPath: string): Promise<string> {
  let url = databases.get(dbPath);
  if (!url) {
    const name = `t_${randomBytes(6).toString('hex')}`;
    // The `postgres` project shares one cluster across its files (postgres-global-setup.ts); a file run
    // another way with SERVICEPAY_TEST_STORE=postgres starts its own. Imported here: benches use this module
    // outside vitest.
    url = import('vitest').then(({ inject }) => {
      const shared = inject('scratchPostgresUrl');
      if (shared) return createDatabaseOn(shared, name, inject('scratchPostgresTemplate'));
      cluster ??= startPostgres();
      return cluster.then((postgres) => postgres.createDatabase(name));
    });
    databases.set(dbPath, url);
  }
  return url;
}

/**
 * Creates database `name` (a copy of `template` when given) on the cluster whose maintenance database is at
 * `adminUrl`; answers its URL.
 */
async function createDatabaseOn(adminUrl: string, name: string, template?: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The database a suite's servers keep their data in for `dbPath`: a PostgreSQL URL under
 * SERVICEPAY_TEST_STORE=postgres (the database is created on first ask, the same one `startServer` uses for that
 * `dbPath`), else null (the SQLite file at `dbPath`). For tests that start the service another way, such as the
 * CLI in a child process (`--database-url`).
 *
 * @example
 * const databaseUrl = await testDatabaseUrl(dbPath);
 * const args = ['start', '--db', dbPath, ...(databaseUrl ? ['--database-url', databaseUrl] : [])];
 */
export async function testDatabaseUrl(dbPath: string): Promise<string | null> {
  return onPostgres ? databaseFor(dbPath) : null;
}

/** Reads a store from outside the service: what another process sees, committed rows only. */
export interface StoreReader {
  /** As `RunningServer.rows`: one statement, `?` placeholders, integers as numbers on both stores. */
  rows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * A connection of its own to a service's store: a read-only one on the SQLite file at `dbPath`, or a small
 * pool on `databaseUrl` when that is set. Opened on the first read.
 *
 * @example
 * const reader = openStoreReader({ dbPath, databaseUrl: await testDatabaseUrl(dbPath) });
 * const events = await reader.rows<{ id: string }>('SELECT id FROM events');
 * await reader.close();
 */
/**
 * The simulated bank's books of a service that is not running (or from outside it), on the store it used:
 * the SQLite file at `dbPath`, or the PostgreSQL database at `databaseUrl`. `close()` releases the connection.
 *
 * @example
 * const { books, close } = openBankBooks({ dbPath, databaseUrl: first.service.config.databaseUrl });
 * const bank = new SimulatedBank({ books, ... });
 */
export function openBankBooks(target: { dbPath: string; databaseUrl: string | null }): {
  books: BankBooks;
  close(): Promise<void>;
} {
  const backend = openBackend(target, {
    logger: silentLogger,
    onEffectError: () => undefined,
    forCommand: true,
  });
  return { books: backend.bankBooks, close: () => backend.close() };
}

export function openStoreReader(target: { dbPath: string; databaseUrl: string | null }): StoreReader {
  let pool: pg.Pool | undefined;
  let reader: SqliteDatabase | undefined;
  return {
    async rows<T>(sql: string, ...params: unknown[]) {
      if (target.databaseUrl) {
        pool ??= openPool(target.databaseUrl, { max: 2, types: numericTypes });
        return (await pool.query(toPostgresPlaceholders(sql), params)).rows as T[];
      }
      reader ??= new Database(target.dbPath, { readonly: true, fileMustExist: true });
      return sqliteRows<T>(reader, sql, params);
    },
    async close() {
      await pool?.end();
      reader?.close();
    },
  };
}

/**
 * The real reference server, in this process, on a free loopback port over a real SQLite file in a temporary
 * folder (or a PostgreSQL database, see above), with webhooks on the fast schedule. `close()` stops it and
 * removes the folder it made.
 *
 * @example
 * const server = await startServer({ rateLimit: { perMinute: 10_000 } });
 * const [row] = await server.rows<{ n: number }>('SELECT count(*) AS n FROM sessions');
 * await server.close();
 */
export async function startServer(
  config: ServerConfigOverrides = {},
  options: StartOptions = {},
): Promise<RunningServer> {
  const folder = options.dbPath ? undefined : mkdtempSync(join(tmpdir(), 'servicepay-test-'));
  const dbPath = options.dbPath ?? join(folder as string, 'servicepay.db');
  const databaseUrl = onPostgres && config.databaseUrl === undefined ? await databaseFor(dbPath) : undefined;
  const service = createService(
    {
      port: 0,
      testWidgetPort: 0,
      liveWidgetPort: 0,
      webhooks: { schedule: 'fast' },
      ...config,
      dbPath,
      ...(databaseUrl ? { databaseUrl } : {}),
    },
    { logger: options.logger ?? silentLogger, ...(options.clock ? { clock: options.clock } : {}) },
  );
  let started: Awaited<ReturnType<Service['start']>>;
  try {
    started = await service.start();
  } catch (error) {
    // What a refused start opened (the pool, the database file) is closed before the error is reported.
    await service.close().catch(() => undefined);
    if (folder) rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  const { url, server, widgetUrls, metricsUrl } = started;
  const clock = options.clock;
  const storeUrl = service.config.databaseUrl;
  // Opened on first use, closed by close(). On PostgreSQL `rows` reads through the outside reader too.
  const outside = openStoreReader({ dbPath, databaseUrl: storeUrl });
  return {
    baseUrl: url,
    widgetUrls,
    metricsUrl,
    dropConnections: () => server.closeAllConnections(),
    dbPath,
    service,
    onPostgres: storeUrl !== null,
    async rows<T>(sql: string, ...params: unknown[]) {
      return storeUrl ? outside.rows<T>(sql, ...params) : sqliteRows<T>(service.db, sql, params);
    },
    committedRows: (sql, ...params) => outside.rows(sql, ...params),
    bankRows: (sql, ...params) => outside.rows(sql, ...params),
    bankBooks: service.bankBooks,
    createBusiness: ({ name = 'Test Shop', kycApproved = false } = {}) =>
      createBusiness(service.deps.store, name, kycApproved, clock ? clock.now() : Date.now()),
    async close() {
      await outside.close();
      await service.close();
      if (folder) rmSync(folder, { recursive: true, force: true });
    },
  };
}
