import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestHeader } from '@servicepay/node';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from '../../reference-server/src/internal/sqlite-driver.ts';
import { launchChromium } from '../browser/support/browser.ts';
import { bootstrap, call } from '../support/api.ts';
import { eventually, ROOT, type RunningProcess, startProcess } from '../support/child-process.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { payInBrowser } from './pay-in-browser.ts';

// The Express example shop as a merchant runs it: its own process (`src/main.ts`, what `npm start -w
// examples/express-shop` runs) against the real reference server, paid at the simulated bank's counter.

const SHOP_DIR = join(ROOT, 'examples/express-shop');
const folder = mkdtempSync(join(tmpdir(), 'servicepay-express-shop-'));
const shopDb = join(folder, 'shop.db');
let server: RunningServer;
let secretKey: string;
let shop: RunningProcess | undefined;
let shopUrl: string;
let browser: Browser | undefined;

function startShop(env: Record<string, string> = {}): RunningProcess {
  return startProcess(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: SHOP_DIR,
    env: {
      SERVICEPAY_SECRET_KEY: secretKey,
      SERVICEPAY_API_URL: server.baseUrl,
      SERVICEPAY_WIDGET_URL: server.widgetUrls.test,
      SHOP_PORT: '0',
      SHOP_DB: shopDb,
      ...env,
    },
  });
}

/** The shop's own books, read from its SQLite file as its operator would. */
function books(orderId: string) {
  const db = new Database(shopDb, { readonly: true });
  try {
    const order = db.prepare('SELECT status, paid_by FROM orders WHERE id = ?').get(orderId) as
      | { status: string; paid_by: string | null }
      | undefined;
    const { n: fulfilments } = db
      .prepare('SELECT COUNT(*) AS n FROM fulfilments WHERE order_id = ?')
      .get(orderId) as { n: number };
    const events = db
      .prepare(
        `SELECT e.event_id AS id, e.type, e.deliveries FROM webhook_events e
         JOIN orders o ON o.session_id = e.session_id WHERE o.id = ? ORDER BY e.received_at`,
      )
      .all(orderId) as Array<{ id: string; type: string; deliveries: number }>;
    return { order, fulfilments, events };
  } finally {
    db.close();
  }
}

async function placeOrder(productId = 'notebook') {
  const response = await call(shopUrl, 'POST', '/api/orders', {
    json: { productId, name: 'Ada Lovelace', email: 'ada@example.com' },
  });
  expect(response.status, response.text).toBe(201);
  return response.body as { orderId: string; clientSecret: string; amount: number; currency: string };
}

async function bankTransfer(accountNumber: string, amount: number) {
  const response = await call(server.baseUrl, 'POST', '/bank/transfers', { json: { accountNumber, amount } });
  expect(response.status, response.text).toBe(200);
  return response.body.data as { outcome: string };
}

const shopOrder = async (orderId: string) => (await call(shopUrl, 'GET', `/api/orders/${orderId}`)).body;

beforeAll(async () => {
  server = await startServer();
  secretKey = (await server.createBusiness({ name: 'Paper & Ink' })).keys.test.secretKey;
  shop = startShop();
  shopUrl = (await shop.waitFor(/Example shop on (http:\S+)/))[1] as string;
});

afterAll(async () => {
  await browser?.close();
  await shop?.stop();
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('examples/express-shop', () => {
  it('serves its checkout page under the spec CSP, with the widget by one script tag', async () => {
    const page = await call(shopUrl, 'GET', '/');
    expect(page.status).toBe(200);
    const widget = server.widgetUrls.test;
    expect(page.headers.get('content-security-policy')).toBe(
      `script-src 'self' ${widget}; connect-src 'self' ${server.baseUrl}; frame-src 'self' ${widget}`,
    );
    expect(page.text.match(/<script /g)).toHaveLength(2); // the widget, and the page's own checkout.js
    expect(page.text).toContain(`<script src="${widget}/latest/widget.js"></script>`);
    expect(page.text).not.toMatch(/<script>|on(click|submit)=/); // nothing inline for the CSP to refuse
  });

  it('is paid through in Chromium: the widget opens under the CSP, the bank pays, the order turns paid once', async () => {
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
      const orderId = (await paid.page.locator('#order-id').textContent()) as string;
      expect(await paid.page.locator('#status').textContent()).toBe('Thank you: your order is paid.');
      const seen = books(orderId);
      expect(seen.fulfilments).toBe(1);
      // Settled by the signed webhook: the shop records only events that verified.
      await eventually(async () =>
        books(orderId).events.some((event) => event.type === 'session.successful') ? true : undefined,
      );
      expect(books(orderId).fulfilments).toBe(1);
      expect(paid.problems).toEqual([]); // no CSP violation, no error, on the page or in the frame
    } finally {
      await paid.close();
    }
  });

  it('fixes the amount on the server: a browser sends only a product id', async () => {
    const order = await placeOrder('pen');
    expect(order).toMatchObject({ amount: 1_250_000, currency: 'NGN' });
    const opened = await bootstrap(server.baseUrl, order.clientSecret);
    expect(opened.session).toMatchObject({ amount: 1_250_000, currency: 'NGN', reference: order.orderId });

    const unknown = await call(shopUrl, 'POST', '/api/orders', {
      json: { productId: 'diamond', name: 'A', email: 'a@example.com', amount: 1 },
    });
    expect(unknown.status).toBe(400);
  });

  it('settles an order paid at the bank once, by a signed webhook, however often it is delivered', async () => {
    const order = await placeOrder();
    const opened = await bootstrap(server.baseUrl, order.clientSecret);
    expect(await bankTransfer(opened.virtualAccount.accountNumber, order.amount)).toMatchObject({
      outcome: 'credited',
    });

    const paid = await eventually(async () => {
      const seen = books(order.orderId);
      return seen.order?.status === 'paid' ? seen : undefined;
    });
    expect(paid.order?.paid_by).toBe('webhook');
    expect(paid.fulfilments).toBe(1);
    const successful = paid.events.find((event) => event.type === 'session.successful');
    expect(successful).toBeDefined();

    // The service recorded the delivery as answered 200 by the shop.
    const endpoints = await call(server.baseUrl, 'GET', '/api/webhooks', { token: secretKey });
    expect(endpoints.body.data).toHaveLength(1);
    const endpointId = endpoints.body.data[0].id as string;
    const deliveries = await call(
      server.baseUrl,
      'GET',
      `/api/webhooks/${endpointId}/deliveries?eventId=${successful?.id}`,
      { token: secretKey },
    );
    expect(deliveries.body.data[0]).toMatchObject({ status: 'succeeded' });
    expect(deliveries.body.data[0].attempts.at(-1).statusCode).toBe(200);

    // The same event again, twice (as a retry after a lost answer would bring it): still paid once.
    for (let i = 0; i < 2; i++) {
      const resent = await call(server.baseUrl, 'POST', `/api/events/${successful?.id}/resend`, {
        token: secretKey,
        json: {},
      });
      expect(resent.status, resent.text).toBe(202);
    }
    const after = await eventually(async () => {
      const seen = books(order.orderId);
      const event = seen.events.find((e) => e.id === successful?.id);
      return event && event.deliveries >= 3 ? seen : undefined;
    });
    expect(after.fulfilments).toBe(1);
    expect(await shopOrder(order.orderId)).toMatchObject({ status: 'paid', amount: 500_000 });
  });

  it('refuses a webhook that is not signed with its secret, and changes nothing', async () => {
    const order = await placeOrder();
    const opened = await bootstrap(server.baseUrl, order.clientSecret);
    const forged = JSON.stringify({
      id: 'evt_forged',
      type: 'session.successful',
      environment: 'test',
      createdAt: new Date().toISOString(),
      data: { session: { id: opened.session.id, reference: order.orderId, status: 'successful' } },
    });
    for (const header of [
      generateTestHeader({ payload: forged, secret: 'whsec_not_the_shops_secret' }),
      't=1,v1=00',
      undefined,
    ]) {
      const response = await call(shopUrl, 'POST', '/webhooks/servicepay', {
        raw: forged,
        headers: { 'content-type': 'application/json', ...(header ? { 'x-service-signature': header } : {}) },
      });
      expect(response.status).toBe(400);
    }
    expect(books(order.orderId)).toMatchObject({ order: { status: 'pending' }, fulfilments: 0, events: [] });
  });

  it('keeps a wrong amount unpaid, then takes the exact amount once', async () => {
    const order = await placeOrder();
    const opened = await bootstrap(server.baseUrl, order.clientSecret);
    const account = opened.virtualAccount.accountNumber;
    expect(await bankTransfer(account, order.amount - 100)).toMatchObject({ outcome: 'returned' });
    await eventually(async () =>
      books(order.orderId).events.some((event) => event.type === 'session.mismatch') ? true : undefined,
    );
    expect(books(order.orderId)).toMatchObject({ order: { status: 'pending' }, fulfilments: 0 });

    await bankTransfer(account, order.amount);
    const paid = await eventually(async () => {
      const seen = books(order.orderId);
      return seen.order?.status === 'paid' ? seen : undefined;
    });
    expect(paid.fulfilments).toBe(1);
  });

  it('keeps one webhook endpoint and its secret across restarts', async () => {
    const before = await call(server.baseUrl, 'GET', '/api/webhooks', { token: secretKey });
    await shop?.stop();
    shop = startShop();
    shopUrl = (await shop.waitFor(/Example shop on (http:\S+)/))[1] as string;
    // A new port means a new URL: the old endpoint is not this shop's any more, the new one is made once.
    expect(shop.output()).toMatch(/webhook endpoint we_\w+ created/);
    await shop.stop();
    const port = new URL(shopUrl).port;
    shop = startShop({ SHOP_PORT: port });
    shopUrl = (await shop.waitFor(/Example shop on (http:\S+)/))[1] as string;
    expect(shop.output()).toMatch(/webhook endpoint we_\w+ reused/);
    const after = await call(server.baseUrl, 'GET', '/api/webhooks', { token: secretKey });
    expect(after.body.data).toHaveLength(before.body.data.length + 1);
    expect(
      after.body.data.filter((e: { url: string }) => e.url === `${shopUrl}/webhooks/servicepay`),
    ).toHaveLength(1);

    // The kept secret still verifies: an order placed after the restart is settled by its webhook.
    const order = await placeOrder();
    const opened = await bootstrap(server.baseUrl, order.clientSecret);
    await bankTransfer(opened.virtualAccount.accountNumber, order.amount);
    const paid = await eventually(async () => {
      const seen = books(order.orderId);
      return seen.order?.paid_by === 'webhook' ? seen : undefined;
    });
    expect(paid.fulfilments).toBe(1);
    for (const file of [shopDb, `${shopDb}-wal`, `${shopDb}-shm`]) {
      expect(statSync(file).mode & 0o077, file).toBe(0); // they hold the signing secret
    }
  });

  it('says which variable to change when its port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const second = startShop({ SHOP_PORT: String(port), SHOP_DB: join(folder, 'other.db') });
      expect(await second.exited).toBe(1);
      expect(second.output().trim()).toBe(`Port ${port} is in use: set SHOP_PORT to another port.`);
    } finally {
      blocker.close();
    }
  });
});
