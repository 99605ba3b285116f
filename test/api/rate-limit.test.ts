import { once } from 'node:events';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiServer } from '../../reference-server/src/api-server.ts';
import { ManualClock, rollKey } from '../../reference-server/src/index.ts';
import {
  OVER_BUDGET_MEMO_MS,
  refuseOverBudgetEarly,
} from '../../reference-server/src/middleware/over-budget.ts';
import { call, createSession, expectError } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// docs/protocol.md, Rate limits: 150 requests per rolling 60 s per business and environment; 429 with Retry-After and
// RateLimit-* headers. Time moves by a ManualClock, never by sleeping.

let server: RunningServer | undefined;
let bare: Server | undefined;

afterEach(async () => {
  if (bare) {
    const closed = once(bare, 'close');
    bare.close();
    bare.closeAllConnections();
    await closed;
    bare = undefined;
  }
  await server?.close();
  server = undefined;
});

interface Exchange {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** Whether the request went out on a connection an earlier request had used (keep-alive held). */
  reusedSocket: boolean;
}

/** One request through `agent`, so a test can see whether the next one reuses the connection. */
function exchange(
  agent: Agent,
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Exchange> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
          reusedSocket: req.reusedSocket,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const list = (running: RunningServer, key: string) =>
  call(running.baseUrl, 'GET', '/api/widget/sessions', { token: key });

async function spend(running: RunningServer, key: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await list(running, key);
    expect(response.status, response.text).toBe(200);
  }
}

describe('per business and environment', () => {
  it('answers 150 requests in a rolling minute and 429 to the 151st, with the headers', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({}, { clock });
    const shop = await server.createBusiness({ name: 'Busy', kycApproved: true });
    const key = shop.keys.test.secretKey;

    const first = await list(server, key);
    expect(first.headers.get('ratelimit-limit')).toBe('150');
    expect(first.headers.get('ratelimit-remaining')).toBe('149');
    await spend(server, key, 99);
    // 100 requests at t = 0, the next 50 at t = 30 s.
    clock.advance(30_000);
    await spend(server, key, 49);
    const last = await list(server, key);
    expect(last.status).toBe(200);
    expect(last.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(last.headers.get('ratelimit-reset'))).toBe(30);

    const refused = await list(server, key);
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.headers.get('ratelimit-limit')).toBe('150');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-reset')).toBe('30');

    // Every route of the business shares the one budget, writes included.
    const create = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      json: { amount: 500_000, currency: 'NGN', payer: { name: 'A', email: 'a@example.com' } },
    });
    expectError(create, 429, 'rate_limited');

    // The same business in the other environment, and another business, are not affected.
    expect((await list(server, shop.keys.live.secretKey)).status).toBe(200);
    const neighbour = await server.createBusiness({ name: 'Quiet' });
    expect((await list(server, neighbour.keys.test.secretKey)).status).toBe(200);
    // The publishable key is public: it has a budget of its own (per address), so it still reads the profile
    // while the secret key is refused (issue 8; test/api/abuse-rate-limits.test.ts covers the other direction).
    const profile = await call(server.baseUrl, 'GET', '/api/widget/profile', {
      token: shop.keys.test.publishableKey,
    });
    expect(profile.status, profile.text).toBe(200);

    // Rolling, not fixed: one second short of the first hundred leaving the window, still refused...
    clock.advance(29_000);
    expectError(await list(server, key), 429, 'rate_limited');
    // ...and once they leave, exactly a hundred more fit (the 50 of t = 30 s are still inside).
    clock.advance(1_000);
    await spend(server, key, 100);
    const again = await list(server, key);
    expectError(again, 429, 'rate_limited');
    expect(again.headers.get('retry-after')).toBe('30');
  });

  it('does not count refused requests: a client that keeps retrying is let in when the window moves', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({ rateLimit: { perMinute: 3 } }, { clock });
    const key = (await server.createBusiness()).keys.test.secretKey;
    await spend(server, key, 3);
    for (let i = 0; i < 5; i++) expectError(await list(server, key), 429, 'rate_limited');
    clock.advance(60_000);
    await spend(server, key, 3);
  });
});

describe('over the budget, answered before the body is read', () => {
  // docs/decisions/rate-limits-and-abuse.md, "429 before express": a business over its budget gets its 429 before its body is parsed, so
  // what the body holds (malformed, the wrong type, too large) cannot change the answer, nor cost its parsing.
  it('answers 429 whatever the body, with the headers and the envelope, and counts nothing', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({ rateLimit: { perMinute: 2 } }, { clock });
    const shop = await server.createBusiness({ name: 'Flooding' });
    const key = shop.keys.test.secretKey;
    await spend(server, key, 2);
    const post = (headers: Record<string, string>, raw: string) =>
      call(server?.baseUrl ?? '', 'POST', '/api/widget/sessions', { token: key, headers, raw });
    for (const refused of [
      await post({ 'content-type': 'application/json' }, '{"amount": '),
      await post({ 'content-type': 'text/plain' }, 'hello'),
      await post({ 'content-type': 'application/json' }, `{"pad":"${'x'.repeat(70_000)}"}`),
      await post({ 'content-type': 'application/json', 'idempotency-key': 'flood-1' }, '{}'),
    ]) {
      const body = expectError(refused, 429, 'rate_limited');
      expect(body.meta.requestId).toBe(refused.headers.get('request-id'));
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(refused.headers.get('ratelimit-limit')).toBe('2');
      expect(refused.headers.get('ratelimit-remaining')).toBe('0');
      expect(refused.headers.get('ratelimit-reset')).toBe('60');
    }
    // The same refusals through the route's own check (a GET has no body to skip) say the same.
    expectError(await list(server, key), 429, 'rate_limited');
    // None of the refused requests was counted: once the window moves, the full budget is back.
    clock.advance(60_000);
    const created = await createSession(server.baseUrl, key);
    expect(created.id).toMatch(/^ses_/);
    await spend(server, key, 1);
    expectError(await list(server, key), 429, 'rate_limited');
  });

  it('a rolled key answers 401 api_key_revoked once its last refusal is a second old, and another business is not refused', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({ rateLimit: { perMinute: 1 } }, { clock });
    const shop = await server.createBusiness({ name: 'Rolled' });
    const old = shop.keys.test.secretKey;
    await spend(server, old, 1);
    expectError(await list(server, old), 429, 'rate_limited');
    const rolled = await rollKey(server.service.deps.store, shop.business.id, 'test', 'secret', clock.now());
    expect(rolled).toBeDefined();
    // Refused a moment ago, refused again without being read: 429 rather than 401, and let in by neither.
    expectError(await list(server, old), 429, 'rate_limited');
    clock.advance(OVER_BUDGET_MEMO_MS);
    // Read again: no longer live, so not refused early; the usual checks put revocation first.
    expectError(await list(server, old), 401, 'api_key_revoked');
    const created = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: old,
      json: { amount: 500_000, currency: 'NGN', payer: { name: 'A', email: 'a@example.com' } },
    });
    expectError(created, 401, 'api_key_revoked');
    // The new key spends the same business budget, still spent.
    expectError(await list(server, rolled?.key ?? ''), 429, 'rate_limited');
    const other = await server.createBusiness({ name: 'Neighbour' });
    const malformed = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: other.keys.test.secretKey,
      raw: '{"amount": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'malformed_json');
  });

  it('reads a key over its budget once a second, not once a request, and lets it in as soon as the budget is back', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({ rateLimit: { perMinute: 2 } }, { clock });
    const key = (await server.createBusiness({ name: 'Flooding' })).keys.test.secretKey;
    const apiKeys = server.service.deps.store.apiKeys;
    const findWithOwner = apiKeys.findWithOwner.bind(apiKeys);
    let reads = 0;
    apiKeys.findWithOwner = (hash) => {
      reads += 1;
      return findWithOwner(hash);
    };
    await spend(server, key, 2);
    reads = 0;
    for (let i = 0; i < 20; i++) expectError(await list(server, key), 429, 'rate_limited');
    expect(reads).toBe(1);
    clock.advance(OVER_BUDGET_MEMO_MS - 1);
    expectError(await list(server, key), 429, 'rate_limited');
    expect(reads).toBe(1);
    clock.advance(1);
    for (let i = 0; i < 5; i++) expectError(await list(server, key), 429, 'rate_limited');
    expect(reads).toBe(2);
    // The window moves on: the remembered refusal does not outlive the spent budget, nor spend any of it.
    clock.advance(60_000);
    await spend(server, key, 2);
    expectError(await list(server, key), 429, 'rate_limited');
  });
});

describe('over the budget, answered by the server before express', () => {
  // docs/decisions/rate-limits-and-abuse.md, "429 before express": the 429 is written in the server's request listener; only the checkout's
  // routes (CORS) and OPTIONS still reach express, which refuses them with the same answer.
  it('never hands the request to the app, leaves the body unread and keeps the connection', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    const running = await startServer({ rateLimit: { perMinute: 1 } }, { clock });
    server = running;
    const key = (await running.createBusiness({ name: 'Flooding' })).keys.test.secretKey;
    const neighbour = (await running.createBusiness({ name: 'Neighbour' })).keys.test.secretKey;
    await spend(running, key, 1);
    // A server with the service's own check in front of a stand-in for the app that records what reaches it.
    const reached: string[] = [];
    const { store } = running.service.deps;
    bare = createApiServer(
      (req, res) => {
        reached.push(`${req.method} ${req.url}`);
        res.end('the app');
      },
      {
        headersTimeoutMs: 5_000,
        requestTimeoutMs: 5_000,
        maxConnections: 16,
        beforeApp: refuseOverBudgetEarly({
          store,
          clock,
          businessLimiter: running.service.deps.limiters.business,
        }),
      },
    );
    bare.listen(0, '127.0.0.1');
    await once(bare, 'listening');
    const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const json = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
      // A body far over the 64 KB limit (a 413 once parsed), and one that is not JSON (a 400): both 429.
      const big = `{"pad":"${'x'.repeat(300_000)}"}`;
      const first = await exchange(agent, bareUrl, 'POST', '/api/widget/sessions', json, big);
      const second = await exchange(agent, bareUrl, 'POST', '/api/widget/sessions?x=1', json, '{"amount": ');
      const other = await exchange(agent, bareUrl, 'GET', '/api/webhooks', {
        authorization: `Bearer ${key}`,
      });
      for (const refused of [first, second, other]) {
        expect(refused.status).toBe(429);
        const body = JSON.parse(refused.text);
        expect(body).toEqual({
          meta: {
            statusCode: 429,
            code: 'rate_limited',
            message: 'Too many requests. Wait for Retry-After seconds, then retry.',
            requestId: refused.headers['request-id'],
          },
        });
        expect(refused.headers['request-id']).toMatch(/^req_[0-9A-Za-z]{16}$/);
      }
      expect(reached).toEqual([]);
      // Keep-alive held: the unread bodies were discarded, not left to be read as the next request.
      expect(second.reusedSocket).toBe(true);
      expect(other.reusedSocket).toBe(true);
      // Under budget, a checkout route, OPTIONS, and an unknown key: all handed to the app on the same connection.
      const passed = await exchange(agent, bareUrl, 'GET', '/api/widget/sessions', {
        authorization: `Bearer ${neighbour}`,
      });
      expect(passed.text).toBe('the app');
      expect(passed.reusedSocket).toBe(true);
      await exchange(agent, bareUrl, 'POST', '/api/widget/sessions/ses_x/cancel', json, '{}');
      await exchange(agent, bareUrl, 'OPTIONS', '/api/widget/sessions', { authorization: `Bearer ${key}` });
      await exchange(agent, bareUrl, 'GET', '/api/widget/sessions', {
        authorization: `Bearer sk_test_${'0'.repeat(32)}`,
      });
      expect(reached).toEqual([
        'GET /api/widget/sessions',
        'POST /api/widget/sessions/ses_x/cancel',
        'OPTIONS /api/widget/sessions',
        'GET /api/widget/sessions',
      ]);
    } finally {
      agent.destroy();
    }
  });

  it('carries exactly the headers of the answer express gives, and keeps the connection', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    const running = await startServer({ rateLimit: { perMinute: 1 } }, { clock });
    server = running;
    const key = (await running.createBusiness({ name: 'Flooding' })).keys.test.secretKey;
    await spend(running, key, 1);
    clock.advance(20_000);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
      const early = await exchange(agent, running.baseUrl, 'POST', '/api/widget/sessions', headers, '{}');
      // The checkout's cancel route is refused inside express (its CORS middleware runs first).
      const viaExpress = await exchange(
        agent,
        running.baseUrl,
        'POST',
        '/api/widget/sessions/ses_x/cancel',
        headers,
        '{}',
      );
      expect(viaExpress.reusedSocket).toBe(true);
      for (const refused of [early, viaExpress]) {
        expect(refused.status).toBe(429);
        expect(JSON.parse(refused.text).meta.requestId).toBe(refused.headers['request-id']);
        expect(refused.headers['retry-after']).toBe('40');
        expect(refused.headers['ratelimit-limit']).toBe('1');
        expect(refused.headers['ratelimit-remaining']).toBe('0');
        expect(refused.headers['ratelimit-reset']).toBe('40');
        expect(refused.headers['cache-control']).toBe('no-store');
        expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(refused.headers.connection).toBe('keep-alive');
      }
      const names = (exchanged: Exchange) => Object.keys(exchanged.headers).sort();
      expect(names(early)).toEqual([
        'cache-control',
        'connection',
        'content-length',
        'content-type',
        'date',
        'keep-alive',
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
        'request-id',
        'retry-after',
      ]);
      // Express's answer on a checkout route adds only its CORS `Vary: Origin`.
      expect(names(viaExpress)).toEqual([...names(early), 'vary'].sort());
      expect(viaExpress.headers.vary).toBe('Origin');
    } finally {
      agent.destroy();
    }
  });
});

describe('RateLimit-Reset', () => {
  it('says when the quota comes back (the oldest hit leaving the window), also while requests remain', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({}, { clock });
    const key = (await server.createBusiness({ name: 'Counting', kycApproved: true })).keys.test.secretKey;

    const first = await list(server, key);
    expect(first.headers.get('ratelimit-remaining')).toBe('149');
    // The only hit in the window is this one: it leaves it a full window from now.
    expect(first.headers.get('ratelimit-reset')).toBe('60');

    clock.advance(10_500);
    const second = await list(server, key);
    expect(second.headers.get('ratelimit-remaining')).toBe('148');
    // The oldest hit (t = 0) leaves at t = 60 s, 49.5 s from now: rounded up to whole seconds.
    expect(second.headers.get('ratelimit-reset')).toBe('50');

    clock.advance(49_500);
    // t = 60 s: the first hit has left, the second (t = 10.5 s) is now the oldest.
    const third = await list(server, key);
    expect(third.headers.get('ratelimit-remaining')).toBe('148');
    // In process it leaves at t = 70.5 s. On PostgreSQL the limit is counted per whole second
    // (PostgresRateLimiter's TSDoc): the hit of t = 10.5 s leaves with its second, at t = 70 s.
    expect(third.headers.get('ratelimit-reset')).toBe(server.onPostgres ? '10' : '11');
  });
});

describe('per address', () => {
  it('limits POST /api/widget/bootstrap per client address', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    const running = await startServer({ rateLimit: { widgetPerMinutePerAddress: 5 } }, { clock });
    server = running;
    const key = (await running.createBusiness()).keys.test.secretKey;
    const sessions = await Promise.all(Array.from({ length: 6 }, () => createSession(running.baseUrl, key)));
    for (const session of sessions.slice(0, 5)) {
      const response = await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
        json: { clientSecret: session.clientSecret },
      });
      expect(response.status, response.text).toBe(200);
    }
    const sixth = sessions[5];
    if (!sixth) throw new Error('six sessions were created');
    const refused = await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
      json: { clientSecret: sixth.clientSecret },
    });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBe(60);
    expect(refused.headers.get('ratelimit-limit')).toBe('5');
    // The merchant's API is limited per business, not per address: unaffected.
    expect((await list(server, key)).status).toBe(200);
    // The refused request did not use the client secret up.
    clock.advance(60_000);
    const later = await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
      json: { clientSecret: sixth.clientSecret },
    });
    expect(later.status, later.text).toBe(200);
  });

  it('answers 429 to an address that keeps failing authentication, before looking at the key', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({ rateLimit: { failedAuthPerMinutePerAddress: 4 } }, { clock });
    for (let i = 0; i < 4; i++) {
      expectError(
        await call(server.baseUrl, 'GET', '/api/widget/sessions', {
          token: `sk_test_${String(i).repeat(32)}`,
        }),
        401,
        'invalid_api_key',
      );
    }
    const guessing = await call(server.baseUrl, 'GET', '/api/widget/sessions', {
      token: `sk_test_${'x'.repeat(32)}`,
    });
    expectError(guessing, 429, 'rate_limited');
    expect(guessing.headers.get('retry-after')).toBe('60');
    clock.advance(60_000);
    expectError(
      await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: `sk_test_${'y'.repeat(32)}` }),
      401,
      'invalid_api_key',
    );
  });
});
