import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqlBalanceTransactionRepository } from '../db/balance-transactions.ts';
import { SqlBusinessRepository } from '../db/businesses.ts';
import { openDatabase, type SqliteDatabase } from '../db/database.ts';
import { repositoriesOn } from '../db/repositories.ts';
import { SqliteRunner } from '../db/sqlite-runner.ts';
import { ExportService } from './export-service.ts';

// The ledger export's keyset pages, walked by the export itself: every entry of the range once, in the ledger's
// order (createdAt, seq), however many share a millisecond across a page boundary. Its pages are the ledger list's
// own statement, oldest first, whose plan (from the cursor on, through the owner index) and cost are held by
// db/balance-transactions.test.ts and test/postgres/ledger-plans.test.ts; the figures are
// `npm run bench -- export-stream`.

let db: SqliteDatabase;

beforeEach(async () => {
  db = openDatabase(':memory:');
  const runner = new SqliteRunner(db);
  await new SqlBusinessRepository(runner).insert({ id: 'biz_a', name: 'A', kycApproved: true, createdAt: 0 });
  await new SqlBusinessRepository(runner).insert({ id: 'biz_b', name: 'B', kycApproved: true, createdAt: 0 });
  const ledger = new SqlBalanceTransactionRepository(runner);
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
    }
  }
});

afterEach(() => db.close());

/** The ids of every row of the ledger export of A in test, read in pages of `pageSize`. */
async function exported(pageSize: number, range: { createdFrom?: string; createdTo?: string } = {}) {
  const exports = new ExportService(repositoriesOn(new SqliteRunner(db)), pageSize);
  const ids: string[] = [];
  let header: unknown[] | undefined;
  for await (const page of exports.pages('balance-transactions', {
    businessId: 'biz_a',
    environment: 'test',
    ...range,
  })) {
    const rows = header ? page : page.slice(1);
    header ??= page[0];
    ids.push(...rows.map((cells) => cells[header?.indexOf('id') ?? -1] as string));
  }
  return ids;
}

describe('the ledger export', () => {
  it('gives each entry of the owner once, in (createdAt, seq) order, across ties at page boundaries', async () => {
    const expected = db
      .prepare(
        "SELECT id FROM balance_transactions WHERE business_id = 'biz_a' AND environment = 'test' ORDER BY created_at, seq",
      )
      .pluck()
      .all();
    expect(expected).toHaveLength(20);
    for (const pageSize of [1, 3, 5, 7, 100]) expect(await exported(pageSize)).toEqual(expected);
    // A range: the milliseconds 1001 and 1002 only.
    expect(
      await exported(3, { createdFrom: '1970-01-01T00:00:01.001Z', createdTo: '1970-01-01T00:00:01.003Z' }),
    ).toEqual(expected.slice(5, 15));
  });
});
