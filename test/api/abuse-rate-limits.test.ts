import { afterEach, describe, expect, it } from 'vitest';
import { approveKyc } from '../../reference-server/src/businesses/onboarding.ts';
import { ManualClock } from '../../reference-server/src/index.ts';
import { bootstrap, call, createSession, expectError } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 8, "The publishable key cannot lock a merchant out": the secret key's 150 per minute counts secret-key
// calls only; publishable-key calls (refused ones too) and the checkout's token routes spend a budget per client
// address. Time moves by a ManualClock, never by sleeping.

let server: RunningServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const profile = (running: RunningServer, key: string) =>
  call(running.baseUrl, 'GET', '/api/widget/profile', { token: key });

const list = (running: RunningServer, key: string) =>
  call(running.baseUrl, 'GET', '/api/widget/sessions', { token: key });

describe('the secret key’s budget', () => {
  it('160 publishable-key calls leave all 150 secret-key calls of the minute to the merchant', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({}, { clock });
    const shop = await server.createBusiness({ name: 'Targeted', kycApproved: true });
    for (let i = 0; i < 160; i++) {
      const response = await profile(server, shop.keys.test.publishableKey);
      expect(response.status, response.text).toBe(200);
    }
    const first = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: shop.keys.test.secretKey,
      json: { amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } },
    });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('ratelimit-limit')).toBe('150');
    expect(first.headers.get('ratelimit-remaining')).toBe('149');
    for (let i = 0; i < 149; i++) expect((await list(server, shop.keys.test.secretKey)).status).toBe(200);
    expectError(await list(server, shop.keys.test.secretKey), 429, 'rate_limited');
  });

  it('refused pk_live calls (no KYC) and publishable keys on secret routes spend nothing of it either', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({}, { clock });
    const shop = await server.createBusiness({ name: 'Unverified' });
    for (let i = 0; i < 160; i++) {
      expectError(await profile(server, shop.keys.live.publishableKey), 403, 'kyc_required');
    }
    for (let i = 0; i < 20; i++) {
      expectError(await list(server, shop.keys.test.publishableKey), 403, 'publishable_key_not_allowed');
    }
    // KYC is approved: the live secret key has its whole minute, and so has the test one.
    await approveKyc(server.service.deps.store, shop.business.id, Date.now());
    for (const key of [shop.keys.live.secretKey, shop.keys.test.secretKey]) {
      const response = await list(server, key);
      expect(response.status, response.text).toBe(200);
      expect(response.headers.get('ratelimit-remaining')).toBe('149');
    }
  });

  it('publishable-key calls meet 429 past the address’s checkout budget, without touching the secret key', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({ rateLimit: { widgetPerMinutePerAddress: 20 } }, { clock });
    const shop = await server.createBusiness({ name: 'Popular' });
    for (let i = 0; i < 20; i++)
      expect((await profile(server, shop.keys.test.publishableKey)).status).toBe(200);
    const refused = await profile(server, shop.keys.test.publishableKey);
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers.get('ratelimit-limit')).toBe('20');
    expect(refused.headers.get('retry-after')).toBe('60');
    const merchant = await list(server, shop.keys.test.secretKey);
    expect(merchant.status).toBe(200);
    expect(merchant.headers.get('ratelimit-remaining')).toBe('149');
    clock.advance(60_000);
    expect((await profile(server, shop.keys.test.publishableKey)).status).toBe(200);
  });
});

describe('the checkout’s token routes, per address', () => {
  it('1,500 cancels with one widget token in one burst meet 429 after the address’s 600', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({}, { clock });
    const running = server;
    const { secretKey } = (await running.createBusiness()).keys.test;
    const created = await createSession(running.baseUrl, secretKey);
    const opened = await bootstrap(running.baseUrl, created.clientSecret);
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < 1500) {
        next += 1;
        const response = await call(running.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, {
          token: opened.token,
        });
        if (response.status === 429) expectError(response, 429, 'rate_limited');
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    // bootstrap spent one of the 600; the first cancel cancels, the rest answer the cancelled session again.
    expect(Object.fromEntries(statuses)).toEqual({ 200: 599, 429: 901 });
    // The merchant's own cancel and reads are unaffected.
    const merchant = await list(running, secretKey);
    expect(merchant.status).toBe(200);
  });

  it('a new account and the push stream spend the same budget', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({ rateLimit: { widgetPerMinutePerAddress: 4 } }, { clock });
    const { secretKey } = (await server.createBusiness()).keys.test;
    const created = await createSession(server.baseUrl, secretKey);
    const opened = await bootstrap(server.baseUrl, created.clientSecret); // 1
    const accounts = `/api/widget/sessions/${created.id}/accounts`;
    expect((await call(server.baseUrl, 'POST', accounts, { token: opened.token })).status).toBe(201); // 2
    expect(
      (
        await call(server.baseUrl, 'HEAD', `/api/widget/sessions/${created.id}/events`, {
          token: opened.token,
        })
      ).status,
    ).toBe(200); // 3
    expect((await call(server.baseUrl, 'POST', accounts, { token: opened.token })).status).toBe(201); // 4
    expectError(await call(server.baseUrl, 'POST', accounts, { token: opened.token }), 429, 'rate_limited');
    const stream = await call(server.baseUrl, 'GET', `/api/widget/sessions/${created.id}/events`, {
      token: opened.token,
    });
    expectError(stream, 429, 'rate_limited');
  });
});
