import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_PAGE_STATEMENTS } from '../../reference-server/src/db/export-pages.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import {
  postgresAvailable,
  reportIfPostgresMissing,
  type ScratchPostgres,
  startPostgres,
} from '../support/postgres.ts';

// Issue 37: the ledger export's page statement (db/export-pages.ts) on PostgreSQL, EXPLAIN ANALYZEd as sent:
// a page at the start of the ledger and one deep in it are both read from the owner index, from the cursor on
// (about as many blocks either way), with no sort and no sequential scan. SQLite's plan is held by
// reference-server/src/db/export-pages.test.ts.

reportIfPostgresMissing();

const T0 = Date.parse('2030-01-01T00:00:00Z');
const MINUTE = 60_000;

describe.runIf(postgresAvailable)('the ledger export on PostgreSQL: pages from the cursor', () => {
  let postgres: ScratchPostgres;
  let pool: pg.Pool;

  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: await postgres.createDatabase('export_plans'), max: 2 });
    pool.on('error', () => {});
    await migratePostgres(pool);
    await pool.query(
      `INSERT INTO businesses (id, name, created_at) VALUES ('biz_a', 'A', 0), ('biz_b', 'B', 0)`,
    );
    // 40,000 entries a minute apart, biz_a's and biz_b's alternating, test and live in runs of 5.
    await pool.query(
      `INSERT INTO balance_transactions (id, business_id, environment, type, amount, currency, session_id,
         refund_id, transfer_id, payer_account, created_at)
       SELECT 'txn_export' || i, CASE WHEN i % 2 = 0 THEN 'biz_a' ELSE 'biz_b' END,
              CASE WHEN (i / 5) % 2 = 0 THEN 'test' ELSE 'live' END, 'payment', 1000 + i, 'NGN', NULL, NULL,
              'trf_export' || i, '******0001', $1::bigint + i::bigint * ${MINUTE}
         FROM generate_series(1, 40000) AS i`,
      [T0],
    );
    await pool.query('ANALYZE balance_transactions');
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await postgres?.stop();
  });

  /** The plan of one page after the entry `after` (none: the first page), and its rows' ids. */
  async function page(after: string | undefined) {
    const cursor = after
      ? (await pool.query('SELECT seq, created_at FROM balance_transactions WHERE id = $1', [after])).rows[0]
      : { seq: 0, created_at: 0 };
    const params: Record<string, unknown> = {
      businessId: 'biz_a',
      environment: 'test',
      createdTo: Number.MAX_SAFE_INTEGER,
      afterSeq: Number(cursor.seq),
      afterCreatedAt: Number(cursor.created_at),
      limit: 100,
    };
    const { text, names } = EXPORT_PAGE_STATEMENTS.balanceTransactions.postgres;
    const values = names.map((name) => params[name]);
    const explained = await pool.query(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${text}`, values);
    const top = explained.rows[0]['QUERY PLAN'][0].Plan as Record<string, unknown>;
    const nodes: string[] = [];
    const indexes: string[] = [];
    const walk = (node: Record<string, unknown>) => {
      nodes.push(node['Node Type'] as string);
      if (node['Index Name']) indexes.push(node['Index Name'] as string);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(top);
    const rows = (await pool.query(text, values)).rows.map((row) => row.id as string);
    return {
      nodes,
      indexes,
      blocks: Number(top['Shared Hit Blocks']) + Number(top['Shared Read Blocks']),
      rows,
    };
  }

  it('reads the first page and a page deep in the ledger from the owner index, at the same cost', async () => {
    const first = await page(undefined);
    const deep = await page('txn_export30000');
    for (const plan of [first, deep]) {
      expect(plan.indexes).toEqual(['balance_transactions_by_owner']);
      expect(plan.nodes).not.toContain('Sort');
      expect(plan.nodes).not.toContain('Seq Scan');
      expect(plan.rows).toHaveLength(100);
    }
    // biz_a's test entries are the even i in runs of five: the page after 30000 starts at 30002.
    expect(deep.rows[0]).toBe('txn_export30002');
    expect(deep.blocks).toBeLessThan(first.blocks * 3 + 20);
  });
});
