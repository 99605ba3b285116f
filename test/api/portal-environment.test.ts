import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PORTAL_OPERATIONS,
  type PortalOperationId,
} from '../../reference-server/src/portal/portal-operations.ts';
import { bootstrap, call, createSession } from '../support/api.ts';
import { PortalClient } from '../support/portal-client.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 24: a portal session reaches only the environment of the key that signed in. A session opened with a
// test key walks every route of the portal's operations table (GET and POST, same origin, a valid CSRF token, so
// what refuses is the environment check) against live resources, and gets a refusal; afterwards nothing live
// has changed and no answer carried anything live. The walk is driven by the table itself: a route added to
// the portal without a probe here does not compile, and one left unwalked fails the test.

let server: RunningServer;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;
/** What lives in live, and must never be seen or touched from a test-key session. */
const live = {
  payerName: 'Livia Marker-Payer',
  payerEmail: 'livia.marker@live-payer.example',
  payerPhone: '+2348099911122',
  metadata: 'live-metadata-marker-7f3a',
  reference: 'live-ref-marker-5521',
  endpointUrl: 'https://93.184.215.14/live-hooks-marker',
  sessionId: '',
  accountNumber: '',
  eventId: '',
  endpointId: '',
  endpointSecret: '',
  /** A refused live request's `Request-Id` (its request log entry names the live reference). */
  requestId: '',
  /** A live payment link (issue 36). */
  linkId: '',
  linkName: 'Live-only fabric link',
};

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  shop = await server.createBusiness({ name: 'Two Sided Shop', kycApproved: true });
  const liveKey = shop.keys.live.secretKey;
  const session = await createSession(server.baseUrl, liveKey, {
    reference: live.reference,
    payer: { name: live.payerName, email: live.payerEmail, phone: live.payerPhone },
    metadata: { order: live.metadata },
  });
  live.sessionId = session.id;
  live.accountNumber = (await bootstrap(server.baseUrl, session.clientSecret)).virtualAccount.accountNumber;
  // A live event to name in a resend: a cancelled session, before any endpoint exists (so nothing is sent).
  const cancelled = await createSession(server.baseUrl, liveKey);
  expect(
    (await call(server.baseUrl, 'POST', `/api/widget/sessions/${cancelled.id}/cancel`, { token: liveKey }))
      .status,
  ).toBe(200);
  const [event] = await server.rows<{ id: string }>(
    'SELECT id FROM events WHERE session_id = ?',
    cancelled.id,
  );
  live.eventId = event?.id ?? '';
  const endpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
    token: liveKey,
    json: { url: live.endpointUrl },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  live.endpointId = endpoint.body.data.id;
  live.endpointSecret = endpoint.body.data.secret;
  // A live request in the request log, refused, its path naming the live reference.
  const refused = await call(
    server.baseUrl,
    'GET',
    `/api/widget/sessions?reference=${live.reference}&limit=0`,
    {
      token: liveKey,
    },
  );
  expect(refused.status).toBe(400);
  live.requestId = refused.headers.get('request-id') ?? '';
  const link = await call(server.baseUrl, 'POST', '/api/payment-links', {
    token: liveKey,
    json: { name: live.linkName, amount: 500_000, currency: 'NGN' },
  });
  expect(link.status, link.text).toBe(201);
  live.linkId = link.body.data.id;
});

afterAll(async () => {
  await server?.close();
});

/** The portal's operation of that id. */
const portalOperation = (id: PortalOperationId) =>
  PORTAL_OPERATIONS.find((operation) => operation.operationId === id) ?? PORTAL_OPERATIONS[0];

/** One request of the walk: a path (with its query) and, for a post, the form without `_csrf`. */
interface Probe {
  path: string;
  form?: Record<string, string>;
}

/**
 * Every route of the portal, asked about live from a test-key session. `named`: the request names live (the
 * `environment` field or query) and, where the route takes a resource, a live one. `byId`: a route that takes a
 * resource, asked with the live one alone (no `environment` anywhere), so the services' own scope refuses it.
 */
const probes: Record<PortalOperationId, { named: Probe; byId?: Probe }> = {
  portalAsset: { named: { path: '/portal/assets/portal.css?environment=live' } },
  portalHome: { named: { path: '/portal/?environment=live' } },
  portalSignInPage: { named: { path: '/portal/sign-in?environment=live' } },
  // The sign-in form with the test key, asking for live: refused, the key is of the other environment.
  portalSignIn: { named: { path: '/portal/sign-in', form: { environment: 'live' } } },
  portalKeys: { named: { path: '/portal/keys?environment=live' } },
  portalRollKey: {
    named: { path: '/portal/keys/roll', form: { environment: 'live', kind: 'secret', confirm: 'yes' } },
  },
  portalWebhooks: { named: { path: '/portal/webhooks?environment=live' } },
  portalCreateEndpoint: {
    named: { path: '/portal/webhooks', form: { environment: 'live', url: 'https://93.184.215.14/planted' } },
  },
  portalEndpoint: {
    named: { path: `/portal/webhooks/{endpoint}?environment=live` },
    byId: { path: `/portal/webhooks/{endpoint}` },
  },
  portalRevealSecret: {
    named: { path: '/portal/webhooks/{endpoint}/reveal', form: { environment: 'live', confirm: 'yes' } },
    byId: { path: '/portal/webhooks/{endpoint}/reveal', form: { confirm: 'yes' } },
  },
  portalEndpointState: {
    named: { path: '/portal/webhooks/{endpoint}/state', form: { environment: 'live', enabled: 'false' } },
    byId: { path: '/portal/webhooks/{endpoint}/state', form: { enabled: 'false' } },
  },
  portalDeleteEndpoint: {
    named: { path: '/portal/webhooks/{endpoint}/delete', form: { environment: 'live', confirm: 'yes' } },
    byId: { path: '/portal/webhooks/{endpoint}/delete', form: { confirm: 'yes' } },
  },
  portalResend: {
    named: { path: '/portal/webhooks/{endpoint}/resend', form: { environment: 'live', eventId: '{event}' } },
    byId: { path: '/portal/webhooks/{endpoint}/resend', form: { eventId: '{event}' } },
  },
  portalEvents: { named: { path: '/portal/events?environment=live' } },
  portalEvent: {
    named: { path: '/portal/events/{event}?environment=live' },
    byId: { path: '/portal/events/{event}' },
  },
  portalResendEvent: {
    named: { path: '/portal/events/{event}/resend', form: { environment: 'live', endpointId: '{endpoint}' } },
    byId: { path: '/portal/events/{event}/resend', form: { endpointId: '{endpoint}' } },
  },
  portalRequests: { named: { path: '/portal/requests?environment=live' } },
  portalRequest: {
    named: { path: '/portal/requests/{request}?environment=live' },
    byId: { path: '/portal/requests/{request}' },
  },
  portalSessions: { named: { path: '/portal/sessions?environment=live' } },
  portalSession: {
    named: { path: '/portal/sessions/{session}?environment=live' },
    byId: { path: '/portal/sessions/{session}' },
  },
  portalBank: { named: { path: '/portal/bank?environment=live' } },
  portalTransfer: {
    named: {
      path: '/portal/bank/transfers',
      form: { environment: 'live', sessionId: '{session}', choice: 'exact' },
    },
    byId: { path: '/portal/bank/transfers', form: { sessionId: '{session}', choice: 'exact' } },
  },
  portalExpire: {
    named: { path: '/portal/sessions/{session}/expire', form: { environment: 'live', ending: 'session' } },
    byId: { path: '/portal/sessions/{session}/expire', form: { ending: 'session' } },
  },
  portalRefund: {
    named: {
      path: '/portal/sessions/{session}/refunds',
      form: { environment: 'live', step: 'confirm', amount: '100', expectedRefunded: '0' },
    },
    byId: {
      path: '/portal/sessions/{session}/refunds',
      form: { step: 'confirm', amount: '100', expectedRefunded: '0' },
    },
  },
  portalKyc: { named: { path: '/portal/kyc?environment=live' } },
  portalPaymentLinks: { named: { path: '/portal/payment-links?environment=live' } },
  portalCreatePaymentLink: {
    named: { path: '/portal/payment-links', form: { environment: 'live', name: 'Planted', amount: '5000' } },
  },
  portalPaymentLink: {
    named: { path: '/portal/payment-links/{link}?environment=live' },
    byId: { path: '/portal/payment-links/{link}' },
  },
  portalPaymentLinkActive: {
    named: { path: '/portal/payment-links/{link}', form: { environment: 'live', active: 'false' } },
    byId: { path: '/portal/payment-links/{link}', form: { active: 'false' } },
  },
  // Last: were it not refused, the session would end.
  portalSignOut: { named: { path: '/portal/sign-out', form: { environment: 'live' } } },
};

const fill = (text: string) =>
  text
    .replaceAll('{endpoint}', live.endpointId)
    .replaceAll('{session}', live.sessionId)
    .replaceAll('{event}', live.eventId)
    .replaceAll('{request}', live.requestId)
    .replaceAll('{link}', live.linkId);

/** Anything of live that a page could show. */
function liveMarkers(): string[] {
  const masked = (key: string) => `…${key.slice(-4)}`;
  return [
    live.payerName,
    live.payerEmail,
    live.payerPhone,
    live.metadata,
    live.reference,
    live.endpointUrl,
    live.endpointSecret,
    live.accountNumber,
    live.eventId,
    live.requestId,
    live.linkId,
    live.linkName,
    shop.keys.live.secretKey,
    masked(shop.keys.live.secretKey),
    masked(shop.keys.live.publishableKey),
  ];
}

/** Whether an answer is the refusal of the environment check (its code on the error page). */
const refusedForEnvironment = (answer: { status: number; text: string }) =>
  answer.status === 403 && answer.text.includes('<code class="error-code">environment_mismatch</code>');

/** Walks `probes` with a session, answering each route's answers (the route names it walked, too). */
async function walk(client: PortalClient, testKey: string) {
  await client.request('GET', '/portal/kyc');
  const csrf = client.token;
  const answers: Array<{ name: PortalOperationId; kind: 'named' | 'byId'; status: number; text: string }> =
    [];
  for (const [name, probe] of Object.entries(probes) as Array<
    [PortalOperationId, (typeof probes)[PortalOperationId]]
  >) {
    const route = portalOperation(name);
    for (const kind of ['named', 'byId'] as const) {
      const asked = probe[kind];
      if (!asked) continue;
      expect(asked.form !== undefined, `${name}: a ${route.method} probe`).toBe(route.method === 'post');
      let token = csrf;
      let form = asked.form && Object.fromEntries(Object.entries(asked.form).map(([k, v]) => [k, fill(v)]));
      if (route.auth === 'portalSignIn') {
        // The sign-in form's own token, from the page that asks for live.
        await client.request('GET', '/portal/sign-in?environment=live');
        token = client.token;
        form = { ...form, secretKey: testKey };
      }
      const answer = await client.request(
        route.method.toUpperCase(),
        fill(asked.path),
        form && { ...form, _csrf: token },
      );
      answers.push({ name, kind, status: answer.status, text: answer.text });
    }
  }
  return answers;
}

describe('a portal session opened with a test key', () => {
  it('is refused on every portal route asked about live, and nothing live is seen or changed', async () => {
    const client = new PortalClient(server.baseUrl);
    expect((await client.signIn(shop.keys.test.secretKey)).status).toBe(303);
    const answers = await walk(client, shop.keys.test.secretKey);

    // Every route of the table was walked.
    expect(new Set(answers.map((answer) => answer.name))).toEqual(
      new Set(PORTAL_OPERATIONS.map((operation) => operation.operationId)),
    );
    for (const answer of answers) {
      const label = `${answer.kind} ${answer.name} → ${answer.status}`;
      const route = portalOperation(answer.name);
      if (route.auth === 'portalSession') {
        // The signed-in pages and forms: the environment check, not CSRF, not a missing page.
        expect(refusedForEnvironment(answer), `${label}: ${answer.text.slice(0, 400)}`).toBe(true);
        // The refusal offers the sign-in that would reach live.
        expect(answer.text, label).toContain('/portal/sign-in?environment=live');
      } else if (route.auth === 'portalSignIn') {
        expect(answer.status, label).toBe(403);
        expect(answer.text, label).toContain('That is a test key');
      } else {
        // The public routes read no environment's data: the stylesheet, the redirect, the sign-in form.
        expect([200, 303], label).toContain(answer.status);
      }
      for (const marker of liveMarkers())
        expect(answer.text, `${label} shows ${marker}`).not.toContain(marker);
    }

    // The session is still the test one, on the test key's environment.
    const keys = await client.request('GET', '/portal/keys');
    expect(keys.status).toBe(200);
    expect(keys.text).toContain(`sk_test_…${shop.keys.test.secretKey.slice(-4)}`);
    expect(keys.text).toMatch(/<span class="toggle-option" aria-current="true">Test data<\/span>/);
    // The pages without a resource show test data only.
    for (const path of [
      '/portal/sessions',
      '/portal/events',
      '/portal/requests',
      '/portal/webhooks',
      '/portal/bank',
      '/portal/kyc',
    ]) {
      const page = await client.request('GET', path);
      expect(page.status, path).toBe(200);
      for (const marker of liveMarkers()) expect(page.text, `${path} shows ${marker}`).not.toContain(marker);
    }

    // Nothing live changed: both live keys work, none was rolled; the endpoint is there as it was, with
    // nothing sent to it and no other endpoint beside it; the session still waits for its money; the bank
    // moved nothing; the audit log has no portal change in live.
    const liveKey = shop.keys.live.secretKey;
    expect((await call(server.baseUrl, 'GET', '/api/widget/sessions', { token: liveKey })).status).toBe(200);
    expect(
      (await call(server.baseUrl, 'GET', '/api/widget/profile', { token: shop.keys.live.publishableKey }))
        .status,
    ).toBe(200);
    expect(
      await server.rows(
        "SELECT id FROM api_keys WHERE business_id = ? AND environment = 'live' AND revoked_at IS NOT NULL",
        shop.business.id,
      ),
    ).toEqual([]);
    const endpoints = await call(server.baseUrl, 'GET', '/api/webhooks', { token: liveKey });
    expect(
      endpoints.body.data.map((endpoint: { id: string; url: string; enabled: boolean }) => ({
        id: endpoint.id,
        url: endpoint.url,
        enabled: endpoint.enabled,
      })),
    ).toEqual([{ id: live.endpointId, url: live.endpointUrl, enabled: true }]);
    expect(
      await server.rows('SELECT id FROM webhook_deliveries WHERE endpoint_id = ?', live.endpointId),
    ).toEqual([]);
    const session = await call(server.baseUrl, 'GET', `/api/widget/sessions/${live.sessionId}`, {
      token: liveKey,
    });
    expect(session.body.data.status).toBe('awaiting_payment');
    expect(await server.bankRows('SELECT id FROM bank_transfers')).toEqual([]);
    expect(await server.rows('SELECT id FROM refunds')).toEqual([]);
    expect(
      await server.rows(
        "SELECT action FROM audit_log WHERE business_id = ? AND environment = 'live' AND actor LIKE 'portal:%'",
        shop.business.id,
      ),
    ).toEqual([]);
    // And no endpoint was planted in test either by a form naming live.
    const testEndpoints = await call(server.baseUrl, 'GET', '/api/webhooks', {
      token: shop.keys.test.secretKey,
    });
    expect(testEndpoints.body.data).toEqual([]);
  });

  it('reaches live only through a sign-in with the live secret key, which ends the test session', async () => {
    const client = new PortalClient(server.baseUrl);
    await client.signIn(shop.keys.test.secretKey);
    const testCookie = client.cookies.get('sp_portal');
    const asked = await client.request('GET', '/portal/sign-in?environment=live&returnTo=/portal/keys');
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('name="environment" value="live"');
    const signedIn = await client.request('POST', '/portal/sign-in', {
      _csrf: client.token,
      secretKey: shop.keys.live.secretKey,
      environment: 'live',
      returnTo: '/portal/keys',
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/portal/keys');
    const keys = await client.request('GET', '/portal/keys');
    expect(keys.text).toContain(`sk_live_…${shop.keys.live.secretKey.slice(-4)}`);
    const detail = await client.request('GET', `/portal/sessions/${live.sessionId}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain(live.payerEmail);
    // The test session this browser had is gone: its cookie opens nothing any more.
    const old = new PortalClient(server.baseUrl);
    old.cookies.set('sp_portal', testCookie ?? '');
    const replay = await old.request('GET', '/portal/keys');
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/portal/sign-in');
  });

  it('and the other way: a live-key session is refused on every signed-in route asked about test', async () => {
    const client = new PortalClient(server.baseUrl);
    await client.signIn(shop.keys.live.secretKey);
    await client.request('GET', '/portal/kyc');
    const csrf = client.token;
    const testSession = await createSession(server.baseUrl, shop.keys.test.secretKey);
    await bootstrap(server.baseUrl, testSession.clientSecret);
    for (const route of PORTAL_OPERATIONS) {
      const name = route.operationId;
      if (route.auth !== 'portalSession') continue;
      const path = route.path.replace('{id}', testSession.id);
      const answer =
        route.method === 'get'
          ? await client.request('GET', `${path}?environment=test`)
          : await client.request('POST', path, {
              _csrf: csrf,
              environment: 'test',
              sessionId: testSession.id,
            });
      expect(refusedForEnvironment(answer), `${name} → ${answer.status}`).toBe(true);
    }
    // The test bank pays nothing from a live-key session, even a test session named without an environment.
    const transfer = await client.request('POST', '/portal/bank/transfers', {
      _csrf: csrf,
      sessionId: testSession.id,
      choice: 'exact',
    });
    expect(refusedForEnvironment(transfer)).toBe(true);
    expect(await server.bankRows('SELECT id FROM bank_transfers')).toEqual([]);
  });
});
