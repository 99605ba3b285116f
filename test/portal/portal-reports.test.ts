import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../reference-server/src/internal/money-format.ts';
import { launchChromium } from '../browser/support/browser.ts';
import { documentAxeViolations } from '../browser/support/inspect.ts';
import { bootstrap, call, createSession, testTransfer } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 37: the portal's Reports page in real headless Chromium, over a ledger made by real money moving
// (payments, a partial refund, a transfer of the wrong amount the bank returns, a second currency): the
// totals it shows are the money that moved, its downloads hold the ledger's rows, and it fits a 320 px phone
// with no axe violation. The screenshot goes to a temporary folder for a person to look at.

const SCREENSHOTS = join(tmpdir(), 'servicepay-portal-reports');
let server: RunningServer;
let browser: Browser;
let key: string;

/** Pays a new session of `amount` with a transfer of `sent` (the amount itself unless said). */
async function pay(amount: number, currency = 'NGN', sent = amount): Promise<string> {
  const created = await createSession(server.baseUrl, key, { amount, currency });
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, sent);
  return created.id;
}

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  key = (await server.createBusiness({ name: 'Reports Shop', kycApproved: true })).keys.test.secretKey;
  const first = await pay(500_000);
  await pay(700_000);
  const refund = await call(server.baseUrl, 'POST', `/api/widget/sessions/${first}/refunds`, {
    token: key,
    json: { amount: 200_000 },
  });
  expect(refund.status, refund.text).toBe(201);
  await pay(400_000, 'NGN', 300_000); // the wrong amount: in and straight back out
  await pay(1_500, 'USD');
  // The refund is paid out by the bank after its answer: wait until the ledger has all six movements.
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const listed = await call(server.baseUrl, 'GET', '/api/balance-transactions?limit=100', { token: key });
    if (listed.body?.data?.length === 6) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** What does not fit a screen `width` wide (empty: it fits). */
const misfits = (page: Page, width: number) =>
  page.evaluate((viewport) => {
    const found: string[] = [];
    const overflow = document.documentElement.scrollWidth - viewport;
    if (overflow > 0) found.push(`the page is ${overflow}px wider than the screen`);
    for (const wrap of document.querySelectorAll('.table-wrap'))
      if (wrap.scrollWidth > wrap.clientWidth)
        found.push(`a table scrolls sideways: ${wrap.textContent?.slice(0, 40)}`);
    for (const element of document.querySelectorAll('.nav a, button, .button, input, select, main a, svg')) {
      const box = element.getBoundingClientRect();
      if (box.width > 0 && (box.left < 0 || box.right > viewport + 0.5))
        found.push(`${element.tagName} "${element.textContent?.trim().slice(0, 30)}" runs past the edge`);
    }
    return found;
  }, width);

describe('the Reports page', () => {
  it('shows the money moved per currency, a chart of each day, and downloads the same rows, at 320 px', async () => {
    const context = await browser.newContext({ viewport: { width: 320, height: 800 } });
    const page = await context.newPage();
    try {
      await page.goto(`${server.baseUrl}/portal/sign-in`);
      await page.getByLabel('Secret key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/portal/sessions');
      await page.getByRole('link', { name: 'Reports' }).click();
      await page.waitForURL('**/portal/reports');

      // Totals: 5,000 + 7,000 + the 3,000 sent by mistake in; the 2,000 refund and those 3,000 back out.
      const row = (currency: string) =>
        page.locator('table tbody tr').filter({ has: page.locator(`th:text-is("${currency}")`) });
      const ngn = row('NGN');
      await expect
        .poll(() => ngn.locator('td[data-label="In"]').innerText())
        .toBe(formatMoney(1_500_000, 'NGN'));
      expect(await ngn.locator('td[data-label="Out"]').innerText()).toBe(formatMoney(-500_000, 'NGN'));
      expect(await ngn.locator('td[data-label="Refunded"]').innerText()).toBe(formatMoney(-200_000, 'NGN'));
      expect(await ngn.locator('td[data-label="Returned"]').innerText()).toBe(formatMoney(-300_000, 'NGN'));
      expect(await row('USD').locator('td[data-label="Out"]').innerText()).toBe(formatMoney(0, 'USD'));
      expect(await ngn.locator('td[data-label="Net"]').innerText()).toBe(formatMoney(1_000_000, 'NGN'));
      expect(await ngn.locator('td[data-label="Entries"]').innerText()).toBe('5'); // two payments, the refund, the mistake in and out
      expect(await row('USD').locator('td[data-label="Net"]').innerText()).toBe(formatMoney(1_500, 'USD'));
      // The page's net is the ledger's balance (GET /api/balance).
      const balance = await call(server.baseUrl, 'GET', '/api/balance', { token: key });
      const ledgerNet = balance.body.data.currencies.find(
        (entry: { currency: string }) => entry.currency === 'NGN',
      );
      expect(ledgerNet.net).toBe(1_000_000);

      // A chart per currency, named and described, with today's bar; its table holds today's net.
      const chart = page.getByRole('img', { name: 'Net per day, NGN' });
      await expect.poll(() => chart.count()).toBe(1);
      expect(await chart.locator('rect.bar-in').count()).toBe(1);
      const today = new Date().toISOString().slice(0, 10);
      await page.getByText("Each day's net in NGN, as a table").click();
      const todayRow = page
        .locator('#chart-ngn-caption')
        .locator('..')
        .locator('tr', { has: page.locator(`th:text-is("${today}")`) });
      expect(await todayRow.locator('td').innerText()).toBe(formatMoney(1_000_000, 'NGN'));

      await page.screenshot({ path: join(SCREENSHOTS, 'reports-320.png'), fullPage: true });
      await chart.screenshot({ path: join(SCREENSHOTS, 'reports-320-chart.png') });
      expect(await misfits(page, 320)).toEqual([]);
      expect(await documentAxeViolations(page)).toEqual([]);
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await documentAxeViolations(page)).toEqual([]);
      await page.emulateMedia({ colorScheme: 'light' });

      // The download, with the page's own session: the ledger's rows, each once, summing to the page's net.
      const link = page.getByRole('link', { name: 'Balance transactions (CSV)' });
      const downloaded = await context.request.get(`${server.baseUrl}${await link.getAttribute('href')}`);
      expect(downloaded.status()).toBe(200);
      expect(downloaded.headers()['content-type']).toBe('text/csv; charset=utf-8');
      expect(downloaded.headers()['content-disposition']).toMatch(
        /^attachment; filename="servicepay-balance-transactions-test-.+\.csv"$/,
      );
      const records: string[][] = parse(await downloaded.body(), { bom: true });
      const listed = await call(server.baseUrl, 'GET', '/api/balance-transactions?limit=100', { token: key });
      expect(
        records
          .slice(1)
          .map((cells) => cells[0])
          .sort(),
      ).toEqual(listed.body.data.map((entry: { id: string }) => entry.id).sort());
      const net = records
        .slice(1)
        .filter((cells) => cells[4] === 'NGN')
        .reduce((sum, cells) => sum + Number(cells[3]), 0);
      expect(net).toBe(1_000_000);
      const sessions = await context.request.get(
        `${server.baseUrl}${await page.getByRole('link', { name: 'Sessions (CSV)' }).getAttribute('href')}`,
      );
      expect(parse(await sessions.body(), { bom: true })).toHaveLength(1 + 4);

      // Another zone: the form keeps it, and the same money is in the range. The range ends today in Lagos, as
      // a merchant there picks it: from 23:00 UTC on, today in Lagos is tomorrow in UTC, and the UTC default's
      // last day would leave the last hour's payments out (this test failed in that hour).
      const todayInLagos = new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Lagos' }).format(new Date());
      await page.getByLabel('Last day').fill(todayInLagos);
      await page.getByLabel('Days in').selectOption('Africa/Lagos');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/zone=Africa%2FLagos/);
      expect(await row('NGN').locator('td[data-label="Net"]').innerText()).toBe(
        formatMoney(1_000_000, 'NGN'),
      );
      expect(await misfits(page, 320)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('answers a range it cannot chart with a 400 page, and a download needs the portal session', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      const signedOut = await context.request.get(`${server.baseUrl}/portal/reports/sessions.csv`, {
        maxRedirects: 0,
      });
      expect(signedOut.status()).toBe(303);
      await page.goto(`${server.baseUrl}/portal/sign-in`);
      await page.getByLabel('Secret key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/portal/sessions');
      const backwards = await page.goto(`${server.baseUrl}/portal/reports?from=2026-12-05&to=2026-12-01`);
      expect(backwards?.status()).toBe(400);
      expect(await page.locator('main').innerText()).toContain('The first day comes after the last.');
      const tooLong = await context.request.get(
        `${server.baseUrl}/portal/reports/balance-transactions.csv?from=2025-01-01&to=2026-12-01`,
      );
      expect(tooLong.status()).toBe(400);
      expect(tooLong.headers()['content-type']).toContain('text/html');
    } finally {
      await context.close();
    }
  }, 60_000);
});
