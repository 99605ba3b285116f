import { expect, test, vi } from 'vitest';
import { RETRY_SCHEDULES } from '../../reference-server/src/events/retry-schedule.ts';
import { call } from '../support/api.ts';
import { independentlyVerify, startReceiver } from '../support/checkout.ts';
import { startServer } from '../support/server.ts';

test('a receiver that answers 500, then times out, then 200 is retried on schedule, every attempt recorded', async () => {
  const server = await startServer();
  let answered = 0;
  const receiver = await startReceiver((_received, res) => {
    answered += 1;
    if (answered === 1) {
      res.statusCode = 500;
      res.end('boom');
    } else if (answered === 2) {
      // Never answers: the attempt times out. Answer later so the socket does not linger.
      setTimeout(() => res.end('too late'), RETRY_SCHEDULES.fast.timeoutMs * 2).unref();
    } else {
      res.end('thanks');
    }
  });
  try {
    const sk = (await server.createBusiness()).keys.test.secretKey;
    const endpoint = (
      await call(server.baseUrl, 'POST', '/api/webhooks', { token: sk, json: { url: receiver.url } })
    ).body.data;
    const created = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: sk,
      json: {
        amount: 20_000,
        currency: 'NGN',
        payer: { name: 'Ada', email: 'ada@example.com' },
      },
    });
    await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.body.data.id}/cancel`, { token: sk });

    const deliveries = async () =>
      (await call(server.baseUrl, 'GET', `/api/webhooks/${endpoint.id}/deliveries`, { token: sk })).body.data;
    await vi.waitFor(async () => expect((await deliveries())[0]?.status).toBe('succeeded'), {
      timeout: 15_000,
      interval: 100,
    });
    const [delivery] = await deliveries();
    expect(delivery.attemptCount).toBe(3);
    const [first, second, third] = delivery.attempts;
    // The receiver is on loopback: what it answered is never shown back, only status and timing (issue 8).
    const withheld = { responseExcerpt: null, responseExcerptWithheld: 'receiver_not_public' };
    expect(first).toMatchObject({ statusCode: 500, error: null, ...withheld });
    expect(second.statusCode).toBeNull();
    expect(second.error).toMatch(/timed out/);
    expect(third).toMatchObject({ statusCode: 200, error: null, ...withheld });
    // On schedule: each retry waited at least its (jittered) delay after the previous attempt.
    const [d1 = 0, d2 = 0] = RETRY_SCHEDULES.fast.delaysMs;
    expect(Date.parse(second.at) - Date.parse(first.at)).toBeGreaterThanOrEqual(d1 * 0.8 + first.latencyMs);
    expect(Date.parse(third.at) - Date.parse(second.at)).toBeGreaterThanOrEqual(d2 * 0.8 + second.latencyMs);

    // Three posts of one event, each signed over its own raw body.
    expect(receiver.received).toHaveLength(3);
    const ids = new Set(receiver.received.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    for (const received of receiver.received) {
      expect(
        independentlyVerify(received.raw, String(received.headers['x-service-signature']), endpoint.secret),
      ).toBe(true);
    }
  } finally {
    await receiver.close();
    await server.close();
  }
});
