import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * better-sqlite3 for the Node that runs the shop. Your app imports `better-sqlite3` (13) directly; this
 * repository also keeps 12.x as `better-sqlite3-node20` for worktrees still on Node 20, where 13 segfaults, and
 * Node 24 aborts a process that runs 12 (reference-server/src/internal/sqlite-driver.ts says why). Transitional.
 *
 * @example
 * import Database from './sqlite-driver.ts';
 * const db = new Database('data/shop.db');
 */
const Database = createRequire(import.meta.url)(
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20',
) as typeof BetterSqlite3;

/** An open database of the chosen driver. */
export type SqliteConnection = BetterSqlite3.Database;
export default Database;
