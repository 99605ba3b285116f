import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from '../../reference-server/src/internal/sqlite-driver.ts';
import { launchChromium } from '../browser/support/browser.ts';
import { call } from '../support/api.ts';
import { eventually, ROOT, type RunningProcess, startProcess } from '../support/child-process.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { payInBrowser } from './pay-in-browser.ts';

// The React example as its README starts it (`npm start -w examples/react-shop`: `vite build`, then the
// server), against the real reference server, paid through in Chromium with <PaymentWidget> under StrictMode.

const SHOP_DIR = join(ROOT, 'examples/react-shop');
const folder = mkdtempSync(join(tmpdir(), 'servicepay-react-shop-'));
let server: RunningServer;
let secretKey: string;
let shop: RunningProcess;
let shopUrl: string;
let browser: Browser | undefined;

beforeAll(async () => {
  const manifest = JSON.parse(readFileSync(join(SHOP_DIR, 'package.json'), 'utf8'));
  expect(manifest.scripts.start).toBe('vite build && node --import tsx server/main.ts');
  await promisify(execFile)(join(ROOT, 'node_modules/.bin/vite'), ['build'], { cwd: SHOP_DIR });
  server = await startServer();
  secretKey = (await server.createBusiness({ name: 'Paper & Ink' })).keys.test.secretKey;
  shop = startProcess(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: SHOP_DIR,
    env: {
      SERVICEPAY_SECRET_KEY: secretKey,
      SERVICEPAY_API_URL: server.baseUrl,
      SERVICEPAY_WIDGET_URL: server.widgetUrls.test,
      SHOP_PORT: '0',
      SHOP_DB: join(folder, 'react-shop.db'),
    },
  });
  shopUrl = (await shop.waitFor(/React shop on (http:\S+)/))[1] as string;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await shop?.stop();
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('examples/react-shop', () => {
  it('serves the Vite build under the spec CSP, with nothing inline', async () => {
    const page = await call(shopUrl, 'GET', '/');
    expect(page.status).toBe(200);
    const widget = server.widgetUrls.test;
    expect(page.headers.get('content-security-policy')).toBe(
      `script-src 'self' ${widget}; connect-src 'self' ${server.baseUrl}; frame-src 'self' ${widget}`,
    );
    expect(page.text).toMatch(/<script type="module" crossorigin src="\/assets\/[\w-]+\.js"><\/script>/);
    expect(page.text).not.toMatch(/<script>|<script type="module">/);
    const config = await call(shopUrl, 'GET', '/api/config');
    expect(config.body).toEqual({
      mode: 'TEST',
      widgetHost: widget,
      widgetScriptUrl: `${widget}/latest/widget.js`,
    });
  });

  it('is paid through in Chromium: <PaymentWidget> opens once under StrictMode, the order is paid once', async () => {
    browser = await launchChromium();
    const paid = await payInBrowser({
      browser,
      pageUrl: shopUrl,
      apiUrl: server.baseUrl,
      secretKey,
      payButton: /Pay by bank transfer/,
      paidSelector: '#order-status[data-status="paid"]',
      amount: 500_000,
    });
    try {
      expect(await paid.page.locator('#status').textContent()).toBe('Thank you: your order is paid.');
      // One checkout for one client secret, though StrictMode mounted the component twice.
      const sessions = await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: secretKey });
      expect(sessions.body.data).toHaveLength(1);
      const orderId = (await paid.page.locator('#order-id').textContent()) as string;
      const order = await call(shopUrl, 'GET', `/api/orders/${orderId}`);
      expect(order.body).toMatchObject({ status: 'paid', amount: 500_000, currency: 'NGN' });
      const db = new Database(join(folder, 'react-shop.db'), { readonly: true });
      try {
        const row = db.prepare('SELECT COUNT(*) AS n FROM fulfilments WHERE order_id = ?').get(orderId);
        expect(row).toEqual({ n: 1 });
      } finally {
        db.close();
      }
      // The signed webhook reached the shop and was answered 200.
      const [endpoint] = (await call(server.baseUrl, 'GET', '/api/webhooks', { token: secretKey })).body.data;
      await eventually(async () => {
        const deliveries = await call(server.baseUrl, 'GET', `/api/webhooks/${endpoint.id}/deliveries`, {
          token: secretKey,
        });
        const successful = deliveries.body.data.find(
          (delivery: { eventType: string; status: string }) =>
            delivery.eventType === 'session.successful' && delivery.status === 'succeeded',
        );
        return successful ? true : undefined;
      });
      expect(paid.problems).toEqual([]);
    } finally {
      await paid.close();
    }
  });
});
