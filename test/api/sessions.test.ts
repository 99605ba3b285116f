import type { CreatedBusiness } from '@servicepay/node/protocol';
import { listEnvelopeOf, SessionSchema } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bootstrap,
  call,
  createSession,
  eventTypes,
  expectError,
  paySession,
  retrieveSession,
  sessionParams,
} from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Sessions: create (validation, money, reference, metadata), list, retrieve, cancel; against the real server.

let server: RunningServer;
let shop: CreatedBusiness;
let key: string;

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  shop = await server.createBusiness({ name: 'Sessions Shop', kycApproved: true });
  key = shop.keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
});

const create = (body: unknown, token = key) =>
  call(server.baseUrl, 'POST', '/api/widget/sessions', { token, json: body });

const paths = (errors: Array<{ path: string }> | undefined) => (errors ?? []).map((error) => error.path);

describe('create: validation', () => {
  it('answers 201 with the documented shape', async () => {
    const created = await createSession(server.baseUrl, key, {
      reference: 'order-1001',
      metadata: { orderId: '1001' },
      payer: { name: 'Ada', email: 'ada@example.com', phone: '+2348012345678' },
    });
    expect(created).toMatchObject({
      reference: 'order-1001',
      status: 'pending',
      environment: 'test',
      amount: 500_000,
      currency: 'NGN',
      payer: { name: 'Ada', email: 'ada@example.com', phone: '+2348012345678' },
      metadata: { orderId: '1001' },
      virtualAccount: null,
      lastMismatch: null,
      paidAt: null,
    });
    expect(created.id).toMatch(/^ses_[0-9A-Za-z]+$/);
    expect(created.clientSecret).toMatch(/^cs_test_[0-9A-Za-z]{40}$/);
    expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).toBe(120 * 60_000);
  });

  it('generates a reference when none is given', async () => {
    const [a, b] = [await createSession(server.baseUrl, key), await createSession(server.baseUrl, key)];
    expect(a.reference).not.toBe('');
    expect(a.reference).not.toBe(b.reference);
  });

  it.each([
    ['an invalid payer email', { payer: { name: 'Ada', email: 'not-an-email' } }, 'payer.email'],
    ['a missing payer name', { payer: { email: 'ada@example.com' } }, 'payer.name'],
    ['an amount as a string', { amount: '500000' }, 'amount'],
    ['a fractional amount', { amount: 100.5 }, 'amount'],
    ['a negative amount', { amount: -100 }, 'amount'],
    ['a lower-case currency', { currency: 'ngn' }, 'currency'],
    ['a reference with spaces', { reference: 'order 1' }, 'reference'],
    ['a too short lifetime', { expiresInMinutes: 4 }, 'expiresInMinutes'],
    [
      'an invalid phone',
      { payer: { name: 'Ada', email: 'ada@example.com', phone: 'call me' } },
      'payer.phone',
    ],
  ])('refuses %s with the field path', async (_what, overrides, path) => {
    const response = await create({ ...sessionParams(), ...overrides });
    const body = expectError(response, 400, 'validation_failed');
    expect(paths(body.errors)).toContain(path);
  });

  it('refuses unknown fields, at the top and inside payer', async () => {
    const top = expectError(await create({ ...sessionParams(), amout: 5 }), 400, 'validation_failed');
    expect(paths(top.errors)).toEqual(['amout']);
    const nested = expectError(
      await create({ ...sessionParams(), payer: { name: 'Ada', email: 'ada@example.com', age: 3 } }),
      400,
      'validation_failed',
    );
    expect(paths(nested.errors)).toEqual(['payer.age']);
  });

  it.each([
    ['an array', [], 'validation_failed'],
    ['an empty object', {}, 'validation_failed'],
    // express.json in strict mode accepts objects and arrays only: a bare value is not a JSON body here.
    ['a string', 'hello', 'malformed_json'],
    ['null', null, 'malformed_json'],
  ] as const)('refuses a body that is %s', async (_what, body, code) => {
    const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      raw: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, code);
  });

  it('refuses a POST without a body', async () => {
    expectError(
      await call(server.baseUrl, 'POST', '/api/widget/sessions', { token: key }),
      400,
      'validation_failed',
    );
  });
});

describe('create: money', () => {
  it('refuses a currency outside the configured list', async () => {
    const body = expectError(await create(sessionParams({ currency: 'EUR' })), 400, 'unsupported_currency');
    expect(paths(body.errors)).toEqual(['currency']);
  });

  it.each([
    ['NGN', 99, false],
    ['NGN', 100, true],
    ['NGN', 10_000_000_000, true],
    ['NGN', 10_000_000_001, false],
    ['USD', 49, false],
    ['USD', 50, true],
    ['USD', 100_000_000, true],
    ['USD', 100_000_001, false],
  ])('%s %d within the bounds: %s', async (currency, amount, ok) => {
    const response = await create(sessionParams({ currency, amount }));
    if (ok) expect(response.status, response.text).toBe(201);
    else expect(paths(expectError(response, 400, 'amount_out_of_range').errors)).toEqual(['amount']);
  });

  it('refuses an amount beyond a safe integer as invalid, not as a server fault', async () => {
    const response = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      raw: '{"amount":1e400,"currency":"NGN","payer":{"name":"A","email":"a@example.com"}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(paths(expectError(response, 400, 'validation_failed').errors)).toContain('amount');
  });
});

describe('create: reference and metadata', () => {
  it('keeps a reference unique per business and environment only', async () => {
    await createSession(server.baseUrl, key, { reference: 'inv-42' });
    const again = expectError(
      await create(sessionParams({ reference: 'inv-42' })),
      409,
      'reference_already_used',
    );
    expect(paths(again.errors)).toEqual(['reference']);
    // The live environment of the same business and another business may use it.
    await createSession(server.baseUrl, shop.keys.live.secretKey, { reference: 'inv-42' });
    const other = await server.createBusiness({ name: 'Other' });
    await createSession(server.baseUrl, other.keys.test.secretKey, { reference: 'inv-42' });
  });

  it('accepts metadata at its bounds', async () => {
    const metadata = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`k${i}`.padEnd(40, 'x'), 'v'.repeat(500)]),
    );
    const created = await createSession(server.baseUrl, key, { metadata });
    expect(created.metadata).toEqual(metadata);
  });

  it.each([
    ['21 keys', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']))],
    ['a 41-character key', { ['k'.repeat(41)]: 'v' }],
    ['a 501-character value', { k: 'v'.repeat(501) }],
    ['a number value', { k: 1 }],
    ['an object value', { k: { nested: 'x' } }],
    ['an empty key', { '': 'v' }],
  ])('refuses metadata with %s', async (_what, metadata) => {
    const body = expectError(await create({ ...sessionParams(), metadata }), 400, 'validation_failed');
    expect(paths(body.errors).every((path) => path.startsWith('metadata'))).toBe(true);
    expect(body.errors?.length).toBeGreaterThan(0);
  });
});

describe('list and retrieve', () => {
  const ListEnvelope = listEnvelopeOf(SessionSchema);

  it('pages newest first with no duplicates or gaps, and filters by status and reference', async () => {
    const lister = await server.createBusiness({ name: 'Lister' });
    const token = lister.keys.test.secretKey;
    const created: string[] = [];
    for (let i = 0; i < 7; i++)
      created.push((await createSession(server.baseUrl, token, { reference: `list-${i}` })).id);

    const seen: string[] = [];
    let cursor: string | null = null;
    const pageSizes: number[] = [];
    do {
      const query: string = cursor ? `?limit=3&startingAfter=${cursor}` : '?limit=3';
      const response = await call(server.baseUrl, 'GET', `/api/widget/sessions${query}`, { token });
      const page = ListEnvelope.parse(response.body);
      pageSizes.push(page.data.length);
      seen.push(...page.data.map((session) => session.id));
      expect(page.pagination.hasMore).toBe(page.pagination.nextCursor !== null);
      cursor = page.pagination.nextCursor;
    } while (cursor !== null);
    expect(pageSizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([...created].reverse());

    const cancelled = created[2] as string;
    expect(
      (await call(server.baseUrl, 'POST', `/api/widget/sessions/${cancelled}/cancel`, { token })).status,
    ).toBe(200);
    const byStatus = ListEnvelope.parse(
      (await call(server.baseUrl, 'GET', '/api/widget/sessions?status=cancelled', { token })).body,
    );
    expect(byStatus.data.map((session) => session.id)).toEqual([cancelled]);
    const pending = ListEnvelope.parse(
      (await call(server.baseUrl, 'GET', '/api/widget/sessions?status=pending', { token })).body,
    );
    expect(pending.data).toHaveLength(6);
    const byReference = ListEnvelope.parse(
      (await call(server.baseUrl, 'GET', '/api/widget/sessions?reference=list-4', { token })).body,
    );
    expect(byReference.data.map((session) => session.id)).toEqual([created[4]]);
    // A list never shows the client secret again.
    expect(JSON.stringify(byReference)).not.toContain('cs_test_');
  });

  it("never shows another business's or another environment's sessions", async () => {
    const a = await server.createBusiness({ name: 'A', kycApproved: true });
    const b = await server.createBusiness({ name: 'B' });
    await createSession(server.baseUrl, a.keys.test.secretKey);
    await createSession(server.baseUrl, a.keys.live.secretKey);
    const ofB = ListEnvelope.parse(
      (await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: b.keys.test.secretKey })).body,
    );
    expect(ofB.data).toEqual([]);
    const live = ListEnvelope.parse(
      (await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: a.keys.live.secretKey })).body,
    );
    expect(live.data.map((session) => session.environment)).toEqual(['live']);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['status=paid', 'status'],
    ['startingAfter=ses_unknown', 'startingAfter'],
  ])('refuses the query %s', async (query, path) => {
    const response = await call(server.baseUrl, 'GET', `/api/widget/sessions?${query}`, { token: key });
    expect(paths(expectError(response, 400, 'validation_failed').errors)).toContain(path);
  });

  it("refuses another business's session as a cursor", async () => {
    const other = await server.createBusiness({ name: 'Cursor Thief' });
    const theirs = await createSession(server.baseUrl, other.keys.test.secretKey);
    const response = await call(server.baseUrl, 'GET', `/api/widget/sessions?startingAfter=${theirs.id}`, {
      token: key,
    });
    expectError(response, 400, 'validation_failed');
  });

  it('retrieves what was created, without the client secret', async () => {
    const { clientSecret, url, ...created } = await createSession(server.baseUrl, key, {
      metadata: { a: 'b' },
    });
    expect(url.endsWith(`#${clientSecret}`)).toBe(true);
    const session = await retrieveSession(server.baseUrl, key, created.id);
    expect(session).toEqual(created);
    expect(JSON.stringify(session)).not.toContain(clientSecret);
  });
});

describe('cancel', () => {
  it('the merchant cancels an open session; cancelling again answers the same, with one event', async () => {
    const created = await createSession(server.baseUrl, key);
    await bootstrap(server.baseUrl, created.clientSecret);
    const first = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, {
      token: key,
    });
    expect(first.status).toBe(200);
    expect(first.body.data.status).toBe('cancelled');
    const second = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, {
      token: key,
    });
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual(first.body.data);
    expect(await eventTypes(server, created.id)).toEqual(['session.awaiting_payment', 'session.cancelled']);
    // The account is closed with the session: it shows no live account any more.
    expect(
      (await server.service.deps.store.virtualAccounts.find(first.body.data.virtualAccount.accountNumber))
        ?.closedAt,
    ).not.toBeNull();
  });

  it('the payer cancels with the widget token', async () => {
    const created = await createSession(server.baseUrl, key);
    const { token } = await bootstrap(server.baseUrl, created.clientSecret);
    const response = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, {
      token,
      json: {},
    });
    expect(response.status, response.text).toBe(200);
    expect((await retrieveSession(server.baseUrl, key, created.id)).status).toBe('cancelled');
    const reasons = await server.rows<{ reason: string }>(
      "SELECT reason FROM events WHERE session_id = ? AND type = 'session.cancelled'",
      created.id,
    );
    expect(reasons).toEqual([{ reason: 'cancelled_by_payer' }]);
  });

  it('a successful session cannot be cancelled', async () => {
    const paid = await paySession(server.baseUrl, key);
    expect(paid.status).toBe('successful');
    const response = await call(server.baseUrl, 'POST', `/api/widget/sessions/${paid.id}/cancel`, {
      token: key,
    });
    expectError(response, 409, 'session_not_active');
    expect((await retrieveSession(server.baseUrl, key, paid.id)).status).toBe('successful');
  });

  it('an unknown session answers 404', async () => {
    expectError(
      await call(server.baseUrl, 'POST', '/api/widget/sessions/ses_nope/cancel', { token: key }),
      404,
      'not_found',
    );
  });
});
