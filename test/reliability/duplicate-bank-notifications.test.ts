import type { BankNotification } from '@servicepay/node/protocol';
import { expect, test, vi } from 'vitest';
import { newId } from '../../reference-server/src/internal/random.ts';
import { signPayload } from '../../reference-server/src/internal/signature.ts';
import { call } from '../support/api.ts';
import { independentlyVerify, openCheckout, startReceiver } from '../support/checkout.ts';
import { startServer } from '../support/server.ts';

test('50 concurrent copies of a bank notification (and re-sent copies under new ids) deliver exactly one session.successful', async () => {
  const server = await startServer();
  const receiver = await startReceiver();
  try {
    const sk = (await server.createBusiness()).keys.test.secretKey;
    const endpoint = (
      await call(server.baseUrl, 'POST', '/api/webhooks', { token: sk, json: { url: receiver.url } })
    ).body.data;
    const checkout = await openCheckout(server.baseUrl, sk, 75_000);
    const transfer = {
      id: newId('trf'),
      accountNumber: checkout.accountNumber,
      amount: checkout.amount,
      currency: 'NGN',
      outcome: 'credited' as const,
      returnReason: null,
    };
    const notification = (id: string): BankNotification => ({
      id,
      type: 'transfer.received',
      occurredAt: new Date().toISOString(),
      transfer,
    });
    const post = async (body: BankNotification) => {
      const raw = JSON.stringify(body);
      const response = await fetch(new URL('/bank/notifications', server.baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-bank-signature': signPayload(
            raw,
            [server.service.config.bank.secret],
            Math.floor(Date.now() / 1000),
          ),
        },
        body: raw,
      });
      return { status: response.status, body: (await response.json()) as { data: { result: string } } };
    };
    const sameId = notification(newId('ntf'));
    const answers = await Promise.all([
      ...Array.from({ length: 50 }, () => post(sameId)),
      ...Array.from({ length: 10 }, () => post(notification(newId('ntf')))),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(60).fill(200));
    expect(answers.filter((answer) => answer.body.data.result === 'credited').length).toBeGreaterThanOrEqual(
      1,
    );

    await vi.waitFor(async () => {
      const listed = await call(server.baseUrl, 'GET', `/api/webhooks/${endpoint.id}/deliveries`, {
        token: sk,
      });
      expect(listed.body.data.length).toBeGreaterThan(0);
      expect(listed.body.data.every((d: { status: string }) => d.status === 'succeeded')).toBe(true);
    });
    const successful = receiver.received.filter((r) => r.body.type === 'session.successful');
    expect(new Set(successful.map((r) => r.body.id)).size).toBe(1);
    expect(successful).toHaveLength(1);
    expect(successful[0]?.body.data.session).toMatchObject({ id: checkout.sessionId, amount: 75_000 });
    expect(
      independentlyVerify(
        successful[0]?.raw ?? Buffer.alloc(0),
        String(successful[0]?.headers['x-service-signature']),
        endpoint.secret,
      ),
    ).toBe(true);
    const events = (await server.service.deps.store.events.forSessionAfter(checkout.sessionId, 0)).filter(
      (event) => event.type === 'session.successful',
    );
    expect(events.map((event) => event.id)).toEqual([successful[0]?.body.id]);
  } finally {
    await receiver.close();
    await server.close();
  }
});
