import {
  envelopeOf,
  listEnvelopeOf,
  PaymentLinkSchema,
  SessionSchema,
  WebhookEventSchema,
} from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServicePay } from '../../sdk/src/index.ts';
import { bootstrap, call, expectError, retrieveSession, testTransfer } from '../support/api.ts';
import { independentlyVerify, startReceiver } from '../support/checkout.ts';
import { checkoutLocation, openLinkPage, submitLinkForm } from '../support/link-page.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 36: payment links. A link is made with a secret key; a payer opens its page on the widget host, types a
// name and an email, and the service makes the session on the merchant's behalf. Checked on a real server.

const LinkEnvelope = envelopeOf(PaymentLinkSchema);
const LinkList = listEnvelopeOf(PaymentLinkSchema);
const SessionList = listEnvelopeOf(SessionSchema);

let server: RunningServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let key: string;
let liveKey: string;
let otherKey: string;
let webhookSecret: string;

beforeAll(async () => {
  server = await startServer({
    rateLimit: { perMinute: 10_000, linkSessionsPerAddress: 1_000, linkSessionsPerLink: 3 },
  });
  receiver = await startReceiver();
  const business = await server.createBusiness({ name: 'Link Shop', kycApproved: true });
  key = business.keys.test.secretKey;
  liveKey = business.keys.live.secretKey;
  otherKey = (await server.createBusiness({ name: 'Other Shop' })).keys.test.secretKey;
  webhookSecret = (
    await call(server.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url: receiver.url } })
  ).body.data.secret;
});

afterAll(async () => {
  await receiver.close();
  await server.close();
});

const createLink = async (json: Record<string, unknown>, token = key, headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'POST', '/api/payment-links', { token, json, headers });

const newLink = async (json: Record<string, unknown> = {}) => {
  const response = await createLink({ name: 'Ankara fabric', amount: 500_000, currency: 'NGN', ...json });
  expect(response.status, response.text).toBe(201);
  return LinkEnvelope.parse(response.body).data;
};

/** A payer opens the link's page and sends the form; answers the session the service made. */
async function payerStarts(url: string, fields = { name: 'Ada Lovelace', email: 'ada@example.com' }) {
  const visit = await openLinkPage(url);
  expect(visit.status, visit.html).toBe(200);
  const posted = await submitLinkForm(url, visit, fields);
  expect(posted.status, posted.html).toBe(303);
  return checkoutLocation(posted.headers.get('location'));
}

describe('POST /api/payment-links', () => {
  it('answers the link with every field, its url on the test widget host', async () => {
    const response = await createLink({
      name: 'Invoice 77',
      amount: 1_250_000,
      currency: 'NGN',
      reusable: false,
      successUrl: 'https://shop.example/thanks?s={SESSION_ID}',
      metadata: { invoice: '77' },
    });
    expect(response.status, response.text).toBe(201);
    const link = LinkEnvelope.parse(response.body).data;
    expect(link).toMatchObject({
      name: 'Invoice 77',
      environment: 'test',
      amount: 1_250_000,
      currency: 'NGN',
      reusable: false,
      active: true,
      successUrl: 'https://shop.example/thanks?s={SESSION_ID}',
      metadata: { invoice: '77' },
      completedAt: null,
    });
    expect(link.id).toMatch(/^pl_[0-9A-Za-z]+$/);
    expect(link.url).toBe(`${server.widgetUrls.test}/links/${link.id}`);
    const again = await call(server.baseUrl, 'GET', `/api/payment-links/${link.id}?environment=test`, {
      token: key,
    });
    expect(LinkEnvelope.parse(again.body).data).toEqual(link);
  });

  it('defaults reusable to true; a live key makes a live link on the live host', async () => {
    expect((await newLink()).reusable).toBe(true);
    const live = await createLink({ name: 'Live', amount: 500_000, currency: 'NGN' }, liveKey);
    expect(live.status, live.text).toBe(201);
    expect(live.body.data.environment).toBe('live');
    expect(live.body.data.url.startsWith(`${server.widgetUrls.live}/links/pl_`)).toBe(true);
  });

  it('refuses bad fields in the envelope, naming each', async () => {
    const response = await createLink({ name: '', amount: -1, currency: 'ngn', reusable: 'yes', extra: 1 });
    const body = expectError(response, 400, 'validation_failed');
    const paths = (body.errors ?? []).map((error) => error.path).sort();
    expect(paths).toEqual(['amount', 'currency', 'extra', 'name', 'reusable']);
    expectError(
      await createLink({ name: 'x', amount: 500_000, currency: 'XYZ' }),
      400,
      'unsupported_currency',
    );
    const http = await createLink({
      name: 'x',
      amount: 500_000,
      currency: 'NGN',
      successUrl: 'http://shop.example/t',
    });
    expect(expectError(http, 400, 'validation_failed').errors?.[0]?.path).toBe('successUrl');
    const liveLoopback = await createLink(
      { name: 'x', amount: 500_000, currency: 'NGN', successUrl: 'http://127.0.0.1:3000/t' },
      liveKey,
    );
    expectError(liveLoopback, 400, 'validation_failed');
    const testLoopback = await createLink({
      name: 'x',
      amount: 500_000,
      currency: 'NGN',
      successUrl: 'http://127.0.0.1:3000/t',
    });
    expect(testLoopback.status).toBe(201);
  });

  it('answers a retry with the same Idempotency-Key with the same link, and 409 for another body', async () => {
    const headers = { 'idempotency-key': `pl-${Date.now()}` };
    const body = { name: 'Once', amount: 500_000, currency: 'NGN' };
    const first = await createLink(body, key, headers);
    const second = await createLink(body, key, headers);
    expect(second.status).toBe(201);
    expect(second.body.data.id).toBe(first.body.data.id);
    expectError(await createLink({ ...body, amount: 600_000 }, key, headers), 409, 'idempotency_key_reused');
  });

  it('refuses without a key (401) and a publishable key (403)', async () => {
    const json = { name: 'x', amount: 500_000, currency: 'NGN' };
    const none = await call(server.baseUrl, 'POST', '/api/payment-links', { json });
    expect(none.status).toBe(401);
    expectError(none, 401, none.body.meta.code);
    const publishable = (await server.createBusiness()).keys.test.publishableKey;
    expectError(await createLink(json, publishable), 403, 'publishable_key_not_allowed');
  });
});

describe('list, retrieve, update', () => {
  it('lists newest first in cursor pages, and walks them with the SDK', async () => {
    const business = await server.createBusiness({ name: 'Many Links' });
    const token = business.keys.test.secretKey;
    const made: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await createLink({ name: `L${i}`, amount: 500_000, currency: 'NGN' }, token);
      made.push(response.body.data.id);
    }
    const page = await call(server.baseUrl, 'GET', '/api/payment-links?limit=2&environment=test', { token });
    const first = LinkList.parse(page.body);
    expect(first.data.map((link) => link.id)).toEqual([made[4], made[3]]);
    expect(first.pagination).toEqual({ hasMore: true, nextCursor: made[3] });
    const sdk = new ServicePay(token, { baseUrl: server.baseUrl });
    const walked: string[] = [];
    for await (const link of sdk.paymentLinks.list({ limit: 2 })) walked.push(link.id);
    expect(walked).toEqual([...made].reverse());
    const wrongEnvironment = await call(server.baseUrl, 'GET', '/api/payment-links?environment=live', {
      token,
    });
    expectError(wrongEnvironment, 403, 'environment_mismatch');
  });

  it("refuses another business's link with 403, and an unknown one with 404", async () => {
    const link = await newLink();
    expectError(
      await call(server.baseUrl, 'GET', `/api/payment-links/${link.id}`, { token: otherKey }),
      403,
      'forbidden',
    );
    const patch = await call(server.baseUrl, 'PATCH', `/api/payment-links/${link.id}`, {
      token: otherKey,
      json: { active: false },
    });
    expectError(patch, 403, 'forbidden');
    expectError(
      await call(server.baseUrl, 'GET', '/api/payment-links/pl_nothing', { token: key }),
      404,
      'not_found',
    );
    const qr = await call(server.baseUrl, 'GET', `/api/payment-links/${link.id}/qr.svg`, { token: otherKey });
    expectError(qr, 403, 'forbidden');
  });

  it('renames and deactivates; the page then answers 410, and reactivating opens it again', async () => {
    const link = await newLink();
    const patch = (json: unknown) =>
      call(server.baseUrl, 'PATCH', `/api/payment-links/${link.id}`, { token: key, json });
    const renamed = await patch({ name: 'Adire, 2 yards' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Adire, 2 yards', active: true });
    expectError(await patch({}), 400, 'validation_failed');
    expect((await patch({ active: false })).body.data.active).toBe(false);
    const closed = await openLinkPage(link.url);
    expect(closed.status).toBe(410);
    expect(closed.html).toContain('This payment link is closed');
    expect(closed.token).toBeUndefined();
    expect((await patch({ active: true })).body.data.active).toBe(true);
    expect((await openLinkPage(link.url)).status).toBe(200);
  });

  it('serves the QR code of the url as SVG', async () => {
    const link = await newLink();
    const response = await fetch(`${server.baseUrl}/api/payment-links/${link.id}/qr.svg`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    const svg = await response.text();
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('<path');
  });
});

describe("the link's page", () => {
  it('makes a test session naming the link, which the list filters by, and says test mode', async () => {
    const link = await newLink({ metadata: { product: 'fabric' } });
    const visit = await openLinkPage(link.url);
    expect(visit.html).toContain('Test mode');
    expect(visit.html).toMatch(/autocomplete="email"/);
    expect(visit.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(visit.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(visit.html).not.toMatch(/sk_(test|live)_/);
    const { sessionId, clientSecret } = await payerStarts(link.url);
    expect(clientSecret.startsWith('cs_test_')).toBe(true);
    const session = await retrieveSession(server.baseUrl, key, sessionId);
    expect(session).toMatchObject({
      environment: 'test',
      amount: 500_000,
      currency: 'NGN',
      paymentLink: link.id,
      payer: { name: 'Ada Lovelace', email: 'ada@example.com' },
      metadata: { product: 'fabric' },
    });
    const listed = await call(server.baseUrl, 'GET', `/api/widget/sessions?paymentLink=${link.id}`, {
      token: key,
    });
    expect(SessionList.parse(listed.body).data.map((item) => item.id)).toEqual([sessionId]);
  });

  it('answers 400 with each error beside its field, keeping what was typed', async () => {
    const link = await newLink();
    const visit = await openLinkPage(link.url);
    const posted = await submitLinkForm(link.url, visit, { name: 'Ada', email: 'not-an-email', phone: 'x' });
    expect(posted.status).toBe(400);
    expect(posted.html).toContain('id="email-error"');
    expect(posted.html).toContain('id="phone-error"');
    expect(posted.html).not.toContain('id="name-error"');
    expect(posted.html).toContain('value="not-an-email"');
    const listed = await call(server.baseUrl, 'GET', `/api/widget/sessions?paymentLink=${link.id}`, {
      token: key,
    });
    expect(listed.body.data).toEqual([]);
  });

  it('refuses a post that is not its own form (CSRF) and makes nothing', async () => {
    const link = await newLink();
    const visit = await openLinkPage(link.url);
    const fields = { name: 'Ada', email: 'ada@example.com' };
    const forged = [
      await submitLinkForm(link.url, visit, fields, { origin: 'https://evil.example' }),
      await submitLinkForm(link.url, visit, fields, { secFetchSite: 'cross-site' }),
      await submitLinkForm(link.url, visit, fields, { cookie: null }),
      await submitLinkForm(link.url, visit, fields, { token: null }),
      await submitLinkForm(link.url, visit, fields, { cookie: 'sp_link_form=someone-elses' }),
    ];
    expect(forged.map((answer) => answer.status)).toEqual([403, 403, 403, 403, 403]);
    const listed = await call(server.baseUrl, 'GET', `/api/widget/sessions?paymentLink=${link.id}`, {
      token: key,
    });
    expect(listed.body.data).toEqual([]);
  });

  it('holds each link to its budget (429 with Retry-After), other links unaffected', async () => {
    const link = await newLink();
    for (let i = 0; i < 3; i += 1) await payerStarts(link.url);
    const visit = await openLinkPage(link.url);
    const over = await submitLinkForm(link.url, visit, { name: 'Ada', email: 'ada@example.com' });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    const listed = await call(server.baseUrl, 'GET', `/api/widget/sessions?paymentLink=${link.id}`, {
      token: key,
    });
    expect(listed.body.data).toHaveLength(3);
    await payerStarts((await newLink()).url);
  });

  it('makes one session of one submission: the same form sent again (a double click, a re-post) is answered with the same checkout', async () => {
    const link = await newLink();
    const sessionsOfLink = async () =>
      SessionList.parse(
        (await call(server.baseUrl, 'GET', `/api/widget/sessions?paymentLink=${link.id}`, { token: key }))
          .body,
      ).data;
    const visit = await openLinkPage(link.url);
    const fields = { name: 'Ada Lovelace', email: 'ada@example.com' };
    // A double click: the browser sends the form again at once, same token and cookie. (Each request of the
    // two may spend the link's budget of 3 before either has answered; the one that answers later makes nothing.)
    const clicks = await Promise.all([1, 2].map(() => submitLinkForm(link.url, visit, fields)));
    expect(clicks.map((answer) => answer.status)).toEqual([303, 303]);
    const location = clicks[0]?.headers.get('location') ?? null;
    expect(clicks.map((answer) => answer.headers.get('location'))).toEqual([location, location]);
    // The browser re-posting it later (a reload of the answer, "send again"): the same checkout once more.
    const again = await submitLinkForm(link.url, visit, fields);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(location);
    const { sessionId } = checkoutLocation(location);
    expect((await sessionsOfLink()).map((session) => session.id)).toEqual([sessionId]);
    // The same form with other details is another submission: its own session.
    const other = await submitLinkForm(link.url, visit, { name: 'Grace Hopper', email: 'grace@example.com' });
    expect(other.status).toBe(303);
    const otherSession = checkoutLocation(other.headers.get('location')).sessionId;
    expect(otherSession).not.toBe(sessionId);
    const made = await sessionsOfLink();
    expect(made.map((session) => [session.id, session.payer.email])).toEqual([
      [otherSession, 'grace@example.com'],
      [sessionId, 'ada@example.com'],
    ]);
  });

  it("a link's session that ended with no cancelUrl offers the link's page again, while the link takes payments", async () => {
    const link = await newLink();
    const returnOf = async (sessionId: string) => {
      const page = await fetch(`${server.widgetUrls.test}/checkout/${sessionId}/return`, {
        redirect: 'manual',
      });
      return { status: page.status, html: await page.text() };
    };
    const ended = async (sessionId: string, how: 'expire' | 'cancel') => {
      if (how === 'expire') {
        const expired = await call(server.baseUrl, 'POST', `/api/test/sessions/${sessionId}/expire`, {
          token: key,
        });
        expect(expired.status, expired.text).toBe(200);
      } else {
        const cancelled = await call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/cancel`, {
          token: key,
        });
        expect(cancelled.status, cancelled.text).toBe(200);
      }
      await expect
        .poll(async () => (await retrieveSession(server.baseUrl, key, sessionId)).status)
        .not.toMatch(/^(pending|awaiting_payment)$/);
    };
    const first = await payerStarts(link.url);
    await ended(first.sessionId, 'expire');
    const expiredPage = await returnOf(first.sessionId);
    expect(expiredPage.status).toBe(200);
    expect(expiredPage.html).toContain('Payment expired');
    expect(expiredPage.html).toContain(`<a href="/links/${link.id}">Start the payment again</a>`);
    // The page it offers makes a new session: a new account, the same link.
    const again = await payerStarts(link.url);
    expect(again.sessionId).not.toBe(first.sessionId);
    await ended(again.sessionId, 'cancel');
    expect((await returnOf(again.sessionId)).html).toContain('Start the payment again');
    // Once the link no longer takes payments, there is nothing to offer.
    const off = await call(server.baseUrl, 'PATCH', `/api/payment-links/${link.id}`, {
      token: key,
      json: { active: false },
    });
    expect(off.status, off.text).toBe(200);
    const closed = await returnOf(first.sessionId);
    expect(closed.html).toContain('Payment expired');
    expect(closed.html).not.toContain('Start the payment again');
  });

  it('a test link opened on the live host is not found there', async () => {
    const link = await newLink();
    const onLive = await openLinkPage(`${server.widgetUrls.live}/links/${link.id}`);
    expect(onLive.status).toBe(404);
  });
});

describe('a one-time link', () => {
  it('closes after its first successful payment, and the webhook names the link', async () => {
    const link = await newLink({ reusable: false, amount: 730_000 });
    const { sessionId, clientSecret } = await payerStarts(link.url);
    const opened = await bootstrap(server.baseUrl, clientSecret);
    await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, 730_000);
    const after = await call(server.baseUrl, 'GET', `/api/payment-links/${link.id}`, { token: key });
    expect(after.body.data).toMatchObject({ active: false, reusable: false });
    expect(after.body.data.completedAt).not.toBeNull();
    expect((await openLinkPage(link.url)).status).toBe(410);
    const reopen = await call(server.baseUrl, 'PATCH', `/api/payment-links/${link.id}`, {
      token: key,
      json: { active: true },
    });
    expectError(reopen, 409, 'payment_link_completed');

    await expect.poll(() => receiver.received.some((r) => r.body.data?.session?.id === sessionId)).toBe(true);
    const delivery = receiver.received.find((r) => r.body.data.session.id === sessionId);
    if (!delivery) throw new Error('no webhook');
    expect(
      independentlyVerify(delivery.raw, String(delivery.headers['x-service-signature']), webhookSecret),
    ).toBe(true);
    const event = WebhookEventSchema.parse(delivery.body);
    expect(event.type).toBe('session.successful');
    expect(event.data.session).toMatchObject({ paymentLink: link.id, amount: 730_000, status: 'successful' });
  });
});

describe('the hosted checkout of a session', () => {
  it('answers url on the widget host with the secret only in the fragment, and validates redirect URLs', async () => {
    const created = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      json: {
        amount: 500_000,
        currency: 'NGN',
        payer: { name: 'Ada', email: 'ada@example.com' },
        successUrl: 'https://shop.example/ok/{SESSION_ID}',
        cancelUrl: 'https://shop.example/cancelled',
      },
    });
    expect(created.status, created.text).toBe(201);
    const { id, url, clientSecret, successUrl, cancelUrl, paymentLink } = created.body.data;
    expect(url).toBe(`${server.widgetUrls.test}/checkout/${id}#${clientSecret}`);
    expect({ successUrl, cancelUrl, paymentLink }).toEqual({
      successUrl: 'https://shop.example/ok/{SESSION_ID}',
      cancelUrl: 'https://shop.example/cancelled',
      paymentLink: null,
    });
    const page = await fetch(url.split('#')[0]);
    expect(page.status).toBe(200);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await page.text()).toContain('/hosted.js');
    // Not paid yet: the return says so and does not send the payer to successUrl.
    const early = await fetch(`${server.widgetUrls.test}/checkout/${id}/return`, { redirect: 'manual' });
    expect(early.status).toBe(200);
    const opened = await bootstrap(server.baseUrl, clientSecret);
    await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, 500_000);
    const back = await fetch(`${server.widgetUrls.test}/checkout/${id}/return`, { redirect: 'manual' });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(`https://shop.example/ok/${id}`);
    expect((await fetch(url.split('#')[0])).status).toBe(410);

    const bad = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: liveKey,
      json: {
        amount: 500_000,
        currency: 'NGN',
        payer: { name: 'Ada', email: 'ada@example.com' },
        successUrl: 'http://127.0.0.1:3000/ok',
        cancelUrl: 'ftp://shop.example/x',
      },
    });
    const errors = expectError(bad, 400, 'validation_failed').errors ?? [];
    expect(errors.map((error) => error.path)).toContain('cancelUrl');
  });
});
