import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushStreams } from '../../reference-server/src/events/push-streams.ts';
import { OPERATIONS } from '../../reference-server/src/openapi/operations.ts';
import { bootstrap, call, createSession, expectError } from '../support/api.ts';
import { openStream } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 24: what a widget token opens reaches the payer's browser. Every route a widget token opens (read from
// the operations table the OpenAPI document is built from, so a route added there is walked here too) answers
// the browser-safe public view: no payer name, email or phone and no metadata, in its answers, its replays, its
// errors and its stream's events. And each refuses a widget token in its URL.

let server: RunningServer;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;

const PAYER = {
  name: 'Pamela Marker-Privacy',
  email: 'pamela.marker@payer.example',
  phone: '+2348055512345',
};
const METADATA = { order: 'metadata-marker-9d1c', note: 'internal-note-marker-42' };
const MARKERS = [...Object.values(PAYER), ...Object.values(METADATA)];

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  shop = await server.createBusiness({ name: 'Private Payers Shop' });
});

afterAll(async () => {
  await server?.close();
});

/** The routes a widget token opens, as `METHOD path` (OpenAPI paths). */
const widgetTokenRoutes = () =>
  OPERATIONS.filter((operation) => operation.security.includes('widgetToken')).map(
    (operation) => `${operation.method.toUpperCase()} ${operation.path}`,
  );

/** A session with payer details and metadata, opened by its checkout: the widget token and the account. */
async function openCheckout() {
  const created = await createSession(server.baseUrl, shop.keys.test.secretKey, {
    amount: 25_000,
    payer: PAYER,
    metadata: METADATA,
  });
  const opened = await bootstrap(server.baseUrl, created.clientSecret);
  return {
    id: created.id,
    token: opened.token as string,
    accountNumber: opened.virtualAccount.accountNumber as string,
    bootstrapText: JSON.stringify(opened),
  };
}

/** No payer detail and no metadata: neither the values nor the fields. */
function expectBrowserSafe(label: string, text: string): void {
  for (const marker of MARKERS) expect(text, `${label} carries ${marker}`).not.toContain(marker);
  expect(text, label).not.toMatch(/"(payer|metadata|email|phone)"\s*:/);
}

const pushStreamsOf = (running: RunningServer): PushStreams => {
  const found = running.service.tasks.find((task): task is PushStreams => task instanceof PushStreams);
  if (!found) throw new Error('the push streams are not a task of the service');
  return found;
};

describe('every widget-token route answers the public view', () => {
  it('no payer detail or metadata in any answer, replay, error or stream event', async () => {
    const checkout = await openCheckout();
    expectBrowserSafe('bootstrap', checkout.bootstrapText);
    const seen: Array<{ label: string; text: string }> = [];
    const walked = new Set<string>();

    // The stream: the current state first, then a wrong amount (mismatch), then the payer's cancel.
    const stream = await openStream(server.baseUrl, checkout.id, checkout.token);
    await stream.waitFor((frames) => frames.some((frame) => frame.event === 'status'));
    const wrong = await call(server.baseUrl, 'POST', '/api/test/transfers', {
      token: shop.keys.test.secretKey,
      json: { accountNumber: checkout.accountNumber, amount: 1_000 },
    });
    expect(wrong.body.data.outcome).toBe('returned');
    await stream.waitFor((frames) => frames.some((frame) => frame.data?.status === 'mismatch'));
    walked.add('GET /api/widget/sessions/{id}/events');
    // HEAD on the stream: its headers only, no body at all to carry anything.
    const head = await call(server.baseUrl, 'HEAD', `/api/widget/sessions/${checkout.id}/events`, {
      token: checkout.token,
    });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    walked.add('HEAD /api/widget/sessions/{id}/events');

    // A new account while the current one lives: the checkout as it is.
    const account = await call(server.baseUrl, 'POST', `/api/widget/sessions/${checkout.id}/accounts`, {
      token: checkout.token,
    });
    expect(account.status).toBe(201);
    seen.push({ label: 'accounts', text: account.text });
    walked.add('POST /api/widget/sessions/{id}/accounts');

    // The payer's cancel, and its replay under the same Idempotency-Key.
    const cancelPath = `/api/widget/sessions/${checkout.id}/cancel`;
    const headers = { 'Idempotency-Key': 'payer-cancel-1' };
    const cancelled = await call(server.baseUrl, 'POST', cancelPath, { token: checkout.token, headers });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({
      id: checkout.id,
      status: 'cancelled',
      amount: 25_000,
      merchantName: 'Private Payers Shop',
    });
    const replay = await call(server.baseUrl, 'POST', cancelPath, { token: checkout.token, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    seen.push({ label: 'cancel', text: cancelled.text }, { label: 'cancel replay', text: replay.text });
    walked.add('POST /api/widget/sessions/{id}/cancel');
    await stream.closed();
    expect(stream.frames.map((frame) => frame.data?.status).filter(Boolean)).toEqual([
      'awaiting_payment',
      'mismatch',
      'cancelled',
    ]);
    seen.push({ label: 'stream events', text: JSON.stringify(stream.frames) });

    // Errors once the session ended: they name the status, nothing of the payer.
    const late = await call(server.baseUrl, 'POST', `/api/widget/sessions/${checkout.id}/accounts`, {
      token: checkout.token,
    });
    expectError(late, 409, 'session_not_active');
    seen.push({ label: 'accounts after the end', text: late.text });
    const again = await openStream(server.baseUrl, checkout.id, checkout.token);
    await again.closed();
    seen.push({ label: 'stream after the end', text: JSON.stringify(again.frames) });

    expect([...walked].sort()).toEqual(widgetTokenRoutes().sort());
    for (const { label, text } of seen) expectBrowserSafe(label, text);

    // The merchant's own view is untouched: its secret key still gets the whole session.
    const merchant = await call(server.baseUrl, 'GET', `/api/widget/sessions/${checkout.id}`, {
      token: shop.keys.test.secretKey,
    });
    expect(merchant.body.data.payer).toEqual(PAYER);
    expect(merchant.body.data.metadata).toEqual(METADATA);
  });

  it('the merchant cancelling with its secret key still gets the whole session', async () => {
    const created = await createSession(server.baseUrl, shop.keys.test.secretKey, { payer: PAYER });
    const cancelled = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, {
      token: shop.keys.test.secretKey,
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.payer).toEqual(PAYER);
  });
});

describe('a widget token in the URL', () => {
  it('is refused on every widget-token route, even beside a good header, and changes nothing', async () => {
    const checkout = await openCheckout();
    const spellings = [
      `token=${checkout.token}`,
      `wt=${checkout.token}`,
      `access_token=x`,
      `x=Bearer%20${checkout.token}`,
      `x=1&x=${checkout.token}`,
    ];
    const routes = widgetTokenRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(3);
    for (const route of routes) {
      const [method = '', template = ''] = route.split(' ');
      const path = template.replace('{id}', checkout.id);
      for (const query of spellings) {
        const answer = await call(server.baseUrl, method, `${path}?${query}`, { token: checkout.token });
        if (method === 'HEAD') {
          // A HEAD answer has no body: the refusal is its status.
          expect(answer.status, `${route}?${query}`).toBe(400);
          continue;
        }
        expectError(answer, 400, 'bad_request');
        expect(answer.body.meta.message, `${route}?${query}`).toMatch(/Authorization header/);
        expect(answer.text).not.toContain(checkout.token);
      }
    }
    // Nothing happened: the session still waits on the same account, no stream was opened.
    const session = await call(server.baseUrl, 'GET', `/api/widget/sessions/${checkout.id}`, {
      token: shop.keys.test.secretKey,
    });
    expect(session.body.data.status).toBe('awaiting_payment');
    expect(session.body.data.virtualAccount.accountNumber).toBe(checkout.accountNumber);
    expect(pushStreamsOf(server).size).toBe(0);
    // The same calls with the token in the header only work.
    const fine = await call(server.baseUrl, 'POST', `/api/widget/sessions/${checkout.id}/cancel`, {
      token: checkout.token,
    });
    expect(fine.status).toBe(200);
  });
});
