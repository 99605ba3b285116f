import { request as httpRequest } from 'node:http';
import type { FrameLocator, Page } from 'playwright-core';
import type { Clock, ServerConfigOverrides } from '../../../reference-server/src/index.ts';
import { buildWidget } from '../../../widget/scripts/build.ts';
import { type RunningServer, startServer } from '../../support/server.ts';
import { type MerchantSite, shopPage, startMerchantSite } from './merchant-site.ts';

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field, not typed up front.
type Json = any;

let built: Promise<unknown> | undefined;

/**
 * JSON over a fresh connection every time (no keep-alive pool): a test may just have dropped every socket
 * the service had open, and a pooled one would fail the next call.
 */
function request(baseUrl: string, method: string, path: string, key?: string, body?: unknown) {
  return new Promise<{ status: number; body: Json }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const outgoing = httpRequest(
      new URL(path, baseUrl),
      {
        method,
        agent: false,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** Builds widget.js and the frame once per test file (esbuild, well under a second; writes are atomic). */
export function ensureWidgetBuilt(): Promise<unknown> {
  built ??= buildWidget();
  return built;
}

export interface CheckoutWorld {
  server: RunningServer;
  site: MerchantSite;
  keys: { test: string; live: string };
  merchantName: string;
  /** A session of `amount` minor units (NGN) in `environment`; returns its id and client secret. */
  createSession(
    amount: number,
    environment?: 'test' | 'live',
    payerName?: string,
  ): Promise<{ id: string; clientSecret: string; reference: string }>;
  /** The payer's transfer at the simulated bank's counter (no key), as `servicepay-server transfer` does. */
  transfer(accountNumber: string, amount: number): Promise<{ status: number; body: Json }>;
  /** The session's status as the merchant's backend sees it. */
  sessionStatus(id: string, environment?: 'test' | 'live'): Promise<string>;
  /**
   * Test mode's "expire now" with the test key: the session's lifetime (`session`) or its account's countdown
   * (`account`) ends at once (`POST /api/test/sessions/{id}/expire`, `…/account/expire`).
   */
  expire(id: string, ending: 'session' | 'account'): Promise<{ status: number; body: Json }>;
  /** A merchant page loading `/latest/widget.js` from the host of `environment`, under the spec's CSP. */
  shopUrl(environment?: 'test' | 'live', path?: string): string;
  close(): Promise<void>;
}

/**
 * The real reference server with its widget hosts, a business with KYC, and a merchant site with the spec's CSP.
 * `clock`: the service's clock (a `ManualClock` moves the service's time without waiting; the browsers keep theirs).
 */
export async function startCheckoutWorld(
  options: { config?: ServerConfigOverrides; merchantName?: string; clock?: Clock } = {},
): Promise<CheckoutWorld> {
  await ensureWidgetBuilt();
  const server = await startServer(
    {
      rateLimit: { perMinute: 100_000, widgetPerMinutePerAddress: 100_000 },
      ...options.config,
    },
    options.clock ? { clock: options.clock } : {},
  );
  const merchantName = options.merchantName ?? 'Ada Stores';
  const business = await server.createBusiness({ name: merchantName, kycApproved: true });
  const site = await startMerchantSite(server.baseUrl);
  const keys = { test: business.keys.test.secretKey, live: business.keys.live.secretKey };
  return {
    server,
    site,
    keys,
    merchantName,
    async createSession(amount, environment = 'test', payerName = 'Ada Payer') {
      const created = await request(server.baseUrl, 'POST', '/api/widget/sessions', keys[environment], {
        amount,
        currency: 'NGN',
        payer: { name: payerName, email: 'ada@example.com' },
      });
      if (created.status !== 201)
        throw new Error(`session create: ${created.status} ${JSON.stringify(created.body)}`);
      return {
        id: created.body.data.id as string,
        clientSecret: created.body.data.clientSecret as string,
        reference: created.body.data.reference as string,
      };
    },
    transfer: (accountNumber, amount) =>
      request(server.baseUrl, 'POST', '/bank/transfers', undefined, { accountNumber, amount }),
    async sessionStatus(id, environment = 'test') {
      const answer = await request(server.baseUrl, 'GET', `/api/widget/sessions/${id}`, keys[environment]);
      return answer.body.data.status as string;
    },
    expire: (id, ending) =>
      request(
        server.baseUrl,
        'POST',
        `/api/test/sessions/${id}/${ending === 'session' ? 'expire' : 'account/expire'}`,
        keys.test,
      ),
    shopUrl(environment = 'test', path = `/shop-${environment}.html`) {
      const host = server.widgetUrls[environment];
      return site.page(path, shopPage(`${host}/latest/widget.js`), host);
    },
    async close() {
      await site.close();
      await server.close();
    },
  };
}

/** The checkout frame inside the overlay (Playwright's CSS engine pierces the open shadow root). */
export function checkoutFrame(page: Page): FrameLocator {
  return page.frameLocator('servicepay-checkout iframe');
}

/** Opens the checkout from the merchant page's own script, as a shop's "Pay" button would. */
export async function openCheckout(page: Page, clientSecret: string): Promise<void> {
  await page.evaluate((secret) => {
    const button = document.getElementById('pay');
    if (!button) throw new Error('no pay button');
    button.setAttribute('data-secret', secret);
    button.click();
  }, clientSecret);
}

/**
 * What the merchant page's log must hold after a paid checkout: `onSuccess` exactly once, with the spec's payload.
 *
 * @example
 * expect(await merchantLog(page)).toEqual(paidOnce(session));
 */
export const paidOnce = (session: { id: string; reference: string }) => [
  { callback: 'onSuccess', payload: { id: session.id, reference: session.reference, status: 'successful' } },
];

/** What the merchant page's callbacks recorded, in order. */
export function merchantLog(page: Page): Promise<Array<{ callback: string; payload?: unknown }>> {
  return page.evaluate(() => (window as unknown as { merchantLog: Array<{ callback: string }> }).merchantLog);
}

/** The account number shown on AWAITING_PAYMENT. */
export async function shownAccountNumber(page: Page): Promise<string> {
  const digits = checkoutFrame(page).locator('.digits');
  await digits.waitFor();
  return (await digits.textContent())?.trim() ?? '';
}

/** The checkout's current heading (every screen has one h1). */
export function heading(page: Page) {
  return checkoutFrame(page).locator('h1');
}
