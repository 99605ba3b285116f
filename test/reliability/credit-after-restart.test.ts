import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, vi } from 'vitest';
import { SimulatedBank } from '../../reference-server/src/bank/simulated-bank.ts';
import { ManualClock, silentLogger } from '../../reference-server/src/index.ts';
import { bootstrap, call, createSession, retrieveSession } from '../support/api.ts';
import { independentlyVerify, startReceiver } from '../support/checkout.ts';
import { openBankBooks, startServer } from '../support/server.ts';

// The probe's restart case: the payer's transfer is credited while the service is down, the session's lifetime
// ends meanwhile, and on restart the sweeper runs before the bank's retries reach the service. The sweeper must
// settle with the bank first: the session is paid, not expired, and the bank's late notification changes nothing.

test('a credit made while the service was down pays the session on restart, once, before the sweeper could expire it', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-restart-credit-'));
  const dbPath = join(folder, 'servicepay.db');
  const clock = new ManualClock(Date.parse('2030-08-01T10:00:00Z'));
  const receiver = await startReceiver();
  try {
    const first = await startServer({}, { dbPath, clock });
    const created = await first.createBusiness({ name: 'Restart Shop' });
    const sk = created.keys.test.secretKey;
    const secret: string = (
      await call(first.baseUrl, 'POST', '/api/webhooks', { token: sk, json: { url: receiver.url } })
    ).body.data.secret;
    const session = await createSession(first.baseUrl, sk, { amount: 210_000, expiresInMinutes: 10 });
    const opened = await bootstrap(first.baseUrl, session.clientSecret);
    await first.service.close();

    // The service is down; the payer pays at the bank, which credits and queues its notification.
    const { books, close: closeBooks } = openBankBooks({
      dbPath,
      databaseUrl: first.service.config.databaseUrl,
    });
    const bank = new SimulatedBank({
      books,
      clock,
      logger: silentLogger,
      secret: 'the service is down',
      bankName: 'ServicePay Test Bank',
      notificationUrl: () => undefined,
    });
    const transfer = await bank.transfer(opened.virtualAccount.accountNumber, 210_000);
    expect(transfer).toMatchObject({ outcome: 'credited', notification: 'queued' });
    await closeBooks();

    // Back up after the session's lifetime ended: the start-up sweep runs before the bank's retries.
    clock.advance(15 * 60_000);
    const second = await startServer({}, { dbPath, clock });
    try {
      const paid = await retrieveSession(second.baseUrl, sk, session.id);
      expect(paid.status).toBe('successful');
      expect(paid.paidAt).toBe(new Date(clock.now()).toISOString());

      await second.service.deps.bank.retryDue();
      expect(
        await second.rows('SELECT result FROM bank_notifications WHERE transfer_id = ?', transfer.id),
      ).toEqual([{ result: 'credited' }]);
      // The bank's own books (its outbox, its refunds): in the SQLite file on SQLite, in PostgreSQL
      // (PostgresBankBooks) on PostgreSQL; bankRows reads them wherever they are.
      expect(
        await second.bankRows(
          'SELECT CASE WHEN delivered_at IS NULL THEN 0 ELSE 1 END AS delivered FROM bank_outbox WHERE transfer_id = ?',
          transfer.id,
        ),
      ).toEqual([{ delivered: 1 }]);
      expect(
        await second.rows(
          "SELECT type FROM events WHERE session_id = ? AND type <> 'session.awaiting_payment' ORDER BY seq",
          session.id,
        ),
      ).toEqual([{ type: 'session.successful' }]);
      expect(await second.rows('SELECT count(*) AS n FROM unapplied_credits')).toEqual([{ n: 0 }]);
      expect(await second.bankRows('SELECT count(*) AS n FROM bank_refunds')).toEqual([{ n: 0 }]);

      await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 10_000 });
      const [delivered] = receiver.received;
      if (!delivered) throw new Error('unreachable');
      expect(delivered.body.type).toBe('session.successful');
      expect(delivered.body.data.session).toMatchObject({
        id: session.id,
        status: 'successful',
        amount: 210_000,
      });
      expect(
        independentlyVerify(delivered.raw, String(delivered.headers['x-service-signature']), secret),
      ).toBe(true);
    } finally {
      await second.service.close();
    }
  } finally {
    await receiver.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
