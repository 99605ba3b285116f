import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, call, createSession, testTransfer } from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import { PortalClient } from '../support/portal-client.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 30: the portal's Events page. Every event of the signed-in environment, newest first, by type, a page
// at a time; an event's page with its webhook body (escaped), each delivery with every attempt, and a resend
// (POST with the CSRF token). Real server, real webhook receiver, on SQLite and PostgreSQL.

let server: RunningServer;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let endpointId: string;
/** Events the receiver answers 500, as a broken handler would. */
const failing = new Set<string>();
const MARKUP = '<script>alert("x")</script>';

const waitFor = async <T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  shop = await server.createBusiness({ name: 'Eventful Shop' });
  receiver = await startReceiver((received, res) => {
    if (failing.has(String(received.body.id))) {
      res.statusCode = 500;
      res.end('handler crashed');
    } else res.end('ok');
  });
  const endpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
    token: shop.keys.test.secretKey,
    json: { url: receiver.url },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  endpointId = endpoint.body.data.id;
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const eventIdsOf = (text: string) =>
  [...text.matchAll(/<th scope="row"><a href="\/portal\/events\/(evt_[0-9A-Za-z]+)">/g)].map((m) => m[1]);

describe('the Events page', () => {
  it('shows a paid session’s events, the escaped webhook body, each attempt, and resends on a form post', async () => {
    const key = shop.keys.test.secretKey;
    const created = await createSession(server.baseUrl, key, {
      reference: 'events-1',
      metadata: { note: MARKUP },
    });
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    const [planned] = await server.rows<{ id: string }>(
      "SELECT id FROM events WHERE session_id = ? AND type = 'session.awaiting_payment'",
      created.id,
    );
    await testTransfer(server.baseUrl, key, opened.virtualAccount.accountNumber, created.amount);
    const [paid] = await server.rows<{ id: string }>(
      "SELECT id FROM events WHERE session_id = ? AND type = 'session.successful'",
      created.id,
    );
    const paidEventId = paid?.id ?? '';
    expect(paidEventId).toMatch(/^evt_/);
    await waitFor(async () => (receiver.received.some((r) => r.body.id === paidEventId) ? true : undefined));
    // The attempt's answer is written by a job of its own once the receiver has answered: wait for it too, or the
    // page may be read between the two (seen once on PostgreSQL).
    await waitFor(async () => {
      const answered = await server.rows<{ statusCode: number }>(
        `SELECT a.status_code AS "statusCode" FROM webhook_attempts a
           JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id = ? AND a.status_code = 200`,
        paidEventId,
      );
      return answered.length > 0 ? true : undefined;
    });

    const portal = new PortalClient(server.baseUrl);
    expect((await portal.signIn(key)).status).toBe(303);
    const list = await portal.request('GET', '/portal/events');
    expect(list.status).toBe(200);
    // Newest first: paid, then waiting for the money.
    const ids = eventIdsOf(list.text);
    expect(ids.slice(0, 2)).toEqual([paidEventId, planned?.id]);
    expect(list.text).toContain('<code>session.successful</code>');
    expect(list.text).toContain(`href="/portal/sessions/${created.id}"`);
    // The tab bar leads here.
    expect(list.text).toContain('<a href="/portal/events" aria-current="page">Events</a>');

    const byType = await portal.request('GET', '/portal/events?type=session.awaiting_payment');
    expect(eventIdsOf(byType.text)).toEqual([planned?.id]);

    const detail = await portal.request('GET', `/portal/events/${paidEventId}`);
    expect(detail.status).toBe(200);
    // The body as the endpoint receives it, indented, every character escaped.
    expect(detail.text).toContain(`&quot;id&quot;: &quot;${paidEventId}&quot;`);
    expect(detail.text).toContain('  &quot;type&quot;: &quot;session.successful&quot;');
    expect(detail.text).toContain('&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;');
    expect(detail.text).not.toContain(MARKUP);
    // Its delivery to the endpoint, with the attempt: time, HTTP status, duration.
    expect(detail.text).toContain(`href="/portal/webhooks/${endpointId}">${receiver.url}</a>`);
    expect(detail.text).toMatch(/<td data-label="Answer"><span class="badge badge-good">200<\/span><\/td>/);
    expect(detail.text).toMatch(/<td data-label="Time">\d+ ms<\/td>/);

    // Resend to the endpoint: a form post with the session's token, answered by a redirect.
    const before = receiver.received.filter((r) => r.body.id === paidEventId).length;
    const forged = await portal.request('POST', `/portal/events/${paidEventId}/resend`, {
      _csrf: 'forged',
      endpointId,
    });
    expect(forged.status).toBe(403);
    const resent = await portal.request('POST', `/portal/events/${paidEventId}/resend`, {
      _csrf: portal.token,
      endpointId,
    });
    expect(resent.status).toBe(303);
    expect(resent.headers.get('location')).toBe(`/portal/events/${paidEventId}?resent=1`);
    await waitFor(async () =>
      receiver.received.filter((r) => r.body.id === paidEventId).length === before + 1 ? true : undefined,
    );
    const after = await portal.request('GET', `/portal/events/${paidEventId}?resent=1`);
    expect(after.text).toContain('Resent: a new delivery is on the way.');
    expect(after.text.match(/<li class="delivery">/g)).toHaveLength(2);
    // An event pushed to the checkout only is not a webhook event: no resend offered.
    const internal = await portal.request('GET', `/portal/events/${planned?.id}`);
    expect(internal.text).toContain('is not a webhook event');
    expect(internal.text).not.toContain('/resend"');

    // The endpoint page's delivery leads to the event's page.
    const endpointPage = await portal.request('GET', `/portal/webhooks/${endpointId}`);
    expect(endpointPage.text).toContain(`href="/portal/events/${paidEventId}"`);
  });

  it('shows a failed attempt with its status, and when the next retry is', async () => {
    const key = shop.keys.test.secretKey;
    const created = await createSession(server.baseUrl, key, { reference: 'events-retry' });
    const cancelled = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, {
      token: key,
    });
    expect(cancelled.status).toBe(200);
    const [event] = await server.rows<{ id: string }>(
      'SELECT id FROM events WHERE session_id = ?',
      created.id,
    );
    const eventId = event?.id ?? '';
    // Delivered once, then resent to a receiver that now fails: an attempt answered 500, a retry planned.
    await waitFor(async () => (receiver.received.some((r) => r.body.id === eventId) ? true : undefined));
    failing.add(eventId);
    const portal = new PortalClient(server.baseUrl);
    await portal.signIn(key);
    await portal.request('GET', `/portal/events/${eventId}`);
    await portal.request('POST', `/portal/events/${eventId}/resend`, { _csrf: portal.token });
    const page = await waitFor(async () => {
      const answer = await portal.request('GET', `/portal/events/${eventId}`);
      return answer.text.includes('badge-bad">500</span>') ? answer.text : undefined;
    });
    expect(page).toMatch(/<span class="badge badge-info">pending<\/span>/);
    expect(page).toMatch(/next retry <time datetime="[^"]+">/);
    failing.delete(eventId);
  });

  it('pages through the events, newest first, 20 at a time', async () => {
    const paged = await server.createBusiness({ name: 'Paged Events' });
    const key = paged.keys.test.secretKey;
    for (let i = 0; i < 21; i++) {
      const created = await createSession(server.baseUrl, key, { reference: `paged-${i}` });
      await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, { token: key });
    }
    const portal = new PortalClient(server.baseUrl);
    await portal.signIn(key);
    const first = await portal.request('GET', '/portal/events');
    const ids = eventIdsOf(first.text);
    expect(ids).toHaveLength(20);
    const older = /href="(\/portal\/events\?startingAfter=evt_[0-9A-Za-z]+)" rel="next"/.exec(
      first.text,
    )?.[1];
    const second = await portal.request('GET', older ?? '');
    const rest = eventIdsOf(second.text);
    expect(rest).toHaveLength(1);
    expect(new Set([...ids, ...rest]).size).toBe(21);
    const all = await server.rows<{ id: string }>(
      'SELECT id FROM events WHERE business_id = ? ORDER BY seq DESC',
      paged.business.id,
    );
    expect([...ids, ...rest]).toEqual(all.map((row) => row.id));
    // Nothing of the first shop is in this one's list.
    expect(first.text).not.toContain('events-1');
  });
});
