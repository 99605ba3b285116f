import {
  BalanceSchema,
  BalanceTransactionSchema,
  envelopeOf,
  listEnvelopeOf,
  PaymentLinkSchema,
  SessionSchema,
  WebhookDeliverySchema,
  WebhookEventSchema,
} from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, call, retrieveSession, testTransfer } from '../support/api.ts';
import { independentlyVerify, startReceiver } from '../support/checkout.ts';
import { checkoutLocation, openLinkPage, submitLinkForm } from '../support/link-page.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 36 and 37 together, on both stores: a one-time payment link with two payers on its page at once. The
// first to pay closes the link in the payment's own transaction; the second, whose form was loaded before
// that, is refused (410, nothing made), and the merchant's books show exactly one payment: one session through
// the link, one ledger entry, a balance of that amount, one webhook delivered and signed.

const LinkEnvelope = envelopeOf(PaymentLinkSchema);
const SessionList = listEnvelopeOf(SessionSchema);
const LedgerList = listEnvelopeOf(BalanceTransactionSchema);
const BalanceEnvelope = envelopeOf(BalanceSchema);
const DeliveryList = listEnvelopeOf(WebhookDeliverySchema);

const AMOUNT = 730_000;

let server: RunningServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let key: string;
let endpoint: { id: string; secret: string };

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000, linkSessionsPerAddress: 1_000 } });
  receiver = await startReceiver();
  key = (await server.createBusiness({ name: 'One-time Shop' })).keys.test.secretKey;
  const created = await call(server.baseUrl, 'POST', '/api/webhooks', {
    token: key,
    json: { url: receiver.url },
  });
  expect(created.status, created.text).toBe(201);
  endpoint = { id: created.body.data.id, secret: created.body.data.secret };
});

afterAll(async () => {
  await receiver.close();
  await server.close();
});

const get = async (path: string) => {
  const answer = await call(server.baseUrl, 'GET', path, { token: key });
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
};

describe('a one-time link paid by one payer while a second has its page open', () => {
  it('takes the first payment, closes with it, refuses the second payer, and books one payment', async () => {
    const created = await call(server.baseUrl, 'POST', '/api/payment-links', {
      token: key,
      json: { name: 'Invoice 81', amount: AMOUNT, currency: 'NGN', reusable: false },
    });
    expect(created.status, created.text).toBe(201);
    const link = LinkEnvelope.parse(created.body).data;

    // Both payers open the page while the link takes payments.
    const first = await openLinkPage(link.url);
    const second = await openLinkPage(link.url);
    expect([first.status, second.status]).toEqual([200, 200]);

    // The first pays the exact amount.
    const posted = await submitLinkForm(link.url, first, { name: 'Ada Lovelace', email: 'ada@example.com' });
    expect(posted.status, posted.html).toBe(303);
    const { sessionId, clientSecret } = checkoutLocation(posted.headers.get('location'));
    const opened = await bootstrap(server.baseUrl, clientSecret);
    const transfer = await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, AMOUNT);
    const paid = await retrieveSession(server.baseUrl, key, sessionId);
    expect(paid).toMatchObject({
      status: 'successful',
      amount: AMOUNT,
      currency: 'NGN',
      paymentLink: link.id,
    });

    // The link closed in the payment's own transaction: its completion is the payment's time to the ms.
    const closed = LinkEnvelope.parse(await get(`/api/payment-links/${link.id}`)).data;
    expect(closed).toMatchObject({ active: false, reusable: false });
    expect(closed.completedAt).not.toBeNull();
    expect(closed.completedAt).toBe(paid.paidAt);

    // The second payer sends the form loaded before: refused as the closed link's page (410), nothing made; the
    // page opened afresh is 410 too.
    const refused = await submitLinkForm(link.url, second, {
      name: 'Grace Hopper',
      email: 'grace@example.com',
    });
    expect(refused.status).toBe(410);
    expect(refused.headers.get('location')).toBeNull();
    expect((await openLinkPage(link.url)).status).toBe(410);

    // One session through the link, the paid one.
    const sessions = SessionList.parse(await get(`/api/widget/sessions?paymentLink=${link.id}&limit=100`));
    expect(sessions.data.map((session) => [session.id, session.status, session.amount])).toEqual([
      [sessionId, 'successful', AMOUNT],
    ]);
    const [made] = await server.rows<{ n: number }>(
      'SELECT count(*) AS n FROM sessions WHERE payment_link_id = ?',
      link.id,
    );
    expect(Number(made?.n)).toBe(1);

    // One ledger entry, the payment, and a balance of exactly it.
    const ledger = LedgerList.parse(await get('/api/balance-transactions?limit=100'));
    expect(
      ledger.data.map((entry) => [
        entry.type,
        entry.amount,
        entry.currency,
        entry.sessionId,
        entry.transferId,
      ]),
    ).toEqual([['payment', AMOUNT, 'NGN', sessionId, transfer.id]]);
    expect(ledger.pagination.hasMore).toBe(false);
    const balance = BalanceEnvelope.parse(await get('/api/balance')).data;
    expect(balance.currencies).toEqual([
      { currency: 'NGN', collected: AMOUNT, refunded: 0, returned: 0, net: AMOUNT },
    ]);

    // One webhook: session.successful for the paid session, delivered on its first attempt, signed.
    await expect
      .poll(
        async () => DeliveryList.parse(await get(`/api/webhooks/${endpoint.id}/deliveries`)).data[0]?.status,
      )
      .toBe('succeeded');
    const deliveries = DeliveryList.parse(
      await get(`/api/webhooks/${endpoint.id}/deliveries?limit=100`),
    ).data;
    expect(
      deliveries.map((delivery) => [delivery.eventType, delivery.status, delivery.attemptCount]),
    ).toEqual([['session.successful', 'succeeded', 1]]);
    expect(receiver.received).toHaveLength(1);
    const [received] = receiver.received;
    if (!received) throw new Error('no webhook received');
    expect(
      independentlyVerify(received.raw, String(received.headers['x-service-signature']), endpoint.secret),
    ).toBe(true);
    const event = WebhookEventSchema.parse(received.body);
    expect(event.id).toBe(deliveries[0]?.eventId);
    expect(event.type).toBe('session.successful');
    expect(event.data.session).toMatchObject({
      id: sessionId,
      paymentLink: link.id,
      amount: AMOUNT,
      status: 'successful',
    });
  });
  it('a session opened through it before the first payment may still be paid, as documented: both are booked, the link stays closed at the first', async () => {
    const created = await call(server.baseUrl, 'POST', '/api/payment-links', {
      token: key,
      json: { name: 'Invoice 82', amount: 41_000, currency: 'NGN', reusable: false },
    });
    const link = LinkEnvelope.parse(created.body).data;
    // Both payers get as far as the checkout (a session each) while the link is open.
    const starts = [];
    for (const email of ['ada@example.com', 'grace@example.com']) {
      const visit = await openLinkPage(link.url);
      const posted = await submitLinkForm(link.url, visit, { name: 'A Payer', email });
      expect(posted.status, posted.html).toBe(303);
      const { sessionId, clientSecret } = checkoutLocation(posted.headers.get('location'));
      starts.push({ sessionId, ...(await bootstrap(server.baseUrl, clientSecret)).virtualAccount });
    }
    const [first, second] = starts as [(typeof starts)[number], (typeof starts)[number]];
    const before = BalanceEnvelope.parse(await get('/api/balance')).data.currencies[0];
    await testTransfer(server.baseUrl, key, first.accountNumber, 41_000);
    const closedAt = LinkEnvelope.parse(await get(`/api/payment-links/${link.id}`)).data.completedAt;
    expect(closedAt).toBe((await retrieveSession(server.baseUrl, key, first.sessionId)).paidAt);
    // The bank's books are the truth about money: a transfer already on its way to an open account is taken.
    await testTransfer(server.baseUrl, key, second.accountNumber, 41_000);
    const sessions = SessionList.parse(await get(`/api/widget/sessions?paymentLink=${link.id}&limit=100`));
    expect(sessions.data.map((session) => [session.id, session.status])).toEqual([
      [second.sessionId, 'successful'],
      [first.sessionId, 'successful'],
    ]);
    const after = LinkEnvelope.parse(await get(`/api/payment-links/${link.id}`)).data;
    expect(after).toMatchObject({ active: false, completedAt: closedAt });
    for (const session of [first, second]) {
      const entries = LedgerList.parse(await get(`/api/balance-transactions?sessionId=${session.sessionId}`));
      expect(entries.data.map((entry) => [entry.type, entry.amount])).toEqual([['payment', 41_000]]);
    }
    const now = BalanceEnvelope.parse(await get('/api/balance')).data.currencies[0];
    expect((now?.net ?? 0) - (before?.net ?? 0)).toBe(82_000);
  });
});
