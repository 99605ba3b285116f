import { DEFAULT_TEST_PAYER_ACCOUNT } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, createSession, eventTypes, retrieveSession } from '../../../test/support/api.ts';
import { type RunningServer, startServer } from '../../../test/support/server.ts';
import { ManualClock } from '../internal/clock.ts';
import { silentLogger } from '../internal/logger.ts';
import { SimulatedBank } from './simulated-bank.ts';

let server: RunningServer;
let secretKey: string;

beforeAll(async () => {
  server = await startServer();
  secretKey = (await server.createBusiness()).keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
});

describe('simulated bank: a notification the service did not take is retried until it lands', () => {
  it('keeps the transfer queued while the service is unreachable, then pays the session once', async () => {
    // The service's own bank retries the same outbox on a real-time timer; stop it so only this test's bank,
    // on its manual clock, decides when the retry happens.
    server.service.deps.bank.stop();
    const created = await createSession(server.baseUrl, secretKey);
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    // A second view of the same bank (same books, same signing secret) whose notification address the test
    // controls: first nothing listens there (port 1 on loopback refuses at once), then the real service.
    const clock = new ManualClock();
    let notificationUrl = 'http://127.0.0.1:1/bank/notifications';
    const bank = new SimulatedBank({
      books: server.bankBooks,
      clock,
      logger: silentLogger,
      secret: server.service.config.bank.secret,
      bankName: server.service.config.bank.name,
      notificationUrl: () => notificationUrl,
    });

    const transfer = await bank.transfer(opened.virtualAccount.accountNumber, created.amount);
    expect(transfer).toMatchObject({ outcome: 'credited', amount: created.amount, notification: 'queued' });
    expect((await retrieveSession(server.baseUrl, secretKey, created.id)).status).toBe('awaiting_payment');

    notificationUrl = `${server.baseUrl}/bank/notifications`;
    await bank.retryDue(); // not due yet: the first retry waits a second
    expect((await retrieveSession(server.baseUrl, secretKey, created.id)).status).toBe('awaiting_payment');

    clock.advance(1000);
    await bank.retryDue();
    const paid = await retrieveSession(server.baseUrl, secretKey, created.id);
    expect(paid.status).toBe('successful');
    expect(paid.amount).toBe(created.amount);

    // Delivered: further passes send nothing, and the session was paid exactly once.
    clock.advance(60_000);
    await bank.retryDue();
    expect(
      (await eventTypes(server, created.id)).filter((type) => type === 'session.successful'),
    ).toHaveLength(1);
    const [outbox] = await server.bankRows<{ attempts: number; delivered_at: number | null }>(
      'SELECT attempts, delivered_at FROM bank_outbox WHERE transfer_id = ?',
      transfer.id,
    );
    expect(outbox?.attempts).toBe(1);
    expect(outbox?.delivered_at).not.toBeNull();
  });
});

describe('simulated bank: closing an account and refunding, by its own books', () => {
  const bankOver = () =>
    new SimulatedBank({
      books: server.bankBooks,
      clock: new ManualClock(),
      logger: silentLogger,
      secret: server.service.config.bank.secret,
      bankName: server.service.config.bank.name,
      notificationUrl: () => undefined,
    });

  it('answers a credit made before the close instead of "closed", and keeps answering it', async () => {
    const created = await createSession(server.baseUrl, secretKey);
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    const bank = bankOver();
    const accountNumber = opened.virtualAccount.accountNumber;
    const transfer = await bank.transfer(accountNumber, created.amount);
    // With the payer's account it came from: the ledger's entry of a credit settled by the close names it.
    const credit = {
      id: transfer.id,
      accountNumber,
      amount: created.amount,
      currency: 'NGN',
      payerAccount: DEFAULT_TEST_PAYER_ACCOUNT,
    };
    expect(await bank.closeAccount(accountNumber)).toEqual({ alreadyCredited: credit });
    expect(await bank.closeAccount(accountNumber)).toEqual({ alreadyCredited: credit });
  });

  it('closes an account nobody paid; a later transfer is returned', async () => {
    const created = await createSession(server.baseUrl, secretKey);
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    const bank = bankOver();
    expect(await bank.closeAccount(opened.virtualAccount.accountNumber)).toEqual({ closed: true });
    const late = await bank.transfer(opened.virtualAccount.accountNumber, created.amount);
    expect(late).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });
    expect(await bank.refund(late.id, 'test')).toEqual({ refused: 'not_credited' });
  });

  it('refunds a credited transfer once, in full; refuses a transfer it never made', async () => {
    const created = await createSession(server.baseUrl, secretKey, { amount: 77_700 });
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    const bank = bankOver();
    const transfer = await bank.transfer(opened.virtualAccount.accountNumber, 77_700);
    const first = await bank.refund(transfer.id, 'session_ended');
    expect(first).toEqual({
      refunded: {
        id: expect.stringMatching(/^rfd_[0-9A-Za-z]{24}$/),
        payerAccount: DEFAULT_TEST_PAYER_ACCOUNT,
        amount: 77_700,
        currency: 'NGN',
      },
    });
    expect(await bank.refund(transfer.id, 'session_ended')).toEqual(first);
    const books = await server.bankRows(
      'SELECT amount, currency, reason FROM bank_refunds WHERE transfer_id = ?',
      transfer.id,
    );
    expect(books).toEqual([{ amount: 77_700, currency: 'NGN', reason: 'session_ended' }]);
    expect(await bank.refund('trf_000000000000000000000000', 'session_ended')).toEqual({
      refused: 'unknown_transfer',
    });
  });
});
