import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookEventSchema } from '@servicepay/node/protocol';
import { describe, expect, test, vi } from 'vitest';
import { call } from '../../../test/support/api.ts';
import { startReceiver } from '../../../test/support/checkout.ts';
import { startServer } from '../../../test/support/server.ts';
import { ManualClock } from '../internal/clock.ts';
import { type Logger, silentLogger } from '../internal/logger.ts';
import { webhookBody } from './delivery-signer.ts';
import { jittered, RETRY_SCHEDULES } from './retry-schedule.ts';
import { WebhookWorker } from './webhook-worker.ts';

test('jitter stays within ±20 % of the delay', () => {
  expect(jittered(1000, 0.2, () => 0)).toBe(800);
  expect(jittered(1000, 0.2, () => 0.5)).toBe(1000);
  expect(jittered(1000, 0.2, () => 0.999_999)).toBe(1200);
});

test('the standard schedule spans about three days in 12 attempts; fast spans about a minute', () => {
  const total = (delays: readonly number[]) => delays.reduce((sum, delay) => sum + delay, 0);
  expect(RETRY_SCHEDULES.standard.delaysMs).toHaveLength(11);
  expect(total(RETRY_SCHEDULES.standard.delaysMs) / 3_600_000).toBeCloseTo(71.6, 0);
  expect(total(RETRY_SCHEDULES.fast.delaysMs)).toBeLessThan(70_000);
  for (const schedule of Object.values(RETRY_SCHEDULES)) {
    const delays = schedule.delaysMs;
    for (let i = 1; i < delays.length; i += 1) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1] ?? 0);
  }
});

test('on both schedules a claim outlasts an attempt (lease > timeout); a schedule whose lease does not is refused', async () => {
  // PostgreSQL: another instance may claim a delivery again once its lease ends, so an attempt that ends within
  // its timeout still holds it when it records the outcome.
  for (const schedule of Object.values(RETRY_SCHEDULES)) {
    expect(schedule.leaseMs).toBeGreaterThanOrEqual(5 * schedule.timeoutMs);
  }
  const server = await startServer();
  try {
    const { store, secretBox } = server.service.deps;
    const worker = (leaseMs: number) =>
      new WebhookWorker({
        store,
        secretBox,
        clock: new ManualClock(),
        logger: silentLogger,
        schedule: { ...RETRY_SCHEDULES.fast, leaseMs },
      });
    expect(() => worker(1000)).toThrow(
      "the webhook lease (1000 ms) must be longer than an attempt's timeout (1000 ms)",
    );
    expect(worker(1001)).toBeInstanceOf(WebhookWorker);
  } finally {
    await server.close();
  }
});

test('the body is a WebhookEvent with the stored session spliced in', () => {
  const session = {
    id: 'ses_1',
    reference: 'order-1',
    status: 'successful',
    environment: 'test',
    amount: 5000,
    currency: 'NGN',
    payer: { name: 'Ada', email: 'ada@example.com' },
    metadata: {},
    virtualAccount: null,
    lastMismatch: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-01T02:00:00.000Z',
    paidAt: '2026-01-01T00:01:00.000Z',
  };
  const body = webhookBody({
    eventId: 'evt_abc',
    eventType: 'session.successful',
    environment: 'test',
    eventCreatedAt: Date.parse('2026-01-01T00:01:00.000Z'),
    payload: JSON.stringify(session),
  });
  const event = WebhookEventSchema.parse(JSON.parse(body));
  expect(event).toMatchObject({
    id: 'evt_abc',
    type: 'session.successful',
    createdAt: '2026-01-01T00:01:00.000Z',
  });
  expect(event.data.session.amount).toBe(5000);
});

test('a failing endpoint is retried on schedule, the delivery fails at the end, and the endpoint is disabled', async () => {
  const clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'));
  const warnings: Array<[string, Record<string, unknown> | undefined]> = [];
  const logger: Logger = {
    info() {},
    error() {},
    warn: (message, fields) => warnings.push([message, fields]),
  };
  const server = await startServer({}, { clock, logger });
  const receiver = await startReceiver((_received, res) => {
    res.statusCode = 500;
    res.end('x'.repeat(5000));
  });
  try {
    const worker = server.service.tasks.find((task): task is WebhookWorker => task instanceof WebhookWorker);
    if (!worker) throw new Error('the webhook worker is not a task of the service');
    const { business, keys } = await server.createBusiness();
    const sk = keys.test.secretKey;
    const endpoint = (
      await call(server.baseUrl, 'POST', '/api/webhooks', { token: sk, json: { url: receiver.url } })
    ).body.data;
    const created = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: sk,
      json: {
        amount: 10_000,
        currency: 'NGN',
        payer: { name: 'Ada', email: 'ada@example.com' },
      },
    });
    await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.body.data.id}/cancel`, { token: sk });
    const delivery = async () =>
      (await call(server.baseUrl, 'GET', `/api/webhooks/${endpoint.id}/deliveries`, { token: sk })).body
        .data[0];

    const { delaysMs } = RETRY_SCHEDULES.fast;
    for (let attempt = 1; attempt <= delaysMs.length + 1; attempt += 1) {
      await vi.waitFor(async () => expect((await delivery()).attemptCount).toBe(attempt));
      const current = await delivery();
      const last = current.attempts.at(-1);
      expect(last).toMatchObject({
        statusCode: 500,
        error: null,
        responseExcerpt: null,
        responseExcerptWithheld: 'receiver_not_public',
      });
      const delay = delaysMs[attempt - 1];
      if (delay === undefined) {
        expect(current.status).toBe('failed');
        expect(current.nextAttemptAt).toBeNull();
        break;
      }
      expect(current.status).toBe('pending');
      const wait = Date.parse(current.nextAttemptAt) - Date.parse(last.at);
      expect(wait).toBeGreaterThanOrEqual(Math.floor(delay * 0.8));
      expect(wait).toBeLessThanOrEqual(Math.ceil(delay * 1.2));
      clock.advance(wait);
      await worker.runDue();
    }
    expect(receiver.received).toHaveLength(delaysMs.length + 1);
    expect(new Set(receiver.received.map((r) => r.headers['x-service-event-id'])).size).toBe(1);
    expect(receiver.received.map((r) => r.headers['x-service-attempt'])).toEqual(
      Array.from({ length: delaysMs.length + 1 }, (_, i) => String(i + 1)),
    );

    const after = (await call(server.baseUrl, 'GET', `/api/webhooks/${endpoint.id}`, { token: sk })).body
      .data;
    expect(after).toMatchObject({ enabled: false, disabledReason: 'failing' });
    expect(warnings).toContainEqual([
      'webhook endpoint disabled: it kept failing',
      expect.objectContaining({
        endpointId: endpoint.id,
        businessId: business.id,
        disabledReason: 'failing',
      }),
    ]);
  } finally {
    await receiver.close();
    await server.close();
  }
});

describe('what a receiver answered (issue 8)', () => {
  /** A cancelled session with one endpoint pointing at `receiver`; the service's own worker is stopped. */
  async function oneDelivery(answer: string) {
    const server = await startServer();
    const receiver = await startReceiver((_received, res) => {
      res.statusCode = 200;
      res.end(answer);
    });
    const own = server.service.tasks.find((task): task is WebhookWorker => task instanceof WebhookWorker);
    if (!own) throw new Error('the webhook worker is not a task of the service');
    await own.stop();
    const sk = (await server.createBusiness()).keys.test.secretKey;
    const endpoint = (
      await call(server.baseUrl, 'POST', '/api/webhooks', { token: sk, json: { url: receiver.url } })
    ).body.data;
    const created = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: sk,
      json: {
        amount: 10_000,
        currency: 'NGN',
        payer: { name: 'Ada', email: 'ada@example.com' },
      },
    });
    await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.body.data.id}/cancel`, { token: sk });
    const worker = (revealsAnswerOf?: (address: string) => boolean) =>
      new WebhookWorker({
        store: server.service.deps.store,
        secretBox: server.service.secretBox,
        clock: server.service.deps.clock,
        logger: server.service.deps.logger,
        schedule: RETRY_SCHEDULES.fast,
        ...(revealsAnswerOf ? { revealsAnswerOf } : {}),
      });
    const attempts = async () =>
      (await call(server.baseUrl, 'GET', `/api/webhooks/${endpoint.id}/deliveries`, { token: sk })).body
        .data[0].attempts;
    return {
      worker,
      attempts,
      endpointId: endpoint.id as string,
      store: server.service.deps.store,
      clock: server.service.deps.clock,
      async close() {
        await receiver.close();
        await server.close();
      },
    };
  }

  test('a loopback receiver: status and timing only, its answer never stored nor shown', async () => {
    const setup = await oneDelivery('{"secret":"whatever the local service said"}');
    try {
      await setup.worker().runDue();
      const [attempt] = await setup.attempts();
      expect(attempt).toMatchObject({
        statusCode: 200,
        error: null,
        responseExcerpt: null,
        responseExcerptWithheld: 'receiver_not_public',
      });
      expect(Number.isInteger(attempt.latencyMs)).toBe(true);
      expect(JSON.stringify(await setup.attempts())).not.toContain('whatever the local service said');
    } finally {
      await setup.close();
    }
  });

  test('a public receiver keeps its first kilobyte (injected: this loopback receiver stands in for a public one)', async () => {
    const setup = await oneDelivery(`thanks ${'x'.repeat(5000)}`);
    try {
      const seen: string[] = [];
      await setup
        .worker((address) => {
          seen.push(address);
          return true;
        })
        .runDue();
      // The decision is made on the address the answer came from, not on the URL.
      expect(seen).toEqual(['127.0.0.1']);
      const [attempt] = await setup.attempts();
      expect(attempt).toMatchObject({ statusCode: 200, error: null, responseExcerptWithheld: null });
      expect(attempt.responseExcerpt.startsWith('thanks ')).toBe(true);
      expect(Buffer.byteLength(attempt.responseExcerpt)).toBe(1024);
    } finally {
      await setup.close();
    }
  });

  test('a stored URL with a forbidden literal address is refused at delivery: an attempt recorded, no connection made', async () => {
    // Registration refuses such a URL; this one is written into the store directly, as a row written before
    // the policy or by hand would be. A literal address never reaches the guarded DNS lookup, so only the
    // worker's own check stands between it and a connection. 0.0.0.0 is the unspecified address, to which
    // the kernel connects as this machine, so a listener on it would answer.
    const listener = createServer((_req, res) => res.end('reached'));
    let connections = 0;
    listener.on('connection', () => {
      connections += 1;
    });
    listener.listen(0, '0.0.0.0');
    await once(listener, 'listening');
    const { port } = listener.address() as AddressInfo;
    const setup = await oneDelivery('unused: the registered loopback receiver');
    try {
      const url = `http://0.0.0.0:${port}/hooks`;
      await setup.store.writes.run(async (tx) => {
        const current = await tx.webhookEndpoints.find(setup.endpointId);
        if (!current) throw new Error(`no endpoint ${setup.endpointId}`);
        await tx.webhookEndpoints.update(current, { url }, setup.clock.now());
      });
      expect((await setup.store.webhookEndpoints.find(setup.endpointId))?.url).toBe(url);

      await setup.worker().runDue();

      const [attempt] = await setup.attempts();
      expect(attempt).toMatchObject({
        statusCode: null,
        error: 'refused: must resolve to public or loopback addresses only',
        responseExcerpt: null,
        responseExcerptWithheld: null,
      });
      expect(connections).toBe(0);
    } finally {
      await setup.close();
      listener.closeAllConnections();
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});
