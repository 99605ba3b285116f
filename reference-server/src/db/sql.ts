import { createHash } from 'node:crypto';

/** The two SQL dialects the storage layer speaks. */
export type Dialect = 'sqlite' | 'postgres';

/** A statement's named parameters (`@name` in its text): strings, numbers, Buffers, null, or arrays of text. */
export type Params = Readonly<Record<string, unknown>>;

/** A statement as PostgreSQL runs it: a named (prepared once per connection) statement with `$n` parameters. */
export interface PostgresText {
  /** `sp_` and a hash of the text: the name the statement is prepared under on each connection. */
  name: string;
  text: string;
  /** The parameter behind each `$n`, in order. */
  names: string[];
}

/**
 * One statement of the storage layer, with named parameters (`@businessId`), and `R` the row it answers. Written
 * once where the two dialects agree, or once per dialect side by side where a planner or a lock needs its own
 * (`FOR UPDATE`, `SKIP LOCKED`, the tuned list statements). Made at module load, so each text is compiled once;
 * better-sqlite3 prepares it once per connection (`SqliteRunner`), PostgreSQL once per pool connection (a named
 * statement: parsed and planned on its first use there, not on every call).
 *
 * @example
 * const find = sql<SessionRow>('SELECT * FROM sessions WHERE id = @id');
 * const lock = sql<AccountRow>({ sqlite: SELECT, postgres: `${SELECT} FOR UPDATE` });
 */
export class Sql<R = unknown> {
  readonly sqlite: string;
  readonly postgres: PostgresText;
  /** Only a type: the row the statement answers. */
  declare readonly row?: R;

  constructor(text: string | { sqlite: string; postgres: string }) {
    this.sqlite = typeof text === 'string' ? text : text.sqlite;
    this.postgres = toPostgres(typeof text === 'string' ? text : text.postgres);
  }
}

/**
 * A statement (see `Sql`).
 *
 * @example
 * const revoke = sql('UPDATE api_keys SET revoked_at = @at WHERE id = @id AND revoked_at IS NULL');
 */
export function sql<R = unknown>(text: string | { sqlite: string; postgres: string }): Sql<R> {
  return new Sql<R>(text);
}

/**
 * What runs statements: one SQLite connection (every call answers synchronously, so a write job's batch still
 * runs from `BEGIN` to `COMMIT` within one turn of the event loop), or a PostgreSQL pool or transaction client
 * (every call a promise). Repositories `await` either.
 */
export interface SqlRunner {
  /** Every row the statement answers. */
  all<R>(statement: Sql<R>, params?: Params): R[] | Promise<R[]>;
  /** The first row, or undefined. */
  get<R>(statement: Sql<R>, params?: Params): R | undefined | Promise<R | undefined>;
  /** Runs a statement; answers how many rows it inserted, updated or deleted. */
  run(statement: Sql, params?: Params): number | Promise<number>;
}

/** A runner that can also run work in a transaction of its own (the simulated bank's books). */
export interface SqlDatabase extends SqlRunner {
  /**
   * Runs `work` in one transaction and commits it, or rolls it back when `work` throws. On SQLite `work` must
   * await nothing but its runner, so that it runs within one turn of the event loop on the shared connection.
   */
  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T>;
}

/** `@name` tokens outside quotes become `$1`, `$2`, … (a name used twice keeps its number). */
function toPostgres(text: string): PostgresText {
  const names: string[] = [];
  let out = '';
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (quote) {
      if (char === quote) quote = undefined;
      out += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      out += char;
      continue;
    }
    const name = char === '@' ? /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i + 1))?.[0] : undefined;
    if (!name) {
      out += char;
      continue;
    }
    let index = names.indexOf(name);
    if (index < 0) index = names.push(name) - 1;
    out += `$${index + 1}`;
    i += name.length;
  }
  const name = `sp_${createHash('sha256').update(out).digest('hex').slice(0, 24)}`;
  return { name, text: out, names };
}
