import type { BalanceTransactionType } from '@servicepay/node/protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { type BalanceTransactionRecord, SqlBalanceTransactionRepository } from './balance-transactions.ts';
import { SqlBusinessRepository } from './businesses.ts';
import { openDatabase, type SqliteDatabase } from './database.ts';
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
    let after: number | undefined;
    for (;;) {
      const page = await ledger.listBalanceTransactions({
        businessId: 'biz_a',
        environment: 'test',
        after,
        limit: 10,
      });
      seen.push(...page.map((row) => row.id));
      if (page.length < 10) break;
      after = page.at(-1)?.seq;
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `txn_${25 - i}`));

    const oldest = await ledger.listBalanceTransactions({
      businessId: 'biz_a',
      environment: 'test',
      order: 'oldest_first',
      after: 3,
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
});
