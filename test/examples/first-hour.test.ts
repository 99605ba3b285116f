import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage } from '../browser/support/browser.ts';
import { type RunningProcess, startProcess } from '../support/child-process.ts';

// The "done when", as a new user lives it: `npm start`, open the shop, pay with the widget, press the
// transfer button in the portal's Test bank, watch the shop's order turn paid and the delivery appear in the
// portal. Only what the banner prints and what the pages show is used: no API call, no source.

const folder = mkdtempSync(join(tmpdir(), 'servicepay-first-hour-'));
let npmStart: RunningProcess;
let browser: Browser;
let printed: { api: string; shop: string; portal: string; secretKey: string };

beforeAll(async () => {
  npmStart = startProcess(process.execPath, ['--import', 'tsx', 'scripts/start.ts', '--no-build'], {
    env: {
      SERVICEPAY_DB: join(folder, 'servicepay.db'),
      SERVICEPAY_PORT: '0',
      SERVICEPAY_TEST_WIDGET_PORT: '0',
      SERVICEPAY_LIVE_WIDGET_PORT: '0',
      SHOP_PORT: '0',
    },
  });
  await npmStart.waitFor(/Press Ctrl\+C to stop/);
  const banner = npmStart.output();
  const field = (label: string, pattern = '(http://\\S+)') =>
    new RegExp(`${label}\\s+${pattern}`).exec(banner)?.[1] as string;
  printed = {
    api: field('API'),
    shop: field('Example shop'),
    portal: field('Developer portal'),
    secretKey: field('secret key', '(sk_test_\\w+)'),
  };
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await npmStart?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe('the first hour', () => {
  it('npm start, pay in the shop, send the transfer from the portal, see the order paid and the delivery', async () => {
    // The payer, in the shop.
    const payer = await openPage(browser, { width: 1024, height: 800 });
    payer.page.setDefaultTimeout(15_000);
    await payer.page.goto(printed.shop);
    await payer.page.getByRole('button', { name: 'Pay by bank transfer' }).click();
    const frame = await (await payer.page.waitForSelector('servicepay-checkout iframe')).contentFrame();
    const digits = frame?.locator('.digits');
    await digits?.waitFor();
    const accountNumber = (await digits?.textContent())?.replace(/\s/g, '');
    expect(accountNumber).toMatch(/^\d{10}$/);
    const orderId = (await payer.page.locator('#order-id').textContent()) as string;

    // The developer, in the portal: sign in with the printed key, Test bank, the exact amount.
    const developer = await openPage(browser, { width: 1280, height: 900 });
    developer.page.setDefaultTimeout(15_000);
    await developer.page.goto(printed.portal);
    await developer.page.getByLabel('Secret key').fill(printed.secretKey);
    await developer.page.getByRole('button', { name: 'Sign in' }).click();
    await developer.page.getByRole('link', { name: 'Test bank' }).click();
    const row = developer.page.getByRole('row').filter({ hasText: orderId });
    await expect(row.textContent()).resolves.toContain(accountNumber);
    await row.getByRole('button', { name: /^Send NGN.5,000\.00$/ }).click();

    // The shop's page turns paid; the checkout said success.
    await payer.page.waitForSelector('#order-status[data-status="paid"]', { timeout: 30_000 });
    expect(await payer.page.locator('#status').textContent()).toBe('Thank you: your order is paid.');

    // As the README says: the portal's Events page shows session.successful first, and its page the delivery
    // the shop answered 200.
    await developer.page.getByRole('link', { name: 'Events' }).first().click();
    await developer.page.getByRole('row').nth(1).getByRole('link', { name: 'session.successful' }).click();
    await expect
      .poll(
        async () => {
          await developer.page.reload();
          return developer.page.locator('li.delivery').first().textContent();
        },
        { timeout: 15_000 },
      )
      .toMatch(new RegExp(`${printed.shop}/webhooks/servicepay[\\s\\S]*succeeded[\\s\\S]*200`));
    // And the endpoint's own page lists it too.
    await developer.page.getByRole('link', { name: 'Webhooks' }).first().click();
    await developer.page.getByRole('link', { name: `${printed.shop}/webhooks/servicepay` }).click();
    const delivery = developer.page.locator('li.delivery').filter({ hasText: 'session.successful' });
    await delivery.first().waitFor({ timeout: 15_000 });
    await expect(delivery.first().textContent()).resolves.toMatch(/succeeded[\s\S]*200/);

    expect(payer.problems).toEqual([]);
    // The portal has no favicon (its owner's to add); anything else it logs is a failure here.
    expect(developer.problems.filter((problem) => !problem.includes('/favicon.ico'))).toEqual([]);
    await payer.close();
    await developer.close();
  }, 90_000);
});
