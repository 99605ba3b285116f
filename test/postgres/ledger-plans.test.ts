import { beforeAll, describe, expect, it } from 'vitest';
import {
  type BalanceTransactionQuery,
  balanceListStatement,
  type LedgerCursor,
  SqlBalanceTransactionRepository,
} from '../../reference-server/src/db/balance-transactions.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { PostgresRunner } from '../../reference-server/src/db/postgres/postgres-runner.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';

// Issue 37: the ledger's pages on PostgreSQL, as the exports stream them (a date range, oldest first, page after
// page) and as the API lists them (newest first, filtered): each reads a page from the owner index
// (business_id, environment, created_at, seq), never the table, never a sort of the range. EXPLAIN ANALYZE of
// the very statement the repository sends, on 40,000 entries (one seeding for the API's pages and the exports':
// both read this one statement); a page deep in the ledger costs about what the first does; and the keyset walk
// of a range reads each entry of it once, in order. SQLite's plans: reference-server/src/db/balance-transactions.test.ts.

reportIfPostgresMissing();

const T0 = Date.parse('2030-01-01T00:00:00Z');
const MINUTE = 60_000;

describe.runIf(postgresAvailable)('the ledger on PostgreSQL: pages from the index', () => {
  const scratch = useScratchDatabase({ database: 'ledger_plans', pools: { pool: { max: 2 } } });

  beforeAll(async () => {
    await migratePostgres(scratch.pool);
    await scratch.pool.query(
      `INSERT INTO businesses (id, name, created_at) VALUES ('biz_a', 'A', 0), ('biz_b', 'B', 0)`,
    );
    // 40,000 entries a minute apart: biz_a's and biz_b's alternating, test and live in runs of 5, a refund for
    // every tenth.
    await scratch.pool.query(
      `INSERT INTO balance_transactions (id, business_id, environment, type, amount, currency, session_id,
         refund_id, transfer_id, payer_account, created_at)
       SELECT 'txn_plan' || i, CASE WHEN i % 2 = 0 THEN 'biz_a' ELSE 'biz_b' END,
              CASE WHEN (i / 5) % 2 = 0 THEN 'test' ELSE 'live' END,
              CASE WHEN i % 10 = 0 THEN 'refund' ELSE 'payment' END,
              CASE WHEN i % 10 = 0 THEN -100 ELSE 1000 + i END, 'NGN', NULL,
              CASE WHEN i % 10 = 0 THEN 'rfd_plan' || i ELSE NULL END, 'trf_plan' || i, '******0001',
              $1::bigint + i::bigint * ${MINUTE}
         FROM generate_series(1, 40000) AS i`,
      [T0],
    );
    await scratch.pool.query('ANALYZE balance_transactions');
  }, 60_000);

  const planOf = async (query: BalanceTransactionQuery) => {
    const { statement, params } = balanceListStatement(query);
    const { text, names } = statement.postgres;
    const explained = await scratch.pool.query(
      `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${text}`,
      names.map((name) => params[name]),
    );
    const top = explained.rows[0]['QUERY PLAN'][0].Plan as Record<string, unknown>;
    const indexes = new Set<string>();
    const nodes = new Set<string>();
    const walk = (node: Record<string, unknown>) => {
      nodes.add(node['Node Type'] as string);
      if (node['Index Name']) indexes.add(node['Index Name'] as string);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(top);

    return {
      indexes: [...indexes].sort(),
      nodes: [...nodes],
      blocks: Number(top['Shared Hit Blocks']) + Number(top['Shared Read Blocks']),
      rows: Number(top['Actual Rows']),
    };
  };

  /** The place in the ledger's order of the entry `id`, as a cursor. */
  const cursorOf = async (id: string): Promise<LedgerCursor> => {
    const { rows } = await scratch.pool.query(
      'SELECT seq, created_at FROM balance_transactions WHERE id = $1',
      [id],
    );
    return { seq: Number(rows[0].seq), createdAt: Number(rows[0].created_at) };
  };

  it('every page, ranged or not, in either order, after a cursor or not, is read from the owner index', async () => {
    const middle = await cursorOf('txn_plan20000');
    // Pages smaller than the day they read (432 entries of biz_a in test): a page of a range that holds
    // fewer rows than the page may well be sorted, and cheaply, which is not what is asked here.
    const owner = { businessId: 'biz_a', environment: 'test', limit: 40 } as const;
    const day = { createdFrom: T0 + 10_000 * MINUTE, createdTo: T0 + 11_440 * MINUTE };
    const cases: BalanceTransactionQuery[] = [
      owner,
      { ...owner, after: middle },
      { ...owner, order: 'oldest_first' },
      { ...owner, order: 'oldest_first', ...day },
      { ...owner, order: 'oldest_first', ...day, after: await cursorOf('txn_plan10500') },
      { ...owner, ...day, after: await cursorOf('txn_plan11000') },
      { ...owner, type: 'refund' },
    ];
    /** How many rows the page must hold, counted by a plain statement of its own. */
    const expectedRows = async (query: BalanceTransactionQuery) => {
      const oldest = query.order === 'oldest_first';
      const cursor = query.after;
      const { rows } = await scratch.pool.query(
        `SELECT count(*)::int AS n FROM balance_transactions
         WHERE business_id = $1 AND environment = $2 AND ($3::text IS NULL OR type = $3)
           AND created_at >= $4 AND created_at < $5
           AND ($6::bigint IS NULL OR ${oldest ? '(created_at, seq) > ($6, $7)' : '(created_at, seq) < ($6, $7)'})`,
        [
          query.businessId,
          query.environment,
          query.type ?? null,
          query.createdFrom ?? 0,
          query.createdTo ?? Number.MAX_SAFE_INTEGER,
          cursor?.createdAt ?? null,
          cursor?.seq ?? null,
        ],
      );
      return Math.min(rows[0].n, query.limit);
    };
    const tablePages = Number(
      (await scratch.pool.query("SELECT relpages FROM pg_class WHERE relname = 'balance_transactions'"))
        .rows[0].relpages,
    );
    expect(tablePages).toBeGreaterThan(200);
    for (const query of cases) {
      const plan = await planOf(query);
      const rows = await expectedRows(query);
      expect(rows, JSON.stringify(query)).toBeGreaterThan(0);
      expect({ query, indexes: plan.indexes, rows: plan.rows }).toEqual({
        query,
        // The owner index alone: the cursor comes as parameters, its row is not looked up again.
        indexes: ['balance_transactions_by_owner'],
        rows,
      });
      expect(plan.nodes, JSON.stringify(query)).not.toContain('Seq Scan');
      expect(plan.nodes, JSON.stringify(query)).not.toContain('Sort');
      // A page of 40 entries touches a few dozen blocks, of a table of hundreds: never the table.
      expect(plan.blocks, JSON.stringify(query)).toBeLessThanOrEqual(80);
    }
  });

  it("a keyset walk of a day, oldest first, reads each of its entries once and in order, only the owner's", async () => {
    const ledger = new SqlBalanceTransactionRepository(new PostgresRunner(scratch.pool));
    const day = { createdFrom: T0 + 20_000 * MINUTE, createdTo: T0 + 21_440 * MINUTE };
    const walked: string[] = [];
    let after: LedgerCursor | undefined;
    for (;;) {
      const page = await ledger.listBalanceTransactions({
        businessId: 'biz_b',
        environment: 'live',
        order: 'oldest_first',
        ...day,
        after,
        limit: 97,
      });
      walked.push(...page.map((row) => row.id));
      if (page.length < 97) break;
      after = page.at(-1);
    }
    const expected = (
      await scratch.pool.query(
        `SELECT id FROM balance_transactions WHERE business_id = 'biz_b' AND environment = 'live'
         AND created_at >= $1 AND created_at < $2 ORDER BY created_at, seq`,
        [day.createdFrom, day.createdTo],
      )
    ).rows.map((row) => row.id);
    expect(expected.length).toBe(432);
    expect(walked).toEqual(expected);
    const [totals] = await ledger.totals({ businessId: 'biz_b', environment: 'live', ...day });
    expect(totals?.count).toBe(432);
  });
  it("an export's pages (the whole ledger, oldest first): the first and one deep in it cost about the same", async () => {
    const ledger = new SqlBalanceTransactionRepository(new PostgresRunner(scratch.pool));
    const owner = { businessId: 'biz_a', environment: 'test', order: 'oldest_first', limit: 100 } as const;
    const deepCursor = await cursorOf('txn_plan30000');
    const first = await planOf(owner);
    const deep = await planOf({ ...owner, after: deepCursor });
    for (const plan of [first, deep]) {
      expect(plan.indexes).toEqual(['balance_transactions_by_owner']);
      expect(plan.nodes).not.toContain('Sort');
      expect(plan.nodes).not.toContain('Seq Scan');
      expect(plan.rows).toBe(100);
    }
    expect(deep.blocks).toBeLessThan(first.blocks * 3 + 20);
    // biz_a's test entries are the even i in runs of five: the page after 30000 starts at 30002.
    const page = await ledger.listBalanceTransactions({ ...owner, after: deepCursor });
    expect(page[0]?.id).toBe('txn_plan30002');
  });
});
