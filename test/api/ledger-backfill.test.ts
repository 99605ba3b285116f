import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServicePay } from '@servicepay/node';
import { CLOSED_TEST_PAYER_ACCOUNT } from '@servicepay/node/protocol';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { SimulatedBank } from '../../reference-server/src/bank/simulated-bank.ts';
import { migrate } from '../../reference-server/src/db/database.ts';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { systemClock } from '../../reference-server/src/internal/clock.ts';
import { silentLogger } from '../../reference-server/src/internal/logger.ts';
import { bankNotification, postNotification } from '../support/api.ts';
import { startServer, testDatabaseUrl } from '../support/server.ts';

// Step 016 (issue 37) backfills the ledger from the movements recorded before it. Held to the code that writes
// the ledger from then on: a day of money through a running server writes its ledger; the table is then
// dropped and step 016 run again on the same data, and it must write the same entries (type, amount, currency,
// owner, session, refund, transfer, masked payer account), each once, none for what moved no money.

const folder = mkdtempSync(join(tmpdir(), 'servicepay-ledger-backfill-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const LEDGER = `SELECT business_id, environment, type, amount, currency, session_id, refund_id, transfer_id,
  payer_account FROM balance_transactions ORDER BY transfer_id, type, refund_id`;

it('step 016 writes, from the data before it, the entries the running code wrote', async () => {
  const dbPath = join(folder, 'servicepay.db');
  const server = await startServer({ rateLimit: { perMinute: 10_000 } }, { dbPath });
  const shop = await server.createBusiness({ name: 'Backfill Shop' });
  const servicepay = new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl, maxRetries: 0 });
  const payer = { name: 'Ada', email: 'ada@example.com' };
  const open = async (amount: number) => {
    const created = await servicepay.sessions.create({ amount, currency: 'NGN', payer });
    const opened = await servicepay.testHelpers.openAccount(created.id);
    return { id: created.id, account: opened.virtualAccount.accountNumber };
  };
  const transfer = (accountNumber: string, amount: number, payerAccount: string) =>
    servicepay.testHelpers.simulateTransfer({ accountNumber, amount, payerAccount });
  const unreachableBank = new SimulatedBank({
    books: server.bankBooks,
    clock: systemClock,
    logger: silentLogger,
    secret: server.service.config.bank.secret,
    bankName: 'ServicePay Test Bank',
    notificationUrl: () => undefined,
  });
  try {
    // Paid, refunded in two parts; paid from a closed payer account and refused; a wrong amount, then paid.
    const paid = await open(80_000);
    await transfer(paid.account, 80_000, '1112223334');
    await servicepay.refunds.create(paid.id, { amount: 10_000 });
    await servicepay.refunds.create(paid.id, { amount: 5_000 });
    const refused = await open(20_000);
    await transfer(refused.account, 20_000, CLOSED_TEST_PAYER_ACCOUNT);
    expect((await servicepay.refunds.create(refused.id)).status).toBe('failed');
    const wrong = await open(30_000);
    await transfer(wrong.account, 29_000, '5556667778');
    await transfer(wrong.account, 30_000, '5556667778');
    // A closed account's transfer; a credit heard of as the cancel closes the account.
    const cancelled = await open(15_000);
    await servicepay.sessions.cancel(cancelled.id);
    await transfer(cancelled.account, 15_000, '4444444444');
    const unheard = await open(16_000);
    await unreachableBank.transfer(unheard.account, 16_000, '1212121212');
    await servicepay.sessions.cancel(unheard.id).catch(() => undefined);
    // A credit no session takes (the notification misstates the currency), sent back; one the bank never made.
    const foreign = await open(17_000);
    const credited = await unreachableBank.transfer(foreign.account, 17_000, '3434343434');
    const misstated = bankNotification(foreign.account, 17_000, { currency: 'USD' });
    misstated.transfer.id = credited.id;
    expect((await postNotification(server, misstated)).body.data.result).toBe('unapplied');
    const forged = await open(18_000);
    await servicepay.sessions.cancel(forged.id);
    expect((await postNotification(server, bankNotification(forged.account, 18_000))).body.data.result).toBe(
      'unapplied',
    );
  } finally {
    await servicepay.close();
  }
  const written = await server.rows<Record<string, unknown>>(LEDGER);
  await server.close();
  // payment ×4 (80k, 20k, 30k, 16k), refund ×2 (the refused one none), two pairs of returned transfers, one
  // credit in and out: what the story moved, and nothing for the forged credit or the refused refund.
  expect(written.map((row) => row.type).sort()).toEqual(
    [
      ...['payment', 'payment', 'payment', 'payment'],
      ...['refund', 'refund'],
      ...['transfer_received', 'transfer_return', 'transfer_received', 'transfer_return'],
      ...['unapplied_credit', 'unapplied_credit_return'],
    ].sort(),
  );

  const databaseUrl = await testDatabaseUrl(dbPath);
  let backfilled: Array<Record<string, unknown>>;
  let ids: string[];
  if (databaseUrl === null) {
    const db = new Database(dbPath);
    try {
      db.exec('DROP TABLE balance_transactions; DELETE FROM schema_migrations WHERE version = 16');
      migrate(db);
      backfilled = db.prepare(LEDGER).all() as Array<Record<string, unknown>>;
      ids = db.prepare('SELECT id FROM balance_transactions ORDER BY seq').pluck().all() as string[];
    } finally {
      db.close();
    }
  } else {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    pool.on('error', () => {});
    try {
      await pool.query('DROP TABLE balance_transactions; DELETE FROM schema_migrations WHERE version = 16');
      await migratePostgres(pool);
      backfilled = (await pool.query(LEDGER)).rows.map((row) => ({ ...row, amount: Number(row.amount) }));
      ids = (await pool.query('SELECT id FROM balance_transactions ORDER BY seq')).rows.map((row) => row.id);
    } finally {
      await pool.end();
    }
  }
  expect(backfilled).toEqual(written);
  expect(ids.every((id) => /^txn_[a-z][0-9A-Za-z]{24}$/.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(written.length);
});
