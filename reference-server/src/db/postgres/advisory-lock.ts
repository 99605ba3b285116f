import type pg from 'pg';

/** The advisory lock key of the expiry sweep (`MIGRATION_LOCK_KEY` is 0x5350_0001; "SP" = 0x5350). */
export const EXPIRY_SWEEP_LOCK_KEY = 0x5350_0002;

const toError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

/**
 * Runs `work` only if no other instance is running work under the same `key` right now: a session-level
 * `pg_try_advisory_lock` on a connection of its own, held while `work` runs (on other connections) and
 * released after. Answers `undefined`, without waiting, when another instance holds it. An instance that dies
 * holding it loses its connection, and PostgreSQL releases the lock with it: the next instance to try gets it.
 *
 * @example
 * const moved = await runAlone(pool, EXPIRY_SWEEP_LOCK_KEY, () => sweeper.sweep()); // undefined: another sweeps
 */
export async function runAlone<T>(
  pool: pg.Pool,
  key: number,
  work: () => Promise<T>,
): Promise<T | undefined> {
  const client = await pool.connect();
  // A connection whose lock statements failed is discarded, not pooled: closing it releases any lock it holds.
  let broken: Error | undefined;
  // The connection sits idle while `work` runs: if the database ends it meanwhile (a restart), `pg` emits an
  // error on it, which must not go unheard (an unheard 'error' event ends the process).
  const lost = (error: Error) => {
    broken = error;
  };
  client.on('error', lost);
  try {
    let locked: boolean;
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        key,
      ]);
      locked = rows[0]?.locked === true;
    } catch (error) {
      broken = toError(error);
      throw error;
    }
    if (!locked) return undefined;
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch((error: unknown) => {
        broken = toError(error);
      });
    }
  } finally {
    client.off('error', lost);
    client.release(broken);
  }
}
