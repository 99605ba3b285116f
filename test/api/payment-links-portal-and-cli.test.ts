import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { paymentLinksCli } from '../../reference-server/src/payment-links-cli.ts';
import { bootstrap, call, testTransfer } from '../support/api.ts';
import { checkoutLocation, openLinkPage, submitLinkForm } from '../support/link-page.ts';
import { PortalClient } from '../support/portal-client.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 36: where merchants manage payment links besides the API: the portal's Payment links page (create,
// the url and QR code, the payments made through it, deactivate) and `servicepay-server links …`. And the
// hosted checkout's way back after an expiry. On a real server.

let server: RunningServer;
let key: string;

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  key = (await server.createBusiness({ name: 'Portal Links Shop' })).keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
});

describe("the portal's Payment links page", () => {
  it('creates a link, shows its url, QR code and payments, and deactivates it (410 after)', async () => {
    const client = new PortalClient(server.baseUrl);
    expect((await client.signIn(key)).status).toBe(303);
    const list = await client.request('GET', '/portal/payment-links');
    expect(list.status).toBe(200);
    expect(list.text).toContain('No payment links in test yet.');

    // A bad amount: the form again, with the message; nothing made.
    const bad = await client.request('POST', '/portal/payment-links', {
      _csrf: client.token,
      name: 'Adire',
      amount: 'five thousand',
      currency: 'NGN',
      reusable: 'yes',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Enter the amount');
    // Without the CSRF token: refused, nothing made.
    const forged = await client.request('POST', '/portal/payment-links', {
      name: 'Adire',
      amount: '5000',
      currency: 'NGN',
    });
    expect(forged.status).toBe(403);
    expect((await call(server.baseUrl, 'GET', '/api/payment-links', { token: key })).body.data).toEqual([]);

    const created = await client.request('POST', '/portal/payment-links', {
      _csrf: client.token,
      name: 'Adire, 2 yards',
      amount: '7,500.50',
      currency: 'NGN',
    });
    expect(created.status, created.text.slice(0, 300)).toBe(303);
    const linkPath = created.headers.get('location')?.split('?')[0] ?? '';
    const id = linkPath.split('/').at(-1) as string;
    const api = await call(server.baseUrl, 'GET', `/api/payment-links/${id}`, { token: key });
    // Unticked "Reusable": one payment only; the amount typed in naira, stored in kobo.
    expect(api.body.data).toMatchObject({
      name: 'Adire, 2 yards',
      amount: 750_050,
      reusable: false,
      active: true,
    });

    // A payer pays through it; the link's page lists the payment.
    const url = api.body.data.url as string;
    const visit = await openLinkPage(url);
    const posted = await submitLinkForm(url, visit, { name: 'Bola Ade', email: 'bola@example.com' });
    const { sessionId, clientSecret } = checkoutLocation(posted.headers.get('location'));
    const opened = await bootstrap(server.baseUrl, clientSecret);
    await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, 750_050);
    const detail = await client.request('GET', linkPath);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain(url);
    expect(detail.text).toContain('data:image/svg+xml;base64,');
    expect(detail.text).toContain('Bola Ade');
    expect(detail.text).toContain('Closed: paid once');
    // The session's own page names the link too.
    const sessionPage = await client.request('GET', `/portal/sessions/${sessionId}`);
    expect(sessionPage.text).toContain(`href="/portal/payment-links/${id}"`);

    // A reusable one, deactivated from its page.
    const second = await client.request('POST', '/portal/payment-links', {
      _csrf: client.token,
      name: 'Kente',
      amount: '5000',
      currency: 'NGN',
      reusable: 'yes',
    });
    const secondPath = second.headers.get('location')?.split('?')[0] ?? '';
    const deactivated = await client.request('POST', secondPath, { _csrf: client.token, active: 'false' });
    expect(deactivated.status).toBe(303);
    const secondLink = await call(
      server.baseUrl,
      'GET',
      `/api/payment-links/${secondPath.split('/').at(-1)}`,
      {
        token: key,
      },
    );
    expect(secondLink.body.data.active).toBe(false);
    expect((await openLinkPage(secondLink.body.data.url)).status).toBe(410);
  });
});

describe('servicepay-server links', () => {
  it('creates, lists, shows and deactivates through the API with the secret key', async () => {
    const out: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    const env = { SERVICEPAY_SECRET_KEY: key, SERVICEPAY_API_URL: server.baseUrl };
    try {
      expect(
        await paymentLinksCli(['create', '--name', 'Ofada rice', '--amount', '300000', '--json'], env),
      ).toBe(0);
      const created = JSON.parse(out.at(-1) as string) as { id: string; url: string; reusable: boolean };
      expect(created.url).toBe(`${server.widgetUrls.test}/links/${created.id}`);
      expect(created.reusable).toBe(true);
      expect(await paymentLinksCli(['deactivate', created.id, '--json'], env)).toBe(0);
      expect(JSON.parse(out.at(-1) as string).active).toBe(false);
      expect(await paymentLinksCli(['list', '--limit', '1'], env)).toBe(0);
      expect(out.at(-1)).toContain(created.id);
      expect(out.at(-1)).toContain('inactive');
    } finally {
      write.mockRestore();
    }
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await paymentLinksCli(['create', '--name', 'x'], env)).toBe(2);
      expect(await paymentLinksCli(['show', 'pl_nothing'], env)).toBe(1);
      expect(String(errors.mock.calls.at(-1)?.[0])).toContain('not_found');
      expect(await paymentLinksCli(['list'], { SERVICEPAY_API_URL: server.baseUrl })).toBe(2);
    } finally {
      errors.mockRestore();
    }
  });
});

describe("the hosted checkout's way back after an expiry", () => {
  it('goes to cancelUrl once the session expired, or to a page of ours without one', async () => {
    const make = async (json: Record<string, unknown>) =>
      (
        await call(server.baseUrl, 'POST', '/api/widget/sessions', {
          token: key,
          json: {
            amount: 500_000,
            currency: 'NGN',
            payer: { name: 'Ada', email: 'ada@example.com' },
            ...json,
          },
        })
      ).body.data as { id: string };
    const withUrl = await make({ cancelUrl: 'http://localhost:3000/cart?s={SESSION_ID}' });
    const without = await make({});
    for (const session of [withUrl, without]) {
      const expired = await call(server.baseUrl, 'POST', `/api/test/sessions/${session.id}/expire`, {
        token: key,
      });
      expect(expired.status, expired.text).toBe(200);
    }
    await expect
      .poll(
        async () =>
          (await call(server.baseUrl, 'GET', `/api/widget/sessions/${withUrl.id}`, { token: key })).body.data
            .status,
      )
      .toBe('expired');
    const back = await fetch(`${server.widgetUrls.test}/checkout/${withUrl.id}/return`, {
      redirect: 'manual',
    });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(`http://localhost:3000/cart?s=${withUrl.id}`);
    await expect
      .poll(
        async () =>
          (await call(server.baseUrl, 'GET', `/api/widget/sessions/${without.id}`, { token: key })).body.data
            .status,
      )
      .toBe('expired');
    const ours = await fetch(`${server.widgetUrls.test}/checkout/${without.id}/return`, {
      redirect: 'manual',
    });
    expect(ours.status).toBe(200);
    expect(await ours.text()).toContain('Payment expired');
  });
});
