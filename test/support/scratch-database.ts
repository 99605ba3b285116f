import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openPool, type TestPoolConfig } from './open-pool.ts';
import { type ScratchPostgres, startPostgres } from './postgres.ts';

/** What `useScratchDatabase` sets up, by the names the test file reads it by. */
export interface ScratchDatabaseOptions<Pools extends string> {
  /** The database to create in the cluster; omitted, the cluster's own `servicepay` database. */
  database?: string;
  /**
   * The pools to open on that database, each under the name the file uses (`admin`, or `poolA` and `poolB` for
   * two instances of the service on one database), with its settings; none when omitted.
   */
  pools?: Record<Pools, TestPoolConfig>;
  /** Where the pools report an idle client's lost connection (see `openPool`); ignored by default. */
  onPoolError?: (error: Error) => void;
}

/** The scratch cluster, the database's URL and each named pool; filled in by the time the file's own hooks run. */
export type ScratchDatabase<Pools extends string> = {
  /** The cluster: `restart()` and `stop()` a test may call, `createDatabase` for another database. */
  readonly postgres: ScratchPostgres;
  /** The database's URL: `postgres://postgres@127.0.0.1:<port>/<database>`. */
  readonly url: string;
} & { readonly [name in Pools]: pg.Pool };

/**
 * The PostgreSQL preamble of a test file (or of one `describe`), in one place: registers a `beforeAll` that starts
 * a scratch cluster, creates the database and opens the pools (each with its `'error'` listener), and an
 * `afterAll` that ends the pools and stops the cluster. Call it first in the `describe`: vitest runs `beforeAll`
 * hooks in order and `afterAll` hooks in reverse, so the file's own `beforeAll` finds everything ready and its
 * `afterAll` (closing servers, say) runs while the database is still up.
 *
 * @example
 * describe.runIf(postgresAvailable)('the ledger on PostgreSQL', () => {
 *   const scratch = useScratchDatabase({ database: 'ledger', pools: { pool: { max: 2 } } });
 *   beforeAll(() => migratePostgres(scratch.pool));
 *   it('answers', async () => {
 *     expect((await scratch.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
 *   });
 * });
 */
export function useScratchDatabase<Pools extends string = never>(
  options: ScratchDatabaseOptions<Pools> = {},
): ScratchDatabase<Pools> {
  const scratch: Partial<Record<string, unknown>> & { postgres?: ScratchPostgres } = {};
  const pools = Object.entries(options.pools ?? {}) as Array<[string, TestPoolConfig]>;
  for (const [name] of pools) {
    if (name === 'postgres' || name === 'url') throw new Error(`a pool cannot be named ${name}`);
  }
  beforeAll(async () => {
    const postgres = await startPostgres();
    scratch.postgres = postgres;
    const url =
      options.database === undefined ? postgres.url : await postgres.createDatabase(options.database);
    scratch.url = url;
    for (const [name, config] of pools) scratch[name] = openPool(url, config, options.onPoolError);
  });
  afterAll(async () => {
    for (const [name] of pools) await (scratch[name] as pg.Pool | undefined)?.end();
    await scratch.postgres?.stop();
  });
  return scratch as ScratchDatabase<Pools>;
}
