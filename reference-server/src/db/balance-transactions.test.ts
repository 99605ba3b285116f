import type { BalanceTransactionType } from '@servicepay/node/protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type BalanceTransactionRecord,
  balanceListStatement,
  type LedgerCursor,
  SqlBalanceTransactionRepository,
} from './balance-transactions.ts';
import { SqlBusinessRepository } from './businesses.ts';
import { openDatabase, type SqliteDatabase } from './database.ts';
import type { Sql } from './sql.ts';
import { SqliteRunner } from './sqlite-runner.ts';

// The ledger's repository on a real (in-memory) SQLite file migrated through the one history: keyset pages in
// both orders with every filter, totals per currency, and the unique indexes that keep a movement from being
// booked twice. The PostgreSQL side runs the same statements in test/postgres/ and the books-agree test.

let db: SqliteDatabase;
let ledger: SqlBalanceTransactionRepository;

const entry = (
  n: number,
  type: BalanceTransactionType,
  amount: number,
  extra: Partial<BalanceTransactionRecord> = {},
): Omit<BalanceTransactionRecord, 'seq'> => ({
  id: `txn_${n}`,
  businessId: 'biz_a',
  environment: 'test',
  type,
  amount,
  currency: 'NGN',
  sessionId: `ses_${n}`,
  refundId: null,
  transferId: `trf_${n}`,
  payerAccount: '******0001',
  createdAt: n * 1000,
  ...extra,
});

beforeEach(async () => {
  db = openDatabase(':memory:');
  db.pragma('foreign_keys = OFF');
  ledger = new SqlBalanceTransactionRepository(new SqliteRunner(db));
  const businesses = new SqlBusinessRepository(new SqliteRunner(db));
  await businesses.insert({ id: 'biz_a', name: 'A', kycApproved: true, createdAt: 0 });
  await businesses.insert({ id: 'biz_b', name: 'B', kycApproved: true, createdAt: 0 });
});

describe('balance transactions', () => {
  it('pages newest first and oldest first by keyset, each row once, with the filters', async () => {
    for (let n = 1; n <= 25; n++)
      await ledger.insert(entry(n, n % 5 === 0 ? 'unapplied_credit' : 'payment', 100 * n));
    await ledger.insert(entry(26, 'payment', 700, { businessId: 'biz_b' }));
    await ledger.insert(entry(27, 'payment', 700, { environment: 'live' }));

    const seen: string[] = [];
    let after: LedgerCursor | undefined;
    for (;;) {
      const page = await ledger.listBalanceTransactions({
        businessId: 'biz_a',
        environment: 'test',
        after,
        limit: 10,
      });
      seen.push(...page.map((row) => row.id));
      if (page.length < 10) break;
      after = page.at(-1);
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `txn_${25 - i}`));

    const oldest = await ledger.listBalanceTransactions({
      businessId: 'biz_a',
      environment: 'test',
      order: 'oldest_first',
      after: { seq: 3, createdAt: 3000 },
      limit: 2,
    });
    expect(oldest.map((row) => row.id)).toEqual(['txn_4', 'txn_5']);

    const credits = await ledger.listBalanceTransactions({
      businessId: 'biz_a',
      environment: 'test',
      type: 'unapplied_credit',
      limit: 100,
    });
    expect(credits.map((row) => row.id)).toEqual(['txn_25', 'txn_20', 'txn_15', 'txn_10', 'txn_5']);

    const ranged = await ledger.listBalanceTransactions({
      businessId: 'biz_a',
      environment: 'test',
      createdFrom: 10_000,
      createdTo: 12_000,
      limit: 100,
    });
    expect(ranged.map((row) => row.id)).toEqual(['txn_11', 'txn_10']);

    const bySession = await ledger.listBalanceTransactions({
      businessId: 'biz_a',
      environment: 'test',
      sessionId: 'ses_7',
      limit: 100,
    });
    expect(bySession.map((row) => [row.id, row.amount, row.payerAccount])).toEqual([
      ['txn_7', 700, '******0001'],
    ]);
  });

  it('sums collected, refunded, returned and net per currency over a range', async () => {
    await ledger.insert(entry(1, 'payment', 5000));
    await ledger.insert(entry(2, 'refund', -1200, { transferId: 'trf_1', refundId: 'rfd_1' }));
    await ledger.insert(entry(3, 'unapplied_credit', 900));
    await ledger.insert(entry(4, 'unapplied_credit_return', -900, { transferId: 'trf_3' }));
    await ledger.insert(entry(5, 'transfer_received', 300));
    await ledger.insert(entry(6, 'transfer_return', -300, { transferId: 'trf_5' }));
    await ledger.insert(entry(7, 'payment', 4000, { currency: 'USD' }));
    await ledger.insert(entry(8, 'payment', 9999, { businessId: 'biz_b' }));

    expect(await ledger.totals({ businessId: 'biz_a', environment: 'test' })).toEqual([
      { currency: 'NGN', collected: 6200, refunded: 1200, returned: 1200, net: 3800, count: 6 },
      { currency: 'USD', collected: 4000, refunded: 0, returned: 0, net: 4000, count: 1 },
    ]);
    expect(
      await ledger.totals({ businessId: 'biz_a', environment: 'test', createdFrom: 2000, createdTo: 4000 }),
    ).toEqual([{ currency: 'NGN', collected: 900, refunded: 1200, returned: 0, net: -300, count: 2 }]);
    expect(await ledger.totals({ businessId: 'biz_a', environment: 'live' })).toEqual([]);
  });

  it('refuses a second entry of one movement: the same transfer and type, or the same refund', async () => {
    await ledger.insert(entry(1, 'payment', 5000));
    await expect(ledger.insert(entry(2, 'payment', 5000, { transferId: 'trf_1' }))).rejects.toThrow(/UNIQUE/);
    await ledger.insert(entry(3, 'refund', -100, { transferId: 'trf_1', refundId: 'rfd_1' }));
    await ledger.insert(entry(4, 'refund', -100, { transferId: 'trf_1', refundId: 'rfd_2' }));
    await expect(
      ledger.insert(entry(5, 'refund', -100, { transferId: 'trf_1', refundId: 'rfd_2' })),
    ).rejects.toThrow(/UNIQUE/);
    expect((await ledger.forTransfer('trf_1')).map((row) => row.id)).toEqual(['txn_1', 'txn_3', 'txn_4']);
    expect(await ledger.find('txn_4')).toMatchObject({ amount: -100, refundId: 'rfd_2', seq: 3 });
  });

  it('reads a page of a date range, in either order, straight from the owner index: never a sort of the range', async () => {
    for (let n = 1; n <= 200; n++) await ledger.insert(entry(n, 'payment', n));
    db.exec('ANALYZE');
    for (const order of ['oldest_first', 'newest_first'] as const) {
      const query = {
        businessId: 'biz_a',
        environment: 'test' as const,
        createdFrom: 50_000,
        createdTo: 150_000,
        after: { seq: 80, createdAt: 80_000 },
        order,
        limit: 10,
      };
      const plan = ledger.explainList(query).join(' | ');
      expect(plan).toContain('USING INDEX balance_transactions_by_owner');
      expect(plan).not.toContain('TEMP B-TREE');
      const page = await ledger.listBalanceTransactions(query);
      expect(page.map((row) => row.seq)).toEqual(
        order === 'oldest_first'
          ? [81, 82, 83, 84, 85, 86, 87, 88, 89, 90]
          : [79, 78, 77, 76, 75, 74, 73, 72, 71, 70],
      );
    }
  });

  it('orders by time, then seq: an entry written later with an earlier time comes in its time', async () => {
    await ledger.insert(entry(1, 'payment', 100, { createdAt: 5_000 }));
    await ledger.insert(entry(2, 'payment', 200, { createdAt: 3_000 }));
    await ledger.insert(entry(3, 'payment', 300, { createdAt: 5_000 }));
    const oldest = await ledger.listBalanceTransactions({
      businessId: 'biz_a',
      environment: 'test',
      order: 'oldest_first',
      limit: 10,
    });
    expect(oldest.map((row) => row.id)).toEqual(['txn_2', 'txn_1', 'txn_3']);
    const afterFirst = await ledger.listBalanceTransactions({
      businessId: 'biz_a',
      environment: 'test',
      order: 'oldest_first',
      after: oldest[0],
      limit: 10,
    });
    expect(afterFirst.map((row) => row.id)).toEqual(['txn_1', 'txn_3']);
    const newest = await ledger.listBalanceTransactions({
      businessId: 'biz_a',
      environment: 'test',
      after: { seq: 3, createdAt: 5_000 },
      limit: 10,
    });
    expect(newest.map((row) => row.id)).toEqual(['txn_1', 'txn_2']);
  });
  it('walks a millisecond shared by many entries across page boundaries, each row once, in either order', async () => {
    // 20 entries of A in test, five to a millisecond, written out of time order, between B's and A's live ones.
    for (let i = 0; i < 20; i++) {
      const createdAt = 1000 + Math.floor((19 - i) / 5);
      await ledger.insert(entry(100 + i, 'payment', 100 + i, { createdAt }));
      await ledger.insert(entry(200 + i, 'payment', 100 + i, { createdAt, businessId: 'biz_b' }));
      await ledger.insert(entry(300 + i, 'payment', 100 + i, { createdAt, environment: 'live' }));
    }
    const plain = (direction: 'ASC' | 'DESC', from: number, to: number) =>
      db
        .prepare(
          `SELECT id FROM balance_transactions WHERE business_id = 'biz_a' AND environment = 'test'
           AND created_at >= ? AND created_at < ? ORDER BY created_at ${direction}, seq ${direction}`,
        )
        .pluck()
        .all(from, to);
    for (const order of ['oldest_first', 'newest_first'] as const) {
      for (const [from, to] of [
        [0, 10_000],
        [1001, 1003],
      ] as const) {
        const expected = plain(order === 'oldest_first' ? 'ASC' : 'DESC', from, to);
        expect(expected).toHaveLength(to - from > 2 ? 20 : 10);
        for (const limit of [1, 3, 5, 7, 100]) {
          const walked: string[] = [];
          let after: LedgerCursor | undefined;
          for (;;) {
            const page = await ledger.listBalanceTransactions({
              businessId: 'biz_a',
              environment: 'test',
              createdFrom: from,
              createdTo: to,
              order,
              after,
              limit,
            });
            walked.push(...page.map((row) => row.id));
            if (page.length < limit) break;
            after = page.at(-1);
          }
          expect(walked, `${order} ${from}-${to} by ${limit}`).toEqual(expected);
        }
      }
    }
  });

  it("reads a page in one statement, its index range starting at the cursor's own millisecond", async () => {
    for (let n = 1; n <= 200; n++) await ledger.insert(entry(n, 'payment', n));
    const cursor = { seq: 150, createdAt: 150_000 };
    const owner = { businessId: 'biz_a', environment: 'test' as const, after: cursor, limit: 10 };
    // Oldest first the range starts at the cursor; newest first it ends just after it. A range's own bound
    // that is already tighter stays.
    expect(balanceListStatement({ ...owner, order: 'oldest_first' }).params).toMatchObject({
      createdFrom: 150_000,
      createdTo: Number.MAX_SAFE_INTEGER,
    });
    expect(balanceListStatement({ ...owner, order: 'newest_first' }).params).toMatchObject({
      createdFrom: 0,
      createdTo: 150_001,
    });
    expect(
      balanceListStatement({ ...owner, order: 'newest_first', createdTo: 120_000 }).params,
    ).toMatchObject({
      createdTo: 120_000,
    });
    // The cursor is not looked up again: a page is the list statement alone, with no subquery.
    const sent: string[] = [];
    const inner = new SqliteRunner(db);
    const seen = <S extends Sql>(statement: S): S => {
      sent.push(statement.sqlite);
      return statement;
    };
    const counting = new SqlBalanceTransactionRepository({
      all: (statement, params) => inner.all(seen(statement), params),
      get: (statement, params) => inner.get(seen(statement), params),
      run: (statement, params) => inner.run(seen(statement), params),
    });
    for (const order of ['oldest_first', 'newest_first'] as const) {
      sent.length = 0;
      const page = await counting.listBalanceTransactions({ ...owner, order });
      expect(page.map((row) => row.seq)).toEqual(
        order === 'oldest_first'
          ? [151, 152, 153, 154, 155, 156, 157, 158, 159, 160]
          : [149, 148, 147, 146, 145, 144, 143, 142, 141, 140],
      );
      expect(sent).toHaveLength(1);
      expect(sent[0]?.match(/SELECT/g)).toHaveLength(1);
      expect(ledger.explainList({ ...owner, order })).toEqual([
        'SEARCH balance_transactions USING INDEX balance_transactions_by_owner (business_id=? AND environment=? AND created_at>? AND created_at<?)',
      ]);
    }
  });
});
