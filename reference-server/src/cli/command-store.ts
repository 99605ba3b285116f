import { existsSync } from 'node:fs';
import { defaultConfig } from '../config.ts';
import { openBackend } from '../db/backend.ts';
import type { Store } from '../db/store.ts';
import { isPostgresUrl, redactDatabaseUrl } from '../internal/database-url.ts';
import { silentLogger } from '../internal/logger.ts';
import { CommandFailed, UsageError } from './command-errors.ts';

/** The flags that choose the database: `--db PATH` (SQLite) or `--database-url postgres://…`. */
export interface StoreFlags {
  readonly db?: string | undefined;
  readonly 'database-url'?: string | undefined;
}

/**
 * The SQLite file: `--db`, else `SERVICEPAY_DB`, else the default.
 *
 * @example
 * createService({ dbPath: dbPath(values), databaseUrl: databaseUrl(values), ... });
 */
export const dbPath = (values: StoreFlags): string =>
  values.db ?? process.env.SERVICEPAY_DB ?? defaultConfig().dbPath;

/**
 * The PostgreSQL URL: `--database-url`, else `SERVICEPAY_DATABASE_URL`, else null (SQLite).
 *
 * @example
 * const onPostgres = databaseUrl(values) !== null;
 */
export const databaseUrl = (values: StoreFlags): string | null =>
  values['database-url'] ?? process.env.SERVICEPAY_DATABASE_URL ?? null;

/**
 * The store a command works on (migrated, as the service would), and how to let go of it.
 *
 * @example
 * const { store, close } = await openStore(values);
 * try { await approveKyc(store, id, Date.now(), cliActor()); } finally { await close(); }
 */
export async function openStore(values: StoreFlags): Promise<{ store: Store; close(): Promise<void> }> {
  const url = databaseUrl(values);
  if (url !== null && !isPostgresUrl(url)) throw new UsageError('--database-url is a postgres:// URL');
  const backend = openBackend(
    { dbPath: dbPath(values), databaseUrl: url },
    { logger: silentLogger, onEffectError: () => undefined, forCommand: true },
  );
  try {
    await backend.start();
  } catch (error) {
    await backend.close();
    throw new CommandFailed(
      `cannot use the database at ${url === null ? dbPath(values) : redactDatabaseUrl(url)}: ${(error as Error).message}`,
    );
  }
  return { store: backend.store, close: () => backend.close() };
}

/**
 * For commands that only read: a mistyped path must not answer "nothing found" from a new, empty file.
 *
 * @example
 * const { store, close } = await openExistingStore(values);
 */
export function openExistingStore(values: StoreFlags): Promise<{ store: Store; close(): Promise<void> }> {
  const path = dbPath(values);
  if (databaseUrl(values) === null && !existsSync(path)) throw new UsageError(`no database at ${path}`);
  return openStore(values);
}
