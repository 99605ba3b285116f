import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqlBalanceTransactionRepository } from './balance-transactions.ts';
import { SqlBusinessRepository } from './businesses.ts';
import { openDatabase, type SqliteDatabase } from './database.ts';
import { EXPORT_PAGE_STATEMENTS, type ExportPageQuery, SqlExportPageRepository } from './export-pages.ts';
import { SqliteRunner } from './sqlite-runner.ts';

// The ledger export's keyset pages: every entry of the range once, in the ledger's order (createdAt, seq),
// however many share a millisecond across a page boundary, and each page read from the cursor on through the
// owner index (its cost does not grow with the position; the figures are `npm run bench -- export-stream`).

let db: SqliteDatabase;
let pages: SqlExportPageRepository;
const ids: string[] = [];

beforeEach(async () => {
  db = openDatabase(':memory:');
  const runner = new SqliteRunner(db);
  await new SqlBusinessRepository(runner).insert({ id: 'biz_a', name: 'A', kycApproved: true, createdAt: 0 });
  await new SqlBusinessRepository(runner).insert({ id: 'biz_b', name: 'B', kycApproved: true, createdAt: 0 });
  const ledger = new SqlBalanceTransactionRepository(runner);
  ids.length = 0;
  // 20 entries of A in test, five to a millisecond, inserted out of time order, between B's and A's live ones.
  for (let i = 0; i < 20; i++) {
    const at = 1000 + Math.floor((19 - i) / 5);
    for (const [businessId, environment] of [
      ['biz_a', 'test'],
      ['biz_b', 'test'],
      ['biz_a', 'live'],
    ] as const) {
      const id = `txn_${businessId}_${environment}_${i}`;
      await ledger.insert({
        id,
        businessId,
        environment,
        type: 'payment',
        amount: 100 + i,
        currency: 'NGN',
        sessionId: null,
        refundId: null,
        transferId: `trf_${id}`,
        payerAccount: null,
        createdAt: at,
      });
      if (businessId === 'biz_a' && environment === 'test') ids.push(id);
    }
  }
});

afterEach(() => db.close());

/** Every page of `query`, walked as `ExportService` walks them. */
async function walk(query: Omit<ExportPageQuery, 'afterSeq' | 'afterCreatedAt'>): Promise<string[]> {
  const seen: string[] = [];
  let after = { afterSeq: 0, afterCreatedAt: query.createdFrom };
  for (;;) {
    const page = await pages.balanceTransactions({ ...query, ...after });
    seen.push(...page.map((entry) => entry.id));
    const last = page.at(-1);
    if (page.length < query.limit || !last) return seen;
    after = { afterSeq: last.seq, afterCreatedAt: last.createdAt };
  }
}

describe('export pages of the ledger', () => {
  beforeEach(() => {
    pages = new SqlExportPageRepository(new SqliteRunner(db));
  });

  it('gives each entry of the owner once, in (createdAt, seq) order, across ties at page boundaries', async () => {
    const owner = { businessId: 'biz_a', environment: 'test' as const };
    const expected = db
      .prepare(
        "SELECT id FROM balance_transactions WHERE business_id = 'biz_a' AND environment = 'test' ORDER BY created_at, seq",
      )
      .pluck()
      .all();
    expect(expected).toHaveLength(20);
    for (const limit of [1, 3, 5, 7, 100])
      expect(await walk({ ...owner, createdFrom: 0, createdTo: 10_000, limit })).toEqual(expected);
    // A range: the milliseconds 1001 and 1002 only.
    expect(await walk({ ...owner, createdFrom: 1001, createdTo: 1003, limit: 3 })).toEqual(
      expected.slice(5, 15),
    );
  });

  it('reads a page from the cursor on through the owner index, not from the range start', () => {
    const params = {
      businessId: 'biz_a',
      environment: 'test',
      createdTo: 9999,
      afterSeq: 30,
      afterCreatedAt: 1002,
      limit: 5,
    };
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN ${EXPORT_PAGE_STATEMENTS.balanceTransactions.sqlite}`)
      .all(params)
      .map((row) => (row as { detail: string }).detail);
    expect(plan).toEqual([
      'SEARCH balance_transactions USING INDEX balance_transactions_by_owner (business_id=? AND environment=? AND created_at>? AND created_at<?)',
    ]);
  });
});
