import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RETRY_SCHEDULES } from '../../reference-server/src/events/retry-schedule.ts';
import { WebhookWorker } from '../../reference-server/src/events/webhook-worker.ts';
import { ManualClock } from '../../reference-server/src/internal/clock.ts';
import type { Logger } from '../../reference-server/src/internal/logger.ts';
import { call } from '../support/api.ts';
import { type Received, startReceiver } from '../support/checkout.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 13 (docs/decisions/postgresql-and-instances.md, "Issue 13, step by step", step 3): an attempt that outlives its claim's lease (a
// slow receiver, a paused process) while another instance claims the delivery again. Two real services on one
// PostgreSQL, their real webhook workers, a real receiver that holds the first request until the test answers
// it, and one manual clock that makes the lease run out. Read back through the deliveries API.

reportIfPostgresMissing();

type Logged = { level: 'info' | 'warn' | 'error'; message: string; fields?: Record<string, unknown> };

const capture = (into: Logged[]): Logger => ({
  info: (message, fields) => into.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
  warn: (message, fields) => into.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
  error: (message, fields) => into.push({ level: 'error', message, ...(fields ? { fields } : {}) }),
});

describe.runIf(postgresAvailable)('a webhook attempt that outlived its lease, on two instances', () => {
  const { leaseMs = 0, delaysMs } = RETRY_SCHEDULES.standard;
  const clock = new ManualClock(Date.parse('2026-11-23T12:00:00.000Z'));
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-lease-'));
  const logs: Logged[][] = [[], []];
  // Requests the receiver has not answered yet, in arrival order: the test answers each itself.
  const waiting: Array<{ received: Received; res: ServerResponse }> = [];
  const scratch = useScratchDatabase({ database: 'lease' });
  let servers: RunningServer[] = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secretKey: string;
  let endpointId: string;

  beforeAll(async () => {
    // The standard schedule: a 10 s attempt timeout, a 60 s lease, retries from 1 min.
    const config = { databaseUrl: scratch.url, webhooks: { schedule: 'standard' as const } };
    servers = await Promise.all(
      [0, 1].map((n) =>
        startServer(config, { clock, logger: capture(logs[n] ?? []), dbPath: join(folder, `bank-${n}.db`) }),
      ),
    );
    receiver = await startReceiver((received, res) => {
      waiting.push({ received, res });
    });
    const first = servers[0] as RunningServer;
    secretKey = (await first.createBusiness({ name: 'Lease Shop' })).keys.test.secretKey;
    endpointId = (
      await call(first.baseUrl, 'POST', '/api/webhooks', { token: secretKey, json: { url: receiver.url } })
    ).body.data.id;
  }, 60_000);

  afterAll(async () => {
    for (const { res } of waiting.splice(0)) res.end();
    await receiver?.close();
    await Promise.all(servers.map((server) => server.close()));
    rmSync(folder, { recursive: true, force: true });
  });

  const workerOf = (server: RunningServer): WebhookWorker => {
    const worker = server.service.tasks.find((task): task is WebhookWorker => task instanceof WebhookWorker);
    if (!worker) throw new Error('the webhook worker is not a task of the service');
    return worker;
  };

  /** A cancelled session: one `session.cancelled` delivery to the endpoint. */
  async function cancelSession(): Promise<void> {
    const server = servers[0] as RunningServer;
    const created = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: secretKey,
      json: { amount: 10_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
    });
    expect(created.status).toBe(201);
    const cancelled = await call(
      server.baseUrl,
      'POST',
      `/api/widget/sessions/${created.body.data.id}/cancel`,
      { token: secretKey },
    );
    expect(cancelled.status).toBe(200);
  }

  /** The endpoint's one delivery of `eventId`, as the deliveries API shows it (from the other instance). */
  const deliveryOf = async (eventId: string) => {
    const list = await call(
      (servers[1] as RunningServer).baseUrl,
      'GET',
      `/api/webhooks/${endpointId}/deliveries?eventId=${eventId}`,
      { token: secretKey },
    );
    expect(list.body.data).toHaveLength(1);
    return list.body.data[0] as {
      id: string;
      status: string;
      attemptCount: number;
      nextAttemptAt: string | null;
      attempts: Array<{ statusCode: number | null }>;
    };
  };

  /**
   * The first attempt is held by the receiver; the lease runs out; the other instance claims the delivery
   * again and its attempt reaches the receiver too. Answers the two requests (first, second) still open and
   * which server's worker made each.
   */
  async function twoAttemptsInFlight() {
    const before = receiver.received.length;
    await vi.waitFor(() => expect(waiting).toHaveLength(1), { timeout: 10_000 });
    const workers = servers.map(workerOf);
    const stale = workers.findIndex((worker) => worker.busy === 1);
    expect(stale).toBeGreaterThanOrEqual(0);
    const other = 1 - stale;
    // The lease ends while the first attempt is still waiting for its answer.
    clock.advance(leaseMs);
    workers[other]?.nudge();
    await vi.waitFor(() => expect(waiting).toHaveLength(2), { timeout: 10_000 });
    expect(receiver.received).toHaveLength(before + 2);
    const [first, second] = waiting.splice(0, 2);
    if (!first || !second) throw new Error('two requests');
    // The same delivery, sent twice at once: the receiver de-duplicates by event id.
    expect(second.received.headers['x-service-delivery-id']).toBe(
      first.received.headers['x-service-delivery-id'],
    );
    const eventId = String(first.received.headers['x-service-event-id']);
    expect(second.received.headers['x-service-event-id']).toBe(eventId);
    return { first, second, stale, other, workers, eventId, before };
  }

  it('the stale attempt’s late failure changes nothing; the second claim’s failure sets the retry; both attempts are listed', async () => {
    await cancelSession();
    const { first, second, stale, other, workers, eventId, before } = await twoAttemptsInFlight();

    // The second attempt fails first: its retry (about a minute) replaces its lease, counted once.
    second.res.statusCode = 503;
    second.res.end('busy');
    await vi.waitFor(async () => expect((await deliveryOf(eventId)).attemptCount).toBe(1));
    const afterSecond = await deliveryOf(eventId);
    const retryAt = Date.parse(afterSecond.nextAttemptAt ?? '');
    const firstDelay = delaysMs[0] ?? 0;
    expect(retryAt - clock.now()).toBeGreaterThanOrEqual(Math.floor(firstDelay * 0.8));
    expect(retryAt - clock.now()).toBeLessThanOrEqual(Math.ceil(firstDelay * 1.2));

    // Then the stale attempt's answer arrives: a failure too. Its row is kept; the delivery is not touched.
    first.res.statusCode = 500;
    first.res.end('late');
    await vi.waitFor(() => expect(workers[stale]?.busy).toBe(0));
    const delivery = await deliveryOf(eventId);
    expect(delivery).toMatchObject({
      status: 'pending',
      attemptCount: 1,
      nextAttemptAt: afterSecond.nextAttemptAt,
    });
    expect(delivery.attempts.map((attempt) => attempt.statusCode).sort()).toEqual([500, 503]);
    expect(logs[stale]).toContainEqual({
      level: 'info',
      message: 'webhook attempt no longer held the delivery: its failure is not applied to it',
      fields: expect.objectContaining({
        deliveryId: delivery.id,
        attempt: 1,
        statusCode: 500,
        attemptCount: 1,
      }),
    });
    expect(logs[other]?.filter((entry) => entry.message.includes('no longer held'))).toEqual([]);
    expect([...(logs[0] ?? []), ...(logs[1] ?? [])].filter((entry) => entry.level !== 'info')).toEqual([]);

    // The retry falls due on the second claim's schedule, and succeeds: delivered, two counted attempts.
    clock.advance(retryAt - clock.now());
    const running = Promise.all(workers.map((worker) => worker.runDue()));
    await vi.waitFor(() => expect(waiting).toHaveLength(1), { timeout: 10_000 });
    expect(waiting[0]?.received.headers['x-service-attempt']).toBe('2');
    waiting.shift()?.res.end('ok');
    await running;
    expect(await deliveryOf(eventId)).toMatchObject({
      status: 'succeeded',
      attemptCount: 2,
      nextAttemptAt: null,
    });
    expect(receiver.received).toHaveLength(before + 3);
  });

  it('a late success still counts while the other instance holds the claim; that attempt’s failure then changes nothing', async () => {
    await cancelSession();
    const { first, second, stale, workers, eventId, before } = await twoAttemptsInFlight();

    // The stale attempt did reach the merchant: the delivery is delivered, whoever holds the claim.
    first.res.end('ok');
    await vi.waitFor(() => expect(workers[stale]?.busy).toBe(0));
    expect(await deliveryOf(eventId)).toMatchObject({
      status: 'succeeded',
      attemptCount: 1,
      nextAttemptAt: null,
    });

    // The other instance's attempt (the merchant's second copy of the event) fails: refused, still delivered.
    second.res.statusCode = 500;
    second.res.end('duplicate');
    await vi.waitFor(() => expect(workers.every((worker) => worker.busy === 0)).toBe(true));
    const delivery = await deliveryOf(eventId);
    expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 1, nextAttemptAt: null });
    expect(delivery.attempts.map((attempt) => attempt.statusCode).sort()).toEqual([200, 500]);
    // Nothing is due any more on either instance: no third copy.
    clock.advance(10 * leaseMs);
    await Promise.all(workers.map((worker) => worker.runDue()));
    expect(waiting).toEqual([]);
    expect(receiver.received).toHaveLength(before + 2);
  });
});
