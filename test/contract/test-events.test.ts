import {
  constructEvent,
  generateTestEvent,
  generateTestWebhook,
  ServicePay,
  type WebhookEventType,
} from '@servicepay/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { contractFetch } from './contract-fetch.ts';

// The test events the SDK builds for a merchant's handler tests (generateTestEvent, generateTestWebhook) have the
// shape of the events the real reference server sends: every field, at every depth, of the same JSON kind. A
// handler tested on them meets nothing new in production.

const contract = contractFetch();
const payer = { name: 'Ada Lovelace', email: 'ada@example.com' };

/** Every path in a JSON value with the kind of value found there (`data.session.amount: number`). */
function shapeOf(value: unknown, path = ''): string[] {
  if (value === null) return [`${path}: null`];
  if (Array.isArray(value)) return [`${path}: array`];
  if (typeof value !== 'object') return [`${path}: ${typeof value}`];
  return Object.entries(value as Record<string, unknown>)
    .flatMap(([key, inner]) => shapeOf(inner, path === '' ? key : `${path}.${key}`))
    .sort();
}

describe('test events and the events the service sends', () => {
  let server: RunningServer;
  let servicepay: ServicePay;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secret: string;

  beforeAll(async () => {
    server = await startServer();
    const business = await server.createBusiness({ name: 'Fixture Shop' });
    servicepay = new ServicePay(business.keys.test.secretKey, {
      baseUrl: server.baseUrl,
      fetch: contract.fetch,
    });
    receiver = await startReceiver((_received, res) => res.end());
    secret = (await servicepay.webhookEndpoints.create({ url: receiver.url })).secret;
  });

  afterAll(async () => {
    await servicepay?.close();
    await receiver?.close();
    await server?.close();
  });

  const delivered = async (sessionId: string, type: WebhookEventType) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const found = receiver.received.find(
        (r) => r.body.type === type && r.body.data.session.id === sessionId,
      );
      if (found) return constructEvent(found.raw, found.headers['x-service-signature'], secret);
      if (Date.now() > deadline) throw new Error(`no ${type} for ${sessionId}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it.each([
    [
      'session.successful',
      async (id: string) => {
        await servicepay.testHelpers.pay(id);
      },
    ],
    [
      'session.mismatch',
      async (id: string) => {
        await servicepay.testHelpers.pay(id, { amount: 1_000 });
      },
    ],
    [
      'session.cancelled',
      async (id: string) => {
        await servicepay.testHelpers.openAccount(id);
        await servicepay.sessions.cancel(id);
      },
    ],
  ] as const)('a %s test event has the real one’s shape', async (type, happen) => {
    const created = await servicepay.sessions.create({
      amount: 500_000,
      currency: 'NGN',
      payer,
      metadata: { orderId: '1042' },
    });
    await happen(created.id);
    const real = await delivered(created.id, type);
    const fixture = generateTestEvent({ type, session: { metadata: { orderId: '1042' } } });
    expect(shapeOf(fixture)).toEqual(shapeOf(real));
    expect(fixture.data.session.status).toBe((real as typeof fixture).data.session.status);
  });

  it('a signed test webhook is taken by a handler as the real one is', async () => {
    // The handler of the SDK README: verify with the endpoint's secret, then read the event.
    const { payload, header, event } = generateTestWebhook({
      type: 'session.successful',
      secret,
      session: { reference: 'order-1042' },
    });
    const read = constructEvent(payload, header, secret);
    expect(read).toEqual(event);
    expect(read.type === 'session.successful' && read.data.session.reference).toBe('order-1042');
  });
});
