/**
 * How a column's value is stored: what a record holds (`T`), and, for the few kinds a database does not hold
 * as they are, how it is written and read back (JSON as text, a flag as 0/1). Integers, text and bytes need no
 * codec: both stores hand them back as numbers (PostgreSQL's `bigint` through `exactInteger`), strings and
 * Buffers.
 */
export interface Column<T> {
  encode?(value: T): unknown;
  decode?(stored: unknown): T;
  /** Filled in by the database (an identity or an autoincrement): left out of `insert`. */
  readonly generated: boolean;
  /** The column's SQL name when it is not the record key in snake_case. */
  readonly sqlName?: string;
  /** Only a type: the record's value. */
  readonly type?: T;
}

const plain = <T>(): Column<T> => ({ generated: false });
const nullable = <T>(column: Column<T>): Column<T | null> => ({
  generated: false,
  ...(column.encode ? { encode: (value: T | null) => (value === null ? null : column.encode?.(value)) } : {}),
  ...(column.decode
    ? { decode: (stored: unknown) => (stored === null ? null : (column.decode?.(stored) as T)) }
    : {}),
});

/**
 * The kinds of column. `int` is an epoch time, a count, a sequence number or an amount in minor units
 * (SQLite `INTEGER`, PostgreSQL `bigint` or `integer`); `json` is text holding exactly the JSON written (a
 * webhook body is signed as stored, so never `jsonb`); `flag` is 0 or 1 in both stores.
 *
 * @example
 * const widgetTokens = table('widget_tokens', {
 *   tokenHash: column.bytes(), sessionId: column.text(), createdAt: column.int(), expiresAt: column.int(),
 * });
 */
export const column = {
  text: <T extends string = string>() => plain<T>(),
  int: () => plain<number>(),
  bytes: () => plain<Buffer>(),
  /** An identity or autoincrement: read, never written by `insert`. */
  serial: (): Column<number> => ({ generated: true }),
  json: <T>(): Column<T> => ({
    generated: false,
    encode: (value) => JSON.stringify(value),
    decode: (stored) => JSON.parse(stored as string) as T,
  }),
  flag: (): Column<boolean> => ({
    generated: false,
    encode: (value) => (value ? 1 : 0),
    decode: (stored) => stored === 1,
  }),
  nullable,
  /** `inner` stored under another SQL name than its record key's snake_case. */
  named: <T>(sqlName: string, inner: Column<T>): Column<T> => ({ ...inner, sqlName }),
};

type Columns = Record<string, Column<unknown>>;

/** The record a table's rows read as: each column's value under its camelCase name. */
export type RecordOf<C extends Columns> = { [K in keyof C]: C[K] extends Column<infer T> ? T : never };

/** What an insert takes: every column but the generated ones. */
export type InsertOf<C extends Columns> = {
  [K in keyof C as C[K]['generated'] extends true ? never : K]: C[K] extends Column<infer T> ? T : never;
};

const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * One table, declared once for both stores: its columns in order (camelCase here, snake_case in SQL), each
 * with its kind. From it come the column list a statement selects (each aliased to its camelCase name, so a
 * row is nearly a record already), the insert statement, and the row mapping (`decode`). A new column is one
 * line here and one migration step (`migrations/`).
 *
 * @example
 * const find = sql<SessionRecord>(`SELECT ${sessions.select()} FROM sessions WHERE id = @id`);
 * const record = sessions.decode(await runner.get(find, { id }));
 */
export class Table<C extends Columns> {
  readonly keys: Array<keyof C & string>;
  private readonly coded: Array<[keyof C & string, Column<unknown>]>;

  constructor(
    readonly name: string,
    readonly columns: C,
  ) {
    this.keys = Object.keys(columns) as Array<keyof C & string>;
    this.coded = Object.entries(columns).filter(([, kind]) => kind.encode || kind.decode) as Array<
      [keyof C & string, Column<unknown>]
    >;
  }

  /** The SQL name of a column. */
  column(key: keyof C & string): string {
    return this.columns[key]?.sqlName ?? snake(key);
  }

  /**
   * Every column, as `business_id AS "businessId"`, prefixed with `alias.` when given. Named, never `*`: a
   * column added by a newer instance's migration leaves an older instance's prepared statements as they were.
   * `as` puts a prefix on every answer's name (`s.id AS "session.id"`), for a read that joins tables whose
   * columns share names; `decodePrefixed` takes them back out.
   */
  select(alias?: string, as = ''): string {
    const prefix = alias ? `${alias}.` : '';
    return this.keys
      .map((key) => {
        const name = this.column(key);
        return name === key && as === '' ? `${prefix}${name}` : `${prefix}${name} AS "${as}${key}"`;
      })
      .join(', ');
  }

  /**
   * The record a row carries under `select(alias, as)`'s names, or undefined when its first column is null (the
   * row of an outer join that found none: a table's first column is its key).
   */
  decodePrefixed(row: Record<string, unknown>, as: string): RecordOf<C> | undefined {
    const first = this.keys[0];
    if (first === undefined || row[`${as}${first}`] == null) return undefined;
    const record: Record<string, unknown> = {};
    for (const key of this.keys) record[key] = row[`${as}${key}`];
    return this.decode(record);
  }

  /** `INSERT INTO t (every column but the generated ones) VALUES (@each)`; `tail` adds ON CONFLICT/RETURNING. */
  insert(tail = ''): string {
    const keys = this.keys.filter((key) => !this.columns[key]?.generated);
    return `INSERT INTO ${this.name} (${keys.map((key) => this.column(key)).join(', ')}) VALUES (${keys.map((key) => `@${key}`).join(', ')})${tail ? ` ${tail}` : ''}`;
  }

  /** A record's values as the statement binds them (JSON as text, flags as 0/1). */
  encode<T extends Partial<RecordOf<C>>>(record: T): Record<string, unknown> {
    if (this.coded.length === 0) return record;
    const params: Record<string, unknown> = { ...record };
    for (const [key, kind] of this.coded) {
      if (kind.encode && key in params) params[key] = kind.encode(params[key]);
    }
    return params;
  }

  /** A row selected with `select()` as its record (in place: the row is the statement's own). */
  decode(row: Record<string, unknown>): RecordOf<C>;
  decode(row: Record<string, unknown> | undefined): RecordOf<C> | undefined;
  decode(row: Record<string, unknown> | undefined): RecordOf<C> | undefined {
    if (row === undefined) return undefined;
    for (const [key, kind] of this.coded) if (kind.decode) row[key] = kind.decode(row[key]);
    return row as RecordOf<C>;
  }
}

/**
 * Declares a table (see `Table`).
 *
 * @example
 * export const businesses = table('businesses', { id: column.text(), name: column.text(), ... });
 */
export function table<C extends Columns>(name: string, columns: C): Table<C> {
  return new Table(name, columns);
}
