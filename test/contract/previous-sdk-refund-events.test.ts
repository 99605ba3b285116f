import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, paySession } from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { WebhookEventTypeSchema } from './sdk-before-refunds/protocol/index.ts';
import { constructEvent } from './sdk-before-refunds/webhooks.ts';

// Issue 26 adds `refund.succeeded` and `refund.failed`. A merchant on the SDK released before them must still
// verify and receive them, as unknown events, without a throw (a throw answers 400 and the service retries
// for days). The SDK here is that one, fed the webhooks the service really delivers: `sdk-before-refunds/` holds
// its webhook modules frozen as they were released (its README says from where, and why a copy rather than
// `git archive`: CI's clone carries no history).

let server: RunningServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  server = await startServer();
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver.close();
  await server.close();
});

it('the SDK of the version before refunds receives refund.succeeded and refund.failed as unknown events', async () => {
  expect(WebhookEventTypeSchema.options).not.toContain('refund.succeeded');

  const key = (await server.createBusiness({ name: 'Old SDK Shop' })).keys.test.secretKey;
  const secret = (
    await call(server.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url: receiver.url } })
  ).body.data.secret as string;
  const paid = await paySession(server.baseUrl, key, { amount: 10_000 });
  const refunded = await call(server.baseUrl, 'POST', `/api/widget/sessions/${paid.id}/refunds`, {
    token: key,
    json: { amount: 4_000 },
  });
  expect(refunded.status, refunded.text).toBe(201);
  const created = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
    token: key,
    json: { amount: 5_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
  });
  const opened = await call(server.baseUrl, 'POST', `/api/test/sessions/${created.body.data.id}/account`, {
    token: key,
  });
  await call(server.baseUrl, 'POST', '/api/test/transfers', {
    token: key,
    json: {
      accountNumber: opened.body.data.virtualAccount.accountNumber,
      amount: 5_000,
      payerAccount: '0000000404',
    },
  });
  const failed = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.body.data.id}/refunds`, {
    token: key,
    json: {},
  });
  expect(failed.body.data.status).toBe('failed');

  const refundHooks = () => receiver.received.filter((hook) => String(hook.body.type).startsWith('refund.'));
  const until = Date.now() + 10_000;
  while (refundHooks().length < 2 && Date.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 25));
  expect(
    refundHooks()
      .map((hook) => hook.body.type)
      .sort(),
  ).toEqual(['refund.failed', 'refund.succeeded']);
  for (const hook of refundHooks()) {
    const event = constructEvent(hook.raw, String(hook.headers['x-service-signature']), secret);
    expect(String(event.type)).toBe(hook.body.type);
    expect(event.id).toBe(hook.body.id);
    expect((event.data as { refund?: { amount?: number } }).refund?.amount).toBe(
      hook.body.type === 'refund.succeeded' ? 4_000 : 5_000,
    );
  }
});
