import { join } from 'node:path';
import { generateTestHeader } from '@servicepay/node';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../browser/support/browser.ts';
import { bootstrap, call } from '../support/api.ts';
import { eventually, ROOT, type RunningProcess, startProcess } from '../support/child-process.ts';
import { type RunningServer, startServer } from '../support/server.ts';
import { payInBrowser } from './pay-in-browser.ts';

// The plain-HTML example as a merchant runs it (`node --import tsx server.ts`, what its `npm start` runs),
// against the real reference server, paid at the simulated bank's counter.

let server: RunningServer;
let secretKey: string;
let example: RunningProcess;
let url: string;
let browser: Browser | undefined;

beforeAll(async () => {
  server = await startServer();
  secretKey = (await server.createBusiness({ name: 'Concert Hall' })).keys.test.secretKey;
  example = startProcess(process.execPath, ['--import', 'tsx', 'server.ts'], {
    cwd: join(ROOT, 'examples/plain-html'),
    env: {
      SERVICEPAY_SECRET_KEY: secretKey,
      SERVICEPAY_API_URL: server.baseUrl,
      SERVICEPAY_WIDGET_URL: server.widgetUrls.test,
      PORT: '0',
    },
  });
  url = (await example.waitFor(/Plain HTML example on (http:\S+)/))[1] as string;
});

afterAll(async () => {
  await browser?.close();
  await example?.stop();
  await server?.close();
});

describe('examples/plain-html', () => {
  it('sends its one page with the spec CSP and the widget by one script tag', async () => {
    const page = await call(url, 'GET', '/');
    expect(page.status).toBe(200);
    const widget = server.widgetUrls.test;
    expect(page.headers.get('content-security-policy')).toBe(
      `script-src 'self' ${widget}; connect-src 'self' ${server.baseUrl}; frame-src 'self' ${widget}`,
    );
    expect(page.text).toContain(`<script src="${widget}/latest/widget.js"></script>`);
    expect(page.text).not.toMatch(/<script>|on(click|submit)=/);
  });

  it('is paid through in Chromium under its CSP, and the ticket is paid once by the signed webhook', async () => {
    browser = await launchChromium();
    const paid = await payInBrowser({
      browser,
      pageUrl: url,
      apiUrl: server.baseUrl,
      secretKey,
      payButton: /Pay ₦2,500\.00/,
      paidSelector: '#status[data-status="paid"]',
      amount: 250_000,
    });
    try {
      const reference = (await paid.page.locator('#status').getAttribute('data-reference')) as string;
      const order = await call(url, 'GET', `/orders/${reference}`);
      expect(order.body).toMatchObject({ status: 'paid', deliveries: 1 });
      expect(
        example.output().match(new RegExp(`ticket ${reference} paid \\(webhook evt_`, 'g')),
      ).toHaveLength(1);
      expect(paid.problems).toEqual([]);
    } finally {
      await paid.close();
    }
  });

  it('creates the session on the server and is paid once by the signed webhook', async () => {
    const created = await call(url, 'POST', '/session');
    expect(created.status).toBe(201);
    const { clientSecret, reference } = created.body as { clientSecret: string; reference: string };
    const opened = await bootstrap(server.baseUrl, clientSecret);
    expect(opened.session).toMatchObject({ amount: 250_000, currency: 'NGN', reference });

    const transfer = await call(server.baseUrl, 'POST', '/bank/transfers', {
      json: { accountNumber: opened.virtualAccount.accountNumber, amount: 250_000 },
    });
    expect(transfer.body.data.outcome).toBe('credited');
    await eventually(async () => {
      const order = await call(url, 'GET', `/orders/${reference}`);
      return order.body.status === 'paid' ? true : undefined;
    });

    // Deliver the same event again: counted, not paid again.
    const [endpoint] = (await call(server.baseUrl, 'GET', '/api/webhooks', { token: secretKey })).body.data;
    const deliveries = await call(server.baseUrl, 'GET', `/api/webhooks/${endpoint.id}/deliveries`, {
      token: secretKey,
    });
    const eventId = deliveries.body.data.find(
      (d: { eventType?: string; eventId: string }) => d.eventType === 'session.successful',
    )?.eventId;
    expect(eventId).toBeDefined();
    await call(server.baseUrl, 'POST', `/api/events/${eventId}/resend`, { token: secretKey, json: {} });
    await eventually(async () => {
      const order = await call(url, 'GET', `/orders/${reference}`);
      return order.body.deliveries >= 2 ? true : undefined;
    });
    expect(example.output().match(new RegExp(`ticket ${reference} paid`, 'g'))).toHaveLength(1);
  });

  it('refuses a webhook not signed with its secret', async () => {
    const payload = JSON.stringify({ id: 'evt_forged', type: 'session.successful' });
    const response = await call(url, 'POST', '/webhooks/servicepay', {
      raw: payload,
      headers: {
        'content-type': 'application/json',
        'x-service-signature': generateTestHeader({ payload, secret: 'whsec_wrong' }),
      },
    });
    expect(response.status).toBe(400);
  });
});
