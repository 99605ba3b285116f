import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedBank } from '../../reference-server/src/bank/simulated-bank.ts';
import { approveKyc, rollKey } from '../../reference-server/src/businesses/onboarding.ts';
import { ManualClock, silentLogger } from '../../reference-server/src/index.ts';
import { bankNotification, bootstrap, call, createSession, postNotification } from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Who did what, and when: each audited action leaves exactly one entry, written with the change itself.

let server: RunningServer;
let clock: ManualClock;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let businessId: string;
let key: string;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2030-07-01T08:00:00Z'));
  server = await startServer({ rateLimit: { perMinute: 10_000 } }, { clock });
  receiver = await startReceiver();
  const created = await server.createBusiness({ name: 'Audited Shop' });
  businessId = created.business.id;
  key = created.keys.test.secretKey;
});

afterAll(async () => {
  await receiver.close();
  await server.close();
});

type Entry = {
  at: number;
  actor: string;
  action: string;
  business_id: string | null;
  environment: string | null;
  target: string | null;
  details: string;
};

const entriesFor = async (target: string) =>
  (
    await server.rows<Entry>(
      'SELECT at, actor, action, business_id, environment, target, details FROM audit_log WHERE target = ? ORDER BY seq',
      target,
    )
  ).map(({ details, ...entry }) => ({ ...entry, details: JSON.parse(details) }));

const auditText = async () =>
  (await server.rows<Record<string, string>>('SELECT actor, target, details FROM audit_log'))
    .map((row) => JSON.stringify(row))
    .join('\n');

describe('audit log', () => {
  it('webhook endpoint created, URL changed, secret rolled, deleted: one entry each, never the secret', async () => {
    const created = await call(server.baseUrl, 'POST', '/api/webhooks', {
      token: key,
      json: { url: receiver.url },
    });
    const id: string = created.body.data.id;
    clock.advance(1000);
    const otherUrl = receiver.url.replace('/hooks', '/orders');
    expect(
      (await call(server.baseUrl, 'PATCH', `/api/webhooks/${id}`, { token: key, json: { url: otherUrl } }))
        .status,
    ).toBe(200);
    clock.advance(1000);
    const rolled = await call(server.baseUrl, 'POST', `/api/webhooks/${id}/roll-secret`, { token: key });
    expect(rolled.status).toBe(200);
    clock.advance(1000);
    expect((await call(server.baseUrl, 'DELETE', `/api/webhooks/${id}`, { token: key })).status).toBe(200);

    const base = { actor: 'secret_key:test', business_id: businessId, environment: 'test', target: id };
    const start = clock.now() - 3000;
    expect(await entriesFor(id)).toEqual([
      { ...base, at: start, action: 'webhook_endpoint.created', details: { url: receiver.url } },
      {
        ...base,
        at: start + 1000,
        action: 'webhook_endpoint.updated',
        details: { changed: ['url'], from: receiver.url, to: otherUrl },
      },
      { ...base, at: start + 2000, action: 'webhook_endpoint.secret_rolled', details: {} },
      { ...base, at: start + 3000, action: 'webhook_endpoint.deleted', details: {} },
    ]);
    const text = await auditText();
    expect(text).not.toContain(created.body.data.secret);
    expect(text).not.toContain(rolled.body.data.secret);
  });

  it('a cancel by the merchant and one by the payer name who cancelled; a repeated cancel adds nothing', async () => {
    const byMerchant = await createSession(server.baseUrl, key);
    await bootstrap(server.baseUrl, byMerchant.clientSecret);
    const byPayer = await createSession(server.baseUrl, key);
    const opened = await bootstrap(server.baseUrl, byPayer.clientSecret);

    const cancel = (id: string, token: string) =>
      call(server.baseUrl, 'POST', `/api/widget/sessions/${id}/cancel`, { token });
    expect((await cancel(byMerchant.id, key)).status).toBe(200);
    expect((await cancel(byMerchant.id, key)).status).toBe(200);
    expect((await cancel(byPayer.id, opened.token)).status).toBe(200);

    const common = {
      business_id: businessId,
      environment: 'test',
      action: 'session.cancelled',
      at: clock.now(),
    };
    expect(await entriesFor(byMerchant.id)).toEqual([
      {
        ...common,
        actor: 'secret_key:test',
        target: byMerchant.id,
        details: { reason: 'cancelled_by_merchant', previousStatus: 'awaiting_payment' },
      },
    ]);
    expect(await entriesFor(byPayer.id)).toEqual([
      {
        ...common,
        actor: 'widget_token',
        target: byPayer.id,
        details: { reason: 'cancelled_by_payer', previousStatus: 'awaiting_payment' },
      },
    ]);
    expect(await auditText()).not.toContain(opened.token);
  });

  it('a refund of a credit no session could take is recorded with the bank refund id', async () => {
    const created = await createSession(server.baseUrl, key, { amount: 90_000 });
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    const bank = new SimulatedBank({
      books: server.bankBooks,
      clock,
      logger: silentLogger,
      secret: server.service.config.bank.secret,
      bankName: 'ServicePay Test Bank',
      notificationUrl: () => undefined,
    });
    const transfer = await bank.transfer(opened.virtualAccount.accountNumber, 90_000);
    const wrongCurrency = bankNotification(opened.virtualAccount.accountNumber, 90_000, { currency: 'USD' });
    wrongCurrency.transfer.id = transfer.id;
    const answer = await postNotification(server, wrongCurrency, { nowMs: clock.now() });
    expect(answer.body.data.result).toBe('unapplied');

    const [credit] = await server.rows<{ id: string; refund_id: string }>(
      'SELECT id, refund_id FROM unapplied_credits WHERE transfer_id = ?',
      transfer.id,
    );
    if (!credit) throw new Error('no credit recorded');
    expect(await entriesFor(credit.id)).toEqual([
      {
        at: clock.now(),
        actor: 'service',
        action: 'credit.refunded',
        business_id: businessId,
        environment: 'test',
        target: credit.id,
        details: {
          transferId: transfer.id,
          sessionId: created.id,
          amount: 90_000,
          currency: 'USD',
          reason: 'currency_mismatch',
          refundId: credit.refund_id,
        },
      },
    ]);
  });

  it('key rolls and KYC approvals name who did them, with key hints only', async () => {
    const rolled = await rollKey(
      server.service.deps.store,
      businessId,
      'live',
      'secret',
      clock.now(),
      'cli:ops',
    );
    if (!rolled) throw new Error('no business');
    expect(await approveKyc(server.service.deps.store, businessId, clock.now(), 'cli:ops')).toBe(true);
    const entries = (
      await server.rows<Entry>(
        "SELECT at, actor, action, business_id, environment, target, details FROM audit_log WHERE business_id = ? AND action IN ('api_key.rolled', 'kyc.approved') ORDER BY seq",
        businessId,
      )
    ).map(({ details, ...entry }) => ({ ...entry, details: JSON.parse(details) }));
    expect(entries).toEqual([
      {
        at: clock.now(),
        actor: 'cli:ops',
        action: 'api_key.rolled',
        business_id: businessId,
        environment: 'live',
        target: `sk_live_…${rolled.key.slice(-4)}`,
        details: { kind: 'secret', revoked: rolled.revokedKeyHint },
      },
      {
        at: clock.now(),
        actor: 'cli:ops',
        action: 'kyc.approved',
        business_id: businessId,
        environment: 'live',
        target: businessId,
        details: {},
      },
    ]);
    expect(await auditText()).not.toContain(rolled.key);
  });
});
