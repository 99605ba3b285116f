import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../reference-server/src/index.ts';
import { PORTAL_CSP } from '../../reference-server/src/portal/portal-routes.ts';
import { bootstrap, call, createSession } from '../support/api.ts';
import { PortalClient } from '../support/portal-client.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The portal over plain HTTP, for what a browser test would only see indirectly: headers on every answer,
// sign-in refusals and throttling, session lifetimes on a moved clock, and forged or odd form posts.

let server: RunningServer;
let clock: ManualClock;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;

beforeAll(async () => {
  clock = new ManualClock(Date.parse('2031-03-01T09:00:00Z'));
  server = await startServer(
    { rateLimit: { perMinute: 10_000, failedAuthPerMinutePerAddress: 5 }, sweepIntervalMs: 3_600_000 },
    { clock },
  );
  shop = await server.createBusiness({ name: 'Http Shop', kycApproved: true });
});

afterAll(async () => {
  await server?.close();
});

describe('portal answers', () => {
  it('sends the CSP, nosniff, no framing and same-origin referrers on every page, and assets as files', async () => {
    const client = new PortalClient(server.baseUrl);
    expect((await client.signIn(shop.keys.test.secretKey)).status).toBe(303);
    for (const path of [
      '/portal/sign-in',
      '/portal/sessions',
      '/portal/keys',
      '/portal/webhooks',
      '/portal/bank',
      '/portal/kyc',
      '/portal/missing',
    ]) {
      const answer = await client.request('GET', path);
      expect(answer.headers.get('content-security-policy'), path).toBe(PORTAL_CSP);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(answer.headers.get('referrer-policy')).toBe('same-origin');
      if (answer.status === 200) {
        expect(answer.headers.get('content-type')).toContain('text/html');
        // No inline code for the CSP to refuse: no <style>, no style="", no inline <script>, no on…= handlers.
        expect(answer.text).not.toMatch(/<style|\sstyle=|<script>|<script(?![^>]*\bsrc=)|\son[a-z]+=/i);
      }
    }
    const css = await client.request('GET', '/portal/assets/portal.css');
    expect(css.headers.get('content-type')).toContain('text/css');
    const js = await client.request('GET', '/portal/assets/portal.js');
    expect(js.headers.get('content-type')).toContain('text/javascript');
    for (const name of ['../../package.json', 'constructor', '__proto__', 'portal.ts']) {
      expect((await client.request('GET', `/portal/assets/${name}`)).status, name).toBe(404);
    }
    // A sign-in post with no body at all is refused like a forged one, not answered 500.
    const empty = await fetch(`${server.baseUrl}/portal/sign-in`, {
      method: 'POST',
      headers: { origin: server.baseUrl },
    });
    expect(empty.status).toBe(403);
    const missing = await client.request('GET', '/portal/missing');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('text/html');
  });
});

describe('portal sign-in', () => {
  it('refuses a sign-in post without its form cookie, with a wrong token, or from another origin', async () => {
    const count = () =>
      (
        server.service.db.prepare('SELECT count(*) AS n FROM portal_sessions').get() as {
          n: number;
        }
      ).n;
    const before = count();
    const client = new PortalClient(server.baseUrl);
    await client.request('GET', '/portal/sign-in');
    const key = shop.keys.test.secretKey;
    const bare = new PortalClient(server.baseUrl);
    expect(
      (await bare.request('POST', '/portal/sign-in', { _csrf: client.token, secretKey: key })).status,
    ).toBe(403);
    expect(
      (await client.request('POST', '/portal/sign-in', { _csrf: 'forged', secretKey: key })).status,
    ).toBe(403);
    const foreign = await client.request(
      'POST',
      '/portal/sign-in',
      { _csrf: client.token, secretKey: key },
      { origin: 'https://evil.example' },
    );
    expect(foreign.status).toBe(403);
    expect(client.cookies.has('sp_portal')).toBe(false);
    expect(count()).toBe(before);
  });

  it('says why a key does not sign in (unknown, publishable, rolled), then throttles the address', async () => {
    const rolled = await server.createBusiness({ name: 'Rolled Shop' });
    const rolledKey = rolled.keys.test.secretKey;
    server.service.db
      .prepare(
        "UPDATE api_keys SET revoked_at = 1 WHERE business_id = ? AND kind = 'secret' AND environment = 'test'",
      )
      .run(rolled.business.id);
    const client = new PortalClient(server.baseUrl);
    const unknown = await client.signIn(`sk_test_${'A'.repeat(32)}`);
    expect(unknown.status).toBe(401);
    expect(unknown.text).toContain('No business has that key.');
    expect((await client.signIn(shop.keys.test.publishableKey)).text).toContain('publishable key');
    expect((await client.signIn(rolledKey)).text).toContain('was rolled');
    expect((await client.signIn('not a key')).status).toBe(401);
    expect((await client.signIn('still not a key')).status).toBe(401);
    // The sixth failure in a minute from this address: 429, and even a good key waits.
    const throttled = await client.signIn('sk_test_guess');
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/);
    clock.advance(61_000);
    expect((await client.signIn(shop.keys.test.secretKey)).status).toBe(303);
  });

  it('answers a form that is none (no key, a key over 200 characters, an unknown environment) 401 as a failed sign-in, never 400, as its document lists', async () => {
    clock.advance(61_000); // the throttle's minute of the test above is over
    const client = new PortalClient(server.baseUrl);
    await client.request('GET', '/portal/sign-in');
    const forms = [
      { _csrf: client.token },
      { _csrf: client.token, secretKey: '   ' },
      { _csrf: client.token, secretKey: `sk_test_${'A'.repeat(200)}` },
      { _csrf: client.token, secretKey: shop.keys.test.secretKey, environment: 'staging' },
    ];
    const answers = [];
    for (const form of forms) answers.push(await client.request('POST', '/portal/sign-in', form));
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401]);
    expect(answers[0]?.text).toContain('Paste one of your secret keys.');
    expect(client.cookies.has('sp_portal')).toBe(false);
    // The fifth failure in the minute: still a failed sign-in; the sixth is throttled.
    expect((await client.request('POST', '/portal/sign-in', { _csrf: client.token })).status).toBe(401);
    expect((await client.request('POST', '/portal/sign-in', { _csrf: client.token })).status).toBe(429);
    const document = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(document.paths['/portal/sign-in']?.post?.responses ?? {}).sort()).toEqual([
      '303',
      '401',
      '403',
      '413',
      '415',
      '429',
      '503',
      'default',
    ]);
    clock.advance(61_000);
  });

  it('signs in with a live key into live data, and never stores or echoes the key', async () => {
    const client = new PortalClient(server.baseUrl);
    const answer = await client.signIn(shop.keys.live.secretKey);
    expect(answer.status).toBe(303);
    const keys = await client.request('GET', '/portal/keys');
    expect(keys.text).toContain('sk_live_…');
    expect(keys.text).not.toContain(shop.keys.live.secretKey);
    const columns = server.service.db.prepare('SELECT * FROM portal_sessions').all();
    expect(JSON.stringify(columns)).not.toContain(shop.keys.live.secretKey.slice(8));
  });
});

describe('portal session lifetime', () => {
  it('ends after an hour without a request, and 8 hours after sign-in whatever the use', async () => {
    const idle = new PortalClient(server.baseUrl);
    await idle.signIn(shop.keys.test.secretKey);
    clock.advance(61 * 60_000);
    const after = await idle.request('GET', '/portal/sessions');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/portal/sign-in');

    const busy = new PortalClient(server.baseUrl);
    await busy.signIn(shop.keys.test.secretKey);
    for (let hour = 0; hour < 7; hour += 1) {
      clock.advance(50 * 60_000);
      expect((await busy.request('GET', '/portal/kyc')).status).toBe(200);
    }
    clock.advance(60 * 60_000);
    expect((await busy.request('GET', '/portal/kyc')).status).toBe(303);
  });
});

describe('portal forms', () => {
  it('adds a webhook endpoint from the form (secret shown once), and refuses a bad or private URL', async () => {
    const client = new PortalClient(server.baseUrl);
    await client.signIn(shop.keys.test.secretKey);
    await client.request('GET', '/portal/webhooks');
    const added = await client.request('POST', '/portal/webhooks', {
      _csrf: client.token,
      url: 'http://127.0.0.1:9/hooks',
      description: 'local',
    });
    expect(added.status).toBe(201);
    const secret = /id="new-secret" class="secret">(whsec_[0-9A-Za-z]+)</.exec(added.text)?.[1];
    expect(secret).toMatch(/^whsec_/);
    const listed = await call(server.baseUrl, 'GET', '/api/webhooks', { token: shop.keys.test.secretKey });
    expect(listed.body.data.map((endpoint: { url: string }) => endpoint.url)).toContain(
      'http://127.0.0.1:9/hooks',
    );
    expect((await client.request('GET', '/portal/webhooks')).text).not.toContain(secret ?? 'x');

    const bad = await client.request('POST', '/portal/webhooks', { _csrf: client.token, url: 'not a url' });
    expect(bad.status).toBe(400);
    const internal = await client.request('POST', '/portal/webhooks', {
      _csrf: client.token,
      url: 'http://10.0.0.8/hooks',
    });
    expect(internal.status).toBe(400);
    expect(internal.text).toContain('not allowed');
  });

  it('deletes an endpoint only with the token, from the portal, after the confirm, and only its own business', async () => {
    const deleting = await server.createBusiness({ name: 'Deleting Shop' });
    const other = await server.createBusiness({ name: 'Other Shop' });
    const register = async (key: string, url: string) =>
      (await call(server.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url } })).body.data
        .id as string;
    const id = await register(deleting.keys.test.secretKey, 'http://127.0.0.1:9/to-delete');
    const othersId = await register(other.keys.test.secretKey, 'http://127.0.0.1:9/others');
    const exists = async (key: string, endpointId: string) =>
      (await call(server.baseUrl, 'GET', `/api/webhooks/${endpointId}`, { token: key })).status;
    const client = new PortalClient(server.baseUrl);
    await client.signIn(deleting.keys.test.secretKey);
    await client.request('GET', `/portal/webhooks/${id}`);
    const path = `/portal/webhooks/${id}/delete`;

    expect((await client.request('POST', path, { confirm: 'yes' })).status).toBe(403);
    const elsewhere = await client.request(
      'POST',
      path,
      { _csrf: client.token, confirm: 'yes' },
      { origin: 'http://evil.example' },
    );
    expect(elsewhere.status).toBe(403);
    const others = await client.request('POST', `/portal/webhooks/${othersId}/delete`, {
      _csrf: client.token,
      confirm: 'yes',
    });
    expect(others.status).toBe(403);
    expect(others.text).not.toContain('http://127.0.0.1:9/others');
    expect(await exists(other.keys.test.secretKey, othersId)).toBe(200);
    const unknown = await client.request('POST', '/portal/webhooks/we_missing/delete', {
      _csrf: client.token,
      confirm: 'yes',
    });
    expect(unknown.status).toBe(404);
    // Without the confirm: the endpoint page again, saying what is missing.
    const unconfirmed = await client.request('POST', path, { _csrf: client.token });
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('role="alert"');
    expect(unconfirmed.text).toContain('http://127.0.0.1:9/to-delete');
    expect(await exists(deleting.keys.test.secretKey, id)).toBe(200);

    const deleted = await client.request('POST', path, { _csrf: client.token, confirm: 'yes' });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/portal/webhooks?deleted=1');
    expect(await exists(deleting.keys.test.secretKey, id)).toBe(404);
    expect((await client.request('GET', '/portal/webhooks?deleted=1')).text).toContain('Endpoint deleted');
    const audited = server.service.db
      .prepare('SELECT action, target, actor FROM audit_log WHERE business_id = ? AND action = ?')
      .all(deleting.business.id, 'webhook_endpoint.deleted');
    // Done in the portal: the audit log names the key the portal session was opened with, by its id.
    const keyId = server.service.db
      .prepare(
        "SELECT id FROM api_keys WHERE business_id = ? AND kind = 'secret' AND environment = 'test' AND revoked_at IS NULL",
      )
      .pluck()
      .get(deleting.business.id);
    expect(audited).toEqual([{ action: 'webhook_endpoint.deleted', target: id, actor: `portal:${keyId}` }]);
  });

  it('keeps the sign-in to the other environment inside the portal and refuses transfers the bank must not make', async () => {
    const switching = new PortalClient(server.baseUrl);
    await switching.signIn(shop.keys.test.secretKey);
    const asked = await switching.request(
      'GET',
      '/portal/sign-in?environment=live&returnTo=https://evil.example/',
    );
    expect(asked.status).toBe(200);
    expect(asked.text).not.toContain('evil.example');
    const away = await switching.request('POST', '/portal/sign-in', {
      _csrf: switching.token,
      secretKey: shop.keys.live.secretKey,
      environment: 'live',
      returnTo: 'https://evil.example/',
    });
    expect(away.status).toBe(303);
    expect(away.headers.get('location')).toBe('/portal/sessions');
    // Signed in to live now, the test bank refuses: simulated money comes from a test-key session only.
    await switching.request('GET', '/portal/bank');
    const fromLive = await switching.request('POST', '/portal/bank/transfers', {
      _csrf: switching.token,
      sessionId: (await createSession(server.baseUrl, shop.keys.test.secretKey)).id,
      choice: 'exact',
    });
    expect(fromLive.status).toBe(403);

    const client = new PortalClient(server.baseUrl);
    await client.signIn(shop.keys.test.secretKey);
    await client.request('GET', '/portal/kyc');
    // A live session of the same business: simulated money never pays it.
    const live = await createSession(server.baseUrl, shop.keys.live.secretKey);
    await bootstrap(server.baseUrl, live.clientSecret);
    const refused = await client.request('POST', '/portal/bank/transfers', {
      _csrf: client.token,
      sessionId: live.id,
      choice: 'exact',
    });
    expect(refused.status).toBe(403);
    expect(
      (
        await call(server.baseUrl, 'GET', `/api/widget/sessions/${live.id}`, {
          token: shop.keys.live.secretKey,
        })
      ).body.data.status,
    ).toBe('awaiting_payment');

    // A test session whose checkout never opened has no account to pay.
    const pending = await createSession(server.baseUrl, shop.keys.test.secretKey);
    const notOpen = await client.request('POST', '/portal/bank/transfers', {
      _csrf: client.token,
      sessionId: pending.id,
      choice: 'exact',
    });
    expect(notOpen.status).toBe(409);
    const zero = await createSession(server.baseUrl, shop.keys.test.secretKey);
    await bootstrap(server.baseUrl, zero.clientSecret);
    const nothing = await client.request('POST', '/portal/bank/transfers', {
      _csrf: client.token,
      sessionId: zero.id,
      choice: 'other',
      amount: '0',
    });
    expect(nothing.status).toBe(400);
    const rows = server.service.db.prepare('SELECT count(*) AS n FROM bank_transfers').get() as {
      n: number;
    };
    expect(rows.n).toBe(0);
  });
});
