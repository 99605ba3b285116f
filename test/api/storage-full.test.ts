import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  bankNotification,
  bootstrap,
  call,
  createSession,
  eventTypes,
  postNotification,
  retrieveSession,
  sessionParams,
} from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import {
  expectStorageFull,
  type FullDiskServer,
  healthyAgain,
  startServerOnSmallDisk,
} from '../support/full-disk-server.ts';
import type { RunningServer } from '../support/server.ts';
import { smallDiskAvailable, smallDiskMissingReason } from '../support/small-disk.ts';

if (!smallDiskAvailable) {
  process.stdout.write(`full-disk suites: ${smallDiskMissingReason}; not run\n`);
}

const count = async (server: RunningServer, table: string) =>
  Number((await server.rows<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);

// On SQLite, the file's WAL only grows while these tests run: they commit fewer times than the 64 after which
// the checkpoints start, which would let writes reuse the WAL's space (storage-full-on-sqlite.test.ts).
describe.runIf(smallDiskAvailable)('with the data on a real disk (tmpfs) filled to ENOSPC', () => {
  let full: FullDiskServer;
  let server: RunningServer;
  let secretKey: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let receiverAnswers = 200;

  beforeAll(async () => {
    full = await startServerOnSmallDisk();
    server = full.server;
    secretKey = (await server.createBusiness()).keys.test.secretKey;
    receiver = await startReceiver((_received, res) => {
      res.statusCode = receiverAnswers;
      res.end('ok');
    });
    const endpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
      token: secretKey,
      json: { url: receiver.url },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
  });

  afterEach(async () => {
    full.disk.free();
    receiverAnswers = 200;
    await healthyAgain(server);
  });

  afterAll(async () => {
    await receiver?.close();
    await full?.close();
  });

  it('answers every write 503 service_unavailable with Retry-After, keeps nothing of it, and still answers reads; /health answers 503', async () => {
    const open = await createSession(server.baseUrl, secretKey);
    const opened = await bootstrap(server.baseUrl, open.clientSecret);
    const before = {
      sessions: await count(server, 'sessions'),
      events: await count(server, 'events'),
      endpoints: await count(server, 'webhook_endpoints'),
      deliveries: await count(server, 'webhook_deliveries'),
      keys: await count(server, 'idempotent_requests'),
    };
    expect((await call(server.baseUrl, 'GET', '/health')).status).toBe(200);

    full.disk.fill();
    const account = opened.virtualAccount.accountNumber;
    const writes = {
      create: await call(server.baseUrl, 'POST', '/api/widget/sessions', {
        token: secretKey,
        json: sessionParams(),
        headers: { 'idempotency-key': 'full-create' },
      }),
      cancel: await call(server.baseUrl, 'POST', `/api/widget/sessions/${open.id}/cancel`, {
        token: secretKey,
      }),
      transfer: await call(server.baseUrl, 'POST', '/api/test/transfers', {
        token: secretKey,
        json: { accountNumber: account, amount: open.amount },
        headers: { 'idempotency-key': 'full-transfer' },
      }),
      notification: await postNotification(server, bankNotification(account, open.amount)),
      webhook: await call(server.baseUrl, 'POST', '/api/webhooks', {
        token: secretKey,
        json: { url: `${receiver.url}/second` },
        headers: { 'idempotency-key': 'full-webhook' },
      }),
    };
    for (const [name, response] of Object.entries(writes)) {
      expect({ name, status: response.status }).toEqual({ name, status: 503 });
      expectStorageFull(response);
    }
    const health = await call(server.baseUrl, 'GET', '/health');
    expectStorageFull(health);

    // Reads answer, and show nothing of the refused writes: the session is still waiting for its money.
    const session = await retrieveSession(server.baseUrl, secretKey, open.id);
    expect(session.status).toBe('awaiting_payment');
    const list = await call(server.baseUrl, 'GET', '/api/widget/sessions?limit=10', { token: secretKey });
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((listed: { id: string }) => listed.id)).toContain(open.id);
    expect(await eventTypes(server, open.id)).toEqual(['session.awaiting_payment']);
    expect({
      sessions: await count(server, 'sessions'),
      events: await count(server, 'events'),
      endpoints: await count(server, 'webhook_endpoints'),
      deliveries: await count(server, 'webhook_deliveries'),
      keys: await count(server, 'idempotent_requests'),
    }).toEqual(before);
  });

  it('recovers by itself once space is back: /health turns 200 with no client write, and the same requests with the same Idempotency-Keys succeed, the money once', async () => {
    const open = await createSession(server.baseUrl, secretKey);
    const account = (await bootstrap(server.baseUrl, open.clientSecret)).virtualAccount.accountNumber;
    const notification = bankNotification(account, open.amount);
    const create = () =>
      call(server.baseUrl, 'POST', '/api/widget/sessions', {
        token: secretKey,
        json: sessionParams({ reference: 'order-1042' }),
        headers: { 'idempotency-key': 'retried-create' },
      });
    const webhook = () =>
      call(server.baseUrl, 'POST', '/api/webhooks', {
        token: secretKey,
        json: { url: `${receiver.url}/retried` },
        headers: { 'idempotency-key': 'retried-webhook' },
      });

    full.disk.fill();
    expectStorageFull(await create());
    expectStorageFull(await webhook());
    expectStorageFull(await postNotification(server, notification));
    expectStorageFull(await call(server.baseUrl, 'GET', '/health'));
    // Still full: the probe write /health makes fails too.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expectStorageFull(await call(server.baseUrl, 'GET', '/health'));

    full.disk.free();
    // No client write in between: /health's own probe write finds the space.
    await healthyAgain(server);

    const created = await create();
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
    const replayed = await create();
    expect(replayed.status).toBe(201);
    expect(replayed.body.data.id).toBe(created.body.data.id);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    const endpoint = await webhook();
    expect(endpoint.status, endpoint.text).toBe(201);
    expect(endpoint.body.data.url).toBe(`${receiver.url}/retried`);

    // The bank sends its notification again (it retries a 503): the session is paid, once.
    const accepted = await postNotification(server, notification);
    expect(accepted.status, accepted.text).toBe(200);
    expect((await postNotification(server, notification)).status).toBe(200);
    const paid = await retrieveSession(server.baseUrl, secretKey, open.id);
    expect(paid.status).toBe('successful');
    expect(await eventTypes(server, open.id)).toEqual(['session.awaiting_payment', 'session.successful']);
    // Each endpoint is told once: the one registered before, and the one registered by the retry.
    await vi.waitFor(
      () =>
        expect(
          receiver.received
            .filter(
              (received) =>
                received.body.type === 'session.successful' && received.body.data.session.id === open.id,
            )
            .map((received) => received.path)
            .sort(),
        ).toEqual(['/hooks', '/hooks/retried']),
      { timeout: 15_000, interval: 100 },
    );
  });

  it('delivers a webhook that fell due while the disk was full once space is back: no outbox entry is lost', async () => {
    receiverAnswers = 500;
    const open = await createSession(server.baseUrl, secretKey);
    const cancelled = await call(server.baseUrl, 'POST', `/api/widget/sessions/${open.id}/cancel`, {
      token: secretKey,
    });
    expect(cancelled.status, cancelled.text).toBe(200);
    const deliveredToReceiver = () =>
      receiver.received.filter(
        (received) => received.body.type === 'session.cancelled' && received.body.data.session.id === open.id,
      ).length;
    // The first attempt fails at the receiver and is recorded; the retries then fall due on a full disk.
    await vi.waitFor(() => expect(deliveredToReceiver()).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
    full.disk.fill();
    const attemptsWhileFull = deliveredToReceiver();
    receiverAnswers = 200;
    // Attempts made now reach the receiver, but cannot be recorded: the delivery stays due.
    await vi.waitFor(() => expect(deliveredToReceiver()).toBeGreaterThan(attemptsWhileFull), {
      timeout: 15_000,
    });
    full.disk.free();
    await vi.waitFor(
      async () => {
        const [delivery] = await server.rows<{ status: string }>(
          `SELECT d.status AS status FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
            WHERE e.session_id = ? AND e.type = 'session.cancelled'`,
          open.id,
        );
        expect(delivery?.status).toBe('succeeded');
      },
      { timeout: 20_000, interval: 200 },
    );
  });
});
