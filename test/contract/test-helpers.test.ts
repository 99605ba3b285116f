import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ConflictError,
  constructEvent,
  NotFoundError,
  PermissionError,
  ServicePay,
  type ServicePayError,
} from '@servicepay/node';
import { type CreatedBusiness, ErrorBodySchema } from '@servicepay/node/protocol';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedBank } from '../../reference-server/src/bank/simulated-bank.ts';
import { silentLogger } from '../../reference-server/src/index.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { contractFetch } from './contract-fetch.ts';

// A merchant's automated test pays a session with the SDK alone (no browser, no widget), against the real
// reference server over loopback; every answer is held to the contract's schemas (contract-fetch.ts).
const contract = contractFetch();
const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };

const rejectionOf = async (promise: PromiseLike<unknown>): Promise<ServicePayError> => {
  try {
    await promise;
  } catch (error) {
    return error as ServicePayError;
  }
  throw new Error('expected the call to reject');
};

const waitFor = async <T>(check: () => T | undefined, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('testHelpers: paying a session with the SDK alone', () => {
  let server: RunningServer;
  let shop: CreatedBusiness;
  let other: CreatedBusiness;
  let servicepay: ServicePay;
  let receiver: Server;
  let receiverUrl: string;
  const received: { body: Buffer; signature: string | undefined }[] = [];

  /** The raw HTTP route, as a non-SDK client calls it. */
  const openRaw = (sessionId: string, key: string) =>
    contract.fetch(`${server.baseUrl}/api/test/sessions/${sessionId}/account`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });

  const errorOf = async (response: Response) => ErrorBodySchema.parse(await response.json()).meta;

  beforeAll(async () => {
    server = await startServer();
    shop = await server.createBusiness({ name: 'Test Helper Shop' });
    other = await server.createBusiness({ name: 'Other Shop', kycApproved: true });
    servicepay = new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl, fetch: contract.fetch });
    const app = express();
    app.post('/webhooks', express.raw({ type: 'application/json' }), (req, res) => {
      received.push({ body: req.body as Buffer, signature: req.get('x-service-signature') });
      res.sendStatus(204);
    });
    receiver = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  });

  afterAll(async () => {
    await servicepay?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await server?.close();
  });

  it('pay() with no amount pays the session exactly once, and the signed webhook says so', async () => {
    const endpoint = await servicepay.webhookEndpoints.create({
      url: receiverUrl,
      events: ['session.successful'],
    });
    const created = await servicepay.sessions.create({ amount: 420_000, currency: 'NGN', payer });

    const payment = await servicepay.testHelpers.pay(created.id);

    expect(payment.transfer).toMatchObject({
      outcome: 'credited',
      amount: 420_000,
      currency: 'NGN',
      notification: 'delivered',
      accountNumber: payment.virtualAccount.accountNumber,
    });
    expect(payment.session).toMatchObject({ id: created.id, status: 'successful', amount: 420_000 });
    expect(payment.session.paidAt).not.toBeNull();
    await expect(servicepay.sessions.retrieve(created.id)).resolves.toMatchObject({ status: 'successful' });

    const delivery = await waitFor(() => received.find((r) => r.body.toString().includes(created.id)));
    const event = constructEvent(delivery.body, delivery.signature ?? '', endpoint.secret);
    expect(event.type).toBe('session.successful');
    expect(event.data.session).toMatchObject({ id: created.id, status: 'successful', amount: 420_000 });
    // One credit, one event: paying again is refused, nothing more is delivered.
    const again = await rejectionOf(servicepay.testHelpers.pay(created.id));
    expect(again).toBeInstanceOf(ConflictError);
    expect(again).toMatchObject({ statusCode: 409, code: 'session_not_active' });
    const deliveries = await server.rows<{ n: number }>(
      'SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?',
      endpoint.id,
    );
    expect(deliveries).toEqual([{ n: 1 }]);
  });

  it('pay() with another amount makes the session mismatch; the exact amount then pays it', async () => {
    const created = await servicepay.sessions.create({ amount: 300_000, currency: 'NGN', payer });

    const short = await servicepay.testHelpers.pay(created.id, { amount: 299_999 });
    expect(short.transfer).toMatchObject({
      outcome: 'returned',
      returnReason: 'amount_mismatch',
      amount: 299_999,
    });
    expect(short.session.status).toBe('mismatch');
    expect(short.session.lastMismatch).toMatchObject({ expectedAmount: 300_000, receivedAmount: 299_999 });

    const paid = await servicepay.testHelpers.pay(created.id);
    // The same account: still open after the returned transfer.
    expect(paid.virtualAccount.accountNumber).toBe(short.virtualAccount.accountNumber);
    expect(paid.transfer).toMatchObject({ outcome: 'credited', amount: 300_000 });
    expect(paid.session.status).toBe('successful');
  });

  it('openAccount() does what the checkout bootstrap does: one account, and the client secret is spent', async () => {
    const created = await servicepay.sessions.create({ amount: 150_000, currency: 'NGN', payer });

    const opened = await servicepay.testHelpers.openAccount(created.id);
    expect(opened.session).toMatchObject({ id: created.id, status: 'awaiting_payment', amount: 150_000 });
    expect(opened.virtualAccount.accountNumber).toMatch(/^\d{10}$/);
    expect(opened.session.virtualAccount).toEqual(opened.virtualAccount);

    // Called again: the same account, not a second one.
    const reopened = await servicepay.testHelpers.openAccount(created.id);
    expect(reopened.virtualAccount).toEqual(opened.virtualAccount);

    // The client secret can no longer open a checkout in a browser.
    const bootstrap = await contract.fetch(`${server.baseUrl}/api/widget/bootstrap`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientSecret: created.clientSecret }),
    });
    expect(bootstrap.status).toBe(409);
    expect((await errorOf(bootstrap)).code).toBe('client_secret_already_used');
  });

  it('opens a session a checkout already opened: its current account', async () => {
    const created = await servicepay.sessions.create({ amount: 90_000, currency: 'NGN', payer });
    const bootstrap = await contract.fetch(`${server.baseUrl}/api/widget/bootstrap`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientSecret: created.clientSecret }),
    });
    const { data } = (await bootstrap.json()) as { data: { virtualAccount: { accountNumber: string } } };
    const opened = await servicepay.testHelpers.openAccount(created.id);
    expect(opened.virtualAccount.accountNumber).toBe(data.virtualAccount.accountNumber);
  });

  it('a live key is refused: by the SDK before sending, by the service with 403 test_mode_only', async () => {
    const live = new ServicePay(other.keys.live.secretKey, {
      baseUrl: server.baseUrl,
      fetch: contract.fetch,
    });
    const before = contract.seen.length;
    const refused = await rejectionOf(live.testHelpers.pay('ses_anything'));
    expect(refused).toBeInstanceOf(PermissionError);
    expect(refused).toMatchObject({ code: 'test_mode_only' });
    for (const helper of [
      () => live.testHelpers.openAccount('ses_anything'),
      () => live.testHelpers.expire('ses_anything'),
      () => live.testHelpers.expireAccount('ses_anything'),
    ]) {
      expect(await rejectionOf(helper())).toMatchObject({ code: 'test_mode_only' });
    }
    expect(contract.seen.length).toBe(before);

    const liveSession = await live.sessions.create({ amount: 10_000, currency: 'NGN', payer });
    for (const path of ['account', 'expire', 'account/expire']) {
      const response = await contract.fetch(`${server.baseUrl}/api/test/sessions/${liveSession.id}/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other.keys.live.secretKey}` },
      });
      expect(response.status).toBe(403);
      expect((await errorOf(response)).code).toBe('test_mode_only');
    }
    await expect(live.sessions.retrieve(liveSession.id)).resolves.toMatchObject({ status: 'pending' });
    await live.close();
  });

  it("another business's session is 403 forbidden and left untouched; an unknown one 404", async () => {
    const theirs = new ServicePay(other.keys.test.secretKey, {
      baseUrl: server.baseUrl,
      fetch: contract.fetch,
    });
    const session = await theirs.sessions.create({ amount: 10_000, currency: 'NGN', payer });

    const forbidden = await rejectionOf(servicepay.testHelpers.pay(session.id));
    expect(forbidden).toBeInstanceOf(PermissionError);
    expect(forbidden).toMatchObject({ statusCode: 403, code: 'forbidden' });
    await expect(theirs.sessions.retrieve(session.id)).resolves.toMatchObject({
      status: 'pending',
      virtualAccount: null,
    });

    // One at a time: a second call already rejected while the first is awaited would go unhandled meanwhile.
    for (const attempt of [
      () => servicepay.testHelpers.expire(session.id),
      () => servicepay.testHelpers.expireAccount(session.id),
    ]) {
      expect(await rejectionOf(attempt())).toMatchObject({ statusCode: 403, code: 'forbidden' });
    }
    await expect(theirs.sessions.retrieve(session.id)).resolves.toMatchObject({ status: 'pending' });
    expect(await rejectionOf(servicepay.testHelpers.expire('ses_doesnotexist'))).toMatchObject({
      statusCode: 404,
    });

    const missing = await rejectionOf(servicepay.testHelpers.openAccount('ses_doesnotexist'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ statusCode: 404, code: 'not_found' });
    await theirs.close();
  });

  it('expire() ends the session now: expired, its account closed at the bank, session.expired signed and sent once', async () => {
    const endpoint = await servicepay.webhookEndpoints.create({
      url: receiverUrl,
      events: ['session.expired'],
    });
    const created = await servicepay.sessions.create({ amount: 210_000, currency: 'NGN', payer });
    const { virtualAccount } = await servicepay.testHelpers.openAccount(created.id);

    const expired = await servicepay.testHelpers.expire(created.id);
    expect(expired).toMatchObject({ id: created.id, status: 'expired', paidAt: null });
    // Its end is now, not two hours from now.
    expect(Date.parse(expired.expiresAt)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(expired.expiresAt)).toBeGreaterThan(Date.parse(created.createdAt));

    const delivery = await waitFor(() =>
      received.find((r) => r.body.toString().includes(created.id) && r.body.toString().includes('expired')),
    );
    const event = constructEvent(delivery.body, delivery.signature ?? '', endpoint.secret);
    expect(event.type).toBe('session.expired');
    expect(event.data.session).toMatchObject({ id: created.id, status: 'expired' });
    // The account is closed at the bank: a transfer to it now is returned, and pays nothing.
    const late = await servicepay.testHelpers.simulateTransfer({
      accountNumber: virtualAccount.accountNumber,
      amount: 210_000,
    });
    expect(late).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });
    await expect(servicepay.sessions.retrieve(created.id)).resolves.toMatchObject({ status: 'expired' });

    // Once ended, it cannot expire again; nothing more is delivered.
    const again = await rejectionOf(servicepay.testHelpers.expire(created.id));
    expect(again).toBeInstanceOf(ConflictError);
    expect(again).toMatchObject({ statusCode: 409, code: 'session_not_active' });
    const deliveries = await server.rows<{ n: number }>(
      'SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?',
      endpoint.id,
    );
    expect(deliveries).toEqual([{ n: 1 }]);
  });

  it('expire() also ends a session no checkout opened yet', async () => {
    const created = await servicepay.sessions.create({ amount: 20_000, currency: 'NGN', payer });
    await expect(servicepay.testHelpers.expire(created.id)).resolves.toMatchObject({
      status: 'expired',
      virtualAccount: null,
    });
  });

  it('expireAccount() ends the countdown only: pending (account_expired), and a new account then pays', async () => {
    const created = await servicepay.sessions.create({ amount: 75_000, currency: 'NGN', payer });
    const first = await servicepay.testHelpers.openAccount(created.id);

    const pending = await servicepay.testHelpers.expireAccount(created.id);
    expect(pending).toMatchObject({ id: created.id, status: 'pending' });
    // The session itself lives on: its own end is untouched.
    expect(pending.expiresAt).toBe(created.expiresAt);
    const events = await server.rows<{ type: string; reason: string | null }>(
      'SELECT type, reason FROM events WHERE session_id = ? ORDER BY seq',
      created.id,
    );
    expect(events.at(-1)).toEqual({ type: 'session.pending', reason: 'account_expired' });
    expect(
      await servicepay.testHelpers.simulateTransfer({
        accountNumber: first.virtualAccount.accountNumber,
        amount: 75_000,
      }),
    ).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });

    // No account is open now: nothing to expire.
    const none = await rejectionOf(servicepay.testHelpers.expireAccount(created.id));
    expect(none).toBeInstanceOf(ConflictError);
    expect(none).toMatchObject({ statusCode: 409, code: 'no_open_account' });

    const paid = await servicepay.testHelpers.pay(created.id);
    expect(paid.virtualAccount.accountNumber).not.toBe(first.virtualAccount.accountNumber);
    expect(paid.session.status).toBe('successful');
    // A paid session has ended: neither clock can run out any more.
    // One at a time: a second call already rejected while the first is awaited would go unhandled meanwhile.
    for (const attempt of [
      () => servicepay.testHelpers.expire(created.id),
      () => servicepay.testHelpers.expireAccount(created.id),
    ]) {
      expect(await rejectionOf(attempt())).toMatchObject({ statusCode: 409, code: 'session_not_active' });
    }
  });

  it('expire() of an account the payer already paid at the bank: the payment wins, 409, the session is successful', async () => {
    const created = await servicepay.sessions.create({ amount: 33_000, currency: 'NGN', payer });
    const { virtualAccount } = await servicepay.testHelpers.openAccount(created.id);
    // The bank credits the account, but its notification has not reached the service yet (a bank over the
    // same books that cannot reach the service; the service's own bank retries it only after its 30 s lease).
    const unreachable = new SimulatedBank({
      books: server.service.bankBooks,
      clock: { now: () => Date.now() },
      logger: silentLogger,
      secret: 'not delivered',
      bankName: 'ServicePay Test Bank',
      notificationUrl: () => undefined,
    });
    expect(await unreachable.transfer(virtualAccount.accountNumber, 33_000)).toMatchObject({
      outcome: 'credited',
      notification: 'queued',
    });
    const refused = await rejectionOf(servicepay.testHelpers.expire(created.id));
    expect(refused).toMatchObject({ statusCode: 409, code: 'session_not_active' });
    await expect(servicepay.sessions.retrieve(created.id)).resolves.toMatchObject({ status: 'successful' });
  });

  it('a publishable key is refused, a cancelled session is not active', async () => {
    const created = await servicepay.sessions.create({ amount: 10_000, currency: 'NGN', payer });
    const publishable = await openRaw(created.id, shop.keys.test.publishableKey);
    expect(publishable.status).toBe(403);
    expect((await errorOf(publishable)).code).toBe('publishable_key_not_allowed');

    await servicepay.sessions.cancel(created.id);
    const ended = await rejectionOf(servicepay.testHelpers.openAccount(created.id));
    expect(ended).toBeInstanceOf(ConflictError);
    expect(ended).toMatchObject({ statusCode: 409, code: 'session_not_active' });
  });
});
