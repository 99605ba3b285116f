import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BankNotification } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bankNotification, call, postNotification, testTransfer } from '../support/api.ts';
import { independentlyVerify, openCheckout, openStream, startReceiver } from '../support/checkout.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 13: the whole service on PostgreSQL (SERVICEPAY_DATABASE_URL), one instance, on a real PostgreSQL 15:
// the same HTTP API, the same money path, the same promises as on SQLite. Every figure below is read back
// through the API or from PostgreSQL itself, never from the process's memory.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('the service on PostgreSQL (one instance)', () => {
  const scratch = useScratchDatabase({ database: 'service', pools: { admin: { max: 2 } } });
  let server: RunningServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secretKey: string;
  let endpoint: { id: string; secret: string };
  // The simulated bank's books and the development secrets key, kept across the restart below.
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-pg-service-'));
  const dbPath = join(folder, 'bank.db');

  beforeAll(async () => {
    server = await startServer({ databaseUrl: scratch.url, rateLimit: { perMinute: 10_000 } }, { dbPath });
    receiver = await startReceiver();
    secretKey = (await server.createBusiness({ name: 'Postgres Shop' })).keys.test.secretKey;
    endpoint = (
      await call(server.baseUrl, 'POST', '/api/webhooks', { token: secretKey, json: { url: receiver.url } })
    ).body.data;
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
    await server?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const rows = async <T>(sql: string, values: unknown[] = []) =>
    (await scratch.admin.query(sql, values)).rows as T[];

  it('keeps its data in PostgreSQL: the schema is migrated and the business and keys are rows there', async () => {
    const [migrations] = await rows<{ n: string }>('SELECT count(*) AS n FROM schema_migrations');
    expect(Number(migrations?.n)).toBeGreaterThanOrEqual(8);
    const businesses = await rows<{ name: string }>('SELECT name FROM businesses');
    expect(businesses).toEqual([{ name: 'Postgres Shop' }]);
    // Keys are stored as hashes only.
    const keys = await rows<{ key_hash: Buffer }>('SELECT key_hash FROM api_keys');
    expect(keys).toHaveLength(4);
    expect(JSON.stringify(await rows('SELECT * FROM api_keys'))).not.toContain(secretKey);
    expect(() => server.service.db).toThrow(/PostgreSQL/);
  });

  it('pays a session: the open checkout hears SUCCESS, the merchant gets one signed webhook, the amounts agree', async () => {
    const checkout = await openCheckout(server.baseUrl, secretKey, 123_400);
    const stream = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
    await stream.waitFor((frames) => frames.some((frame) => frame.data?.status === 'awaiting_payment'));

    const transfer = await testTransfer(server.baseUrl, secretKey, checkout.accountNumber, 123_400);
    expect(transfer.outcome).toBe('credited');
    await stream.closed();
    expect(stream.frames.filter((frame) => frame.data).map((frame) => frame.data.status)).toEqual([
      'awaiting_payment',
      'successful',
    ]);

    const session = await call(server.baseUrl, 'GET', `/api/widget/sessions/${checkout.sessionId}`, {
      token: secretKey,
    });
    expect(session.body.data).toMatchObject({ status: 'successful', amount: 123_400, currency: 'NGN' });
    expect(session.body.data.paidAt).not.toBeNull();

    await vi.waitFor(() =>
      expect(receiver.received.filter((r) => r.body.data.session.id === checkout.sessionId)).toHaveLength(1),
    );
    const [delivered] = receiver.received.filter((r) => r.body.data.session.id === checkout.sessionId);
    expect(delivered?.body).toMatchObject({
      type: 'session.successful',
      data: { session: { id: checkout.sessionId, status: 'successful', amount: 123_400 } },
    });
    expect(
      independentlyVerify(
        delivered?.raw ?? Buffer.alloc(0),
        String(delivered?.headers['x-service-signature']),
        endpoint.secret,
      ),
    ).toBe(true);

    // What PostgreSQL holds: one transition to successful, one event, one delivery, succeeded.
    const events = await rows<{ type: string }>(
      'SELECT type FROM events WHERE session_id = $1 ORDER BY seq',
      [checkout.sessionId],
    );
    expect(events.map((event) => event.type)).toEqual(['session.awaiting_payment', 'session.successful']);
    await vi.waitFor(async () => {
      const deliveries = await rows<{ status: string; attempt_count: string }>(
        `SELECT d.status, d.attempt_count FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         WHERE e.session_id = $1`,
        [checkout.sessionId],
      );
      expect(deliveries.map((d) => [d.status, Number(d.attempt_count)])).toEqual([['succeeded', 1]]);
    });
  });

  it('60 concurrent copies of one bank notification (and copies under new ids) make one transition and one webhook', async () => {
    const checkout = await openCheckout(server.baseUrl, secretKey, 75_000);
    // One transfer, notified many times: the same notification, and copies of it under new notification ids.
    const { transfer } = bankNotification(checkout.accountNumber, 75_000);
    const notification = (): BankNotification => ({
      ...bankNotification(checkout.accountNumber, 75_000),
      transfer,
    });
    const post = (body: BankNotification) => postNotification(server, body);
    const sameId = notification();
    const answers = await Promise.all([
      ...Array.from({ length: 50 }, () => post(sameId)),
      ...Array.from({ length: 10 }, () => post(notification())),
    ]);
    // Every copy is acknowledged (the bank must stop retrying), each as credited: the first made the transition,
    // the others found it (by notification id or by transfer id).
    expect(answers.map((answer) => answer.status)).toEqual(Array(60).fill(200));
    expect(new Set(answers.map((answer) => answer.body.data.result))).toEqual(new Set(['credited']));

    const events = await rows<{ type: string }>(
      "SELECT type FROM events WHERE session_id = $1 AND type = 'session.successful'",
      [checkout.sessionId],
    );
    expect(events).toHaveLength(1);
    const [settled] = await rows<{ n: string }>(
      'SELECT count(*) AS n FROM settled_transfers WHERE transfer_id = $1',
      [transfer.id],
    );
    expect(Number(settled?.n)).toBe(1);
    await vi.waitFor(() =>
      expect(receiver.received.filter((r) => r.body.data.session.id === checkout.sessionId)).toHaveLength(1),
    );
    // Nothing went to unapplied credits: the money paid the session once.
    expect(await rows('SELECT id FROM unapplied_credits WHERE transfer_id = $1', [transfer.id])).toEqual([]);
  });

  it('while the database is down the API answers 503 service_unavailable with Retry-After, and recovers by itself', async () => {
    const list = () => call(server.baseUrl, 'GET', '/api/widget/sessions?limit=1', { token: secretKey });
    expect((await list()).status).toBe(200);
    const restarting = scratch.postgres.restart({ downMs: 2_000 });
    // Until the server is gone the pool's idle connections may still answer; wait for the outage itself.
    await vi.waitFor(async () => expect((await list()).status).toBe(503), { timeout: 5_000, interval: 50 });
    const down = await list();
    expect(down.status).toBe(503);
    expect(down.body.meta).toMatchObject({ statusCode: 503, code: 'service_unavailable' });
    expect(down.headers.get('retry-after')).toBe('1');
    const create = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: secretKey,
      json: { amount: 9_900, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
      headers: { 'idempotency-key': 'during-the-outage' },
    });
    expect(create.status).toBe(503);
    await restarting;
    // The pool and the listener reconnect by themselves: no restart of the service.
    await vi.waitFor(async () => expect((await list()).status).toBe(200), { timeout: 10_000, interval: 100 });
    const retried = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: secretKey,
      json: { amount: 9_900, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
      headers: { 'idempotency-key': 'during-the-outage' },
    });
    expect(retried.status).toBe(201);
    const made = await rows<{ n: string }>('SELECT count(*) AS n FROM sessions WHERE amount = 9900');
    expect(Number(made[0]?.n)).toBe(1);
  });

  it('a restart on the same database keeps sessions, keys and webhooks', async () => {
    const checkout = await openCheckout(server.baseUrl, secretKey, 5_000);
    await server.close();
    server = await startServer({ databaseUrl: scratch.url, rateLimit: { perMinute: 10_000 } }, { dbPath });
    const session = await call(server.baseUrl, 'GET', `/api/widget/sessions/${checkout.sessionId}`, {
      token: secretKey,
    });
    expect(session.status).toBe(200);
    expect(session.body.data).toMatchObject({ status: 'awaiting_payment', amount: 5_000 });
    const endpoints = await call(server.baseUrl, 'GET', '/api/webhooks', { token: secretKey });
    expect(endpoints.body.data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    // No second copy of the schema: the migrations were applied once.
    const [migrations] = await rows<{ n: string; distinct: string }>(
      'SELECT count(*) AS n, count(DISTINCT version) AS distinct FROM schema_migrations',
    );
    expect(migrations?.n).toBe(migrations?.distinct);
  });
});
