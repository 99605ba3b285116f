import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { openPage } from '../browser/support/browser.ts';
import { call } from '../support/api.ts';
import { eventually } from '../support/child-process.ts';

export interface PaidInBrowser {
  page: Page;
  sessionId: string;
  accountNumber: string;
  /** Console errors and warnings of the page and its frames (CSP violations included). */
  problems: string[];
  close(): Promise<void>;
}

/**
 * Pays a merchant page as a payer would: opens it in Chromium, presses its pay button, waits for the
 * widget's frame to show the account, sends the exact amount at the simulated bank's counter
 * (`POST /bank/transfers`), and waits for the page to say paid (`paidSelector`).
 */
export async function payInBrowser(options: {
  browser: Browser;
  pageUrl: string;
  apiUrl: string;
  secretKey: string;
  payButton: RegExp;
  paidSelector: string;
  amount: number;
}): Promise<PaidInBrowser> {
  const watched = await openPage(options.browser, { width: 1024, height: 800 });
  const { page } = watched;
  const before = await call(options.apiUrl, 'GET', '/api/widget/sessions?limit=100', {
    token: options.secretKey,
  });
  const earlier = new Set((before.body.data as Array<{ id: string }>).map((session) => session.id));
  await page.goto(options.pageUrl);
  await page.getByRole('button', { name: options.payButton }).click();

  // The widget's frame, on the widget host, inside the overlay the script tag's loader opened.
  const element = await page.waitForSelector('servicepay-checkout iframe', { timeout: 20_000 });
  const frame = await element.contentFrame();
  if (!frame) throw new Error('the checkout iframe has no frame');

  // The session the merchant's backend just made, as the merchant sees it once the widget opened it.
  const session = await eventually(async () => {
    const listed = await call(options.apiUrl, 'GET', '/api/widget/sessions?limit=1', {
      token: options.secretKey,
    });
    const latest = listed.body?.data?.[0];
    if (!latest || earlier.has(latest.id)) return undefined;
    return latest?.virtualAccount
      ? (latest as { id: string; amount: number; virtualAccount: { accountNumber: string } })
      : undefined;
  });
  expect(session.amount).toBe(options.amount);
  const { accountNumber } = session.virtualAccount;
  // The payer sees that account number in the checkout.
  const shown = frame.locator('.digits');
  await shown.waitFor({ timeout: 20_000 });
  expect((await shown.textContent())?.replace(/\s/g, '')).toBe(accountNumber);

  const transfer = await call(options.apiUrl, 'POST', '/bank/transfers', {
    json: { accountNumber, amount: options.amount },
  });
  expect(transfer.body?.data?.outcome, transfer.text).toBe('credited');
  await page.waitForSelector(options.paidSelector, { timeout: 30_000 });
  return { page, sessionId: session.id, accountNumber, problems: watched.problems, close: watched.close };
}
