/**
 * Seeds a database file with one business's ledger for the export benchmark, fast: one SQL statement in one
 * transaction, no service running. Entries as the ledger's writer makes them: payments (+) most of the time,
 * a refund (−) of an earlier payment now and then, a returned transfer (+ and −) rarely; NGN and some USD; one
 * entry every few seconds over the days before `now`; the payer's account masked to its last four digits.
 */
import { openDatabase } from '../../reference-server/src/db/database.ts';
import { createSqliteStore } from '../../reference-server/src/db/store.ts';
import { createBusiness } from '../../reference-server/src/index.ts';

export interface SeededLedger {
  dbPath: string;
  /** The test secret key of the business whose ledger was seeded. */
  secretKey: string;
  businessId: string;
  entries: number;
}

/**
 * Creates `dbPath` (a new file) with one business and `total` test-mode ledger entries.
 *
 * @example
 * const { dbPath, secretKey } = await seedLedger('/tmp/bench/ledger-1M.db', 1_000_000);
 */
export async function seedLedger(dbPath: string, total: number, now = Date.now()): Promise<SeededLedger> {
  const db = openDatabase(dbPath);
  try {
    const store = createSqliteStore(db, () => undefined);
    const { business, keys } = await createBusiness(store, 'Ledger Bench Shop', true, now);
    db.transaction(() => {
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @total),
           m(i, r) AS (SELECT i, (i * 48271) % 2147483647 FROM n)
         INSERT INTO balance_transactions (id, business_id, environment, type, amount, currency, session_id,
           refund_id, transfer_id, payer_account, created_at)
         SELECT printf('txn_seed%020d', i), @businessId, 'test',
           CASE WHEN r % 100 < 85 THEN 'payment' WHEN r % 100 < 97 THEN 'refund'
             WHEN i % 2 = 0 THEN 'transfer_received' ELSE 'transfer_return' END,
           (CASE WHEN r % 100 < 85 OR (r % 100 >= 97 AND i % 2 = 0) THEN 1 ELSE -1 END) * (1000 + (r % 997) * 100),
           CASE WHEN r % 10 = 0 THEN 'USD' ELSE 'NGN' END,
           NULL,
           CASE WHEN r % 100 >= 85 AND r % 100 < 97 THEN printf('rfd_seed%020d', i) ELSE NULL END,
           printf('trf_seed%020d', i),
           printf('******%04d', r % 10000),
           @now - (@total - i) * 3000
         FROM m`,
      ).run({ total, now, businessId: business.id });
    })();
    const entries = db.prepare('SELECT COUNT(*) FROM balance_transactions').pluck().get() as number;
    return { dbPath, secretKey: keys.test.secretKey, businessId: business.id, entries };
  } finally {
    db.close();
  }
}
