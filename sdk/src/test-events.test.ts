import { describe, expect, it } from 'vitest';
import { WebhookPayloadError } from './errors.ts';
import { WebhookEventSchema, WebhookEventTypeSchema } from './protocol/index.ts';
import { generateTestEvent } from './test-events.ts';
import {
  constructEvent,
  constructEventAsync,
  generateTestHeader,
  generateTestWebhook,
  Webhooks,
} from './webhooks.ts';

// A merchant tests a webhook handler without a server: the SDK builds a signed event of any type (issue 30), and
// a hand-written event that is not one is refused with a message naming the first field that is wrong.

const SECRET = 'whsec_test_secret';
const TYPES = WebhookEventTypeSchema.options;

const expectedStatus = {
  'session.successful': 'successful',
  'session.mismatch': 'mismatch',
  'session.expired': 'expired',
  'session.cancelled': 'cancelled',
  'session.credit_unapplied': 'expired',
  'refund.succeeded': 'successful',
  'refund.failed': 'successful',
} as const;

describe('generateTestEvent', () => {
  it.each(TYPES)('builds a %s event the contract accepts, strictly, with the status it implies', (type) => {
    const event = generateTestEvent({ type });
    expect(WebhookEventSchema.parse(event)).toEqual(event);
    expect(event.type).toBe(type);
    expect(event.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
    expect(event.data.session.status).toBe(expectedStatus[type]);
    expect(event.data.session.paidAt !== null).toBe(expectedStatus[type] === 'successful');
    expect(event.data.session.lastMismatch !== null).toBe(type === 'session.mismatch');
    expect(event.data.credit !== undefined).toBe(type === 'session.credit_unapplied');
    expect(event.data.refund?.status).toBe(
      type === 'refund.succeeded' ? 'succeeded' : type === 'refund.failed' ? 'failed' : undefined,
    );
  });

  it('holds the fields given, and makes a new event id each time', () => {
    const event = generateTestEvent({
      type: 'session.successful',
      id: 'evt_mine',
      environment: 'live',
      createdAt: '2026-11-27T10:00:00.000Z',
      session: { reference: 'order-1042', amount: 1_250_000, metadata: { orderId: '1042' } },
    });
    expect(event).toMatchObject({
      id: 'evt_mine',
      environment: 'live',
      createdAt: '2026-11-27T10:00:00.000Z',
      data: {
        session: {
          reference: 'order-1042',
          amount: 1_250_000,
          environment: 'live',
          paidAt: '2026-11-27T10:00:00.000Z',
          metadata: { orderId: '1042' },
        },
      },
    });
    expect(generateTestEvent({ type: 'session.expired' }).id).not.toBe(
      generateTestEvent({ type: 'session.expired' }).id,
    );
    const mismatch = generateTestEvent({ type: 'session.mismatch', session: { amount: 20_000 } });
    expect(mismatch.data.session.lastMismatch).toEqual({ expectedAmount: 20_000, receivedAmount: 19_000 });
    const credit = generateTestEvent({
      type: 'session.credit_unapplied',
      credit: { reason: 'account_closed' },
    });
    expect(credit.data.credit).toMatchObject({
      reason: 'account_closed',
      amount: credit.data.session.amount,
      accountNumber: credit.data.session.virtualAccount?.accountNumber,
    });
  });

  it('refuses a type it does not know, naming the ones it does', () => {
    expect(() => generateTestEvent({ type: 'session.refunded' as 'session.expired' })).toThrow(
      /unknown event type "session.refunded"; one of session.successful, /,
    );
  });
});

describe('generateTestWebhook', () => {
  it.each(TYPES)('signs a %s event that constructEvent returns as it was built', async (type) => {
    const webhook = generateTestWebhook({ type, secret: SECRET, session: { reference: 'order-7' } });
    expect(webhook.payload).toBe(JSON.stringify(webhook.event));
    expect(webhook.headers).toEqual({
      'content-type': 'application/json',
      'x-service-signature': webhook.header,
    });
    expect(constructEvent(webhook.payload, webhook.header, SECRET)).toEqual(webhook.event);
    expect(await constructEventAsync(webhook.payload, webhook.header, SECRET)).toEqual(webhook.event);
    expect(webhook.event.data.session.reference).toBe('order-7');
  });

  it('signs with the timestamp given, which a receiver then refuses as too old', () => {
    const webhook = generateTestWebhook({
      type: 'session.cancelled',
      secret: SECRET,
      timestamp: Math.floor(Date.now() / 1000) - 3_600,
    });
    expect(webhook.header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(() => constructEvent(webhook.payload, webhook.header, SECRET)).toThrow(
      expect.objectContaining({ code: 'webhook_timestamp_out_of_tolerance' }),
    );
    expect(() => constructEvent(webhook.payload, webhook.header, 'whsec_other')).toThrow(
      expect.objectContaining({ code: 'webhook_signature_mismatch' }),
    );
  });

  it('is on servicepay.webhooks too', () => {
    const webhooks = new Webhooks();
    const { payload, header } = webhooks.generateTestWebhook({ type: 'session.expired', secret: SECRET });
    expect(webhooks.constructEvent(payload, header, SECRET).type).toBe('session.expired');
    expect(webhooks.generateTestEvent({ type: 'session.mismatch' }).type).toBe('session.mismatch');
  });
});

describe('a signed body that is not an event', () => {
  const complete = () => generateTestEvent({ type: 'session.successful' });
  const without = (path: string[]) => {
    const event = complete() as unknown as Record<string, unknown>;
    let parent = event;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
    delete parent[path.at(-1) as string];
    return event;
  };

  it.each([
    ['an event with no id', without(['id']), 'is not an event: id is missing.'],
    ['an event with no createdAt', without(['createdAt']), 'is not an event: createdAt is missing.'],
    ['an event with no data', without(['data']), 'is not an event: data is missing.'],
    ['a JSON array', [complete()], 'is not an event: the body is an array, not an object.'],
    [
      'a known type whose session has no amount',
      without(['data', 'session', 'amount']),
      'is not a valid session.successful event: data.session.amount is missing.',
    ],
    [
      'a known type whose amount is a string',
      { ...complete(), data: { session: { ...complete().data.session, amount: '500000' } } },
      'is not a valid session.successful event: data.session.amount is invalid (',
    ],
    [
      'a known type without its session',
      { ...complete(), data: {} },
      'is not a valid session.successful event: data.session is missing.',
    ],
  ])('is refused naming the first field that is wrong: %s', async (_label, body, wording) => {
    const payload = JSON.stringify(body);
    const header = generateTestHeader({ payload, secret: SECRET });
    for (const verify of [constructEvent, constructEventAsync]) {
      const error = await Promise.resolve()
        .then(() => verify(payload, header, SECRET))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebhookPayloadError);
      expect(error).toMatchObject({ code: 'webhook_payload_invalid' });
      expect((error as Error).message).toContain(wording);
    }
  });
});
