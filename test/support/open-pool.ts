import pg from 'pg';

/** What `openPool` takes besides the URL: any `pg.Pool` setting (`max`, `connectionTimeoutMillis`, `types`, …). */
export type TestPoolConfig = Omit<pg.PoolConfig, 'connectionString'>;

/**
 * A `pg.Pool` for a test, with an `'error'` listener on it from the start. *Why every test pool needs one:* pg
 * emits `'error'` on the pool when an idle client's connection is lost, as PostgreSQL's
 * `FATAL 57P01 terminating connection due to administrator command` does to every client when a scratch cluster
 * stops, restarts or a test terminates a backend. With no listener that event is an uncaught exception, which
 * fails the run after every test passed (it did once in CI). The pool has already dropped the broken client; the
 * next query connects anew, so by default there is nothing to do. `onError` receives those errors where a test
 * asserts on them.
 *
 * @example
 * const pool = openPool(await postgres.createDatabase('orders'), { max: 2 });
 * try {
 *   expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
 * } finally {
 *   await pool.end();
 * }
 */
export function openPool(
  connectionString: string,
  config: TestPoolConfig = {},
  onError: (error: Error) => void = () => {},
): pg.Pool {
  const pool = new pg.Pool({ ...config, connectionString });
  pool.on('error', onError);
  return pool;
}
