import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AuthenticationError,
  ConflictError,
  constructEvent,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServicePay,
  type ServicePayError,
  type WebhookEvent,
} from '@servicepay/node';
import { BootstrapResultSchema, type CreatedBusiness, envelopeOf } from '@servicepay/node/protocol';
import express from 'express';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../support/server.ts';

// The SDK against the real reference server: no mocks. Every call goes over loopback HTTP.

const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };
const randomKey = (environment: 'test' | 'live') =>
  `sk_${environment}_${randomBytes(24)
    .toString('base64url')
    .replace(/[^0-9A-Za-z]/g, 'x')
    .slice(0, 32)}`;

const rejectionOf = async (promise: PromiseLike<unknown>): Promise<ServicePayError> => {
  try {
    await promise;
  } catch (error) {
    return error as ServicePayError;
  }
  throw new Error('expected the call to reject');
};

/** What the widget does with the client secret: exchange it for a virtual account. */
const bootstrap = async (baseUrl: string, clientSecret: string) => {
  const response = await request(`${baseUrl}/api/widget/bootstrap`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientSecret }),
  });
  const body = await response.body.json();
  expect(response.statusCode).toBe(200);
  return envelopeOf(BootstrapResultSchema).parse(body).data;
};

const waitFor = async <T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('SDK contract against the reference server', () => {
  let server: RunningServer;
  let shop: CreatedBusiness;
  let other: CreatedBusiness;
  let servicepay: ServicePay;

  beforeAll(async () => {
    server = await startServer();
    shop = server.createBusiness({ name: 'Contract Shop' });
    other = server.createBusiness({ name: 'Other Shop' });
    servicepay = new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl });
  });

  afterAll(async () => {
    await servicepay?.close();
    await server?.close();
  });

  it('creates a session, the widget bootstraps it, a simulated transfer pays it', async () => {
    const created = await servicepay.sessions.create({
      amount: 250_000,
      currency: 'NGN',
      payer,
      reference: 'contract-1',
    });
    expect(created).toMatchObject({
      status: 'pending',
      environment: 'test',
      amount: 250_000,
      reference: 'contract-1',
    });
    expect(created.clientSecret).toMatch(/^cs_test_/);

    const { virtualAccount } = await bootstrap(server.baseUrl, created.clientSecret);
    await expect(servicepay.sessions.retrieve(created.id)).resolves.toMatchObject({
      status: 'awaiting_payment',
    });

    const transfer = await servicepay.testHelpers.simulateTransfer({
      accountNumber: virtualAccount.accountNumber,
      amount: 250_000,
    });
    expect(transfer).toMatchObject({ outcome: 'credited', amount: 250_000 });

    const paid = await waitFor(async () => {
      const session = await servicepay.sessions.retrieve(created.id);
      return session.status === 'successful' ? session : undefined;
    });
    expect(paid.paidAt).not.toBeNull();

    const error = await rejectionOf(servicepay.sessions.cancel(created.id));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ statusCode: 409, code: 'session_not_active' });
  });

  it('lists sessions page by page with for await', async () => {
    const reference = `list-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (
          await servicepay.sessions.create({
            amount: 1000 + i,
            currency: 'NGN',
            payer,
            reference: `${reference}-${i}`,
          })
        ).id,
      );
    }
    const first = await servicepay.sessions.list({ limit: 2, environment: 'test' });
    expect(first.data).toHaveLength(2);
    expect(first.hasMore).toBe(true);
    const seen: string[] = [];
    for await (const session of servicepay.sessions.list({ limit: 2 })) seen.push(session.id);
    expect(seen).toEqual(expect.arrayContaining(ids));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('cancels a session; cancelling it again answers it again', async () => {
    const created = await servicepay.sessions.create({ amount: 5000, currency: 'NGN', payer });
    await expect(servicepay.sessions.cancel(created.id)).resolves.toMatchObject({ status: 'cancelled' });
    await expect(servicepay.sessions.cancel(created.id)).resolves.toMatchObject({ status: 'cancelled' });
  });

  it('replays the same Idempotency-Key and body, and refuses it with another body (409)', async () => {
    const key = `order-${Date.now()}`;
    const first = await servicepay.sessions.create(
      { amount: 7000, currency: 'NGN', payer },
      { idempotencyKey: key },
    );
    const again = await servicepay.sessions.create(
      { amount: 7000, currency: 'NGN', payer },
      { idempotencyKey: key },
    );
    expect(again.id).toBe(first.id);
    const error = await rejectionOf(
      servicepay.sessions.create({ amount: 7001, currency: 'NGN', payer }, { idempotencyKey: key }),
    );
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ statusCode: 409, code: 'idempotency_key_reused' });
    expect(error.requestId).toEqual(expect.any(String));
  });

  it('maps an unknown key to AuthenticationError (401)', async () => {
    const stranger = new ServicePay(randomKey('test'), { baseUrl: server.baseUrl, maxRetries: 0 });
    const error = await rejectionOf(stranger.sessions.list());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ statusCode: 401, code: 'invalid_api_key' });
    await stranger.close();
  });

  it("maps another business's session to PermissionError (403)", async () => {
    const created = await servicepay.sessions.create({ amount: 5000, currency: 'NGN', payer });
    const otherClient = new ServicePay(other.keys.test.secretKey, { baseUrl: server.baseUrl });
    const error = await rejectionOf(otherClient.sessions.retrieve(created.id));
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ statusCode: 403, code: 'forbidden' });
    await otherClient.close();
  });

  it('maps a live key of a business without KYC to PermissionError (403)', async () => {
    const live = new ServicePay(shop.keys.live.secretKey, { baseUrl: server.baseUrl });
    expect(live.environment).toBe('live');
    const error = await rejectionOf(live.sessions.list());
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ statusCode: 403, code: 'kyc_required' });
    await live.close();
  });

  it('maps an unknown session to NotFoundError (404)', async () => {
    const error = await rejectionOf(servicepay.sessions.retrieve('ses_doesnotexist'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ statusCode: 404, code: 'not_found' });
  });

  it('maps invalid fields to InvalidRequestError (400) with the field paths', async () => {
    const error = await rejectionOf(
      servicepay.sessions.create({
        amount: 5000,
        currency: 'NGN',
        payer: { name: 'Ada', email: 'not-an-email' },
      }),
    );
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ statusCode: 400, code: 'validation_failed' });
    expect((error as InvalidRequestError).errors.map((e) => e.path)).toContain('payer.email');
  });
});

describe('SDK contract: rate limit', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ rateLimit: { perMinute: 3 } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('maps the 151st request of the minute (here the 4th) to RateLimitError with retryAfter', async () => {
    const shop = server.createBusiness();
    const client = new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.sessions.list();
    const error = await rejectionOf(client.sessions.list());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ statusCode: 429, code: 'rate_limited' });
    expect((error as RateLimitError).retryAfter).toBeGreaterThan(0);
    await client.close();
  });
});

describe('SDK contract: webhooks', () => {
  let server: RunningServer;
  let receiver: Server;
  let receiverUrl: string;
  const received: { body: Buffer; signature: string | undefined }[] = [];

  beforeAll(async () => {
    server = await startServer();
    const app = express();
    // The README's express snippet: the raw body, exactly as received.
    app.post('/webhooks/servicepay', express.raw({ type: 'application/json' }), (req, res) => {
      received.push({ body: req.body as Buffer, signature: req.get('x-service-signature') });
      res.sendStatus(204);
    });
    receiver = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/servicepay`;
  });

  afterAll(async () => {
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await server?.close();
  });

  it('manages an endpoint, receives a signed session.successful webhook and verifies it', async () => {
    const shop = server.createBusiness({ name: 'Webhook Shop' });
    const client = new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl });

    const endpoint = await client.webhookEndpoints.create({ url: receiverUrl, description: 'contract' });
    expect(endpoint).toMatchObject({ url: receiverUrl, environment: 'test', enabled: true });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const listed = await client.webhookEndpoints.list({ environment: 'test' });
    expect(listed.data.map((e) => e.id)).toContain(endpoint.id);
    await expect(client.webhookEndpoints.retrieve(endpoint.id)).resolves.toMatchObject({ id: endpoint.id });
    await expect(
      client.webhookEndpoints.update(endpoint.id, { events: ['session.successful', 'session.mismatch'] }),
    ).resolves.toMatchObject({ events: ['session.successful', 'session.mismatch'] });

    const created = await client.sessions.create({ amount: 99_000, currency: 'NGN', payer });
    const { virtualAccount } = await bootstrap(server.baseUrl, created.clientSecret);
    await client.testHelpers.simulateTransfer({
      accountNumber: virtualAccount.accountNumber,
      amount: 99_000,
    });

    const delivery = await waitFor(async () => received.find((r) => r.body.includes(created.id)));
    const event: WebhookEvent = constructEvent(delivery.body, delivery.signature, endpoint.secret);
    expect(event).toMatchObject({ type: 'session.successful', environment: 'test' });
    expect(event.data.session).toMatchObject({ id: created.id, status: 'successful' });

    const deliveries = await waitFor(async () => {
      const page = await client.webhookEndpoints.deliveries(endpoint.id, { eventId: event.id });
      return page.data.find((d) => d.status === 'succeeded');
    });
    expect(deliveries.attempts.at(-1)?.statusCode).toBe(204);

    // Resend, then verify the copy with the rolled secret and the old one side by side.
    const rolled = await client.webhookEndpoints.rollSecret(endpoint.id);
    expect(rolled.secret).not.toBe(endpoint.secret);
    const before = received.length;
    const resent = await client.events.resend(event.id, { endpointId: endpoint.id });
    expect(resent.eventId).toBe(event.id);
    expect(resent.deliveries).toHaveLength(1);
    const copy = await waitFor(async () =>
      received.length > before ? received[received.length - 1] : undefined,
    );
    expect(constructEvent(copy.body, copy.signature, [endpoint.secret, rolled.secret]).id).toBe(event.id);

    await expect(client.webhookEndpoints.delete(endpoint.id)).resolves.toEqual({
      id: endpoint.id,
      deleted: true,
    });
    const gone = await rejectionOf(client.webhookEndpoints.retrieve(endpoint.id));
    expect(gone).toBeInstanceOf(NotFoundError);
    await client.close();
  });
});
