import pg from 'pg';
import type { Params, Sql, SqlDatabase, SqlRunner } from '../sql.ts';
import { exactInteger } from './exact-integer.ts';

/** What runs a statement: a pool, or the client of an open transaction. */
export interface Queryable {
  query(text: string | pg.QueryConfig, values?: unknown[]): Promise<unknown>;
}

/** `bigint` (and `numeric`, `count(*)`) as exact numbers, refused when no number holds them (`exactInteger`). */
export const exactIntegerTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return exactInteger;
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

type Answer<R> = { rows: R[]; rowCount: number | null };

const NO_PARAMS: Params = {};

/**
 * `SqlRunner` on PostgreSQL, over the pool (each call its own statement) or a write job's transaction client.
 * Every statement is sent as a named statement, so each connection parses and plans it once and afterwards
 * only binds and executes it; integers come back as numbers (`exactIntegerTypes`), whatever the pool's own
 * type parsers.
 *
 * @example
 * const runner = new PostgresRunner(pool);
 * const row = await runner.get(findSession, { id: 'ses_…' });
 */
export class PostgresRunner implements SqlRunner {
  constructor(readonly db: Queryable) {}

  async all<R>(statement: Sql<R>, params: Params = NO_PARAMS): Promise<R[]> {
    return (await this.send<R>(statement, params)).rows;
  }

  async get<R>(statement: Sql<R>, params: Params = NO_PARAMS): Promise<R | undefined> {
    return (await this.send<R>(statement, params)).rows[0];
  }

  async run(statement: Sql, params: Params = NO_PARAMS): Promise<number> {
    return (await this.send(statement, params)).rowCount ?? 0;
  }

  private send<R>(statement: Sql<R>, params: Params): Promise<Answer<R>> {
    const { name, text, names } = statement.postgres;
    return this.db.query({
      name,
      text,
      values: names.map((key) => params[key] ?? null),
      types: exactIntegerTypes,
    }) as Promise<Answer<R>>;
  }
}

/**
 * `SqlDatabase` on a pool: `transaction` takes a client, `BEGIN` … `COMMIT` on it, and returns it (closed
 * instead when its connection failed, so the pool never lends it again).
 */
export class PostgresPoolRunner extends PostgresRunner implements SqlDatabase {
  constructor(private readonly pool: pg.Pool) {
    super(pool);
  }

  async transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const value = await work(new PostgresRunner(client));
      await client.query('COMMIT');
      return value;
    } catch (error) {
      broken = error instanceof Error ? error : new Error(String(error));
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
