import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BankNotification } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rollKey } from '../../reference-server/src/index.ts';
import { randomBase62 } from '../../reference-server/src/internal/random.ts';
import { bankNotification, call, postNotification, sessionParams, testTransfer } from '../support/api.ts';
import { independentlyVerify, openCheckout, openStream, startReceiver } from '../support/checkout.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 13: several instances of the service behind one address, on one PostgreSQL. Two instances here run in
// this test's process, but share nothing except the database: each has its own pool, its own LISTEN
// connection, its own webhook worker, its own rate limiter object and its own simulated bank object (whose
// books are in the database too: the bank is one party for both). What one instance does, the other must see
// through PostgreSQL alone.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('two instances on one PostgreSQL', () => {
  const scratch = useScratchDatabase({ database: 'instances', pools: { admin: { max: 2 } } });
  let a: RunningServer;
  let b: RunningServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secretKey: string;
  let endpoint: { id: string; secret: string };
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-instances-'));
  // What SERVICEPAY_BANK_SECRET gives a deployment: every instance verifies the bank's signature alike.
  const bankSecret = randomBase62(40);
  // The secret key's budget per minute, shared by both instances (the setup of each test spends part of it).
  const BUDGET = 300;

  beforeAll(async () => {
    const config = {
      databaseUrl: scratch.url,
      bank: { secret: bankSecret },
      rateLimit: { perMinute: BUDGET },
    };
    // Started together: each applies the migrations it finds missing, under the advisory lock.
    [a, b] = await Promise.all([
      startServer(config, { dbPath: join(folder, 'bank-a.db') }),
      startServer(config, { dbPath: join(folder, 'bank-b.db') }),
    ]);
    receiver = await startReceiver();
    secretKey = (await a.createBusiness({ name: 'Two Instance Shop' })).keys.test.secretKey;
    endpoint = (
      await call(b.baseUrl, 'POST', '/api/webhooks', { token: secretKey, json: { url: receiver.url } })
    ).body.data;
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
    await Promise.all([a?.close(), b?.close()]);
    rmSync(folder, { recursive: true, force: true });
  });

  const rows = async <T>(sql: string, values: unknown[] = []) =>
    (await scratch.admin.query(sql, values)).rows as T[];
  const received = (sessionId: string) =>
    receiver.received.filter((r) => r.body.data.session.id === sessionId);

  it('applied each migration once although both instances started together', async () => {
    const [counts] = await rows<{ n: string; versions: string }>(
      'SELECT count(*) AS n, count(DISTINCT version) AS versions FROM schema_migrations',
    );
    expect(Number(counts?.n)).toBeGreaterThanOrEqual(8);
    expect(counts?.n).toBe(counts?.versions);
  });

  it('a payment made through one instance reaches the checkout streaming from the other within the push', async () => {
    const checkout = await openCheckout(a.baseUrl, secretKey, 20_000);
    const stream = await openStream(b.baseUrl, checkout.sessionId, checkout.token);
    await stream.waitFor((frames) => frames.some((frame) => frame.data?.status === 'awaiting_payment'));
    expect(b.service.deps.pushStreams.size).toBe(1);

    // The payer's transfer reaches the bank through the other instance: one bank, whichever instance.
    expect((await testTransfer(b.baseUrl, secretKey, checkout.accountNumber, 20_000)).outcome).toBe(
      'credited',
    );
    await stream.closed();
    expect(stream.frames.filter((frame) => frame.data).map((frame) => frame.data.status)).toEqual([
      'awaiting_payment',
      'successful',
    ]);
    await vi.waitFor(() => expect(received(checkout.sessionId)).toHaveLength(1));
  });

  it('the bank is one party: an account one instance provisioned takes the payer’s transfer at the other', async () => {
    const checkout = await openCheckout(b.baseUrl, secretKey, 21_500);
    const stream = await openStream(a.baseUrl, checkout.sessionId, checkout.token);
    await stream.waitFor((frames) => frames.some((frame) => frame.data?.status === 'awaiting_payment'));
    const paid = await call(a.baseUrl, 'POST', '/bank/transfers', {
      json: { accountNumber: checkout.accountNumber, amount: 21_500 },
    });
    expect(paid.status, paid.text).toBe(200);
    expect(paid.body.data).toMatchObject({ outcome: 'credited', amount: 21_500, notification: 'delivered' });
    await stream.closed();
    expect(stream.frames.filter((frame) => frame.data).map((frame) => frame.data.status)).toEqual([
      'awaiting_payment',
      'successful',
    ]);
    // The bank's books: one credit, the account closed by it; the service: paid once, one signed webhook.
    const books = await rows<{ amount: string; outcome: string; closed: boolean }>(
      `SELECT t.amount, t.outcome, a.closed_at IS NOT NULL AS closed
       FROM bank_transfers t JOIN bank_accounts a USING (account_number) WHERE t.account_number = $1`,
      [checkout.accountNumber],
    );
    expect(books).toEqual([{ amount: '21500', outcome: 'credited', closed: true }]);
    await vi.waitFor(() => expect(received(checkout.sessionId)).toHaveLength(1));
    const [webhook] = received(checkout.sessionId);
    if (!webhook) throw new Error('unreachable');
    expect(webhook.body.type).toBe('session.successful');
    expect(webhook.body.data.session).toMatchObject({ status: 'successful', amount: 21_500 });
    expect(
      independentlyVerify(webhook.raw, String(webhook.headers['x-service-signature']), endpoint.secret),
    ).toBe(true);
  });

  it('a transfer at one instance raced against a cancel at the other, 12 times: the money and the session agree', async () => {
    const checkouts = await Promise.all(
      Array.from({ length: 12 }, (_, index) => openCheckout(a.baseUrl, secretKey, 23_000 + index * 100)),
    );
    const raced = await Promise.all(
      checkouts.map(async (checkout, index) => {
        // Half the races send the transfer to A and the cancel to B, half the other way round.
        const [payAt, cancelAt] = index % 2 === 0 ? [a, b] : [b, a];
        const [transfer, cancel] = await Promise.all([
          call(payAt.baseUrl, 'POST', '/bank/transfers', {
            json: { accountNumber: checkout.accountNumber, amount: checkout.amount },
          }),
          call(cancelAt.baseUrl, 'POST', `/api/widget/sessions/${checkout.sessionId}/cancel`, {
            token: checkout.token,
          }),
        ]);
        return { checkout, transfer, cancel };
      }),
    );
    for (const { checkout, transfer, cancel } of raced) {
      expect(transfer.status, transfer.text).toBe(200);
      const session = (
        await call(b.baseUrl, 'GET', `/api/widget/sessions/${checkout.sessionId}`, { token: secretKey })
      ).body.data;
      if (transfer.body.data.outcome === 'credited') {
        // The credit came first: the session is paid, never cancelled, and nothing is refunded.
        expect(session).toMatchObject({ status: 'successful', amount: checkout.amount });
        if (cancel.status !== 200) expect(cancel.body.meta.code).toBe('session_not_active');
        else expect(cancel.body.data.status).toBe('successful');
      } else {
        // The close came first: the payer's transfer went back, and the session is cancelled.
        expect(transfer.body.data).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });
        expect(cancel.status).toBe(200);
        expect(session).toMatchObject({ status: 'cancelled', paidAt: null });
      }
      const ends = await rows<{ type: string }>(
        `SELECT type FROM events WHERE session_id = $1
           AND type IN ('session.successful', 'session.cancelled') ORDER BY seq`,
        [checkout.sessionId],
      );
      expect(ends).toEqual([{ type: `session.${session.status}` }]);
      // The ledger (issue 37) agrees: one payment, or the returned transfer's pair, each once.
      const entries = await rows<{ type: string; amount: string; transfer_id: string }>(
        'SELECT type, amount, transfer_id FROM balance_transactions WHERE session_id = $1 ORDER BY seq',
        [checkout.sessionId],
      );
      const amount = String(checkout.amount);
      const transferId = transfer.body.data.id;
      expect(entries).toEqual(
        transfer.body.data.outcome === 'credited'
          ? [{ type: 'payment', amount, transfer_id: transferId }]
          : [
              { type: 'transfer_received', amount, transfer_id: transferId },
              { type: 'transfer_return', amount: `-${amount}`, transfer_id: transferId },
            ],
      );
    }
    const refunds = await rows<{ n: string }>(
      `SELECT count(*) AS n FROM bank_refunds r JOIN bank_transfers t ON t.id = r.transfer_id
       WHERE t.account_number = ANY($1)`,
      [checkouts.map((checkout) => checkout.accountNumber)],
    );
    expect(refunds).toEqual([{ n: '0' }]);
  });

  it('60 copies of one notification spread over both instances make one transition, one event, one webhook', async () => {
    const checkout = await openCheckout(a.baseUrl, secretKey, 31_000);
    // One transfer, notified many times: the same notification, and copies of it under new notification ids.
    const { transfer } = bankNotification(checkout.accountNumber, 31_000);
    const notification = (): BankNotification => ({
      ...bankNotification(checkout.accountNumber, 31_000),
      transfer,
    });
    const post = (instance: RunningServer, body: BankNotification) =>
      postNotification(instance, body, { secret: bankSecret });
    const sameId = notification();
    const answers = await Promise.all([
      ...Array.from({ length: 25 }, () => post(a, sameId)),
      ...Array.from({ length: 25 }, () => post(b, sameId)),
      ...Array.from({ length: 5 }, () => post(a, notification())),
      ...Array.from({ length: 5 }, () => post(b, notification())),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(60).fill(200));
    expect(new Set(answers.map((answer) => answer.body.data.result))).toEqual(new Set(['credited']));
    const events = await rows<{ type: string }>(
      'SELECT type FROM events WHERE session_id = $1 ORDER BY seq',
      [checkout.sessionId],
    );
    expect(events.map((event) => event.type)).toEqual(['session.awaiting_payment', 'session.successful']);
    // One ledger entry for the one transfer (issue 37).
    const entries = await rows<{ type: string; amount: string }>(
      'SELECT type, amount FROM balance_transactions WHERE transfer_id = $1',
      [transfer.id],
    );
    expect(entries).toEqual([{ type: 'payment', amount: '31000' }]);
    await vi.waitFor(() => expect(received(checkout.sessionId)).toHaveLength(1));
    const [webhook] = received(checkout.sessionId);
    expect(webhook?.body).toMatchObject({
      type: 'session.successful',
      data: { session: { amount: 31_000 } },
    });
    expect(
      independentlyVerify(
        webhook?.raw ?? Buffer.alloc(0),
        String(webhook?.headers['x-service-signature']),
        endpoint.secret,
      ),
    ).toBe(true);
  });

  it('the webhook outbox drained by both workers: 120 events, each delivered once, none lost', async () => {
    const before = receiver.received.length;
    const created = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const server = i % 2 === 0 ? a : b;
        const session = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
          token: secretKey,
          json: { amount: 1_000 + i, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
        });
        expect(session.status).toBe(201);
        return session.body.data.id as string;
      }),
    );
    await Promise.all(
      created.map((id, i) =>
        call((i % 2 === 0 ? b : a).baseUrl, 'POST', `/api/widget/sessions/${id}/cancel`, {
          token: secretKey,
        }),
      ),
    );
    await vi.waitFor(() => expect(receiver.received.length - before).toBeGreaterThanOrEqual(120), {
      timeout: 20_000,
      interval: 100,
    });
    // A little longer: a delivery sent twice would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cancelled = receiver.received.slice(before).filter((r) => r.body.type === 'session.cancelled');
    expect(cancelled).toHaveLength(120);
    expect(new Set(cancelled.map((r) => r.body.id)).size).toBe(120);
    expect(new Set(cancelled.map((r) => r.body.data.session.id))).toEqual(new Set(created));
    // Each outcome is recorded by a write job of its own after the receiver answered, so on a loaded machine
    // the last few can still be queued when the receiver has all 120: wait for them, not a fixed time.
    await vi.waitFor(
      async () => {
        const deliveries = await rows<{ status: string; attempt_count: string; n: string }>(
          `SELECT d.status, d.attempt_count, count(*) AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
           WHERE e.session_id = ANY($1) GROUP BY d.status, d.attempt_count`,
          [created],
        );
        expect(deliveries.map((d) => [d.status, Number(d.attempt_count), Number(d.n)])).toEqual([
          ['succeeded', 1, 120],
        ]);
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it('a stream whose instance lost its LISTEN connection gets the payment it missed once the connection is back', async () => {
    const checkout = await openCheckout(a.baseUrl, secretKey, 44_000);
    const stream = await openStream(b.baseUrl, checkout.sessionId, checkout.token);
    await stream.waitFor((frames) => frames.some((frame) => frame.data?.status === 'awaiting_payment'));
    const catchUp = vi.spyOn(b.service.deps.pushStreams, 'catchUp');
    // Both instances' listening connections are cut (as a network blip or a failover would); the payment
    // commits and notifies while nobody listens, so no instance hears it.
    const cut = await rows<{ cut: boolean }>(
      "SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    );
    expect(cut.length).toBeGreaterThanOrEqual(2);
    expect((await testTransfer(a.baseUrl, secretKey, checkout.accountNumber, 44_000)).outcome).toBe(
      'credited',
    );
    // Instance B reconnects by itself, reports the gap, and its stream reads what it missed from events.
    await stream.closed();
    expect(stream.frames.filter((frame) => frame.data).map((frame) => frame.data.status)).toEqual([
      'awaiting_payment',
      'successful',
    ]);
    // The replay ran on B after its reconnection (it sends nothing a stream already has).
    expect(catchUp).toHaveBeenCalled();
  });

  it('one Idempotency-Key sent to both instances at once takes effect once; a retry replays that answer', async () => {
    const before = (await call(a.baseUrl, 'GET', '/api/webhooks', { token: secretKey })).body.data.length;
    const send = (server: RunningServer) =>
      call(server.baseUrl, 'POST', '/api/webhooks', {
        token: secretKey,
        json: { url: `${receiver.url}?twice` },
        headers: { 'idempotency-key': 'endpoint-across-instances' },
      });
    const answers = await Promise.all([send(a), send(b), send(a), send(b)]);
    const created = answers.filter((answer) => answer.status === 201);
    // The others came while the first was being answered (409, retry) or after (its replay).
    for (const answer of answers) expect([201, 409]).toContain(answer.status);
    expect(new Set(created.map((answer) => answer.body.data.id)).size).toBe(1);
    const after = (await call(b.baseUrl, 'GET', '/api/webhooks', { token: secretKey })).body.data;
    expect(after).toHaveLength(before + 1);
    const retry = await send(b);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.data.id).toBe(created[0]?.body.data.id);
  });

  it('one Idempotency-Key on session creates sent to both instances at once makes one session; the others replay it or answer 409 (issue 38: one statement)', async () => {
    const shop = await a.createBusiness({ name: 'One Key Shop' });
    const key = shop.keys.test.secretKey;
    // No reference: every create's session insert would succeed, so only the key's claim, in the same
    // statement, can keep a second session from being made.
    const create = (server: RunningServer) =>
      call(server.baseUrl, 'POST', '/api/widget/sessions', {
        token: key,
        json: { amount: 215_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
        headers: { 'idempotency-key': 'create-across-instances' },
      });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => create(i % 2 === 0 ? a : b)));
    for (const answer of answers) expect([201, 409], answer.text).toContain(answer.status);
    for (const refused of answers.filter((answer) => answer.status === 409)) {
      expect(refused.body.meta.code).toBe('idempotency_key_reused');
    }
    const created = answers.filter((answer) => answer.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((answer) => answer.body.data.id)).size).toBe(1);
    const stored = await rows<{ id: string; amount: string }>(
      'SELECT id, amount FROM sessions WHERE business_id = $1',
      [shop.business.id],
    );
    expect(stored).toEqual([{ id: created[0]?.body.data.id, amount: '215000' }]);
    const retry = await create(b);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(created[0]?.text);
  });

  it('one reference sent to both instances at once makes one session; every other create answers 409, none fails', async () => {
    const shop = await a.createBusiness({ name: 'Reference Shop' });
    const key = shop.keys.test.secretKey;
    const create = (server: RunningServer) =>
      call(server.baseUrl, 'POST', '/api/widget/sessions', {
        token: key,
        json: {
          amount: 125_000,
          currency: 'NGN',
          reference: 'order-both-instances',
          payer: { name: 'Ada', email: 'ada@example.com' },
        },
      });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => create(i % 2 === 0 ? a : b)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    for (const refused of answers.filter((answer) => answer.status === 409)) {
      expect(refused.body.meta.code).toBe('reference_already_used');
    }
    const stored = await rows<{ id: string; amount: string }>(
      'SELECT id, amount FROM sessions WHERE business_id = $1 AND reference = $2',
      [shop.business.id, 'order-both-instances'],
    );
    expect(stored).toEqual([
      { id: answers.find((answer) => answer.status === 201)?.body.data.id, amount: '125000' },
    ]);
  });

  it('an instance with another secrets key refuses to start, saying which key to give it', async () => {
    // Its own folder: the development key file beside its bank file is a new key, not the one A and B share.
    const elsewhere = mkdtempSync(join(tmpdir(), 'servicepay-other-key-'));
    try {
      await expect(
        startServer(
          { databaseUrl: a.service.config.databaseUrl, bank: { secret: bankSecret } },
          { dbPath: join(elsewhere, 'bank-c.db') },
        ),
      ).rejects.toThrow(/same key.*SERVICEPAY_SECRETS_KEY/);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('a key one instance remembers is not read again while nothing changed, and stops there once rolled at the other (issue 38)', async () => {
    // Each instance remembers the keys it found; the rate-limit hit a request makes anyway reads the
    // credentials version in its own statement, and only a change to keys or businesses makes the instance read
    // the key again (db/postgres/postgres-api-key-repository.ts).
    const created = await a.createBusiness({ name: 'Remembered Key Shop' });
    const key = created.keys.test.secretKey;
    const list = (server: RunningServer) =>
      call(server.baseUrl, 'GET', '/api/widget/sessions?limit=1', { token: key });
    expect((await list(a)).status).toBe(200);
    const reads = vi.spyOn(a.service.deps.store.apiKeys, 'findWithOwner');
    try {
      for (let i = 0; i < 5; i++) expect((await list(a)).status).toBe(200);
      expect(reads).not.toHaveBeenCalled();

      // Another business signs up through the other instance: the version moves, so A reads the key once.
      await b.createBusiness({ name: 'Someone Else' });
      expect((await list(a)).status).toBe(200);
      expect(reads).toHaveBeenCalledTimes(1);
      for (let i = 0; i < 3; i++) expect((await list(a)).status).toBe(200);
      expect(reads).toHaveBeenCalledTimes(1);

      // The key rolled through B: A's very next request with it is refused, and nothing is created with it.
      const rolled = await rollKey(b.service.deps.store, created.business.id, 'test', 'secret', Date.now());
      const newKey = rolled?.key ?? '';
      expect(newKey).toMatch(/^sk_test_/);
      const create = await call(a.baseUrl, 'POST', '/api/widget/sessions', {
        token: key,
        json: sessionParams(),
      });
      expect(create.status).toBe(401);
      expect(create.body.meta.code).toBe('api_key_revoked');
      expect((await list(a)).status).toBe(401);
      const [sessions] = await rows<{ n: string }>(
        'SELECT count(*) AS n FROM sessions WHERE business_id = $1',
        [created.business.id],
      );
      expect(Number(sessions?.n)).toBe(0);
      // The new key works on both.
      const fresh = (server: RunningServer) =>
        call(server.baseUrl, 'GET', '/api/widget/sessions?limit=1', { token: newKey });
      expect((await fresh(a)).status).toBe(200);
      expect((await fresh(b)).status).toBe(200);
    } finally {
      reads.mockRestore();
    }
  });

  it('the rate limit is one budget across the instances', async () => {
    const other = await a.createBusiness({ name: 'Budget Shop' });
    const key = other.keys.test.secretKey;
    const list = (server: RunningServer) =>
      call(server.baseUrl, 'GET', '/api/widget/sessions?limit=1', { token: key });
    const answers = await Promise.all(
      Array.from({ length: BUDGET + 10 }, (_, i) => list(i % 2 === 0 ? a : b)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(BUDGET);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
    // Both instances refuse from now on, whichever one a client reaches.
    expect((await list(a)).status).toBe(429);
    expect((await list(b)).status).toBe(429);
  });
});
