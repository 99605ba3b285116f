import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { launchChromium, openPage } from './support/browser.ts';
import { checkoutFrame, ensureWidgetBuilt, heading, shownAccountNumber } from './support/checkout-world.ts';
import { screenshot } from './support/inspect.ts';
import { startLandingPages } from './support/merchant-site.ts';

// Issue 36: a session's hosted checkout url (`/checkout/<id>#<client secret>`) is handed to the payer and may be
// opened long after it was made, after the service restarted (a deploy, a crash). Nothing of the page lives in
// the process: the session, its client secret's hash and the business are in the SQLite file. Real Chromium,
// a real service stopped and started again on the same file and the same addresses.

let browser: Browser;
let folder: string;
let shop: Awaited<ReturnType<typeof startLandingPages>>;
let shopUrl: string;
const running: RunningServer[] = [];

beforeAll(async () => {
  [browser] = await Promise.all([launchChromium(), ensureWidgetBuilt()]);
  folder = mkdtempSync(join(tmpdir(), 'servicepay-restart-'));
  shop = await startLandingPages();
  shopUrl = shop.url;
});

afterAll(async () => {
  await browser?.close();
  for (const server of running) await server.close().catch(() => undefined);
  shop?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

const portOf = (url: string) => Number(new URL(url).port);

describe('the hosted checkout across a restart', () => {
  it('a url made before the service restarted opens after it, shows the checkout and is paid; the payer lands on successUrl', {
    timeout: 60_000,
  }, async () => {
    const dbPath = join(folder, 'servicepay.db');
    const config = { rateLimit: { perMinute: 100_000, widgetPerMinutePerAddress: 100_000 } };
    const first = await startServer(config, { dbPath });
    running.push(first);
    const business = await first.createBusiness({ name: 'Mama Put Fabrics', kycApproved: true });
    const key = business.keys.test.secretKey;
    const created = await call(first.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      json: {
        amount: 500_000,
        currency: 'NGN',
        payer: { name: 'Ada Payer', email: 'ada@example.com' },
        successUrl: `${shopUrl}/paid?session={SESSION_ID}`,
        cancelUrl: `${shopUrl}/cancelled`,
      },
    });
    expect(created.status, created.text).toBe(201);
    const { id, url } = created.body.data as { id: string; url: string };
    await first.close();
    running.pop();

    // The same file and the same addresses, as a restarted deployment has.
    const second = await startServer(
      {
        ...config,
        port: portOf(first.baseUrl),
        testWidgetPort: portOf(first.widgetUrls.test),
        liveWidgetPort: portOf(first.widgetUrls.live),
      },
      { dbPath },
    );
    running.push(second);
    expect(second.widgetUrls.test).toBe(first.widgetUrls.test);

    const { page, problems, close } = await openPage(browser, { width: 390 });
    await page.goto(url);
    const account = await shownAccountNumber(page);
    expect(account).toMatch(/^\d{10}$/);
    expect((await checkoutFrame(page).locator('.amount').textContent())?.trim()).toBe('₦5,000.00');
    expect((await checkoutFrame(page).locator('.merchant').textContent())?.trim()).toBe(
      'Pay Mama Put Fabrics',
    );
    expect(page.url()).toBe(`${first.widgetUrls.test}/checkout/${id}`);
    await screenshot(page, '36-hosted-checkout-after-restart');
    const paid = await call(second.baseUrl, 'POST', '/api/test/transfers', {
      token: key,
      json: { accountNumber: account, amount: 500_000 },
    });
    expect(paid.status, paid.text).toBe(200);
    await heading(page).filter({ hasText: 'Payment received' }).waitFor({ timeout: 15_000 });
    await page.waitForURL(`${shopUrl}/paid?session=${id}`, { timeout: 15_000 });
    const session = await call(second.baseUrl, 'GET', `/api/widget/sessions/${id}`, { token: key });
    expect(session.body.data).toMatchObject({ id, status: 'successful', amount: 500_000, currency: 'NGN' });
    // Chromium's warning that a sandboxed frame of the page's own origin could leave its sandbox (the hosted
    // page and its checkout frame are both the widget host's); nothing else.
    expect(problems.filter((line) => !line.includes('can escape its sandboxing'))).toEqual([]);
    await close();
  });
});
