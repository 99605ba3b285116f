import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The better-sqlite3 for the Node that runs this process: `better-sqlite3` (13, Node-API) on Node 22 and newer,
 * `better-sqlite3-node20` (12, an npm alias) on Node 20. *Why two:* on Node 24, 12.x aborts the process when the
 * garbage collector finalizes a statement while no context is entered (`Assertion failed: (env) != nullptr` in
 * `RemoveEnvironmentCleanupHook`: its `node::ObjectWrap` meets Node 24's cleanup hooks), which killed vitest's
 * workers and can kill the service; 13.x does not, but segfaults on Node 20. Transitional: once no worktree runs
 * Node 20 (out of support since April 2026), the alias and this choice go (docs/protocol.md, "Supported Node").
 *
 * @example
 * import Database from './sqlite-driver.ts';
 * const db = new Database(':memory:');
 */
const require = createRequire(import.meta.url);

/** The package name this process loads, by Node's major version. */
export const SQLITE_DRIVER =
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';

/** The driver's entry file, for a worker thread to load the same driver. */
export const sqliteDriverPath: string = require.resolve(SQLITE_DRIVER);

/** An open database of the chosen driver. */
export type SqliteConnection = BetterSqlite3.Database;

const Database = require(SQLITE_DRIVER) as typeof BetterSqlite3;
export default Database;
