import {
  CLOSED_TEST_PAYER_ACCOUNT,
  DEFAULT_TEST_PAYER_ACCOUNT,
  envelopeOf,
  listEnvelopeOf,
  RefundSchema,
  WebhookEventSchema,
} from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServicePay } from '../../sdk/src/index.ts';
import { bootstrap, call, createSession, expectError, paySession, retrieveSession } from '../support/api.ts';
import { independentlyVerify, startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 26: a merchant sends a payer's money back, in part or in full. The money is checked on both sides:
// the service's refunds and session, and the simulated bank's books (the payer's account credited back).

const RefundEnvelope = envelopeOf(RefundSchema);
const RefundList = listEnvelopeOf(RefundSchema);

let server: RunningServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let key: string;
let webhookSecret: string;

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  receiver = await startReceiver();
  key = (await server.createBusiness({ name: 'Refund Shop' })).keys.test.secretKey;
  webhookSecret = (
    await call(server.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url: receiver.url } })
  ).body.data.secret;
});

afterAll(async () => {
  await receiver.close();
  await server.close();
});

const refund = (
  sessionId: string,
  json: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) => call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/refunds`, { token: key, json, headers });

/** Pays a new session from `payerAccount` and answers the successful session. */
async function paidSession(amount: number, payerAccount?: string) {
  const created = await createSession(server.baseUrl, key, { amount });
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  const transfer = await call(server.baseUrl, 'POST', '/api/test/transfers', {
    token: key,
    json: {
      accountNumber: opened.virtualAccount.accountNumber,
      amount,
      ...(payerAccount ? { payerAccount } : {}),
    },
  });
  expect(transfer.status, transfer.text).toBe(200);
  const session = await retrieveSession(server.baseUrl, key, created.id);
  expect(session.status).toBe('successful');
  return session;
}

/** The bank's books: every refund it made of the transfer that paid `sessionId`, to the payer's account. */
const bankRefundsOf = (sessionId: string) =>
  server.bankRows<{ id: string; payer_account: string; amount: number; outcome: string }>(
    `SELECT p.id, p.payer_account, p.amount, p.outcome FROM bank_payer_refunds p
     JOIN refunds r ON r.id = p.id WHERE r.session_id = ? ORDER BY p.created_at, p.id`,
    sessionId,
  );

const deliveredFor = (refundId: string) =>
  receiver.received.filter(
    (hook) => (hook.body as { data?: { refund?: { id?: string } } }).data?.refund?.id === refundId,
  );

async function waitFor<T>(read: () => T | Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('refunds of a successful session', () => {
  it('refunds half, then the rest by default: the payer has it all back, each refund webhook signed and delivered once', async () => {
    const session = await paidSession(500_000);
    const half = await refund(session.id, { amount: 250_000, reason: 'requested_by_customer' });
    expect(half.status, half.text).toBe(201);
    const first = RefundEnvelope.parse(half.body).data;
    expect(first).toMatchObject({
      sessionId: session.id,
      amount: 250_000,
      currency: 'NGN',
      status: 'succeeded',
    });
    expect(first.reason).toBe('requested_by_customer');
    expect((await retrieveSession(server.baseUrl, key, session.id)).amountRefunded).toBe(250_000);

    const rest = await refund(session.id);
    expect(rest.status, rest.text).toBe(201);
    const second = RefundEnvelope.parse(rest.body).data;
    expect(second).toMatchObject({ amount: 250_000, status: 'succeeded', reason: null });
    const after = await retrieveSession(server.baseUrl, key, session.id);
    expect(after).toMatchObject({ status: 'successful', amount: 500_000, amountRefunded: 500_000 });

    // The bank's side: the payer's account the transfer came from is credited back, once per refund.
    const books = await bankRefundsOf(session.id);
    expect(books).toEqual([
      { id: first.id, payer_account: DEFAULT_TEST_PAYER_ACCOUNT, amount: 250_000, outcome: 'credited' },
      { id: second.id, payer_account: DEFAULT_TEST_PAYER_ACCOUNT, amount: 250_000, outcome: 'credited' },
    ]);

    for (const made of [first, second]) {
      const hooks = await waitFor(
        () => deliveredFor(made.id),
        (found) => found.length > 0,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(deliveredFor(made.id)).toHaveLength(1);
      const [hook] = hooks;
      if (!hook) throw new Error('no refund webhook');
      expect(independentlyVerify(hook.raw, String(hook.headers['x-service-signature']), webhookSecret)).toBe(
        true,
      );
      const event = WebhookEventSchema.parse(hook.body);
      expect(event.type).toBe('refund.succeeded');
      expect(event.data.refund).toMatchObject({ id: made.id, amount: 250_000, status: 'succeeded' });
      expect(event.data.session.id).toBe(session.id);
    }

    // Nothing is left: a third refund says so, and moves nothing.
    expectError(await refund(session.id), 409, 'session_fully_refunded');
    expectError(await refund(session.id, { amount: 1 }), 409, 'session_fully_refunded');
    expect(await bankRefundsOf(session.id)).toHaveLength(2);

    const listed = await call(server.baseUrl, 'GET', `/api/widget/sessions/${session.id}/refunds?limit=1`, {
      token: key,
    });
    const page = RefundList.parse(listed.body);
    expect(page.data.map((made) => made.id)).toEqual([second.id]);
    expect(page.pagination).toEqual({ hasMore: true, nextCursor: second.id });
    const next = await call(
      server.baseUrl,
      'GET',
      `/api/widget/sessions/${session.id}/refunds?limit=1&startingAfter=${second.id}`,
      { token: key },
    );
    expect(RefundList.parse(next.body).data.map((made) => made.id)).toEqual([first.id]);
    const all = await call(server.baseUrl, 'GET', '/api/refunds?environment=test&limit=100', { token: key });
    expect(RefundList.parse(all.body).data.map((made) => made.id)).toEqual(
      expect.arrayContaining([first.id, second.id]),
    );
    const audit = await server.rows<{ action: string; actor: string }>(
      'SELECT action, actor FROM audit_log WHERE target = ? ORDER BY seq',
      first.id,
    );
    expect(audit).toEqual([
      { action: 'refund.requested', actor: 'secret_key:test' },
      { action: 'refund.succeeded', actor: 'service' },
    ]);
  });

  it('refuses more than is left with a 400 that says what can be refunded, and moves nothing', async () => {
    const session = await paidSession(500_000);
    expect((await refund(session.id, { amount: 100_000 })).status).toBe(201);
    const tooMuch = await refund(session.id, { amount: 400_001 });
    expectError(tooMuch, 400, 'refund_exceeds_remaining');
    expect(tooMuch.body.meta.message).toContain('NGN 4,000.00');
    expect(tooMuch.body.meta.message).toContain('400000');
    expect(tooMuch.body.errors).toEqual([{ path: 'amount', message: 'must be at most 400000' }]);
    expect((await retrieveSession(server.baseUrl, key, session.id)).amountRefunded).toBe(100_000);
    expect((await bankRefundsOf(session.id)).map((row) => row.amount)).toEqual([100_000]);
  });

  it('refuses a session that was not paid (open, cancelled, expired) with 409, and bad bodies with 400', async () => {
    const open = await createSession(server.baseUrl, key);
    const refused = await refund(open.id, { amount: 100 });
    expectError(refused, 409, 'session_not_refundable');
    expect(refused.body.meta.message).toContain('pending');
    const cancelled = await createSession(server.baseUrl, key);
    await call(server.baseUrl, 'POST', `/api/widget/sessions/${cancelled.id}/cancel`, { token: key });
    expectError(await refund(cancelled.id), 409, 'session_not_refundable');
    const expired = await createSession(server.baseUrl, key);
    await bootstrap(server.baseUrl, expired.clientSecret);
    expect(
      (await call(server.baseUrl, 'POST', `/api/test/sessions/${expired.id}/expire`, { token: key })).status,
    ).toBe(200);
    expectError(await refund(expired.id), 409, 'session_not_refundable');

    const paid = await paySession(server.baseUrl, key);
    expectError(await refund(paid.id, { amount: 0 }), 400, 'validation_failed');
    expectError(await refund(paid.id, { amount: 1.5 }), 400, 'validation_failed');
    expectError(await refund(paid.id, { reason: 'because' }), 400, 'validation_failed');
    expectError(await refund(paid.id, { amount: 100, note: 'x' }), 400, 'validation_failed');
    expectError(await refund('ses_nope'), 404, 'not_found');
    expect((await retrieveSession(server.baseUrl, key, paid.id)).amountRefunded).toBe(0);
  });

  it("another business's or environment's session and refunds are out of reach", async () => {
    const session = await paidSession(50_000);
    const made = RefundEnvelope.parse((await refund(session.id, { amount: 1_000 })).body).data;
    const other = (await server.createBusiness({ name: 'Other Shop', kycApproved: true })).keys;
    const asOther = (method: string, path: string, json?: unknown) =>
      call(server.baseUrl, method, path, { token: other.test.secretKey, ...(json ? { json } : {}) });
    expectError(await asOther('POST', `/api/widget/sessions/${session.id}/refunds`, {}), 403, 'forbidden');
    expectError(await asOther('GET', `/api/widget/sessions/${session.id}/refunds`), 403, 'forbidden');
    expectError(await asOther('GET', `/api/refunds/${made.id}`), 403, 'forbidden');
    const live = await call(server.baseUrl, 'GET', `/api/refunds/${made.id}`, {
      token: other.live.secretKey,
    });
    expectError(live, 403, 'forbidden');
    expectError(
      await call(server.baseUrl, 'GET', '/api/refunds?environment=live', { token: key }),
      403,
      'environment_mismatch',
    );
    expect((await retrieveSession(server.baseUrl, key, session.id)).amountRefunded).toBe(1_000);
  });
});

describe('a refund the bank refuses', () => {
  it("fails with the payer's bank's reason, gives the amount back, and says so by refund.failed", async () => {
    const session = await paidSession(80_000, CLOSED_TEST_PAYER_ACCOUNT);
    const answer = await refund(session.id, { amount: 30_000 });
    expect(answer.status, answer.text).toBe(201);
    const failed = RefundEnvelope.parse(answer.body).data;
    expect(failed).toMatchObject({ status: 'failed', failureReason: 'payer_account_closed', amount: 30_000 });
    // Nothing moved, so nothing counts as refunded: the whole amount is refundable again.
    expect((await retrieveSession(server.baseUrl, key, session.id)).amountRefunded).toBe(0);
    expect(await bankRefundsOf(session.id)).toEqual([
      { id: failed.id, payer_account: CLOSED_TEST_PAYER_ACCOUNT, amount: 30_000, outcome: 'refused' },
    ]);
    const [hook] = await waitFor(
      () => deliveredFor(failed.id),
      (found) => found.length > 0,
    );
    const event = WebhookEventSchema.parse(hook?.body);
    expect(event.type).toBe('refund.failed');
    expect(event.data.refund).toMatchObject({
      id: failed.id,
      status: 'failed',
      failureReason: 'payer_account_closed',
    });
    const retrieved = await call(server.baseUrl, 'GET', `/api/refunds/${failed.id}`, { token: key });
    expect(RefundEnvelope.parse(retrieved.body).data.status).toBe('failed');
    const audit = await server.rows<{ action: string }>(
      'SELECT action FROM audit_log WHERE target = ? ORDER BY seq',
      failed.id,
    );
    expect(audit.map((entry) => entry.action)).toEqual(['refund.requested', 'refund.failed']);
  });
});

describe('refunds racing each other', () => {
  it('twenty at once never add up to more than was paid', async () => {
    const session = await paidSession(50_000);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => refund(session.id, { amount: 7_000 })),
    );
    const made = answers.filter((answer) => answer.status === 201);
    // 7 × 7,000 = 49,000 fits in 50,000; an eighth would not.
    expect(made).toHaveLength(7);
    for (const answer of answers.filter((one) => one.status !== 201)) {
      expectError(answer, 400, 'refund_exceeds_remaining');
    }
    expect((await retrieveSession(server.baseUrl, key, session.id)).amountRefunded).toBe(49_000);
    const books = await bankRefundsOf(session.id);
    expect(books).toHaveLength(7);
    expect(books.reduce((sum, row) => sum + row.amount, 0)).toBe(49_000);
    const [count] = await server.rows<{ n: number }>(
      'SELECT count(*) AS n FROM refunds WHERE session_id = ?',
      session.id,
    );
    expect(Number(count?.n)).toBe(7);
    // What is left is exactly what was not taken.
    const rest = await refund(session.id);
    expect(RefundEnvelope.parse(rest.body).data.amount).toBe(1_000);
  });

  it('twenty full refunds at once make exactly one', async () => {
    const session = await paidSession(20_000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => refund(session.id)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(19);
    expect((await bankRefundsOf(session.id)).map((row) => row.amount)).toEqual([20_000]);
  });
});

describe('retries through the SDK', () => {
  it('the same Idempotency-Key twice makes one refund, answered twice alike', async () => {
    const session = await paidSession(60_000);
    const servicepay = new ServicePay(key, { baseUrl: server.baseUrl, maxRetries: 0 });
    const first = await servicepay.refunds.create(
      session.id,
      { amount: 10_000 },
      { idempotencyKey: 'wc-refund-7' },
    );
    const again = await servicepay.refunds.create(
      session.id,
      { amount: 10_000 },
      { idempotencyKey: 'wc-refund-7' },
    );
    expect(again).toEqual(first);
    expect(first.status).toBe('succeeded');
    const listed = [];
    for await (const made of servicepay.refunds.list({ sessionId: session.id, limit: 1 }))
      listed.push(made.id);
    expect(listed).toEqual([first.id]);
    expect((await servicepay.refunds.retrieve(first.id)).amount).toBe(10_000);
    expect((await servicepay.sessions.retrieve(session.id)).amountRefunded).toBe(10_000);
    expect((await bankRefundsOf(session.id)).map((row) => row.amount)).toEqual([10_000]);
  });
});
