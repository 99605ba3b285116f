import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BalanceTransaction, NotFoundError, ServicePay } from '@servicepay/node';
import { CLOSED_TEST_PAYER_ACCOUNT, type CreatedBusiness } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedBank } from '../../reference-server/src/bank/simulated-bank.ts';
import { systemClock } from '../../reference-server/src/internal/clock.ts';
import { silentLogger } from '../../reference-server/src/internal/logger.ts';
import { randomBase62 } from '../../reference-server/src/internal/random.ts';
import { bankNotification, postNotification } from '../support/api.ts';
import { type RunningServer, startServer, testDatabaseUrl } from '../support/server.ts';

// Issue 37, "the books agree with the bank": a day of payments, refunds in parts, a refund the payer's bank
// refuses, wrong amounts, transfers to closed accounts and to no account, a credit the service hears of only
// as it closes the account, a credit no session can take, and money on an account no business owns. Then every
// business's ledger is held to the simulated bank's own books (`bank_*`, which the service never reads), entry
// by entry: the transfer id, the amount and the masked payer account of each movement, nothing missing and
// nothing twice; and the balance's net is what the bank holds for the business. On SQLite one instance; on
// PostgreSQL (the `postgres` project) two instances on one database, each business's calls spread over both.

interface BankMovement {
  type: string;
  transferId: string;
  amount: number;
  payerAccount: string | null;
}

const mask = (account: string | null) => (account === null ? null : `******${account.slice(-4)}`);
const byKey = (a: BankMovement, b: BankMovement) =>
  `${a.transferId}|${a.type}|${a.amount}`.localeCompare(`${b.transferId}|${b.type}|${b.amount}`);
const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };

describe('the books agree with the bank', () => {
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-books-'));
  let servers: RunningServer[] = [];
  const shops: CreatedBusiness[] = [];
  let strayTransfer = '';

  /** The business's client on instance `n` (instances in turn). */
  const clientOf = (shop: CreatedBusiness, n: number) =>
    new ServicePay(shop.keys.test.secretKey, {
      baseUrl: (servers[n % servers.length] as RunningServer).baseUrl,
      maxRetries: 0,
    });
  const first = () => servers[0] as RunningServer;

  /** One business's day, its calls spread over the instances. */
  async function day(shop: CreatedBusiness): Promise<void> {
    const on = (n: number) => clientOf(shop, n);
    const open = async (n: number, amount: number) => {
      const created = await on(n).sessions.create({ amount, currency: 'NGN', payer });
      const opened = await on(n + 1).testHelpers.openAccount(created.id);
      return { id: created.id, account: opened.virtualAccount.accountNumber };
    };
    const pay = async (n: number, amount: number, payerAccount: string) => {
      const session = await open(n, amount);
      const transfer = await on(n).testHelpers.simulateTransfer({
        accountNumber: session.account,
        amount,
        payerAccount,
      });
      expect(transfer).toMatchObject({ outcome: 'credited', notification: 'delivered' });
      return session;
    };

    // Payments from three payers; the first refunded in three parts (two at once through both instances).
    const big = await pay(0, 120_000, '1000000001');
    const mid = await pay(1, 75_000, '1000000002');
    await pay(0, 50_000, '1000000003');
    const parts = await Promise.all([
      on(0).refunds.create(big.id, { amount: 20_000 }),
      on(1).refunds.create(big.id, { amount: 30_000 }),
    ]);
    expect(parts.map((refund) => refund.status)).toEqual(['succeeded', 'succeeded']);
    expect((await on(1).refunds.create(big.id)).amount).toBe(70_000);
    expect((await on(0).refunds.create(mid.id, { amount: 25_000 })).status).toBe('succeeded');

    // The payer's bank refuses the money back: nothing moved, so no entry.
    const closedPayer = await pay(1, 40_000, CLOSED_TEST_PAYER_ACCOUNT);
    expect((await on(0).refunds.create(closedPayer.id)).status).toBe('failed');

    // Wrong amounts, returned by the bank as they arrive; then the right amount pays.
    const wrong = await open(0, 60_000);
    for (const [n, amount] of [
      [0, 59_999],
      [1, 61_000],
    ] as const) {
      const returned = await on(n).testHelpers.simulateTransfer({
        accountNumber: wrong.account,
        amount,
        payerAccount: '2000000001',
      });
      expect(returned).toMatchObject({ outcome: 'returned', returnReason: 'amount_mismatch' });
    }
    await on(1).testHelpers.simulateTransfer({
      accountNumber: wrong.account,
      amount: 60_000,
      payerAccount: '2000000001',
    });

    // Closed accounts: one whose countdown ran out, one of a cancelled session.
    const lapsed = await open(1, 30_000);
    await on(0).testHelpers.expireAccount(lapsed.id);
    const cancelled = await open(0, 35_000);
    expect((await on(1).sessions.cancel(cancelled.id)).status).toBe('cancelled');
    for (const [n, target] of [
      [0, lapsed],
      [1, cancelled],
    ] as const) {
      const returned = await on(n).testHelpers.simulateTransfer({
        accountNumber: target.account,
        amount: n === 0 ? 30_000 : 35_000,
        payerAccount: '3000000001',
      });
      expect(returned).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });
    }

    // No account: the bank refuses the transfer, nothing is booked.
    await expect(
      on(0).testHelpers.simulateTransfer({ accountNumber: '0000000000', amount: 1_000 }),
    ).rejects.toBeInstanceOf(NotFoundError);

    // A credit whose notification cannot reach the service: it pays the session when the cancel closes the
    // account and the bank answers the credit instead.
    const unheard = await open(1, 45_000);
    await unreachableBank().transfer(unheard.account, 45_000, '4000000001');
    expect(
      (
        await on(0)
          .sessions.cancel(unheard.id)
          .catch((error) => error)
      ).statusCode,
    ).toBe(409);
    expect((await on(1).sessions.retrieve(unheard.id)).status).toBe('successful');

    // A credit the session cannot take (the notification says another currency: a bank error): recorded,
    // sent back by the bank, and both on the ledger.
    const foreign = await open(0, 65_000);
    const credited = await unreachableBank().transfer(foreign.account, 65_000, '5000000001');
    const notice = bankNotification(foreign.account, 65_000, { currency: 'USD' });
    notice.transfer.id = credited.id;
    const answer = await postNotification(servers[1 % servers.length] as RunningServer, notice);
    expect(answer.body.data).toMatchObject({ result: 'unapplied', duplicate: false });
  }

  /** The same bank over the same books, whose notifications cannot reach the service (its outbox keeps them). */
  const unreachableBank = () =>
    new SimulatedBank({
      books: first().bankBooks,
      clock: systemClock,
      logger: silentLogger,
      secret: first().service.config.bank.secret,
      bankName: 'ServicePay Test Bank',
      notificationUrl: () => undefined,
    });

  beforeAll(async () => {
    const databaseUrl = await testDatabaseUrl(join(folder, 'shared.db'));
    const config = {
      rateLimit: { perMinute: 10_000 },
      bank: { secret: randomBase62(40) },
      // The sweeps are not what is tested here; each call waits for the bank's answer itself.
      sweepIntervalMs: 3_600_000,
      ...(databaseUrl ? { databaseUrl } : {}),
    };
    servers = databaseUrl
      ? await Promise.all([
          startServer(config, { dbPath: join(folder, 'a.db') }),
          startServer(config, { dbPath: join(folder, 'b.db') }),
        ])
      : [await startServer(config, { dbPath: join(folder, 'a.db') })];
    for (const name of ['Books Shop', 'Ledger Shop']) shops.push(await first().createBusiness({ name }));
    await Promise.all(shops.map((shop) => day(shop)));

    // Money on an account the bank issued and no business owns (the service never offered it).
    const stray = await first().service.deps.bank.provisionAccount({
      environment: 'test',
      amount: 9_000,
      currency: 'NGN',
      accountName: 'Nobody',
      expiresAt: Date.now() + 600_000,
    });
    strayTransfer = (await first().service.deps.bank.transfer(stray.accountNumber, 9_000)).id;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    rmSync(folder, { recursive: true, force: true });
  });

  /** Every movement the bank's own books show on the accounts the service offered for `businessId`. */
  async function bankMovements(businessId: string): Promise<BankMovement[]> {
    const owned = `SELECT va.account_number FROM virtual_accounts va JOIN sessions s ON s.id = va.session_id
                   WHERE s.business_id = ?`;
    const transfers = await first().rows<{
      id: string;
      amount: number;
      outcome: string;
      payer_account: string | null;
      refunded: number;
    }>(
      `SELECT t.id, t.amount, t.outcome, t.payer_account,
              (SELECT count(*) FROM bank_refunds r WHERE r.transfer_id = t.id) AS refunded
       FROM bank_transfers t WHERE t.account_number IN (${owned})`,
      businessId,
    );
    const movements: BankMovement[] = [];
    for (const t of transfers) {
      const payerAccount = mask(t.payer_account);
      const movement = { transferId: t.id, payerAccount };
      if (t.outcome === 'returned') {
        movements.push({ ...movement, type: 'transfer_received', amount: t.amount });
        movements.push({ ...movement, type: 'transfer_return', amount: -t.amount });
      } else if (Number(t.refunded) > 0) {
        movements.push({ ...movement, type: 'unapplied_credit', amount: t.amount });
      } else movements.push({ ...movement, type: 'payment', amount: t.amount });
    }
    const sentBack = await first().rows<{
      transfer_id: string;
      amount: number;
      payer_account: string | null;
    }>(
      `SELECT r.transfer_id, r.amount, t.payer_account FROM bank_refunds r
       JOIN bank_transfers t ON t.id = r.transfer_id WHERE t.account_number IN (${owned})`,
      businessId,
    );
    for (const r of sentBack) {
      movements.push({
        type: 'unapplied_credit_return',
        transferId: r.transfer_id,
        amount: -r.amount,
        payerAccount: mask(r.payer_account),
      });
    }
    const refunded = await first().rows<{ transfer_id: string; amount: number; payer_account: string }>(
      `SELECT p.transfer_id, p.amount, p.payer_account FROM bank_payer_refunds p
       JOIN bank_transfers t ON t.id = p.transfer_id
       WHERE p.outcome = 'credited' AND t.account_number IN (${owned})`,
      businessId,
    );
    for (const p of refunded) {
      movements.push({
        type: 'refund',
        transferId: p.transfer_id,
        amount: -p.amount,
        payerAccount: mask(p.payer_account),
      });
    }
    return movements.sort(byKey);
  }

  /** The business's whole ledger through the API, walked page by page on instance `n`. */
  async function ledgerOf(shop: CreatedBusiness, n: number): Promise<BalanceTransaction[]> {
    const entries: BalanceTransaction[] = [];
    for await (const entry of clientOf(shop, n).balanceTransactions.list({ limit: 7 })) entries.push(entry);
    return entries;
  }

  it('each business: every movement the bank booked is one entry (transfer id, amount, masked payer), nothing more', async () => {
    // Two instances on PostgreSQL, one on SQLite: the story ran on what the project says.
    expect(servers.map((server) => server.onPostgres)).toEqual(
      process.env.SERVICEPAY_TEST_STORE === 'postgres' ? [true, true] : [false],
    );
    for (const [index, shop] of shops.entries()) {
      const bank = await bankMovements(shop.business.id);
      // The story above, as the bank saw it: 6 payments, 4 refunds paid out, 4 returned transfers (2 rows
      // each), 1 credit sent back (2 rows).
      expect(bank.filter((m) => m.type === 'payment')).toHaveLength(6);
      expect(bank.filter((m) => m.type === 'refund')).toHaveLength(4);
      expect(bank.filter((m) => m.type === 'transfer_return')).toHaveLength(4);
      expect(bank.filter((m) => m.type === 'unapplied_credit_return')).toHaveLength(1);
      expect(bank).toHaveLength(6 + 4 + 8 + 2);

      const entries = await ledgerOf(shop, index);
      expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length);
      const ledger = entries
        .map((entry) => ({
          type: String(entry.type),
          transferId: entry.transferId,
          amount: entry.amount,
          payerAccount: entry.payerAccount,
        }))
        .sort(byKey);
      expect(ledger).toEqual(bank);
      expect(entries.every((entry) => entry.environment === 'test' && entry.currency === 'NGN')).toBe(true);
      // Every payer account is the bank's, masked: never the full number.
      expect(entries.every((entry) => /^\*{6}\d{4}$/.test(entry.payerAccount ?? ''))).toBe(true);
    }
  });

  it("each business's balance: net is what the bank holds for it, on every instance", async () => {
    for (const shop of shops) {
      const owned = `SELECT va.account_number FROM virtual_accounts va JOIN sessions s ON s.id = va.session_id
                     WHERE s.business_id = ?`;
      const [held] = await first().rows<{ credited: number; sent_back: number; refunded: number }>(
        `SELECT
           (SELECT coalesce(sum(amount), 0) FROM bank_transfers
             WHERE outcome = 'credited' AND account_number IN (${owned})) AS credited,
           (SELECT coalesce(sum(r.amount), 0) FROM bank_refunds r JOIN bank_transfers t ON t.id = r.transfer_id
             WHERE t.account_number IN (${owned})) AS sent_back,
           (SELECT coalesce(sum(p.amount), 0) FROM bank_payer_refunds p JOIN bank_transfers t ON t.id = p.transfer_id
             WHERE p.outcome = 'credited' AND t.account_number IN (${owned})) AS refunded`,
        shop.business.id,
        shop.business.id,
        shop.business.id,
      );
      const holds = Number(held?.credited) - Number(held?.sent_back) - Number(held?.refunded);
      // 120k + 75k + 50k + 40k + 60k + 45k paid, 145k refunded (120k + 25k), the 65k credit in and out.
      expect(holds).toBe(390_000 - 145_000);
      for (let n = 0; n < servers.length; n++) {
        const balance = await clientOf(shop, n).balance.retrieve();
        expect(balance.currencies).toEqual([
          {
            currency: 'NGN',
            // Payments, the returned transfers as they arrived, the credit sent back.
            collected: 390_000 + (59_999 + 61_000 + 30_000 + 35_000) + 65_000,
            refunded: 145_000,
            returned: 59_999 + 61_000 + 30_000 + 35_000 + 65_000,
            net: holds,
          },
        ]);
      }
    }
  });

  it('money on an account no business owns makes no entry in any ledger', async () => {
    const [booked] = await first().rows<{ outcome: string }>(
      'SELECT outcome FROM bank_transfers WHERE id = ?',
      strayTransfer,
    );
    expect(booked?.outcome).toBe('credited');
    expect(
      await first().rows('SELECT id FROM balance_transactions WHERE transfer_id = ?', strayTransfer),
    ).toEqual([]);
    const [all] = await first().rows<{ n: number }>('SELECT count(*) AS n FROM balance_transactions');
    expect(Number(all?.n)).toBe(shops.length * 20);
  });
});
