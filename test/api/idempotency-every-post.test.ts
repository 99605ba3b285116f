import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../reference-server/src/index.ts';
import { type ApiResponse, bootstrap, call, createSession, expectError, rawCall } from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// docs/protocol.md, Idempotency: every POST the SDK retries (endpoint create, roll, resend, cancel, test
// transfer, test account, test expiries, new account) answers a retry with the same key and body with the first answer, byte
// for byte, and makes its effect once; another body or another route under the same key is 409
// `idempotency_key_reused`.

let server: RunningServer;
let clock: ManualClock;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let key: string;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2030-04-01T09:00:00Z'));
  receiver = await startReceiver();
  server = await startServer({ rateLimit: { perMinute: 10_000 } }, { clock });
  key = (await server.createBusiness({ name: 'Retrying Shop', kycApproved: true })).keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
  await receiver.close();
});

const post = (path: string, token: string, idempotencyKey: string, json?: unknown) =>
  call(server.baseUrl, 'POST', path, {
    token,
    headers: { 'idempotency-key': idempotencyKey },
    ...(json === undefined ? {} : { json }),
  });

const count = async (sql: string, ...params: unknown[]): Promise<number> => {
  const [row] = await server.rows<{ n: number }>(sql, ...params);
  if (!row) throw new Error('a count answered no row');
  return row.n;
};

/** The first answer, then its replay: the same status and bytes, marked as replayed. */
function expectReplay(first: ApiResponse, again: ApiResponse, status: number) {
  expect(first.status, first.text).toBe(status);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(again.status, again.text).toBe(status);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.text).toBe(first.text);
}

/** Two requests sent at once: one ran, the other is its replay. */
function expectOneRan(pair: ApiResponse[], status: number) {
  const [a, b] = pair as [ApiResponse, ApiResponse];
  expect([a.status, b.status]).toEqual([status, status]);
  expect(pair.filter((response) => response.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
  expect(a.text).toBe(b.text);
}

const secretsOf = async (endpointId: string) => {
  const [row] = await server.rows<{ secret_ciphertext: string; previous_secret_ciphertext: string | null }>(
    'SELECT secret_ciphertext, previous_secret_ciphertext FROM webhook_endpoints WHERE id = ?',
    endpointId,
  );
  if (!row) throw new Error(`no endpoint ${endpointId}`);
  const box = server.service.secretBox;
  return {
    current: box.open(row.secret_ciphertext),
    previous: row.previous_secret_ciphertext === null ? null : box.open(row.previous_secret_ciphertext),
  };
};

describe('POST /api/webhooks', () => {
  const endpointsAt = (url: string) =>
    count('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE url = ?', url);

  it('a retry makes one endpoint and answers the same signing secret, kept encrypted', async () => {
    const url = `${receiver.url}/create-1`;
    const first = await post('/api/webhooks', key, 'endpoint-1', { url });
    const again = await post('/api/webhooks', key, 'endpoint-1', { url });
    expectReplay(first, again, 201);
    expect(again.body.data.secret).toMatch(/^whsec_/);
    expect(again.body.data.secret).toBe(first.body.data.secret);
    expect(await endpointsAt(url)).toBe(1);
    const remembered = JSON.stringify(
      await server.rows("SELECT * FROM idempotent_requests WHERE idempotency_key = 'endpoint-1'"),
    );
    expect(remembered).not.toContain(first.body.data.secret);
  });

  it('the same body with its keys in another order is the same request', async () => {
    const url = `${receiver.url}/create-order`;
    const first = await post('/api/webhooks', key, 'endpoint-order', { url, description: 'orders' });
    const again = await post('/api/webhooks', key, 'endpoint-order', { description: 'orders', url });
    expectReplay(first, again, 201);
    expect(await endpointsAt(url)).toBe(1);
  });

  it('a key remembered before an upgrade still matches its retry: the body is hashed in the same canonical form', async () => {
    // The form every stored request hash was made with until 2026-11-26: JSON.stringify rebuilding each object
    // from its sorted keys, so array-index keys ("2" before "10") come first, then the rest by code unit.
    const canonicalBefore = (value: unknown) =>
      JSON.stringify(value, (_key, field: unknown) =>
        field !== null && typeof field === 'object' && !Array.isArray(field)
          ? Object.fromEntries(Object.entries(field).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
          : field,
      );
    const body = {
      reference: 'canonical-1',
      amount: 150_000,
      currency: 'NGN',
      payer: { name: 'Ada Lovelace', email: 'ada@example.com' },
      metadata: { zeta: 'z', '10': 'ten', b: 'bee', '2': 'two', Alpha: 'é', '01': 'not an index' },
    };
    const first = await post('/api/widget/sessions', key, 'canonical-1', body);
    expect(first.status, first.text).toBe(201);
    const [row] = await server.rows<{ request_hash: Buffer }>(
      "SELECT request_hash FROM idempotent_requests WHERE idempotency_key = 'canonical-1'",
    );
    const before = createHash('sha256')
      .update(`POST /api/widget/sessions\n${canonicalBefore(body)}`)
      .digest();
    expect(row?.request_hash.equals(before)).toBe(true);
    const again = await post('/api/widget/sessions', key, 'canonical-1', body);
    expectReplay(first, again, 201);
  });

  it('the same key with another body is 409 and makes nothing', async () => {
    const url = `${receiver.url}/create-2`;
    expect((await post('/api/webhooks', key, 'endpoint-2', { url })).status).toBe(201);
    const other = await post('/api/webhooks', key, 'endpoint-2', { url, description: 'orders' });
    expectError(other, 409, 'idempotency_key_reused');
    expect(await endpointsAt(url)).toBe(1);
  });

  it('two concurrent requests with one key make one endpoint', async () => {
    const url = `${receiver.url}/create-3`;
    const pair = await Promise.all([
      post('/api/webhooks', key, 'endpoint-3', { url }),
      post('/api/webhooks', key, 'endpoint-3', { url }),
    ]);
    expectOneRan(pair, 201);
    expect(await endpointsAt(url)).toBe(1);
  });
});

describe('POST /api/webhooks/:id/roll-secret', () => {
  async function endpoint(path: string) {
    const created = await post('/api/webhooks', key, `for-roll-${path}`, { url: `${receiver.url}/${path}` });
    expect(created.status, created.text).toBe(201);
    return { id: created.body.data.id as string, secret: created.body.data.secret as string };
  }

  it('a retry rolls once: the original secret keeps its grace beside the new one', async () => {
    const { id, secret } = await endpoint('roll-1');
    const first = await post(`/api/webhooks/${id}/roll-secret`, key, 'roll-1');
    const again = await post(`/api/webhooks/${id}/roll-secret`, key, 'roll-1');
    expectReplay(first, again, 200);
    expect(first.body.data.secret).not.toBe(secret);
    // A second roll would have made the first rolled secret the previous one and ended the original's grace.
    expect(await secretsOf(id)).toEqual({ current: first.body.data.secret, previous: secret });
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM audit_log WHERE action = 'webhook_endpoint.secret_rolled' AND target = ?",
        id,
      ),
    ).toBe(1);
  });

  it('the same key on another endpoint (another route) is 409 and rolls nothing', async () => {
    const one = await endpoint('roll-2a');
    const two = await endpoint('roll-2b');
    expect((await post(`/api/webhooks/${one.id}/roll-secret`, key, 'roll-2')).status).toBe(200);
    expectError(
      await post(`/api/webhooks/${two.id}/roll-secret`, key, 'roll-2'),
      409,
      'idempotency_key_reused',
    );
    expect(await secretsOf(two.id)).toEqual({ current: two.secret, previous: null });
  });

  it('two concurrent rolls with one key roll once', async () => {
    const { id, secret } = await endpoint('roll-3');
    const pair = await Promise.all([
      post(`/api/webhooks/${id}/roll-secret`, key, 'roll-3'),
      post(`/api/webhooks/${id}/roll-secret`, key, 'roll-3'),
    ]);
    expectOneRan(pair, 200);
    expect(await secretsOf(id)).toEqual({ current: pair[0]?.body.data.secret, previous: secret });
  });
});

describe('POST /api/events/:id/resend', () => {
  let endpointId: string;
  let eventId: string;
  const deliveries = () =>
    count(
      'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?',
      endpointId,
      eventId,
    );

  beforeAll(async () => {
    const created = await post('/api/webhooks', key, 'for-resend', { url: `${receiver.url}/resend` });
    endpointId = created.body.data.id;
    const session = await createSession(server.baseUrl, key);
    const cancelled = await call(server.baseUrl, 'POST', `/api/widget/sessions/${session.id}/cancel`, {
      token: key,
    });
    expect(cancelled.status, cancelled.text).toBe(200);
    const [event] = await server.rows<{ id: string }>(
      "SELECT id FROM events WHERE session_id = ? AND type = 'session.cancelled'",
      session.id,
    );
    if (!event) throw new Error('no session.cancelled event');
    eventId = event.id;
  });

  it('a retry queues one more delivery, not two', async () => {
    const before = await deliveries();
    const first = await post(`/api/events/${eventId}/resend`, key, 'resend-1', { endpointId });
    const again = await post(`/api/events/${eventId}/resend`, key, 'resend-1', { endpointId });
    expectReplay(first, again, 202);
    expect(first.body.data.deliveries).toHaveLength(1);
    expect(await deliveries()).toBe(before + 1);
  });

  it('the same key with another body is 409 and queues nothing', async () => {
    expect((await post(`/api/events/${eventId}/resend`, key, 'resend-2', { endpointId })).status).toBe(202);
    const before = await deliveries();
    expectError(
      await post(`/api/events/${eventId}/resend`, key, 'resend-2', {}),
      409,
      'idempotency_key_reused',
    );
    expect(await deliveries()).toBe(before);
  });

  it('two concurrent resends with one key queue one delivery', async () => {
    const before = await deliveries();
    const pair = await Promise.all([
      post(`/api/events/${eventId}/resend`, key, 'resend-3', { endpointId }),
      post(`/api/events/${eventId}/resend`, key, 'resend-3', { endpointId }),
    ]);
    expectOneRan(pair, 202);
    expect(await deliveries()).toBe(before + 1);
  });
});

describe('from the checkout in a browser', () => {
  it('a widget host may send Idempotency-Key and read Idempotent-Replayed', async () => {
    const session = await createSession(server.baseUrl, key);
    const opened = await bootstrap(server.baseUrl, session.clientSecret);
    const path = `/api/widget/sessions/${session.id}/cancel`;
    const preflight = await rawCall(server.baseUrl, 'OPTIONS', path, {
      origin: server.widgetUrls.test,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,idempotency-key',
    });
    expect(preflight.status).toBe(204);
    expect(String(preflight.headers['access-control-allow-headers'])).toMatch(/Idempotency-Key/);
    const headers = { origin: server.widgetUrls.test, 'idempotency-key': 'browser-1' };
    await call(server.baseUrl, 'POST', path, { token: opened.token, headers });
    const replay = await call(server.baseUrl, 'POST', path, { token: opened.token, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('access-control-expose-headers')).toMatch(/Idempotent-Replayed/);
  });
});

describe('what is remembered', () => {
  it('only successes: a resend refused (endpoint disabled) can be retried under its key once fixed', async () => {
    const created = await post('/api/webhooks', key, 'for-refused', { url: `${receiver.url}/refused` });
    const endpointId: string = created.body.data.id;
    const session = await createSession(server.baseUrl, key);
    await post(`/api/widget/sessions/${session.id}/cancel`, key, `cancel-${session.id}`);
    const [event] = await server.rows<{ id: string }>(
      "SELECT id FROM events WHERE session_id = ? AND type = 'session.cancelled'",
      session.id,
    );
    const path = `/api/events/${event?.id}/resend`;
    const disable = await call(server.baseUrl, 'PATCH', `/api/webhooks/${endpointId}`, {
      token: key,
      json: { enabled: false },
    });
    expect(disable.status, disable.text).toBe(200);
    expectError(await post(path, key, 'refused-1', { endpointId }), 400, 'validation_failed');
    await call(server.baseUrl, 'PATCH', `/api/webhooks/${endpointId}`, {
      token: key,
      json: { enabled: true },
    });
    const retried = await post(path, key, 'refused-1', { endpointId });
    expect(retried.status, retried.text).toBe(202);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a key with another caller (another business) is another request', async () => {
    const otherKey = (await server.createBusiness({ name: 'Other Shop' })).keys.test.secretKey;
    const url = `${receiver.url}/scoped`;
    expect((await post('/api/webhooks', key, 'scoped-1', { url })).status).toBe(201);
    const other = await post('/api/webhooks', otherKey, 'scoped-1', { url });
    expect(other.status, other.text).toBe(201);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(await count('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE url = ?', url)).toBe(2);
  });
});

describe('POST /api/widget/sessions/:id/cancel', () => {
  const cancels = (sessionId: string) =>
    count("SELECT COUNT(*) AS n FROM audit_log WHERE action = 'session.cancelled' AND target = ?", sessionId);

  it('with the secret key: a retry is the first answer; the key on another session is 409', async () => {
    const session = await createSession(server.baseUrl, key);
    const other = await createSession(server.baseUrl, key);
    const path = `/api/widget/sessions/${session.id}/cancel`;
    const first = await post(path, key, 'cancel-1');
    expectReplay(first, await post(path, key, 'cancel-1'), 200);
    expect(first.body.data.status).toBe('cancelled');
    expect(await cancels(session.id)).toBe(1);
    expectError(
      await post(`/api/widget/sessions/${other.id}/cancel`, key, 'cancel-1'),
      409,
      'idempotency_key_reused',
    );
    expect(await cancels(other.id)).toBe(0);
    expectError(await post(path, key, 'cancel-1', { reason: 'x' }), 409, 'idempotency_key_reused');
  });

  it('with the widget token: keys are the session’s own, and a concurrent pair cancels once', async () => {
    const session = await createSession(server.baseUrl, key);
    const opened = await bootstrap(server.baseUrl, session.clientSecret);
    const path = `/api/widget/sessions/${session.id}/cancel`;
    const pair = await Promise.all([
      post(path, opened.token, 'payer-1'),
      post(path, opened.token, 'payer-1'),
    ]);
    expectOneRan(pair, 200);
    expect(pair[0]?.body.data.status).toBe('cancelled');
    expect(await cancels(session.id)).toBe(1);
    // The merchant's key scope is not the checkout's: the same key there is a new request.
    const merchantSession = await createSession(server.baseUrl, key);
    const merchant = await post(`/api/widget/sessions/${merchantSession.id}/cancel`, key, 'payer-1');
    expect(merchant.status, merchant.text).toBe(200);
    expect(merchant.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('POST /api/test/transfers', () => {
  // The simulated bank's own books, beside the service's tables on either store.
  const transfersTo = async (accountNumber: string) =>
    (
      await server.bankRows<{ n: number }>(
        'SELECT COUNT(*) AS n FROM bank_transfers WHERE account_number = ?',
        accountNumber,
      )
    )[0]?.n;

  async function openAccount() {
    const session = await createSession(server.baseUrl, key, { amount: 25_000 });
    const opened = await bootstrap(server.baseUrl, session.clientSecret);
    return { session, accountNumber: opened.virtualAccount.accountNumber as string };
  }

  it('a retry moves the money once and answers the same transfer', async () => {
    const { session, accountNumber } = await openAccount();
    const body = { accountNumber, amount: 25_000 };
    const first = await post('/api/test/transfers', key, 'transfer-1', body);
    const again = await post('/api/test/transfers', key, 'transfer-1', body);
    expectReplay(first, again, 200);
    expect(await transfersTo(accountNumber)).toBe(1);
    await expect
      .poll(async () => {
        const current = await call(server.baseUrl, 'GET', `/api/widget/sessions/${session.id}`, {
          token: key,
        });
        return current.body.data.status;
      })
      .toBe('successful');
  });

  it('the same key with another amount is 409 and moves nothing', async () => {
    const { accountNumber } = await openAccount();
    expect(
      (await post('/api/test/transfers', key, 'transfer-2', { accountNumber, amount: 10_000 })).status,
    ).toBe(200);
    const other = await post('/api/test/transfers', key, 'transfer-2', { accountNumber, amount: 15_000 });
    expectError(other, 409, 'idempotency_key_reused');
    expect(await transfersTo(accountNumber)).toBe(1);
  });

  it('two concurrent transfers with one key move the money once', async () => {
    const { accountNumber } = await openAccount();
    const body = { accountNumber, amount: 25_000 };
    const pair = await Promise.all([
      post('/api/test/transfers', key, 'transfer-3', body),
      post('/api/test/transfers', key, 'transfer-3', body),
    ]);
    expectOneRan(pair, 200);
    expect(await transfersTo(accountNumber)).toBe(1);
  });
});

describe('POST /api/widget/sessions/:id/accounts', () => {
  const accountsOf = (sessionId: string) =>
    count('SELECT COUNT(*) AS n FROM virtual_accounts WHERE session_id = ?', sessionId);

  it('a retry after the account ran out opens one new account; another body is 409; a concurrent pair opens one', async () => {
    const session = await createSession(server.baseUrl, key, { expiresInMinutes: 240 });
    const opened = await bootstrap(server.baseUrl, session.clientSecret);
    const path = `/api/widget/sessions/${session.id}/accounts`;
    clock.advance(31 * 60_000);
    const first = await post(path, opened.token, 'account-1');
    const again = await post(path, opened.token, 'account-1');
    expectReplay(first, again, 201);
    expect(first.body.data.virtualAccount.accountNumber).not.toBe(opened.virtualAccount.accountNumber);
    expect(await accountsOf(session.id)).toBe(2);
    expectError(await post(path, opened.token, 'account-1', { retry: true }), 409, 'idempotency_key_reused');

    clock.advance(31 * 60_000);
    const pair = await Promise.all([
      post(path, opened.token, 'account-2'),
      post(path, opened.token, 'account-2'),
    ]);
    expectOneRan(pair, 201);
    expect(pair[0]?.body.data.virtualAccount.accountNumber).not.toBe(
      first.body.data.virtualAccount.accountNumber,
    );
    expect(await accountsOf(session.id)).toBe(3);
  });
});

describe('POST /api/test/sessions/:id/account', () => {
  const accountsOf = (sessionId: string) =>
    count('SELECT COUNT(*) AS n FROM virtual_accounts WHERE session_id = ?', sessionId);
  const accountPath = (sessionId: string) => `/api/test/sessions/${sessionId}/account`;

  it('a retry is the first answer, even after that account ran out: it opens no second account', async () => {
    const session = await createSession(server.baseUrl, key, { expiresInMinutes: 240 });
    const first = await post(accountPath(session.id), key, 'test-account-1');
    expectReplay(first, await post(accountPath(session.id), key, 'test-account-1'), 200);
    expect(first.body.data.session.status).toBe('awaiting_payment');
    // A new request now would be offered a fresh account; the retry of the first one is not.
    clock.advance(31 * 60_000);
    expectReplay(first, await post(accountPath(session.id), key, 'test-account-1'), 200);
    expect(await accountsOf(session.id)).toBe(1);
  });

  it('the same key on another session, or with a body, is 409 and opens nothing', async () => {
    const one = await createSession(server.baseUrl, key, { expiresInMinutes: 240 });
    const two = await createSession(server.baseUrl, key, { expiresInMinutes: 240 });
    expect((await post(accountPath(one.id), key, 'test-account-2')).status).toBe(200);
    expectError(await post(accountPath(two.id), key, 'test-account-2'), 409, 'idempotency_key_reused');
    expectError(
      await post(accountPath(one.id), key, 'test-account-2', { amount: 1 }),
      409,
      'idempotency_key_reused',
    );
    expect(await accountsOf(two.id)).toBe(0);
    const untouched = await call(server.baseUrl, 'GET', `/api/widget/sessions/${two.id}`, { token: key });
    expect(untouched.body.data.status).toBe('pending');
  });

  it('two concurrent requests with one key: one ran, the other is its replay', async () => {
    const session = await createSession(server.baseUrl, key, { expiresInMinutes: 240 });
    const pair = await Promise.all([
      post(accountPath(session.id), key, 'test-account-3'),
      post(accountPath(session.id), key, 'test-account-3'),
    ]);
    expectOneRan(pair, 200);
    expect(await accountsOf(session.id)).toBe(1);
  });
});

describe('POST /api/test/sessions/:id/expire and …/account/expire', () => {
  const eventsOf = (sessionId: string, type: string) =>
    count('SELECT COUNT(*) AS n FROM events WHERE session_id = ? AND type = ?', sessionId, type);

  it('a retry of expire is the first answer (not 409 for the session it ended), with one session.expired event', async () => {
    const session = await createSession(server.baseUrl, key, { expiresInMinutes: 240 });
    const path = `/api/test/sessions/${session.id}/expire`;
    const first = await post(path, key, 'test-expire-1');
    expectReplay(first, await post(path, key, 'test-expire-1'), 200);
    expect(first.body.data.status).toBe('expired');
    expect(await eventsOf(session.id, 'session.expired')).toBe(1);
    // Without the key it is a new request: the session has ended.
    expectError(await post(path, key, 'test-expire-2'), 409, 'session_not_active');
  });

  it('a retry of account/expire is the first answer: one account ended, not the fresh one opened since', async () => {
    const session = await createSession(server.baseUrl, key, { expiresInMinutes: 240 });
    const opened = await bootstrap(server.baseUrl, session.clientSecret);
    const path = `/api/test/sessions/${session.id}/account/expire`;
    const first = await post(path, key, 'test-account-expire-1');
    expect(first.body.data.status).toBe('pending');
    const fresh = await call(server.baseUrl, 'POST', `/api/widget/sessions/${session.id}/accounts`, {
      token: opened.token,
    });
    expect(fresh.status).toBe(201);
    expectReplay(first, await post(path, key, 'test-account-expire-1'), 200);
    const now = await call(server.baseUrl, 'GET', `/api/widget/sessions/${session.id}`, { token: key });
    expect(now.body.data.status).toBe('awaiting_payment');
    expect(now.body.data.virtualAccount.accountNumber).toBe(fresh.body.data.virtualAccount.accountNumber);
    expect(await eventsOf(session.id, 'session.pending')).toBe(1);
  });
});

describe('a request cut off by a restart', () => {
  it('leaves its key pending: after the restart a retry answers 409 and runs nothing again', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'servicepay-idem-'));
    const dbPath = join(folder, 'servicepay.db');
    try {
      const before = await startServer({}, { dbPath });
      const shop = await before.createBusiness({ name: 'Restarted', kycApproved: true });
      const token = shop.keys.test.secretKey;
      // What a kill -9 between the effect's commit and the remembered answer leaves: the endpoint, and the
      // key's pending mark (written here directly: the crash cannot be timed from a test).
      const url = `${receiver.url}/cut-off`;
      const made = await call(before.baseUrl, 'POST', '/api/webhooks', { token, json: { url } });
      expect(made.status).toBe(201);
      const hash = createHash('sha256')
        .update(`POST /api/webhooks\n${JSON.stringify({ url })}`)
        .digest();
      await before.rows(
        'INSERT INTO idempotent_requests (scope, idempotency_key, request_hash, status_code, response_body, created_at) VALUES (?, ?, ?, 0, ?, ?)',
        `${shop.business.id}:test`,
        'cut-1',
        hash,
        '',
        Date.now(),
      );
      await before.close();

      const after = await startServer({}, { dbPath });
      try {
        const retried = await call(after.baseUrl, 'POST', '/api/webhooks', {
          token,
          json: { url },
          headers: { 'idempotency-key': 'cut-1' },
        });
        expectError(retried, 409, 'idempotency_key_reused');
        expect(retried.body.meta.message).toMatch(/cut off by a restart/);
        const endpoints = await after.rows<{ n: number }>(
          'SELECT COUNT(*) AS n FROM webhook_endpoints WHERE url = ?',
          url,
        );
        expect(endpoints).toEqual([{ n: 1 }]);
      } finally {
        await after.close();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('after the 24-hour TTL', () => {
  // Last in this file: it moves the shared clock a day on.
  it('a key is forgotten: the same key and body is a new request', async () => {
    const url = `${receiver.url}/ttl`;
    const first = await post('/api/webhooks', key, 'ttl-1', { url });
    expect(first.status).toBe(201);
    clock.advance(24 * 3_600_000 - 1);
    expect((await post('/api/webhooks', key, 'ttl-1', { url })).headers.get('idempotent-replayed')).toBe(
      'true',
    );
    clock.advance(1);
    const later = await post('/api/webhooks', key, 'ttl-1', { url });
    expect(later.status, later.text).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.data.id).not.toBe(first.body.data.id);
  });
});
