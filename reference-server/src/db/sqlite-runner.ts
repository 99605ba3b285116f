import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.ts';
import type { Params, Sql, SqlDatabase, SqlRunner } from './sql.ts';

const NO_PARAMS: Params = {};

/**
 * `SqlRunner` on one better-sqlite3 connection: each statement prepared on first use and kept, every call run
 * synchronously (a repository's `await` on it resumes in a microtask, never a later turn). Arrays are bound as
 * JSON text, for `json_each(@ids)`.
 *
 * @example
 * const runner = new SqliteRunner(openDatabase(path));
 * const row = runner.get(findSession, { id: 'ses_…' });
 */
export class SqliteRunner implements SqlDatabase {
  private readonly prepared = new Map<Sql<unknown>, Statement>();

  constructor(readonly db: SqliteDatabase) {}

  all<R>(statement: Sql<R>, params: Params = NO_PARAMS): R[] {
    return this.statement(statement).all(bindable(params)) as R[];
  }

  get<R>(statement: Sql<R>, params: Params = NO_PARAMS): R | undefined {
    return this.statement(statement).get(bindable(params)) as R | undefined;
  }

  run(statement: Sql, params: Params = NO_PARAMS): number {
    return this.statement(statement).run(bindable(params)).changes;
  }

  /**
   * `BEGIN IMMEDIATE` … `COMMIT` around `work` (a savepoint instead when the connection is already in a
   * transaction, as better-sqlite3's own `transaction` does). Its awaits resume in microtasks (every statement
   * here answers synchronously), so nothing else runs on the connection in between.
   */
  async transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    const nested = this.db.inTransaction;
    this.db.exec(nested ? 'SAVEPOINT books' : 'BEGIN IMMEDIATE');
    try {
      const value = await work(this);
      this.db.exec(nested ? 'RELEASE books' : 'COMMIT');
      return value;
    } catch (error) {
      if (nested) this.db.exec('ROLLBACK TO books; RELEASE books');
      else if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  private statement(statement: Sql<unknown>): Statement {
    let prepared = this.prepared.get(statement);
    if (!prepared) {
      prepared = this.db.prepare(statement.sqlite);
      this.prepared.set(statement, prepared);
    }
    return prepared;
  }
}

/** better-sqlite3 binds no arrays: a list goes in as JSON text (read with `json_each`). */
function bindable(params: Params): Params {
  for (const key in params) {
    if (Array.isArray(params[key])) {
      const copy: Record<string, unknown> = { ...params };
      for (const name in copy) if (Array.isArray(copy[name])) copy[name] = JSON.stringify(copy[name]);
      return copy;
    }
  }
  return params;
}
