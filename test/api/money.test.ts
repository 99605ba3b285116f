import { WebhookEventSchema } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SimulatedBank } from '../../reference-server/src/bank/simulated-bank.ts';
import { ManualClock, silentLogger } from '../../reference-server/src/index.ts';
import {
  bankNotification,
  bootstrap,
  call,
  createSession,
  eventTypes,
  postNotification,
  retrieveSession,
} from '../support/api.ts';
import { independentlyVerify, startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The bank's books are the truth about money: a credit the bank made either pays its session, exactly once, or
// is recorded, refunded through the bank and told to the merchant. Never only logged.

let server: RunningServer;
let clock: ManualClock;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let key: string;
let webhookSecret: string;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2030-06-01T09:00:00Z'));
  server = await startServer({ rateLimit: { perMinute: 10_000 } }, { clock });
  receiver = await startReceiver();
  key = (await server.createBusiness({ name: 'Money Shop' })).keys.test.secretKey;
  webhookSecret = (
    await call(server.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url: receiver.url } })
  ).body.data.secret;
});

afterAll(async () => {
  await receiver.close();
  await server.close();
});

/**
 * The same simulated bank over the same books, whose notifications cannot reach the service yet (the service
 * is busy, the network is down): the credit is in the bank's books and its notification waits in the bank's
 * outbox for the service's own bank to retry.
 */
const unreachableBank = () =>
  new SimulatedBank({
    books: server.bankBooks,
    clock,
    logger: silentLogger,
    secret: server.service.config.bank.secret,
    bankName: 'ServicePay Test Bank',
    notificationUrl: () => undefined,
  });

async function openSession(overrides: { expiresInMinutes?: number; amount?: number } = {}) {
  const created = await createSession(server.baseUrl, key, overrides);
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  return { created, opened, accountNumber: opened.virtualAccount.accountNumber };
}

const sign = (notification: unknown) => postNotification(server, notification, { nowMs: clock.now() });

/** The bank's books for one transfer: its outcome and the refund it made, if any. */
const bankTransfer = async (transferId: string) => {
  const [row] = await server.bankRows<{
    outcome: string;
    amount: number;
    refund_id: string | null;
    refund_amount: number | null;
  }>(
    `SELECT t.outcome, t.amount, r.id AS refund_id, r.amount AS refund_amount
     FROM bank_transfers t LEFT JOIN bank_refunds r ON r.transfer_id = t.id WHERE t.id = ?`,
    transferId,
  );
  return (
    row && {
      outcome: row.outcome,
      amount: row.amount,
      refundId: row.refund_id,
      refundAmount: row.refund_amount,
    }
  );
};

const unappliedCredits = (sessionId: string) =>
  server.rows<{ id: string; transfer_id: string; amount: number; reason: string; refund_status: string }>(
    'SELECT id, transfer_id, amount, reason, refund_status FROM unapplied_credits WHERE session_id = ?',
    sessionId,
  );

const webhooksOf = (sessionId: string) =>
  receiver.received.filter((entry) => entry.body.data.session.id === sessionId);

/** Lets the service's own bank retry its outbox: the delayed notification finally arrives. */
async function bankRetries() {
  clock.advance(120_000);
  await server.service.deps.bank.retryDue();
}

describe('a notification that arrives after the session ended', () => {
  it('session lifetime: the expiry settles with the bank first; the credit pays the session, the late notification changes nothing', async () => {
    const { created, accountNumber } = await openSession({ expiresInMinutes: 10, amount: 120_000 });
    const transfer = await unreachableBank().transfer(accountNumber, 120_000);
    expect(transfer).toMatchObject({ outcome: 'credited', notification: 'queued' });

    clock.advance(10 * 60_000);
    await server.service.sweeper.sweep();
    const settled = await retrieveSession(server.baseUrl, key, created.id);
    expect(settled.status).toBe('successful');
    expect(settled.paidAt).toBe(new Date(clock.now()).toISOString());

    await bankRetries();
    const late = await server.rows<{ result: string }>(
      'SELECT result FROM bank_notifications WHERE transfer_id = ?',
      transfer.id,
    );
    expect(late).toEqual([{ result: 'credited' }]);
    expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment', 'session.successful']);
    expect(await unappliedCredits(created.id)).toEqual([]);
    expect(await bankTransfer(transfer.id)).toEqual({
      outcome: 'credited',
      amount: 120_000,
      refundId: null,
      refundAmount: null,
    });
    await vi.waitFor(() =>
      expect(webhooksOf(created.id).map((entry) => entry.body.type)).toEqual(['session.successful']),
    );
    expect(webhooksOf(created.id)[0]?.body.data.session).toMatchObject({
      status: 'successful',
      amount: 120_000,
    });
  });

  it('account countdown: the credit pays the session instead of sending it back to pending', async () => {
    const { created, accountNumber } = await openSession({ amount: 130_000 });
    const transfer = await unreachableBank().transfer(accountNumber, 130_000);
    clock.advance(30 * 60_000);
    await server.service.sweeper.sweep();
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('successful');
    await bankRetries();
    expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment', 'session.successful']);
    expect((await bankTransfer(transfer.id))?.refundId).toBeNull();
  });

  it('a new account asked for after the countdown settles the old one first: paid, no second account', async () => {
    const { created, opened, accountNumber } = await openSession({ amount: 135_000 });
    await unreachableBank().transfer(accountNumber, 135_000);
    clock.advance(30 * 60_000);
    // Before the sweeper ran: the checkout asks for a new account straight away.
    const response = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/accounts`, {
      token: opened.token,
    });
    expect(response.status).toBe(409);
    expect(response.body.meta.code).toBe('session_not_active');
    const session = await retrieveSession(server.baseUrl, key, created.id);
    expect(session.status).toBe('successful');
    expect(session.virtualAccount?.accountNumber).toBe(accountNumber);
  });

  it('two new-account requests at once after the countdown: the account both are shown takes the payer’s money', async () => {
    const { created, opened, accountNumber } = await openSession({ amount: 137_000 });
    clock.advance(30 * 60_000);
    const ask = () =>
      call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/accounts`, { token: opened.token });
    const answers = await Promise.all([ask(), ask(), ask()]);
    for (const answer of answers) expect([200, 201], answer.text).toContain(answer.status);
    const offered = new Set(answers.map((answer) => answer.body.data.virtualAccount.accountNumber));
    // One fresh account, the same for every request, and never closed at the bank by a request that came late.
    expect(offered.size).toBe(1);
    const [fresh] = [...offered];
    expect(fresh).not.toBe(accountNumber);
    const paid = await call(server.baseUrl, 'POST', '/bank/transfers', {
      json: { accountNumber: fresh, amount: 137_000 },
    });
    expect(paid.body.data).toMatchObject({ outcome: 'credited', amount: 137_000 });
    expect(await retrieveSession(server.baseUrl, key, created.id)).toMatchObject({
      status: 'successful',
      amount: 137_000,
    });
  });

  it('a merchant cancel after an unnoticed credit answers 409 and leaves the session paid', async () => {
    const { created, accountNumber } = await openSession({ amount: 140_000 });
    const transfer = await unreachableBank().transfer(accountNumber, 140_000);
    const cancel = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, {
      token: key,
    });
    expect(cancel.status).toBe(409);
    expect(cancel.body.meta.code).toBe('session_not_active');
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('successful');
    await bankRetries();
    expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment', 'session.successful']);
    expect((await bankTransfer(transfer.id))?.refundId).toBeNull();
    const audit = await server.rows<{ action: string }>(
      'SELECT action FROM audit_log WHERE target = ?',
      created.id,
    );
    expect(audit).toEqual([]);
  });
});

describe('de-duplication by transfer id', () => {
  it('a second notification of a credited transfer, under a new notification id, changes nothing', async () => {
    const { created, accountNumber } = await openSession({ amount: 150_000 });
    const first = bankNotification(accountNumber, 150_000);
    const again = { ...first, id: bankNotification(accountNumber, 1).id };
    const answers = [await sign(first), await sign(again)];
    expect(answers.map((answer) => answer.body.data)).toEqual([
      { id: first.id, result: 'credited', duplicate: false },
      { id: again.id, result: 'credited', duplicate: true },
    ]);
    clock.advance(1000);
    expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment', 'session.successful']);
    expect(await unappliedCredits(created.id)).toEqual([]);
    await vi.waitFor(() => expect(webhooksOf(created.id)).toHaveLength(1));
  });

  it('a returned transfer notified twice makes one mismatch', async () => {
    const { created, accountNumber } = await openSession({ amount: 160_000 });
    const first = bankNotification(accountNumber, 100_000, {
      outcome: 'returned',
      returnReason: 'amount_mismatch',
    });
    const again = { ...first, id: bankNotification(accountNumber, 1).id };
    expect((await sign(first)).body.data).toMatchObject({ result: 'mismatch', duplicate: false });
    expect((await sign(again)).body.data).toMatchObject({ result: 'mismatch', duplicate: true });
    expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment', 'session.mismatch']);
  });
});

describe('a credit in another currency', () => {
  it('never pays the session: recorded, refunded through the bank, told to the merchant by a signed webhook', async () => {
    const { created, accountNumber } = await openSession({ amount: 170_000 });
    // The service's own bank retries its outbox every second: held back here, or it could deliver the true
    // (NGN) notification of this transfer before the wrong one below arrives.
    server.service.deps.bank.stop();
    let answer: Awaited<ReturnType<typeof sign>>;
    let transfer: Awaited<ReturnType<ReturnType<typeof unreachableBank>['transfer']>>;
    try {
      transfer = await unreachableBank().transfer(accountNumber, 170_000);
      // The bank's notification says USD for an NGN session (a bank error): the service must not take it as paid.
      const wrong = bankNotification(accountNumber, 170_000, { currency: 'USD' });
      wrong.transfer.id = transfer.id;
      answer = await sign(wrong);
    } finally {
      server.service.deps.bank.start();
    }
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ result: 'unapplied', duplicate: false });

    const session = await retrieveSession(server.baseUrl, key, created.id);
    expect(session.status).toBe('awaiting_payment');
    expect(session.paidAt).toBeNull();
    const credits = await unappliedCredits(created.id);
    expect(credits).toEqual([
      {
        id: expect.stringMatching(/^crd_/),
        transfer_id: transfer.id,
        amount: 170_000,
        reason: 'currency_mismatch',
        refund_status: 'refunded',
      },
    ]);
    // The bank's books: the payer's 170,000 went back.
    expect(await bankTransfer(transfer.id)).toEqual({
      outcome: 'credited',
      amount: 170_000,
      refundId: expect.stringMatching(/^rfd_/),
      refundAmount: 170_000,
    });

    // The bank's own (correct) notification of the same transfer, retried later, changes nothing: it was settled.
    await bankRetries();
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('awaiting_payment');
    expect(await eventTypes(server, created.id)).toEqual([
      'session.awaiting_payment',
      'session.credit_unapplied',
    ]);

    await vi.waitFor(() => expect(webhooksOf(created.id)).toHaveLength(1));
    const [delivered] = webhooksOf(created.id);
    if (!delivered) throw new Error('unreachable');
    expect(
      independentlyVerify(delivered.raw, String(delivered.headers['x-service-signature']), webhookSecret),
    ).toBe(true);
    expect(delivered.headers['x-service-event-type']).toBe('session.credit_unapplied');
    const event = WebhookEventSchema.parse(delivered.body);
    expect(event.type).toBe('session.credit_unapplied');
    expect(event.data.session).toMatchObject({ id: created.id, status: 'awaiting_payment', amount: 170_000 });
    expect(event.data.credit).toEqual({
      id: credits[0]?.id,
      transferId: transfer.id,
      accountNumber,
      amount: 170_000,
      // As the notification told it: the currency that could not pay an NGN session.
      currency: 'USD',
      reason: 'currency_mismatch',
      refundStatus: 'refunded',
      refundId: (await bankTransfer(transfer.id))?.refundId,
      createdAt: new Date(clock.now() - 120_000).toISOString(),
    });
  });

  it('a returned transfer in another currency is not a mismatch of the session amount', async () => {
    const { created, accountNumber } = await openSession({ amount: 175_000 });
    const returned = bankNotification(accountNumber, 175_000, {
      currency: 'USD',
      outcome: 'returned',
      returnReason: 'amount_mismatch',
    });
    expect((await sign(returned)).body.data.result).toBe('not_credited');
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('awaiting_payment');
    expect(await unappliedCredits(created.id)).toEqual([]);
  });
});

describe('a credit the bank never made', () => {
  it('is recorded as unapplied but not refunded: the bank holds no such money', async () => {
    const { created, accountNumber } = await openSession({ amount: 180_000 });
    await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, { token: key });
    const forged = bankNotification(accountNumber, 180_000);
    expect((await sign(forged)).body.data.result).toBe('unapplied');
    expect(await unappliedCredits(created.id)).toEqual([
      {
        id: expect.stringMatching(/^crd_/),
        transfer_id: forged.transfer.id,
        amount: 180_000,
        reason: 'session_ended',
        refund_status: 'refund_refused',
      },
    ]);
    expect(await bankTransfer(forged.transfer.id)).toBeUndefined();
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('cancelled');
  });

  it('to an account nobody knows: recorded for the operator, with no merchant to tell', async () => {
    const forged = bankNotification('9999999999', 500);
    expect((await sign(forged)).body.data.result).toBe('unknown_account');
    const rows = await server.rows<{ business_id: string | null; reason: string; refund_status: string }>(
      'SELECT business_id, reason, refund_status FROM unapplied_credits WHERE transfer_id = ?',
      forged.transfer.id,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toEqual({
      business_id: null,
      reason: 'unknown_account',
      refund_status: 'refund_refused',
    });
  });
});

describe('a refund the bank did not answer', () => {
  it('stays pending, tells nobody yet, and the next sweep asks the bank again: refunded once, one webhook', async () => {
    const created = await createSession(server.baseUrl, key, { amount: 190_000 });
    const { accountNumber } = await bootstrap(server.baseUrl, created.clientSecret).then((opened) => ({
      accountNumber: opened.virtualAccount.accountNumber,
    }));
    server.service.deps.bank.stop();
    let transfer: Awaited<ReturnType<ReturnType<typeof unreachableBank>['transfer']>>;
    // The bank is unreachable for refunds (a real bank's API timing out) while the notification is processed.
    const refund = vi
      .spyOn(server.service.deps.bank, 'refund')
      .mockRejectedValue(new Error('connect ETIMEDOUT (the bank, simulated)'));
    try {
      transfer = await unreachableBank().transfer(accountNumber, 190_000);
      const wrong = bankNotification(accountNumber, 190_000, { currency: 'USD' });
      wrong.transfer.id = transfer.id;
      expect((await sign(wrong)).body.data).toMatchObject({ result: 'unapplied', duplicate: false });
    } finally {
      refund.mockRestore();
      server.service.deps.bank.start();
    }
    // Recorded, with the money still at the bank: no refund in its books, no event, no audit entry yet.
    expect(await unappliedCredits(created.id)).toEqual([
      expect.objectContaining({ transfer_id: transfer.id, amount: 190_000, refund_status: 'refund_pending' }),
    ]);
    expect((await bankTransfer(transfer.id))?.refundId).toBeNull();
    expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment']);

    // The sweep asks again: the bank refunds, and the outcome is recorded once, however often it is asked.
    await server.service.sweeper.sweep();
    await server.service.sweeper.sweep();
    expect(await unappliedCredits(created.id)).toEqual([
      expect.objectContaining({ transfer_id: transfer.id, refund_status: 'refunded' }),
    ]);
    expect(await bankTransfer(transfer.id)).toMatchObject({ refundAmount: 190_000 });
    expect(await eventTypes(server, created.id)).toEqual([
      'session.awaiting_payment',
      'session.credit_unapplied',
    ]);
    const audit = await server.rows<{ action: string }>(
      'SELECT action FROM audit_log WHERE target = ?',
      (await unappliedCredits(created.id))[0]?.id,
    );
    expect(audit).toEqual([{ action: 'credit.refunded' }]);
    await vi.waitFor(() => expect(webhooksOf(created.id)).toHaveLength(1));
    const event = WebhookEventSchema.parse(webhooksOf(created.id)[0]?.body);
    expect(event.data.credit).toMatchObject({ amount: 190_000, refundStatus: 'refunded' });
  });
});
