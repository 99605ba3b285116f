import { envelopeOf, NewAccountResultSchema } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../reference-server/src/index.ts';
import { signPayload } from '../../reference-server/src/internal/signature.ts';
import {
  bankNotification,
  bootstrap,
  call,
  createSession,
  eventTypes,
  expectError,
  postNotification,
  retrieveSession,
  testTransfer,
} from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The bank side: signed notifications, de-duplication, mismatch then exact, and money after the end.

let server: RunningServer;
let clock: ManualClock;
let key: string;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2030-05-01T12:00:00Z'));
  server = await startServer({ rateLimit: { perMinute: 10_000 } }, { clock });
  key = (await server.createBusiness({ name: 'Bank Shop' })).keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
});

async function openSession(overrides: { expiresInMinutes?: number; amount?: number } = {}) {
  const created = await createSession(server.baseUrl, key, overrides);
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  return { created, opened, accountNumber: opened.virtualAccount.accountNumber };
}

const notificationRows = (id: string) =>
  server.rows<{ result: string }>('SELECT result FROM bank_notifications WHERE id = ?', id);

const sign = (notification: unknown) => postNotification(server, notification, { nowMs: clock.now() });

describe('POST /bank/notifications', () => {
  it('makes one transition of 50 concurrent copies of one notification, answering all of them 2xx', async () => {
    const { created, accountNumber } = await openSession();
    const notification = bankNotification(accountNumber, created.amount);
    const responses = await Promise.all(Array.from({ length: 50 }, () => sign(notification)));
    expect(responses.every((response) => response.status >= 200 && response.status < 300)).toBe(true);
    expect(responses.filter((response) => response.body.data.duplicate === false)).toHaveLength(1);
    expect(new Set(responses.map((response) => response.body.data.result))).toEqual(new Set(['credited']));
    expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment', 'session.successful']);
    expect(await notificationRows(notification.id)).toEqual([{ result: 'credited' }]);
    const session = await retrieveSession(server.baseUrl, key, created.id);
    expect(session.status).toBe('successful');
    expect(session.paidAt).toBe(new Date(clock.now()).toISOString());
  });

  it('makes one transition of two different notifications paying the same session concurrently', async () => {
    const { created, accountNumber } = await openSession();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => sign(bankNotification(accountNumber, created.amount))),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(
      (await eventTypes(server, created.id)).filter((type) => type === 'session.successful'),
    ).toHaveLength(1);
  });

  describe('refuses before reading the body, changing nothing', () => {
    it.each([
      ['signed with another secret', { secret: 'not-the-bank', age: 0 }],
      ['more than 300 s old', { secret: undefined, age: 301 }],
      ['more than 300 s in the future', { secret: undefined, age: -301 }],
    ])('a notification %s → 401 invalid_signature', async (_what, { secret, age }) => {
      const { created, accountNumber } = await openSession();
      const notification = bankNotification(accountNumber, created.amount);
      const response = await postNotification(server, notification, {
        ...(secret === undefined ? {} : { secret }),
        timestampSeconds: Math.floor(clock.now() / 1000) - age,
      });
      expectError(response, 401, 'invalid_signature');
      expect(await notificationRows(notification.id)).toEqual([]);
      expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('awaiting_payment');
      expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment']);
    });

    it('accepts a timestamp 300 s old (the tolerance is inclusive)', async () => {
      const { created, accountNumber } = await openSession();
      const response = await postNotification(server, bankNotification(accountNumber, created.amount), {
        timestampSeconds: Math.floor(clock.now() / 1000) - 300,
      });
      expect(response.status, response.text).toBe(200);
    });

    it('a body changed after signing → 401', async () => {
      const { created, accountNumber } = await openSession();
      const signedBody = JSON.stringify(bankNotification(accountNumber, 1));
      const tampered = signedBody.replace('"amount":1,', `"amount":${created.amount},`);
      expect(tampered).not.toBe(signedBody);
      const response = await call(server.baseUrl, 'POST', '/bank/notifications', {
        raw: tampered,
        headers: {
          'content-type': 'application/json',
          'x-bank-signature': signPayload(
            signedBody,
            [server.service.config.bank.secret],
            Math.floor(clock.now() / 1000),
          ),
        },
      });
      expectError(response, 401, 'invalid_signature');
      expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('awaiting_payment');
    });

    it.each([
      ['no header', undefined],
      ['an empty header', ''],
      ['no v1', 't=1'],
      ['no t', `v1=${'0'.repeat(64)}`],
      ['garbage', 'garbage'],
    ])('%s → 401 invalid_signature', async (_what, header) => {
      const response = await call(server.baseUrl, 'POST', '/bank/notifications', {
        raw: '{}',
        headers: {
          'content-type': 'application/json',
          ...(header === undefined ? {} : { 'x-bank-signature': header }),
        },
      });
      expectError(response, 401, 'invalid_signature');
    });
  });

  it('a signed body that is not JSON → 400 malformed_json; not a notification → 400 validation_failed', async () => {
    const t = Math.floor(clock.now() / 1000);
    const secret = server.service.config.bank.secret;
    const notJson = await call(server.baseUrl, 'POST', '/bank/notifications', {
      raw: '{"id":',
      headers: { 'content-type': 'application/json', 'x-bank-signature': signPayload('{"id":', [secret], t) },
    });
    expectError(notJson, 400, 'malformed_json');
    const wrongShape = await sign({ id: 'ntf_x', type: 'transfer.received' });
    expectError(wrongShape, 400, 'validation_failed');
  });

  it('records a notification for an account it does not know, and answers 2xx so the bank stops retrying', async () => {
    const notification = bankNotification('1234567890', 100);
    const response = await sign(notification);
    expect(response.status).toBe(200);
    expect(response.body.data.result).toBe('unknown_account');
    expect(await notificationRows(notification.id)).toEqual([{ result: 'unknown_account' }]);
  });
});

describe('mismatch, then the exact amount', () => {
  it('moves to mismatch with expected/received, then to successful with paidAt', async () => {
    const { created, accountNumber } = await openSession({ amount: 250_000 });
    const wrong = await testTransfer(server.baseUrl, key, accountNumber, 200_000);
    expect(wrong).toMatchObject({
      outcome: 'returned',
      returnReason: 'amount_mismatch',
      notification: 'delivered',
    });
    const mismatched = await retrieveSession(server.baseUrl, key, created.id);
    expect(mismatched.status).toBe('mismatch');
    expect(mismatched.lastMismatch).toEqual({ expectedAmount: 250_000, receivedAmount: 200_000 });
    expect(mismatched.paidAt).toBeNull();

    clock.advance(60_000);
    const exact = await testTransfer(server.baseUrl, key, accountNumber, 250_000);
    expect(exact).toMatchObject({ outcome: 'credited', returnReason: null, notification: 'delivered' });
    const paid = await retrieveSession(server.baseUrl, key, created.id);
    expect(paid.status).toBe('successful');
    expect(paid.paidAt).toBe(new Date(clock.now()).toISOString());
    expect(await eventTypes(server, created.id)).toEqual([
      'session.awaiting_payment',
      'session.mismatch',
      'session.successful',
    ]);

    // Single use: the account takes nothing more, and the session stays paid once.
    const after = await testTransfer(server.baseUrl, key, accountNumber, 250_000);
    expect(after).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });
    expect(
      (await eventTypes(server, created.id)).filter((type) => type === 'session.successful'),
    ).toHaveLength(1);
  });
});

describe('money after the end', () => {
  it('a transfer after cancel is recorded, not credited; the session stays cancelled', async () => {
    const { created, accountNumber } = await openSession();
    expect(
      (await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, { token: key }))
        .status,
    ).toBe(200);
    const transfer = await testTransfer(server.baseUrl, key, accountNumber, created.amount);
    expect(transfer).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });
    // Even a bank that wrongly credits the closed account does not pay the session: the credit is recorded
    // as unapplied (not only logged) and the merchant told.
    const forged = bankNotification(accountNumber, created.amount);
    const response = await sign(forged);
    expect(response.status).toBe(200);
    expect(response.body.data.result).toBe('unapplied');
    expect(await notificationRows(forged.id)).toEqual([{ result: 'unapplied' }]);
    const session = await retrieveSession(server.baseUrl, key, created.id);
    expect(session.status).toBe('cancelled');
    expect(session.paidAt).toBeNull();
    expect(await eventTypes(server, created.id)).toEqual([
      'session.awaiting_payment',
      'session.cancelled',
      'session.credit_unapplied',
    ]);
  });

  it('a transfer after the session expired is recorded, not credited; the session stays expired', async () => {
    const { created, accountNumber } = await openSession({ expiresInMinutes: 10 });
    clock.advance(10 * 60_000);
    await server.service.sweeper.sweep();
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('expired');
    const transfer = await testTransfer(server.baseUrl, key, accountNumber, created.amount);
    expect(transfer.outcome).toBe('returned');
    const forged = await sign(bankNotification(accountNumber, created.amount));
    expect(forged.body.data.result).toBe('unapplied');
    const session = await retrieveSession(server.baseUrl, key, created.id);
    expect(session.status).toBe('expired');
    expect(session.paidAt).toBeNull();
  });

  it('a transfer after the lifetime but before the sweep is not credited either', async () => {
    const { created, accountNumber } = await openSession({ expiresInMinutes: 10 });
    clock.advance(10 * 60_000);
    const transfer = await testTransfer(server.baseUrl, key, accountNumber, created.amount);
    expect(transfer.outcome).toBe('returned');
    await server.service.sweeper.sweep();
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('expired');
  });
});

describe('account expiry (the countdown) and a new account', () => {
  it('sends the session back to pending; a new account is offered; the old one no longer credits', async () => {
    const { created, opened, accountNumber: oldAccount } = await openSession();
    expect(Date.parse(opened.virtualAccount.expiresAt) - clock.now()).toBe(30 * 60_000);
    clock.advance(30 * 60_000);
    await server.service.sweeper.sweep();
    const pending = await retrieveSession(server.baseUrl, key, created.id);
    expect(pending.status).toBe('pending');
    const [reason] = await server.rows(
      'SELECT type, reason FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1',
      created.id,
    );
    expect(reason).toEqual({ type: 'session.pending', reason: 'account_expired' });

    const response = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/accounts`, {
      token: opened.token,
    });
    expect(response.status, response.text).toBe(201);
    const renewed = envelopeOf(NewAccountResultSchema).parse(response.body).data;
    expect(renewed.virtualAccount.accountNumber).not.toBe(oldAccount);
    expect(renewed.session.status).toBe('awaiting_payment');

    const toOld = await testTransfer(server.baseUrl, key, oldAccount, created.amount);
    expect(toOld).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });
    const forged = await sign(bankNotification(oldAccount, created.amount));
    expect(forged.body.data.result).toBe('unapplied');
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('awaiting_payment');

    await testTransfer(server.baseUrl, key, renewed.virtualAccount.accountNumber, created.amount);
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('successful');
  });

  it('the last account of a session ends with the session, not 30 minutes later', async () => {
    const { created, opened } = await openSession({ expiresInMinutes: 10 });
    expect(opened.virtualAccount.expiresAt).toBe(new Date(Date.parse(created.expiresAt)).toISOString());
  });

  it('no new account for a session that has ended', async () => {
    const { created, opened } = await openSession();
    await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, { token: key });
    expectError(
      await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/accounts`, {
        token: opened.token,
      }),
      409,
      'session_not_active',
    );
  });
});
