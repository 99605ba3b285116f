import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateSessionParamsSchema } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migratePostgres } from '../../reference-server/src/db/postgres/migrate-postgres.ts';
import { createApp, createBusiness, createService, silentLogger } from '../../reference-server/src/index.ts';
import { randomBase62 } from '../../reference-server/src/internal/random.ts';
import type { ApiCaller } from '../../reference-server/src/middleware/authenticate.ts';
import { type ApiResponse, call, expectError, testTransfer } from '../support/api.ts';
import {
  independentlyVerify,
  openCheckout,
  openStream,
  type Received,
  startReceiver,
} from '../support/checkout.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';
import { type ServerProcess, startServerProcess, stopAllServerProcesses } from '../support/server-process.ts';

// Issue 13, as an operator runs it: three `servicepay-server start` processes on one PostgreSQL database,
// sharing nothing else (each its own port; the same bank secret and secrets key file). One is
// killed with SIGKILL in the middle of a 1,000-event webhook backlog, the database is restarted while requests
// flow, and a payment made through one process reaches a checkout streaming from another.

reportIfPostgresMissing();

const BACKLOG = 1000;
/** The receiver kills the first instance once this many distinct events arrived. */
const KILL_AFTER = 300;
/** Attempts one instance's webhook worker keeps in flight (its default): the most a killed one can leave claimed. */
const WORKER_CONCURRENCY = 64;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(postgresAvailable)('three servicepay-server processes on one PostgreSQL', () => {
  const scratch = useScratchDatabase({ database: 'processes', pools: { admin: { max: 2 } } });
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-processes-'));
  const secretsKeyFile = join(folder, 'secrets-key');
  // What SERVICEPAY_BANK_SECRET gives a deployment: a notification signed for one instance is accepted by all.
  const bankSecret = randomBase62(40);
  const instances: Array<ServerProcess | undefined> = [undefined, undefined, undefined];

  // The backlog's receiver: checks every signature, counts every arrival per event id, and kills instance 1
  // (SIGKILL, mid-delivery) once KILL_AFTER distinct events arrived. It answers each after a few ms, so that
  // every instance has attempts in flight when one dies.
  const backlog = {
    secret: '',
    arrivals: new Map<string, number>(),
    bodies: new Map<string, Received>(),
    badSignatures: 0,
    /** Set once every instance was woken: the kill waits for it, so no wake-up request is cut by it. */
    armed: false,
    killed: false,
    arrivalsAtKill: 0,
  };
  let backlogReceiver: Awaited<ReturnType<typeof startReceiver>>;
  let backlogEvents: Map<string, { sessionId: string; amount: number }>;
  // The other scenarios' receiver: answers 200 at once.
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const shops: Record<
    'push' | 'restart' | 'load1' | 'load2' | 'load3',
    { key: string; endpointSecret: string; businessId: string }
  > = {} as never;

  const rows = async <T>(sql: string, values: unknown[] = []) =>
    (await scratch.admin.query(sql, values)).rows as T[];
  const instance = (index: number): ServerProcess => {
    const running = instances[index];
    if (!running?.running) throw new Error(`instance ${index + 1} is not running`);
    return running;
  };
  const start = async (index: number) => {
    instances[index] = await startServerProcess({
      databaseUrl: scratch.url,
      secretsKeyFile,
      env: { SERVICEPAY_BANK_SECRET: bankSecret },
    });
    return instances[index] as ServerProcess;
  };
  /** Starts whichever instance is not running (a scenario that failed may have left one down). */
  const ensureRunning = () =>
    Promise.all(instances.map((running, index) => (running?.running ? running : start(index))));
  /** What the service settled for a session's account: [amount, result] per bank transfer. */
  const settled = async (sessionId: string) =>
    (
      await rows<{ amount: string; result: string }>(
        'SELECT amount, result FROM settled_transfers WHERE session_id = $1',
        [sessionId],
      )
    ).map((row) => [Number(row.amount), row.result]);
  const webhooksOf = (sessionId: string) =>
    receiver.received.filter((received) => received.body.data.session.id === sessionId);

  beforeAll(async () => {
    await migratePostgres(scratch.admin);
    let backlogBusinessId = '';
    writeFileSync(secretsKeyFile, randomBytes(32).toString('base64'), { mode: 0o600 });

    backlogReceiver = await startReceiver((received, res) => {
      if (!independentlyVerify(received.raw, String(received.headers['x-service-signature']), backlog.secret))
        backlog.badSignatures += 1;
      const id = String(received.body.id);
      backlog.arrivals.set(id, (backlog.arrivals.get(id) ?? 0) + 1);
      backlog.bodies.set(id, received);
      if (backlog.armed && !backlog.killed && backlog.arrivals.size >= KILL_AFTER) {
        backlog.killed = true;
        backlog.arrivalsAtKill = backlog.arrivals.size;
        void instances[0]?.stop('SIGKILL');
      }
      setTimeout(() => res.end('ok'), 5);
    });
    receiver = await startReceiver();

    // Before any instance runs: the businesses, their endpoints, and 1,000 sessions created and cancelled
    // through the service's own code on the shared database (no worker running), so the outbox holds 1,000
    // undelivered events when the instances start.
    const setup = createService(
      {
        databaseUrl: scratch.url,
        secretsKeyFile,
        port: 0,
        testWidgetPort: 0,
        liveWidgetPort: 0,
      },
      { logger: silentLogger },
    );
    try {
      const app = createApp(setup.deps).listen(0, '127.0.0.1') as Server;
      await once(app, 'listening');
      const setupUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
      const shop = async (name: string, url: string) => {
        const created = await createBusiness(setup.deps.store, name, false, Date.now());
        const endpoint = await call(setupUrl, 'POST', '/api/webhooks', {
          token: created.keys.test.secretKey,
          json: { url },
        });
        expect(endpoint.status, endpoint.text).toBe(201);
        return {
          created,
          businessId: created.business.id,
          key: created.keys.test.secretKey,
          endpointSecret: endpoint.body.data.secret as string,
        };
      };
      const backlogShop = await shop('Backlog Shop', backlogReceiver.url);
      backlogBusinessId = backlogShop.created.business.id;
      backlog.secret = backlogShop.endpointSecret;
      for (const name of ['push', 'restart', 'load1', 'load2', 'load3'] as const)
        shops[name] = await shop(`${name} shop`, receiver.url);
      await new Promise((resolve) => app.close(resolve));

      const business = await setup.deps.store.businesses.find(backlogShop.created.business.id);
      if (!business) throw new Error('no business');
      const caller: ApiCaller = { kind: 'secret', business, environment: 'test' };
      const sessions = await Promise.all(
        Array.from({ length: BACKLOG }, (_, i) =>
          setup.deps.sessions.create(
            caller,
            CreateSessionParamsSchema.parse({
              amount: 10_000 + i,
              currency: 'NGN',
              payer: { name: 'Ada', email: 'ada@example.com' },
            }),
          ),
        ),
      );
      await Promise.all(
        sessions.map((session) => setup.deps.sessions.cancel(session.id, 'cancelled_by_merchant', caller)),
      );
    } finally {
      await setup.close();
    }
    const events = await rows<{ id: string; session_id: string; amount: string }>(
      `SELECT e.id, e.session_id, s.amount FROM events e JOIN sessions s ON s.id = e.session_id
       WHERE e.type = 'session.cancelled' AND e.business_id = $1`,
      [backlogBusinessId],
    );
    backlogEvents = new Map(
      events.map((event) => [event.id, { sessionId: event.session_id, amount: Number(event.amount) }]),
    );
  }, 60_000);

  afterAll(async () => {
    await stopAllServerProcesses();
    await backlogReceiver?.close();
    await receiver?.close();
    rmSync(folder, { recursive: true, force: true });
  }, 60_000);

  it('kill -9 of one instance in a 1,000-event backlog: 0 lost, and every second copy is one the killed instance held or a recorded failed attempt', async ({
    annotate,
  }) => {
    expect(backlogEvents.size).toBe(BACKLOG);
    const [queued] = await rows<{ n: string }>(
      "SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending' AND attempt_count = 0",
    );
    expect(Number(queued?.n)).toBe(BACKLOG);

    // Held back while the instances start (due in ten minutes, as a retry scheduled after a receiver's
    // outage would be), then due at once: all three drain it together rather than the first one up alone.
    await rows("UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE status = 'pending'", [
      Date.now() + 600_000,
    ]);
    await Promise.all([start(0), start(1), start(2)]);
    await rows("UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE status = 'pending'", [Date.now()]);
    // A worker wakes at once on its own instance's commits, and otherwise looks again every `recheckMs` (0.5 s
    // on the fast schedule): one session cancelled on each instance (the push shop's) wakes all three now.
    await Promise.all(
      instances.map(async (server) => {
        const created = await call(server?.url as string, 'POST', '/api/widget/sessions', {
          token: shops.push.key,
          json: { amount: 5_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
        });
        expect(created.status, created.text).toBe(201);
        const cancelled = await call(
          server?.url as string,
          'POST',
          `/api/widget/sessions/${created.body.data.id}/cancel`,
          { token: shops.push.key },
        );
        expect(cancelled.status, cancelled.text).toBe(200);
      }),
    );
    backlog.armed = true;
    const arrivalsWhenAwake = backlog.arrivals.size;
    // Most of the backlog still there when all three are at work: the kill comes in the middle of it.
    expect(arrivalsWhenAwake).toBeLessThan(BACKLOG / 2);
    const victim = instances[0] as ServerProcess;
    expect(await victim.exited).toBeNull(); // ended by the signal, not by itself
    expect(backlog.killed).toBe(true);

    // The survivors drain everything else, and what the killed instance had claimed and never recorded too,
    // once its lease runs out (5 s on the fast schedule): nobody restarts it.
    await vi.waitFor(() => expect(backlog.arrivals.size).toBe(BACKLOG), { timeout: 30_000, interval: 100 });
    let deliveries: Array<{
      event_id: string;
      status: string;
      attempt_count: number;
      recorded: string;
      failures: string;
    }> = [];
    await vi.waitFor(
      async () => {
        deliveries = await rows(
          `SELECT d.event_id, d.status, d.attempt_count,
                  (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS recorded,
                  (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id
                     AND (a.status_code IS NULL OR a.status_code >= 300)) AS failures
           FROM webhook_deliveries d WHERE d.event_id = ANY($1)`,
          [[...backlogEvents.keys()]],
        );
        expect(deliveries).toHaveLength(BACKLOG);
        expect(deliveries.filter((delivery) => delivery.status !== 'succeeded')).toEqual([]);
      },
      { timeout: 10_000, interval: 100 },
    );
    // A little longer: a delivery sent once more would arrive now.
    await sleep(300);

    // 0 lost: every event of the backlog arrived, each with a valid signature and its own session and amount.
    expect(new Set(backlog.arrivals.keys())).toEqual(new Set(backlogEvents.keys()));
    expect(backlog.badSignatures).toBe(0);
    for (const [id, expected] of backlogEvents) {
      const body = backlog.bodies.get(id)?.body;
      expect(body).toMatchObject({
        id,
        type: 'session.cancelled',
        data: { session: { id: expected.sessionId, amount: expected.amount, status: 'cancelled' } },
      });
    }
    // Every arrival is an attempt the service recorded, or the one the dead instance sent and could not record
    // (at most one per delivery, and no more than the attempts it had in flight): so an event arrived twice only
    // if the killed instance held it, or a recorded attempt failed (timed out) and was retried, which is
    // at-least-once by design.
    const unrecordedEvents = new Set<string>();
    for (const delivery of deliveries) {
      const arrivals = backlog.arrivals.get(delivery.event_id) ?? 0;
      expect(Number(delivery.recorded)).toBe(delivery.attempt_count);
      expect(arrivals, delivery.event_id).toBeLessThanOrEqual(delivery.attempt_count + 1);
      if (arrivals > delivery.attempt_count) unrecordedEvents.add(delivery.event_id);
    }
    expect(unrecordedEvents.size).toBeLessThanOrEqual(WORKER_CONCURRENCY);
    const twice = [...backlog.arrivals].filter(([, n]) => n > 1).map(([id]) => id);
    const twiceHeld = twice.filter((id) => unrecordedEvents.has(id));
    const errors = await rows<{ error: string | null; status_code: number | null; n: string }>(
      `SELECT a.error, a.status_code, count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
       WHERE d.event_id = ANY($1) AND (a.status_code IS NULL OR a.status_code >= 300) GROUP BY a.error, a.status_code`,
      [[...backlogEvents.keys()]],
    );
    await annotate(
      `kill -9 in a ${BACKLOG}-event backlog: ${arrivalsWhenAwake} arrived when all three were awake, killed at ${backlog.arrivalsAtKill} distinct, ` +
        `${unrecordedEvents.size} sent by the killed instance and never recorded; ` +
        `${twice.length} event(s) received twice (${twiceHeld.length} of them the killed instance's claims, ${twice.length - twiceHeld.length} retried after a recorded failure); ` +
        `recorded failed attempts: ${errors.map((row) => `${row.n}× ${row.status_code ?? row.error}`).join(', ') || 'none'}; all ${BACKLOG} succeeded, 0 lost`,
    );
  }, 60_000);

  it('push across processes: a payment through instance 1 reaches the checkouts streaming from instances 2 and 3', async () => {
    await ensureRunning();
    const [one, two, three] = [instance(0), instance(1), instance(2)];
    const checkout = await openCheckout(one.url, shops.push.key, 25_000);
    const streams = await Promise.all(
      [two, three].map((server) => openStream(server.url, checkout.sessionId, checkout.token)),
    );
    for (const stream of streams)
      await stream.waitFor((frames) => frames.some((frame) => frame.data?.status === 'awaiting_payment'));

    // The payer pays through instance 1 (the simulated bank is one for all instances, as a real bank is).
    const transfer = await testTransfer(one.url, shops.push.key, checkout.accountNumber, 25_000);
    expect(transfer).toMatchObject({ outcome: 'credited', amount: 25_000, notification: 'delivered' });
    expect(await settled(checkout.sessionId)).toEqual([[25_000, 'credited']]);
    for (const stream of streams) {
      await stream.closed();
      const updates = stream.frames.filter((frame) => frame.data?.status);
      expect(updates.map((frame) => frame.data.status)).toEqual(['awaiting_payment', 'successful']);
      expect(updates.at(-1)?.data).toMatchObject({
        status: 'successful',
        session: { id: checkout.sessionId, amount: 25_000, status: 'successful' },
      });
    }
    expect(
      (
        await rows<{ type: string }>('SELECT type FROM events WHERE session_id = $1 ORDER BY seq', [
          checkout.sessionId,
        ])
      ).map((event) => event.type),
    ).toEqual(['session.awaiting_payment', 'session.successful']);
    // One signed webhook at the merchant, whichever instance sent it.
    await vi.waitFor(() => expect(webhooksOf(checkout.sessionId)).toHaveLength(1), { timeout: 10_000 });
    await sleep(300);
    const [webhook] = webhooksOf(checkout.sessionId);
    expect(webhooksOf(checkout.sessionId)).toHaveLength(1);
    expect(webhook?.body).toMatchObject({
      type: 'session.successful',
      data: { session: { id: checkout.sessionId, amount: 25_000, status: 'successful' } },
    });
    expect(
      independentlyVerify(
        webhook?.raw ?? Buffer.alloc(0),
        String(webhook?.headers['x-service-signature']),
        shops.push.endpointSecret,
      ),
    ).toBe(true);
  });

  it('a database restart under load: requests during the outage are answered 503, then every instance serves and pushes again by itself', async ({
    annotate,
  }) => {
    await ensureRunning();
    const all = [instance(0), instance(1), instance(2)];
    // Opened before the restart: a checkout of instance 1 streaming from instance 2. Its payment after the
    // restart can only reach the stream through instance 2's listening connection, which must reconnect.
    const waiting = await openCheckout(all[0]?.url as string, shops.restart.key, 61_000);
    const stream = await openStream(all[1]?.url as string, waiting.sessionId, waiting.token);
    await stream.waitFor((frames) => frames.some((frame) => frame.data?.status === 'awaiting_payment'));

    // The load: on each instance one client creating sessions one after another, each request with its own
    // Idempotency-Key and amount, as an SDK retrying later would send them.
    interface Attempt {
      instance: number;
      key: string;
      amount: number;
      startedAt: number;
      endedAt: number;
      status: number;
      code: string;
      /** The answer; undefined when none came (the connection failed). */
      answer: ApiResponse | undefined;
    }
    const loadShops = [shops.load1, shops.load2, shops.load3];
    const attempts: Attempt[] = [];
    let loading = true;
    let nextAmount = 30_000;
    const create = async (index: number, key: string, amount: number): Promise<Attempt> => {
      const startedAt = Date.now();
      try {
        const answer = await call(all[index]?.url as string, 'POST', '/api/widget/sessions', {
          token: loadShops[index]?.key as string,
          json: { amount, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
          headers: { 'idempotency-key': key },
        });
        const code = answer.status === 201 ? '' : String(answer.body?.meta?.code ?? answer.text.slice(0, 80));
        return {
          instance: index,
          key,
          amount,
          startedAt,
          endedAt: Date.now(),
          status: answer.status,
          code,
          answer,
        };
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause;
        return {
          instance: index,
          key,
          amount,
          startedAt,
          endedAt: Date.now(),
          status: 0,
          code: cause?.code ?? 'no answer',
          answer: undefined,
        };
      }
    };
    const loops = all.map(async (_, index) => {
      while (loading) {
        const amount = nextAmount++;
        attempts.push(await create(index, `load-${amount}`, amount));
        await sleep(100);
      }
    });
    await sleep(800);
    const downAt = Date.now();
    await scratch.postgres.restart({ downMs: 1500 });
    const upAt = Date.now();
    // Every instance answers again by itself (nobody restarts it): the first 200 on each marks its recovery.
    const recoveredAt = await Promise.all(
      all.map(async (server, index) => {
        await vi.waitFor(
          async () => {
            const answer = await call(server.url, 'GET', '/api/widget/sessions?limit=1', {
              token: loadShops[index]?.key as string,
            });
            expect(answer.status).toBe(200);
          },
          { timeout: 20_000, interval: 200 },
        );
        return Date.now();
      }),
    );
    await sleep(800);
    loading = false;
    await Promise.all(loops);

    const before = attempts.filter((attempt) => attempt.endedAt < downAt);
    const after = attempts.filter((attempt) => attempt.startedAt > (recoveredAt[attempt.instance] as number));
    const during = attempts.filter((attempt) => !before.includes(attempt) && !after.includes(attempt));
    const failed = during.filter((attempt) => attempt.status !== 201);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((attempt) => attempt.status === 201)).toBe(true);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((attempt) => attempt.status === 201)).toBe(true);
    // The outage was felt, and every request it failed was answered, in the envelope: 503
    // service_unavailable with Retry-After (never a dropped connection, a 500 or a 4xx blaming the client).
    expect(failed.length).toBeGreaterThan(0);
    for (const attempt of failed) {
      expect(attempt.answer, `${attempt.key}: ${attempt.code}`).toBeDefined();
      expectError(attempt.answer as ApiResponse, 503, 'service_unavailable');
      expect(Number(attempt.answer?.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const seen = new Map<string, number>();
    for (const attempt of failed) {
      const label = `${attempt.status} ${attempt.code}`;
      seen.set(label, (seen.get(label) ?? 0) + 1);
    }
    await annotate(
      `database down ${upAt - downAt} ms (restart with 1,500 ms down); ${attempts.length} creates: ${before.length} before (all 201), ` +
        `${during.length} during (${during.length - failed.length} 201; failed: ${[...seen].map(([label, n]) => `${n}× ${label}`).join(', ')}), ` +
        `${after.length} after (all 201); recovered ${recoveredAt.map((at) => at - upAt).join('/')} ms after the restart`,
    );

    // A client retries what failed with the same key: each answers 201 now, and every key made one session,
    // with its own amount: nothing created twice, nothing lost, nothing half-written.
    for (const attempt of failed) {
      const retried = await create(attempt.instance, attempt.key, attempt.amount);
      expect(retried.status, `${attempt.key}: ${retried.code}`).toBe(201);
    }
    for (const [index, shop] of loadShops.entries()) {
      const mine = attempts.filter((attempt) => attempt.instance === index);
      const stored = await rows<{ amount: string; n: string }>(
        'SELECT amount, count(*) AS n FROM sessions WHERE business_id = $1 GROUP BY amount',
        [shop.businessId],
      );
      expect(
        stored
          .map((row) => [Number(row.amount), Number(row.n)])
          .sort((x, y) => (x[0] as number) - (y[0] as number)),
      ).toEqual(mine.map((attempt) => [attempt.amount, 1]));
    }

    // Each instance's listening connection is back, one each (no leak), and the pools hold no more than theirs.
    await vi.waitFor(
      async () => {
        const [listeners] = await rows<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = 'processes' AND application_name = 'servicepay-listener'",
        );
        expect(Number(listeners?.n)).toBe(3);
      },
      { timeout: 15_000, interval: 200 },
    );

    // The money path on each instance by itself: session, payment through it, signed webhook.
    for (const [index, server] of all.entries()) {
      const amount = 70_000 + index;
      const checkout = await openCheckout(server.url, shops.restart.key, amount);
      expect(
        (await testTransfer(server.url, shops.restart.key, checkout.accountNumber, amount)).outcome,
      ).toBe('credited');
      const session = await call(server.url, 'GET', `/api/widget/sessions/${checkout.sessionId}`, {
        token: shops.restart.key,
      });
      expect(session.body.data).toMatchObject({ status: 'successful', amount });
      expect(session.body.data.paidAt).not.toBeNull();
      expect(await settled(checkout.sessionId)).toEqual([[amount, 'credited']]);
      await vi.waitFor(() => expect(webhooksOf(checkout.sessionId)).toHaveLength(1), { timeout: 10_000 });
      const [webhook] = webhooksOf(checkout.sessionId);
      expect(webhook?.body).toMatchObject({ type: 'session.successful', data: { session: { amount } } });
      expect(
        independentlyVerify(
          webhook?.raw ?? Buffer.alloc(0),
          String(webhook?.headers['x-service-signature']),
          shops.restart.endpointSecret,
        ),
      ).toBe(true);
    }

    // Push across instances again: the checkout opened before the restart is paid through instance 1 and
    // its stream on instance 2 sees SUCCESS.
    expect(
      (await testTransfer(all[0]?.url as string, shops.restart.key, waiting.accountNumber, 61_000)).outcome,
    ).toBe('credited');
    await stream.closed();
    expect(stream.frames.filter((frame) => frame.data?.status).map((frame) => frame.data.status)).toEqual([
      'awaiting_payment',
      'successful',
    ]);
    await vi.waitFor(() => expect(webhooksOf(waiting.sessionId)).toHaveLength(1), { timeout: 10_000 });
    await sleep(300);
    expect(webhooksOf(waiting.sessionId)).toHaveLength(1);

    const [connections] = await rows<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = 'processes'",
    );
    // Three instances × (a pool of 10 + one listener), plus this test's own pool of 2.
    expect(Number(connections?.n)).toBeLessThanOrEqual(3 * 11 + 2);
  }, 60_000);

  it('every instance stops cleanly on SIGTERM', async () => {
    const codes = await Promise.all(instances.map((running) => running?.stop('SIGTERM')));
    expect(codes).toEqual([0, 0, 0]);
    const [connections] = await rows<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = 'processes' AND pid <> pg_backend_pid()",
    );
    // Only this test's own pool may still hold a connection.
    expect(Number(connections?.n)).toBeLessThanOrEqual(1);
  });
});
