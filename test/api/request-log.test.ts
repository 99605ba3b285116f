import { PermissionError, ServicePay, ServicePayError } from '@servicepay/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_LOG_KEEP } from '../../reference-server/src/db/request-log.ts';
import { ManualClock } from '../../reference-server/src/index.ts';
import { bootstrap, call, createSession, sessionParams } from '../support/api.ts';
import { PortalClient } from '../support/portal-client.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 30: the portal's request log. A Request-Id from an SDK error leads to the request in the portal, with
// what was sent and answered; no credential of any kind is kept; the log stays bounded per business and
// environment. Real server, real SDK, real store (SQLite or PostgreSQL).

let server: RunningServer;
let clock: ManualClock;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;

beforeAll(async () => {
  clock = new ManualClock(Date.now());
  server = await startServer({ rateLimit: { perMinute: 10_000 }, sweepIntervalMs: 3_600_000 }, { clock });
  // No KYC: its live key is refused (403 kyc_required), a refusal the SDK cannot foresee.
  shop = await server.createBusiness({ name: 'Logged Shop' });
});

afterAll(async () => {
  await server?.close();
});

const signedIn = async (key: string) => {
  const client = new PortalClient(server.baseUrl);
  expect((await client.signIn(key)).status).toBe(303);
  return client;
};

describe('the request log', () => {
  it('finds the Request-Id of an SDK error in the portal, with method, path, status, key and error body', async () => {
    const servicepay = new ServicePay(shop.keys.test.secretKey, { baseUrl: server.baseUrl });
    // A refused create: the same idempotency key with other parameters (409), as a retry with changed fields is.
    const idempotencyKey = 'order-1001-attempt';
    await servicepay.sessions.create(sessionParams({ reference: 'order-1001' }), { idempotencyKey });
    const refused = await servicepay.sessions
      .create(sessionParams({ reference: 'order-1001', amount: 700_000 }), { idempotencyKey })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(ServicePayError);
    const error = refused as ServicePayError;
    expect(error.statusCode).toBe(409);
    expect(error.requestId).toMatch(/^req_/);

    const portal = await signedIn(shop.keys.test.secretKey);
    const search = await portal.request('GET', `/portal/requests?requestId=${error.requestId}`);
    expect(search.status).toBe(200);
    expect(search.text).toContain(`<code>${error.requestId}</code>`);
    expect(search.text).toContain('POST</span> /api/widget/sessions');
    expect(search.text).toContain('>409<');
    expect(search.text).toContain(`sk_test_…${shop.keys.test.secretKey.slice(-4)}`);
    // The search found this request alone.
    expect(search.text.match(/href="\/portal\/requests\/req_/g)).toHaveLength(1);

    const detail = await portal.request('GET', `/portal/requests/${error.requestId}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('Error body');
    expect(detail.text).toContain(`&quot;code&quot;: &quot;${error.code}&quot;`);
    expect(detail.text).toContain(`&quot;requestId&quot;: &quot;${error.requestId}&quot;`);
    expect(detail.text).toMatch(/<dt>Duration<\/dt><dd>\d+ ms<\/dd>/);

    // A refusal of the live key, which the SDK cannot know in advance: found in the live log only.
    const live = new ServicePay(shop.keys.live.secretKey, { baseUrl: server.baseUrl });
    const kyc = await live.sessions.create(sessionParams()).then(
      () => undefined,
      (raised: unknown) => raised,
    );
    expect(kyc).toBeInstanceOf(PermissionError);
    const kycId = (kyc as PermissionError).requestId ?? '';
    expect((await portal.request('GET', `/portal/requests?requestId=${kycId}`)).text).toContain(
      'No request matches',
    );
    const livePortal = await signedIn(shop.keys.live.secretKey);
    const liveDetail = await livePortal.request('GET', `/portal/requests/${kycId}`);
    expect(liveDetail.status).toBe(200);
    expect(liveDetail.text).toContain('kyc_required');
    expect(liveDetail.text).toContain(`sk_live_…${shop.keys.live.secretKey.slice(-4)}`);
  });

  it('filters by status class, newest first, a page at a time', async () => {
    const other = await server.createBusiness({ name: 'Paged Shop' });
    const key = other.keys.test.secretKey;
    for (let i = 0; i < 22; i++) await createSession(server.baseUrl, key, { reference: `paged-${i}` });
    const refused = await call(server.baseUrl, 'GET', '/api/widget/sessions?limit=0', { token: key });
    expect(refused.status).toBe(400);
    const portal = await signedIn(key);
    const first = await portal.request('GET', '/portal/requests');
    const ids = [...first.text.matchAll(/href="\/portal\/requests\/(req_[0-9A-Za-z]+)"/g)].map((m) => m[1]);
    expect(ids).toHaveLength(20);
    // Newest first: the refused list request leads.
    expect(ids[0]).toBe(refused.headers.get('request-id'));
    const older = /href="(\/portal\/requests\?startingAfter=req_[0-9A-Za-z]+)" rel="next"/.exec(
      first.text,
    )?.[1];
    expect(older).toBeDefined();
    const second = await portal.request('GET', older?.replaceAll('&amp;', '&') ?? '');
    const secondIds = [...second.text.matchAll(/href="\/portal\/requests\/(req_[0-9A-Za-z]+)"/g)].map(
      (m) => m[1],
    );
    expect(secondIds).toHaveLength(3);
    expect(new Set([...ids, ...secondIds]).size).toBe(23);

    const errors = await portal.request('GET', '/portal/requests?status=4xx');
    expect(
      [...errors.text.matchAll(/href="\/portal\/requests\/(req_[0-9A-Za-z]+)"/g)].map((m) => m[1]),
    ).toEqual([refused.headers.get('request-id')]);
    const created = await portal.request('GET', '/portal/requests?status=2xx');
    expect(created.text.match(/>201</g)).toHaveLength(20);
  });

  it('never keeps a secret: not a key, a client secret, a widget token or a webhook secret', async () => {
    const owner = await server.createBusiness({ name: 'Secretive Shop', kycApproved: true });
    const secretKey = owner.keys.test.secretKey;
    const publishableKey = owner.keys.test.publishableKey;
    const created = await createSession(server.baseUrl, secretKey, { reference: 'secrets-1' });
    const opened = await bootstrap(server.baseUrl, created.clientSecret);
    const widgetToken = opened.token;
    const endpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
      token: secretKey,
      json: { url: 'http://127.0.0.1:9/hooks' },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const webhookSecret: string = endpoint.body.data.secret;
    const loose = 'plain-secret-value-5f1c';
    const asked = [
      // Credentials in the path and query, as a careless client might send them.
      call(server.baseUrl, 'GET', `/api/widget/sessions?reference=${created.clientSecret}`, {
        token: secretKey,
      }),
      call(server.baseUrl, 'GET', `/api/widget/sessions?token=${loose}&key=${loose}&reference=x`, {
        token: secretKey,
      }),
      call(server.baseUrl, 'GET', `/api/widget/sessions/${widgetToken}`, { token: secretKey }),
      call(server.baseUrl, 'GET', `/api/widget/sessions?reference=${webhookSecret}`, { token: secretKey }),
      call(server.baseUrl, 'GET', `/api/widget/sessions?reference=${secretKey}`, { token: secretKey }),
      // A refusal whose error body names what was sent: an unknown field named like the key.
      call(server.baseUrl, 'POST', '/api/widget/sessions', {
        token: secretKey,
        json: { ...sessionParams(), [secretKey]: 1, [publishableKey]: 2 },
      }),
      // Answers that carry secrets: a webhook secret rolled, a client secret.
      call(server.baseUrl, 'POST', `/api/webhooks/${endpoint.body.data.id}/roll-secret`, {
        token: secretKey,
      }),
      call(server.baseUrl, 'POST', '/api/widget/sessions', { token: secretKey, json: sessionParams() }),
      // The publishable key's own route.
      call(server.baseUrl, 'GET', '/api/widget/profile', { token: publishableKey }),
      // The checkout's widget token on its own route (not an API key: not logged).
      call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/accounts`, { token: widgetToken }),
    ];
    const answers = await Promise.all(asked);
    expect(answers.map((answer) => answer.status).filter((status) => status >= 500)).toEqual([]);
    const portal = await signedIn(secretKey);
    const page = await portal.request('GET', '/portal/requests');
    const logged = await server.rows<Record<string, unknown>>(
      'SELECT * FROM request_log WHERE business_id = ?',
      owner.business.id,
    );
    // Every API-key request is there (the session create, the endpoint, the ten above but the widget token's).
    expect(logged.length).toBe(11);
    expect(logged.map((row) => row.key_hint).sort()).toContain(`pk_test_…${publishableKey.slice(-4)}`);
    const everything = JSON.stringify(logged);
    const details = await Promise.all(
      logged.map((row) => portal.request('GET', `/portal/requests/${String(row.request_id)}`)),
    );
    for (const secret of [
      secretKey,
      publishableKey,
      owner.keys.live.secretKey,
      created.clientSecret,
      widgetToken,
      webhookSecret,
      ...answers.flatMap((answer) => {
        const data = answer.body?.data as { secret?: string; clientSecret?: string } | undefined;
        return [data?.secret, data?.clientSecret].filter((value): value is string => Boolean(value));
      }),
      loose,
    ]) {
      expect(everything, 'the stored rows').not.toContain(secret);
      expect(page.text, 'the Requests page').not.toContain(secret);
      for (const detail of details) expect(detail.text, 'a request page').not.toContain(secret);
    }
    // Masked, not dropped: the request is still recognisable.
    expect(everything).toContain('token=[redacted]&key=[redacted]&reference=x');
    expect(everything).toContain('cs_[redacted]');
  });

  it('keeps the newest entries of each business and environment, pruned by the sweeper', async () => {
    const crowded = await server.createBusiness({ name: 'Crowded Shop' });
    const quiet = await server.createBusiness({ name: 'Quiet Shop' });
    const { store } = server.service.deps;
    const entry = (businessId: string, environment: 'test' | 'live', n: number) => ({
      requestId: `req_prune${businessId.slice(-6)}${environment}${n}`,
      businessId,
      environment,
      method: 'GET',
      path: `/api/widget/sessions?n=${n}`,
      status: 200,
      keyHint: 'sk_test_…abcd',
      durationMs: 1,
      errorBody: null,
      createdAt: clock.now(),
    });
    const many = Array.from({ length: REQUEST_LOG_KEEP + 5 }, (_, n) =>
      entry(crowded.business.id, 'test', n),
    );
    await store.writes.run((tx) => tx.requestLog.insertMany(many));
    await store.writes.run((tx) =>
      tx.requestLog.insertMany([entry(crowded.business.id, 'live', 0), entry(quiet.business.id, 'test', 0)]),
    );
    const count = async (businessId: string, environment: string) =>
      (
        await server.rows<{ n: number }>(
          'SELECT count(*) AS n FROM request_log WHERE business_id = ? AND environment = ?',
          businessId,
          environment,
        )
      )[0]?.n;
    expect(Number(await count(crowded.business.id, 'test'))).toBe(REQUEST_LOG_KEEP + 5);
    clock.advance(61_000);
    await server.service.sweeper.sweep();
    expect(Number(await count(crowded.business.id, 'test'))).toBe(REQUEST_LOG_KEEP);
    expect(Number(await count(crowded.business.id, 'live'))).toBe(1);
    expect(Number(await count(quiet.business.id, 'test'))).toBe(1);
    // The oldest went, the newest stayed.
    const kept = await server.rows<{ path: string }>(
      'SELECT path FROM request_log WHERE business_id = ? AND environment = ? ORDER BY seq',
      crowded.business.id,
      'test',
    );
    expect(kept[0]?.path).toBe('/api/widget/sessions?n=5');
    expect(kept.at(-1)?.path).toBe(`/api/widget/sessions?n=${REQUEST_LOG_KEEP + 4}`);
  });
});
