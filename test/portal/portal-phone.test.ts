import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PORTAL_OPERATIONS } from '../../reference-server/src/portal/portal-operations.ts';
import { launchChromium } from '../browser/support/browser.ts';
import { documentAxeViolations } from '../browser/support/inspect.ts';
import { bootstrap, call, createSession, testTransfer } from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 30: the portal works on a phone. Every page of the portal's operations table, and the pages its forms
// answer with, at 320 and 390 px in real headless Chromium: nothing wider than the screen (no sideways
// scrolling), no table that scrolls or clips inside its frame (they stack into cards), every tab and button in
// sight, the business name in the header (its title holds all of it), and no axe violation (at 390 px in the
// dark scheme too). Screenshots at 320 px go to a temporary folder for a person to look at.

const SCREENSHOTS = join(tmpdir(), 'servicepay-portal-phone');
const NAME = 'The Extraordinarily Long-Named Paper & Ink Emporium of Lagos, Abuja and Port Harcourt Limited';

let server: RunningServer;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;
const ids = { session: '', event: '', endpoint: '', request: '', link: '' };

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  shop = await server.createBusiness({ name: NAME, kycApproved: true });
  receiver = await startReceiver();
  const key = shop.keys.test.secretKey;
  const endpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
    token: key,
    json: {
      url: `${receiver.url}/servicepay/paper-and-ink-emporium/orders/notifications/extraordinarily-long-path`,
      description: 'Orders: marks an order paid and emails the receipt to the customer',
    },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  ids.endpoint = endpoint.body.data.id;
  const created = await createSession(server.baseUrl, key, {
    reference: 'order-2026-11-27-000123-paper-and-ink',
    payer: { name: 'Adaeze Oluwaseun-Okonkwo', email: 'adaeze.oluwaseun-okonkwo@example.com' },
    metadata: { basket: 'three reams of cotton paper, a bottle of iron gall ink and a dip pen' },
  });
  ids.session = created.id;
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, created.amount);
  const [event] = await server.rows<{ id: string }>(
    "SELECT id FROM events WHERE session_id = ? AND type = 'session.successful'",
    created.id,
  );
  ids.event = event?.id ?? '';
  // Wait for the delivery, so the event and endpoint pages show an attempt.
  for (const deadline = Date.now() + 10_000; receiver.received.length === 0 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // An open session too, for the test bank's table, and a refused request for the request log.
  const waiting = await createSession(server.baseUrl, key, { reference: 'order-waiting-for-transfer' });
  await bootstrap(server.baseUrl, waiting.clientSecret);
  const refused = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
    token: key,
    json: { amount: -5, currency: 'NGN', payer: { name: 'x', email: 'not-an-email' } },
  });
  expect(refused.status).toBe(400);
  ids.request = refused.headers.get('request-id') ?? '';
  // A payment link with a long name, for the Payment links pages (issue 36).
  const link = await call(server.baseUrl, 'POST', '/api/payment-links', {
    token: key,
    json: {
      name: 'Hand-dyed adire indigo fabric, six yards, with matching head tie',
      amount: 1_250_000,
      currency: 'NGN',
    },
  });
  expect(link.status, link.text).toBe(201);
  ids.link = link.body.data.id;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.close();
});

type GetRouteName = Extract<(typeof PORTAL_OPERATIONS)[number], { method: 'get' }>['operationId'];

/**
 * Every page of the portal's table (a route added to it without an address here does not compile); `null` for
 * what is not a page.
 */
const PAGES: Record<GetRouteName, (() => string) | null> = {
  portalAsset: null, // the stylesheet and script
  portalHome: () => '/portal/',
  portalSignInPage: () => '/portal/sign-in',
  portalKeys: () => '/portal/keys',
  portalWebhooks: () => '/portal/webhooks',
  portalEndpoint: () => `/portal/webhooks/${ids.endpoint}`,
  portalEvents: () => '/portal/events',
  portalEvent: () => `/portal/events/${ids.event}`,
  portalRequests: () => '/portal/requests',
  portalRequest: () => `/portal/requests/${ids.request}`,
  portalSessions: () => '/portal/sessions',
  portalSession: () => `/portal/sessions/${ids.session}`,
  portalBank: () => '/portal/bank',
  portalKyc: () => '/portal/kyc',
  portalPaymentLinks: () => '/portal/payment-links',
  portalPaymentLink: () => `/portal/payment-links/${ids.link}`,
};

/** What does not fit a screen `width` wide, as a list of findings (empty: it fits). */
function misfits(page: Page, width: number): Promise<string[]> {
  return page.evaluate((viewport) => {
    const found: string[] = [];
    const name = (element: Element) =>
      `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}.${[...element.classList].join('.')} "${(element.textContent ?? '').trim().slice(0, 40)}"`;
    const overflow = document.documentElement.scrollWidth - viewport;
    if (overflow > 0) found.push(`the page is ${overflow}px wider than the screen`);
    for (const wrap of document.querySelectorAll('.table-wrap')) {
      if (wrap.scrollWidth > wrap.clientWidth) found.push(`a table scrolls sideways in ${name(wrap)}`);
    }
    // Every tab, button, field and link in sight (not past the right edge, not cut by an ancestor).
    for (const element of document.querySelectorAll('.nav a, button, .button, input, select, main a')) {
      const box = element.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue; // hidden (a copy button without its script)
      if (box.left < 0 || box.right > viewport + 0.5) found.push(`${name(element)} runs past the edge`);
    }
    return found;
  }, width);
}

async function checkPage(page: Page, width: number, label: string): Promise<void> {
  expect(await misfits(page, width), `${label} at ${width}px`).toEqual([]);
  expect(await documentAxeViolations(page), `${label} at ${width}px`).toEqual([]);
  if (width === 390) {
    // The dark scheme too (the portal follows the system's): contrast is checked again on its colours.
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await documentAxeViolations(page), `${label} at ${width}px, dark`).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });
  }
  if (width === 320) {
    await page.screenshot({ path: join(SCREENSHOTS, `${label}.png`), fullPage: true });
  }
}

describe.each([320, 390])('the portal at %i px', (width) => {
  it('fits every page on the screen, with every tab, button and table in sight, and no axe violation', async () => {
    const context = await browser.newContext({ viewport: { width, height: 800 } });
    const page = await context.newPage();
    try {
      // Signed out: the sign-in page, and an error.
      await page.goto(`${server.baseUrl}/portal/sign-in`);
      await checkPage(page, width, 'sign-in');
      await page.getByLabel('Secret key').fill(shop.keys.test.secretKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/portal/sessions');

      for (const [name, address] of Object.entries(PAGES) as Array<[GetRouteName, (() => string) | null]>) {
        if (!address) continue;
        const answer = await page.goto(`${server.baseUrl}${address()}`);
        expect(answer?.status(), name).toBe(200);
        await checkPage(page, width, name);
        const header = page.locator('.business');
        if ((await header.count()) > 0) {
          // The name in the header, cut at most with an ellipsis; its title holds all of it.
          expect(await header.getAttribute('title')).toBe(NAME);
          expect(await header.isVisible()).toBe(true);
        }
      }
      // Every tab of the bar in sight, on one line or two, none cut.
      const tabs = page.locator('.nav a');
      expect(await tabs.count()).toBe(8);

      // What the forms answer with: a revealed signing secret, a new key shown once, an error page.
      await page.goto(`${server.baseUrl}/portal/webhooks/${ids.endpoint}`);
      await page.getByLabel('Show the secret on this screen').check();
      await page.getByRole('button', { name: 'Reveal signing secret' }).click();
      await page.locator('#endpoint-secret').waitFor();
      await checkPage(page, width, 'endpoint-secret');
      await page.goto(`${server.baseUrl}/portal/keys`);
      await page.getByLabel('I understand the current publishable key stops working at once').check();
      await page.getByRole('button', { name: 'Roll publishable key' }).click();
      await page.locator('#new-key').waitFor();
      await checkPage(page, width, 'keys-rolled');
      const missing = await page.goto(`${server.baseUrl}/portal/events/evt_missing`);
      expect(missing?.status()).toBe(404);
      await checkPage(page, width, 'not-found');
    } finally {
      await context.close();
    }
  }, 240_000);
});
