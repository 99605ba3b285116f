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
  SignatureVerificationError,
  type WebhookEvent,
} from '@servicepay/node';
import {
  BootstrapResultSchema,
  type CreatedBusiness,
  envelopeOf,
  WebhookEventSchema,
} from '@servicepay/node/protocol';
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../support/server.ts';
import { contractFetch } from './contract-fetch.ts';

// The SDK against the real reference server: no mocks. Every call goes over loopback HTTP, through a fetch
// that holds every answer to the contract's schemas (contract-fetch.ts): a test fails if any answer it saw
// carries a shape, a status or a field the contract does not declare.
const contract = contractFetch();
const clientFor = (secretKey: string, baseUrl: string, options: { maxRetries?: number } = {}) =>
  new ServicePay(secretKey, { baseUrl, fetch: contract.fetch, ...options });

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
const exchange = (baseUrl: string, clientSecret: string) =>
  contract.fetch(`${baseUrl}/api/widget/bootstrap`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientSecret }),
  });

const bootstrap = async (baseUrl: string, clientSecret: string) => {
  const response = await exchange(baseUrl, clientSecret);
  expect(response.status).toBe(200);
  return envelopeOf(BootstrapResultSchema).parse(await response.json()).data;
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
    shop = await server.createBusiness({ name: 'Contract Shop' });
    other = await server.createBusiness({ name: 'Other Shop' });
    servicepay = clientFor(shop.keys.test.secretKey, server.baseUrl);
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
    const stranger = clientFor(randomKey('test'), server.baseUrl, { maxRetries: 0 });
    const error = await rejectionOf(stranger.sessions.list());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ statusCode: 401, code: 'invalid_api_key' });
    await stranger.close();
  });

  it("maps another business's session to PermissionError (403)", async () => {
    const created = await servicepay.sessions.create({ amount: 5000, currency: 'NGN', payer });
    const otherClient = clientFor(other.keys.test.secretKey, server.baseUrl);
    const error = await rejectionOf(otherClient.sessions.retrieve(created.id));
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ statusCode: 403, code: 'forbidden' });
    await otherClient.close();
  });

  it('maps a live key of a business without KYC to PermissionError (403)', async () => {
    const live = clientFor(shop.keys.live.secretKey, server.baseUrl);
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

  it.each([
    ['a negative amount', -5, 'validation_failed'],
    ['a zero amount', 0, 'validation_failed'],
    ['a fractional amount', 1.5, 'validation_failed'],
    ['a whole amount below the NGN minimum (100)', 50, 'amount_out_of_range'],
    ['a whole amount above the NGN maximum', 10_000_000_001, 'amount_out_of_range'],
  ])('answers %s as docs/protocol.md says (%s → %s, path amount)', async (_what, amount, code) => {
    const error = await rejectionOf(servicepay.sessions.create({ amount, currency: 'NGN', payer }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ statusCode: 400, code });
    expect((error as InvalidRequestError).errors.map((e) => e.path)).toEqual(['amount']);
  });

  it('keeps input strict: a list filter with a status the contract does not know is refused (400, path status)', async () => {
    const error = await rejectionOf(servicepay.sessions.list({ status: 'refunded' as never }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ statusCode: 400, code: 'validation_failed' });
    expect((error as InvalidRequestError).errors.map((e) => e.path)).toEqual(['status']);
  });

  it('names an unknown field by its path, at the top and inside payer', async () => {
    const typo = { amount: 5000, currency: 'NGN', payer, ammount: 5000 };
    const top = await rejectionOf(servicepay.sessions.create(typo as never));
    expect(top).toMatchObject({ statusCode: 400, code: 'validation_failed' });
    expect((top as InvalidRequestError).errors.map((e) => e.path)).toEqual(['ammount']);
    const nested = { amount: 5000, currency: 'NGN', payer: { ...payer, nickname: 'A', age: 3 } };
    const inner = await rejectionOf(servicepay.sessions.create(nested as never));
    expect((inner as InvalidRequestError).errors.map((e) => e.path).sort()).toEqual([
      'payer.age',
      'payer.nickname',
    ]);
  });

  it('answers a used client secret 409 even once its session is paid, and an unused one of an ended session 410', async () => {
    const paidSession = await servicepay.sessions.create({ amount: 4_000, currency: 'NGN', payer });
    const opened = await bootstrap(server.baseUrl, paidSession.clientSecret);
    await servicepay.testHelpers.simulateTransfer({
      accountNumber: opened.virtualAccount.accountNumber,
      amount: 4_000,
    });
    await expect(servicepay.sessions.retrieve(paidSession.id)).resolves.toMatchObject({
      status: 'successful',
    });
    const again = await exchange(server.baseUrl, paidSession.clientSecret);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { meta: { code: string } }).meta.code).toBe('client_secret_already_used');

    const neverOpened = await servicepay.sessions.create({ amount: 4_000, currency: 'NGN', payer });
    await servicepay.sessions.cancel(neverOpened.id);
    const ended = await exchange(server.baseUrl, neverOpened.clientSecret);
    expect(ended.status).toBe(410);
    expect(((await ended.json()) as { meta: { code: string } }).meta.code).toBe('client_secret_expired');
  });

  it('gives the request id and headers of a success, as the service sent them', async () => {
    const created = await servicepay.sessions.create({ amount: 5000, currency: 'NGN', payer });
    const before = contract.seen.length;
    const { data, response } = await servicepay.sessions.retrieve(created.id).withResponse();
    expect(data.id).toBe(created.id);
    const wire = contract.seen.slice(before).find((entry) => entry.path.endsWith(created.id));
    expect(response.requestId).toMatch(/^req_/);
    expect(response.requestId).toBe(wire?.requestId);
    expect(Number(response.headers['ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
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
    const shop = await server.createBusiness();
    const client = clientFor(shop.keys.test.secretKey, server.baseUrl, { maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.sessions.list();
    const error = await rejectionOf(client.sessions.list());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ statusCode: 429, code: 'rate_limited' });
    expect((error as RateLimitError).retryAfter).toBeGreaterThan(0);
    await client.close();
  });

  it('does not sleep on a Retry-After beyond maxRetryAfter: one 429, thrown with retryAfter, no retry sent', async () => {
    const shop = await server.createBusiness();
    // Default retries (2) and the default 5 s cap; the window's Retry-After is far longer.
    const client = clientFor(shop.keys.test.secretKey, server.baseUrl);
    for (let i = 0; i < 3; i++) await client.sessions.list();
    const before = contract.seen.length;
    const error = await rejectionOf(client.sessions.list());
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBeGreaterThan(5);
    expect(contract.seen.slice(before).map((entry) => entry.status)).toEqual([429]);
    await client.close();
  });
});

describe('SDK contract: webhooks', () => {
  let server: RunningServer;
  let receiver: Server;
  let baseReceiverUrl: string;
  const received: { path: string; body: Buffer; signature: string | undefined }[] = [];

  beforeAll(async () => {
    server = await startServer();
    const app = express();
    // The README's express snippet: the raw body, exactly as received.
    app.post('/webhooks/:name', express.raw({ type: 'application/json' }), (req, res) => {
      received.push({ path: req.path, body: req.body as Buffer, signature: req.get('x-service-signature') });
      res.sendStatus(204);
    });
    receiver = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    baseReceiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  });

  afterAll(async () => {
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await server?.close();
  });

  afterEach(() => {
    // Every webhook body the service sent is the contract's event, field for field.
    for (const { body } of received) {
      const raw: unknown = JSON.parse(body.toString('utf8'));
      expect(WebhookEventSchema.parse(raw)).toEqual(raw);
    }
  });

  /** Creates, opens and pays a session; resolves with its id once it is paid. */
  const paySession = async (client: ServicePay, amount: number) => {
    const created = await client.sessions.create({ amount, currency: 'NGN', payer });
    const { virtualAccount } = await bootstrap(server.baseUrl, created.clientSecret);
    await client.testHelpers.simulateTransfer({ accountNumber: virtualAccount.accountNumber, amount });
    return created.id;
  };

  const deliveriesTo = async (endpointId: string, eventId?: string) =>
    (
      await server.rows<{ event_id: string }>(
        'SELECT event_id FROM webhook_deliveries WHERE endpoint_id = ?',
        endpointId,
      )
    ).filter((row) => eventId === undefined || row.event_id === eventId);

  it('manages an endpoint, receives a signed session.successful webhook of the contract and verifies it', async () => {
    const shop = await server.createBusiness({ name: 'Webhook Shop' });
    const client = clientFor(shop.keys.test.secretKey, server.baseUrl);
    const url = `${baseReceiverUrl}/manage`;

    const endpoint = await client.webhookEndpoints.create({ url, description: 'contract' });
    expect(endpoint).toMatchObject({ url, environment: 'test', enabled: true });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const listed = await client.webhookEndpoints.list({ environment: 'test' });
    expect(listed.data.map((e) => e.id)).toContain(endpoint.id);
    await expect(client.webhookEndpoints.retrieve(endpoint.id)).resolves.toMatchObject({ id: endpoint.id });
    await expect(
      client.webhookEndpoints.update(endpoint.id, { events: ['session.successful', 'session.mismatch'] }),
    ).resolves.toMatchObject({ events: ['session.successful', 'session.mismatch'] });

    const sessionId = await paySession(client, 99_000);
    const delivery = await waitFor(async () => received.find((r) => r.body.includes(sessionId)));
    expect(delivery.path).toBe('/webhooks/manage');
    // The body is the contract's event, field for field (no field the contract does not declare).
    const raw: unknown = JSON.parse(delivery.body.toString('utf8'));
    expect(WebhookEventSchema.parse(raw)).toEqual(raw);
    const event: WebhookEvent = constructEvent(delivery.body, delivery.signature, endpoint.secret);
    expect(event).toMatchObject({ type: 'session.successful', environment: 'test' });
    if (event.type !== 'session.successful') throw new Error('expected session.successful');
    expect(event.data.session).toMatchObject({ id: sessionId, status: 'successful', amount: 99_000 });

    const succeeded = await waitFor(async () => {
      const page = await client.webhookEndpoints.deliveries(endpoint.id, { eventId: event.id });
      return page.data.find((d) => d.status === 'succeeded');
    });
    expect(succeeded.attempts.at(-1)?.statusCode).toBe(204);
    await client.close();
  });

  it('rolls a secret: a copy sent after the roll carries both signatures, each secret alone verifies it', async () => {
    const shop = await server.createBusiness({ name: 'Rotation Shop' });
    const client = clientFor(shop.keys.test.secretKey, server.baseUrl);
    const endpoint = await client.webhookEndpoints.create({ url: `${baseReceiverUrl}/rotation` });
    const sessionId = await paySession(client, 12_000);
    const first = await waitFor(async () =>
      received.find((r) => r.path === '/webhooks/rotation' && r.body.includes(sessionId)),
    );
    const event = constructEvent(first.body, first.signature, endpoint.secret);
    // Before the roll: one signature, by the only secret.
    expect(first.signature?.match(/v1=/g)).toHaveLength(1);

    const rolled = await client.webhookEndpoints.rollSecret(endpoint.id);
    expect(rolled.secret).toMatch(/^whsec_/);
    expect(rolled.secret).not.toBe(endpoint.secret);
    const before = received.length;
    const resent = await client.events.resend(event.id, { endpointId: endpoint.id });
    expect(resent).toEqual({ eventId: event.id, deliveries: [expect.stringMatching(/^wd_/)] });
    const copy = await waitFor(async () =>
      received.slice(before).find((r) => r.path === '/webhooks/rotation' && r.body.includes(event.id)),
    );
    // During the grace period the service signs with both: the receiver still holding only the old secret
    // keeps working, and one that already switched to the new secret works too.
    expect(copy.signature?.match(/v1=/g)).toHaveLength(2);
    expect(constructEvent(copy.body, copy.signature, endpoint.secret).id).toBe(event.id);
    expect(constructEvent(copy.body, copy.signature, rolled.secret).id).toBe(event.id);
    const stranger = `whsec_${'z'.repeat(32)}`;
    const refused = (() => {
      try {
        constructEvent(copy.body, copy.signature, stranger);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(SignatureVerificationError);
    expect(refused).toMatchObject({ code: 'webhook_signature_mismatch' });
    await client.close();
  });

  it('deletes an endpoint: the service answers { id, deleted: true }, it is gone, and later events queue nothing for it', async () => {
    const shop = await server.createBusiness({ name: 'Delete Shop' });
    const client = clientFor(shop.keys.test.secretKey, server.baseUrl);
    const doomed = await client.webhookEndpoints.create({ url: `${baseReceiverUrl}/doomed` });
    const kept = await client.webhookEndpoints.create({ url: `${baseReceiverUrl}/kept` });

    const before = contract.seen.length;
    const { data: deleted, response } = await client.webhookEndpoints.delete(doomed.id).withResponse();
    expect(deleted).toEqual({ id: doomed.id, deleted: true });
    // What the SDK returned is what the service answered (checked against DeletedWebhookEndpointSchema).
    const wire = contract.seen.slice(before).find((entry) => entry.method === 'DELETE');
    expect(wire).toMatchObject({ status: 200, requestId: response.requestId, body: { data: deleted } });

    const gone = await rejectionOf(client.webhookEndpoints.retrieve(doomed.id));
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone).toMatchObject({ statusCode: 404, code: 'not_found' });
    const listed: string[] = [];
    for await (const endpoint of client.webhookEndpoints.list()) listed.push(endpoint.id);
    expect(listed).toEqual([kept.id]);
    const again = await rejectionOf(client.webhookEndpoints.delete(doomed.id));
    expect(again).toBeInstanceOf(NotFoundError);

    const sessionId = await paySession(client, 15_000);
    const delivered = await waitFor(async () =>
      received.find((r) => r.path === '/webhooks/kept' && r.body.includes(sessionId)),
    );
    const event = constructEvent(delivered.body, delivered.signature, kept.secret);
    // Deliveries are queued in the transaction that records the event: the deleted endpoint got none.
    expect(await deliveriesTo(kept.id, event.id)).toHaveLength(1);
    expect(await deliveriesTo(doomed.id, event.id)).toHaveLength(0);
    expect(received.filter((r) => r.path === '/webhooks/doomed')).toEqual([]);
    await client.close();
  });

  it('refuses the 17th endpoint of an environment with a code of its own and the field it concerns', async () => {
    const shop = await server.createBusiness({ name: 'Busy Shop' });
    const client = clientFor(shop.keys.test.secretKey, server.baseUrl);
    for (let i = 0; i < 16; i++)
      await client.webhookEndpoints.create({ url: `${baseReceiverUrl}/many-${i}` });
    const error = await rejectionOf(client.webhookEndpoints.create({ url: `${baseReceiverUrl}/many-16` }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ statusCode: 400, code: 'webhook_endpoint_limit_reached' });
    expect((error as InvalidRequestError).errors.map((e) => e.path)).toEqual(['url']);
    const page = await client.webhookEndpoints.list({ limit: 100 });
    expect(page.data).toHaveLength(16);
    await client.close();
  });
});
