import type { BalanceTransactionType, Environment } from '@servicepay/node/protocol';
import { type Params, type Sql, type SqlRunner, sql } from './sql.ts';
import { SqliteRunner } from './sqlite-runner.ts';
import { column, type RecordOf, table } from './table.ts';

/**
 * `balance_transactions`: the ledger. One row per movement of a business's money, written in the write job
 * that moved it and never updated or deleted. `amount` is signed (in positive, out negative), in minor units;
 * `createdAt` is epoch milliseconds. Which events make which rows: docs/decisions/ledger-and-exports.md.
 */
export const balanceTransactions = table('balance_transactions', {
  seq: column.serial(),
  id: column.text(),
  businessId: column.text(),
  environment: column.text<Environment>(),
  type: column.text<BalanceTransactionType>(),
  amount: column.int(),
  currency: column.text(),
  sessionId: column.nullable(column.text()),
  refundId: column.nullable(column.text()),
  transferId: column.text(),
  /** Masked to its last four digits (`******6789`): the full number is never stored here. */
  payerAccount: column.nullable(column.text()),
  createdAt: column.int(),
});

export type BalanceTransactionRecord = RecordOf<typeof balanceTransactions.columns>;

/** Entries move money out of the balance as a merchant's refund. */
export const REFUND_TYPES: readonly BalanceTransactionType[] = ['refund'];
/** Entries move money back to a payer without a merchant's refund. */
export const RETURN_TYPES: readonly BalanceTransactionType[] = ['unapplied_credit_return', 'transfer_return'];

/**
 * One read of a business's ledger in one environment. Every filter is optional but the owner; `createdFrom`
 * is inclusive, `createdTo` exclusive (epoch ms). The ledger's order is time order, `(createdAt, seq)`.
 * Keyset pages: `after` is the last row of the previous page (rows after it in `order`), so a stream of any
 * length reads each row once, in constant memory, each page read straight from the owner's index from the
 * cursor on (never sorted, never from the range's edge).
 */
export interface BalanceTransactionQuery {
  businessId: string;
  environment: Environment;
  type?: BalanceTransactionType | undefined;
  sessionId?: string | undefined;
  createdFrom?: number | undefined;
  createdTo?: number | undefined;
  /**
   * The last row already read (exclusive): its place in the order, as the caller already holds it (the API
   * looked the cursor up to check its owner; an export has the previous page's last row), so the page is one
   * statement with no lookup of its own.
   */
  after?: LedgerCursor | undefined;
  /** `newest_first` (the API's pages, the default) or `oldest_first` (an export). */
  order?: 'newest_first' | 'oldest_first' | undefined;
  limit: number;
}

/** A row's place in the ledger's order `(createdAt, seq)`. */
export type LedgerCursor = Pick<BalanceTransactionRecord, 'createdAt' | 'seq'>;

/** A business's ledger summed in one currency over a range (minor units; `refunded`, `returned` positive). */
export interface CurrencyTotals {
  currency: string;
  collected: number;
  refunded: number;
  returned: number;
  net: number;
  /** How many entries the sums are of. */
  count: number;
}

/** Owner and optional range of `totals` (epoch ms; `createdFrom` inclusive, `createdTo` exclusive). */
export interface BalanceTotalsQuery {
  businessId: string;
  environment: Environment;
  createdFrom?: number | undefined;
  createdTo?: number | undefined;
}

/**
 * The ledger as the service writes and reads it. `insert` is the only write: a second entry of one movement
 * (the same transfer and type, or the same refund and type) is refused by a unique index, so a job that raced
 * another instance to the same movement rolls back rather than booking it twice.
 */
export interface BalanceTransactionRepository {
  insert(entry: Omit<BalanceTransactionRecord, 'seq'>): Promise<BalanceTransactionRecord>;
  find(id: string): Promise<BalanceTransactionRecord | undefined>;
  /** One keyset page of `query` (see `BalanceTransactionQuery`). */
  listBalanceTransactions(query: BalanceTransactionQuery): Promise<BalanceTransactionRecord[]>;
  /** The entries of one transfer (its own movements and its refunds'), oldest first. */
  forTransfer(transferId: string): Promise<BalanceTransactionRecord[]>;
  /** Sums per currency, by currency code, of the owner's entries in the range (all time when left out). */
  totals(query: BalanceTotalsQuery): Promise<CurrencyTotals[]>;
}

const SELECT = `SELECT ${balanceTransactions.select()} FROM balance_transactions`;
// Filters the caller left out pass as null (text) or as the widest range (times), so one statement per order
// serves every combination; the owner's index (business_id, environment, created_at, seq) does the reading.
const FILTERS = `business_id = @businessId AND environment = @environment
  AND (CAST(@type AS text) IS NULL OR type = @type)
  AND (CAST(@sessionId AS text) IS NULL OR session_id = @sessionId)
  AND created_at >= @createdFrom AND created_at < @createdTo`;
// After the cursor (none: the first page) by the row-value comparison, which alone decides the page. The time
// range is also narrowed to start at the cursor's time (`balanceListStatement`): beside a range bound of its
// own SQLite does not take the row value as the index range's start, so without it a deep page scanned every
// row from the range's edge (3 ms a page at the front of 200k entries, 33 ms at the end; docs/benchmarks.md).
const list = (order: 'ASC' | 'DESC') =>
  sql<BalanceTransactionRecord>(
    `${SELECT} WHERE ${FILTERS}
       AND (created_at, seq) ${order === 'ASC' ? '>' : '<'} (@afterCreatedAt, @afterSeq)
     ORDER BY created_at ${order}, seq ${order} LIMIT @limit`,
  );
const sumOf = (types: readonly string[]) =>
  `CAST(sum(CASE WHEN type IN (${types.map((type) => `'${type}'`).join(', ')}) THEN -amount ELSE 0 END) AS bigint)`;

const statements = {
  insert: sql<{ seq: number }>(balanceTransactions.insert('RETURNING seq')),
  find: sql<BalanceTransactionRecord>(`${SELECT} WHERE id = @id`),
  newestFirst: list('DESC'),
  oldestFirst: list('ASC'),
  forTransfer: sql<BalanceTransactionRecord>(`${SELECT} WHERE transfer_id = @transferId ORDER BY seq`),
  totals: sql<CurrencyTotals>(
    `SELECT currency,
       CAST(sum(CASE WHEN amount > 0 THEN amount ELSE 0 END) AS bigint) AS collected,
       ${sumOf(REFUND_TYPES)} AS refunded,
       ${sumOf(RETURN_TYPES)} AS returned,
       CAST(sum(amount) AS bigint) AS net,
       count(*) AS count
     FROM balance_transactions
     WHERE business_id = @businessId AND environment = @environment
       AND created_at >= @createdFrom AND created_at < @createdTo
     GROUP BY currency ORDER BY currency`,
  ),
};

/**
 * The statement `listBalanceTransactions` runs for `query`, and its parameters.
 *
 * @example
 * const { statement, params } = balanceListStatement({ businessId, environment: 'test', limit: 21 });
 */
export function balanceListStatement(query: BalanceTransactionQuery): {
  statement: Sql<BalanceTransactionRecord>;
  params: Params;
} {
  const oldestFirst = query.order === 'oldest_first';
  const { after } = query;
  let createdFrom = query.createdFrom ?? 0;
  let createdTo = query.createdTo ?? Number.MAX_SAFE_INTEGER;
  // The range starts at the cursor's own millisecond (see `list`); the row value then drops the rows of that
  // millisecond up to the cursor.
  if (after && oldestFirst) createdFrom = Math.max(createdFrom, after.createdAt);
  if (after && !oldestFirst) createdTo = Math.min(createdTo, after.createdAt + 1);
  // No cursor: the edge of the order, before (or after) every row.
  const edge = oldestFirst ? -1 : Number.MAX_SAFE_INTEGER;
  return {
    statement: oldestFirst ? statements.oldestFirst : statements.newestFirst,
    params: {
      businessId: query.businessId,
      environment: query.environment,
      type: query.type ?? null,
      sessionId: query.sessionId ?? null,
      createdFrom,
      createdTo,
      afterCreatedAt: after?.createdAt ?? edge,
      afterSeq: after?.seq ?? edge,
      limit: query.limit,
    },
  };
}

/**
 * `BalanceTransactionRepository` on either store.
 *
 * @example
 * const page = await new SqlBalanceTransactionRepository(runner).listBalanceTransactions({
 *   businessId: 'biz_…', environment: 'test', order: 'oldest_first', limit: 500,
 * });
 */
export class SqlBalanceTransactionRepository implements BalanceTransactionRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(entry: Omit<BalanceTransactionRecord, 'seq'>): Promise<BalanceTransactionRecord> {
    const inserted = await this.db.get(statements.insert, entry);
    if (!inserted) throw new Error('the balance transaction insert returned no seq');
    return { ...entry, seq: inserted.seq };
  }

  async find(id: string): Promise<BalanceTransactionRecord | undefined> {
    return this.db.get(statements.find, { id });
  }

  async listBalanceTransactions(query: BalanceTransactionQuery): Promise<BalanceTransactionRecord[]> {
    const { statement, params } = balanceListStatement(query);
    return this.db.all(statement, params);
  }

  /**
   * How SQLite runs `listBalanceTransactions(query)`: the `detail` lines of `EXPLAIN QUERY PLAN` for the very
   * statement and parameters (SQLite only).
   *
   * @example
   * repository.explainList({ businessId, environment: 'test', createdFrom, createdTo, limit: 500 });
   * // ['SEARCH balance_transactions USING INDEX balance_transactions_by_owner (business_id=? AND …)']
   */
  explainList(query: BalanceTransactionQuery): string[] {
    if (!(this.db instanceof SqliteRunner)) throw new Error('explainList reads SQLite plans only');
    const { statement, params } = balanceListStatement(query);
    return this.db.db
      .prepare<Params, { detail: string }>(`EXPLAIN QUERY PLAN ${statement.sqlite}`)
      .all(params)
      .map((row) => row.detail);
  }

  async forTransfer(transferId: string): Promise<BalanceTransactionRecord[]> {
    return this.db.all(statements.forTransfer, { transferId });
  }

  async totals(query: BalanceTotalsQuery): Promise<CurrencyTotals[]> {
    const rows = await this.db.all(statements.totals, {
      businessId: query.businessId,
      environment: query.environment,
      createdFrom: query.createdFrom ?? 0,
      createdTo: query.createdTo ?? Number.MAX_SAFE_INTEGER,
    });
    // SQLite answers count(*) as a number, PostgreSQL as a bigint the runner already made exact.
    return rows.map((row) => ({ ...row, count: Number(row.count) }));
  }
}
