import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 36: every payer-facing page of the widget hosts reads the database, so each page view spends the
// checkout's per-address budget (the one the client-secret exchange spends): an address cannot make a link's
// page or a hosted checkout answer without end. A small budget here, on a real server.

let server: RunningServer;
let key: string;

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000, widgetPerMinutePerAddress: 4 } });
  key = (await server.createBusiness({ name: 'Budget Shop' })).keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
});

describe("the hosted pages' per-address budget", () => {
  it('answers 429 with Retry-After once the address spent the checkout budget, pages and bootstrap alike', async () => {
    const link = await call(server.baseUrl, 'POST', '/api/payment-links', {
      token: key,
      json: { name: 'Budget', amount: 500_000, currency: 'NGN' },
    });
    expect(link.status).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await fetch(link.body.data.url)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const over = await fetch(link.body.data.url);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await over.text()).toContain('Too many requests');
    // The same budget as the client-secret exchange: it is spent too.
    const bootstrap = await call(server.baseUrl, 'POST', '/api/widget/bootstrap', {
      json: { clientSecret: `cs_test_${'x'.repeat(40)}` },
    });
    expect(bootstrap.status).toBe(429);
  });
});
