import type { CreatedBusiness, ErrorCode } from '@servicepay/node/protocol';
import { CheckoutProfileSchema, envelopeOf, NewAccountResultSchema } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollKey } from '../../reference-server/src/index.ts';
import {
  type ApiResponse,
  bootstrap,
  call,
  createSession,
  expectError,
  retrieveSession,
  sessionParams,
} from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Spec §5 and §7 as a table: every authenticated route × every kind of wrong credential → status and code.

let server: RunningServer;
let owner: CreatedBusiness;
let other: CreatedBusiness;
let revokedKey: string;
let sessionId: string;
let clientSecret: string;
let widgetToken: string;
let accountNumber: string;
let otherWidgetToken: string;

beforeAll(async () => {
  // Failed authentications are many here on purpose: keep the per-address guard out of the way.
  server = await startServer({ rateLimit: { failedAuthPerMinutePerAddress: 10_000 } });
  owner = await server.createBusiness({ name: 'Owner' });
  other = await server.createBusiness({ name: 'Other' });
  const rolled = await server.createBusiness({ name: 'Rolled' });
  revokedKey = rolled.keys.test.secretKey;
  expect(
    await rollKey(server.service.deps.store, rolled.business.id, 'test', 'secret', Date.now()),
  ).toMatchObject({
    revokedKeyHint: expect.stringContaining('sk_test_'),
  });

  const opened = await createSession(server.baseUrl, owner.keys.test.secretKey);
  sessionId = opened.id;
  const checkout = await bootstrap(server.baseUrl, opened.clientSecret);
  widgetToken = checkout.token;
  accountNumber = checkout.virtualAccount.accountNumber;
  // A client secret that was never exchanged, to try as a credential.
  clientSecret = (await createSession(server.baseUrl, owner.keys.test.secretKey)).clientSecret;
  const another = await createSession(server.baseUrl, owner.keys.test.secretKey);
  otherWidgetToken = (await bootstrap(server.baseUrl, another.clientSecret)).token;
});

afterAll(async () => {
  await server.close();
});

type Credential =
  | 'none'
  | 'empty'
  | 'malformed'
  | 'basic'
  | 'unknown'
  | 'revoked'
  | 'publishable'
  | 'clientSecret'
  | 'otherBusiness'
  | 'liveWithoutKyc'
  | 'livePublishableWithoutKyc'
  | 'widgetToken';

/** The Authorization header sent for each credential; undefined sends none. */
function authorization(credential: Credential): string | undefined {
  switch (credential) {
    case 'none':
      return undefined;
    case 'empty':
      return '';
    case 'malformed':
      return 'Bearer';
    case 'basic':
      return `Basic ${Buffer.from(`${owner.keys.test.secretKey}:`).toString('base64')}`;
    case 'unknown':
      return `Bearer sk_test_${'A'.repeat(32)}`;
    case 'revoked':
      return `Bearer ${revokedKey}`;
    case 'publishable':
      return `Bearer ${owner.keys.test.publishableKey}`;
    case 'clientSecret':
      return `Bearer ${clientSecret}`;
    case 'otherBusiness':
      return `Bearer ${other.keys.test.secretKey}`;
    case 'liveWithoutKyc':
      return `Bearer ${owner.keys.live.secretKey}`;
    case 'livePublishableWithoutKyc':
      return `Bearer ${owner.keys.live.publishableKey}`;
    case 'widgetToken':
      return `Bearer ${widgetToken}`;
  }
}

type Route = {
  name: string;
  method: string;
  path: () => string;
  body?: () => unknown;
};

const routes: Record<string, Route> = {
  create: {
    name: 'POST /api/widget/sessions',
    method: 'POST',
    path: () => '/api/widget/sessions',
    body: () => sessionParams(),
  },
  list: { name: 'GET /api/widget/sessions', method: 'GET', path: () => '/api/widget/sessions' },
  retrieve: {
    name: 'GET /api/widget/sessions/:id',
    method: 'GET',
    path: () => `/api/widget/sessions/${sessionId}`,
  },
  cancel: {
    name: 'POST /api/widget/sessions/:id/cancel',
    method: 'POST',
    path: () => `/api/widget/sessions/${sessionId}/cancel`,
  },
  transfer: {
    name: 'POST /api/test/transfers',
    method: 'POST',
    path: () => '/api/test/transfers',
    // A wrong amount: even if a row let it through, it would not pay the session.
    body: () => ({ accountNumber, amount: 1 }),
  },
  profile: { name: 'GET /api/widget/profile', method: 'GET', path: () => '/api/widget/profile' },
  accounts: {
    name: 'POST /api/widget/sessions/:id/accounts',
    method: 'POST',
    path: () => `/api/widget/sessions/${sessionId}/accounts`,
  },
};

type Expected = [number, ErrorCode | null];

// API-key routes: the same answer for every credential that fails, whatever the route.
const apiKeyRoute = (
  overrides: Partial<Record<Credential, Expected>> = {},
): Record<Credential, Expected> => ({
  none: [401, 'authentication_required'],
  empty: [401, 'authentication_required'],
  malformed: [401, 'invalid_api_key'],
  basic: [401, 'invalid_api_key'],
  unknown: [401, 'invalid_api_key'],
  revoked: [401, 'api_key_revoked'],
  publishable: [403, 'publishable_key_not_allowed'],
  clientSecret: [401, 'client_secret_not_a_credential'],
  otherBusiness: [403, 'forbidden'],
  liveWithoutKyc: [403, 'kyc_required'],
  livePublishableWithoutKyc: [403, 'publishable_key_not_allowed'],
  widgetToken: [401, 'invalid_api_key'],
  ...overrides,
});

const matrix: Record<keyof typeof routes, Record<Credential, Expected>> = {
  // Another business's key reaches its own (empty) world on collection routes: 2xx, never the owner's data.
  create: apiKeyRoute({ otherBusiness: [201, null] }),
  list: apiKeyRoute({ otherBusiness: [200, null] }),
  retrieve: apiKeyRoute(),
  // The payer may cancel with the widget token; that row runs last (see below), so it is tested on its own.
  cancel: apiKeyRoute({ widgetToken: [401, 'invalid_widget_token'] }),
  transfer: apiKeyRoute(),
  profile: apiKeyRoute({
    publishable: [200, null],
    otherBusiness: [200, null],
    livePublishableWithoutKyc: [403, 'kyc_required'],
  }),
  accounts: {
    none: [401, 'authentication_required'],
    empty: [401, 'authentication_required'],
    malformed: [401, 'invalid_api_key'],
    basic: [401, 'invalid_api_key'],
    unknown: [401, 'invalid_widget_token'],
    revoked: [401, 'invalid_widget_token'],
    publishable: [401, 'invalid_widget_token'],
    clientSecret: [401, 'client_secret_not_a_credential'],
    otherBusiness: [401, 'invalid_widget_token'],
    liveWithoutKyc: [401, 'invalid_widget_token'],
    livePublishableWithoutKyc: [401, 'invalid_widget_token'],
    widgetToken: [201, null],
  },
};

const rows = Object.entries(matrix).flatMap(([route, byCredential]) =>
  Object.entries(byCredential)
    // The widget token cancelling for real is covered in sessions tests; here it would end the session.
    .filter(([credential]) => !(route === 'cancel' && credential === 'widgetToken'))
    .map(([credential, [status, code]]) => ({
      route: route as keyof typeof routes,
      credential: credential as Credential,
      status,
      code,
    })),
);

async function send(routeKey: keyof typeof routes, credential: Credential): Promise<ApiResponse> {
  const route = routes[routeKey] as Route;
  const header = authorization(credential);
  const headers: Record<string, string> = header === undefined ? {} : { authorization: header };
  const body = route.body?.();
  return call(server.baseUrl, route.method, route.path(), {
    headers,
    ...(body === undefined ? {} : { json: body }),
  });
}

describe('authentication matrix', () => {
  it.each(rows)('$route with $credential → $status $code', async ({ route, credential, status, code }) => {
    const response = await send(route, credential);
    if (code === null) {
      expect(response.status, response.text).toBe(status);
      expect(response.body.meta.statusCode).toBe(status);
    } else {
      expectError(response, status, code);
    }
  });

  it('a cs_ used as a widget credential on cancel is refused as not a credential', async () => {
    const response = await call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/cancel`, {
      token: clientSecret,
    });
    expectError(response, 401, 'client_secret_not_a_credential');
  });

  it("a widget token of another session is refused on this session's routes", async () => {
    const accounts = await call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/accounts`, {
      token: otherWidgetToken,
    });
    expectError(accounts, 403, 'forbidden');
    const cancel = await call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/cancel`, {
      token: otherWidgetToken,
    });
    expectError(cancel, 403, 'forbidden');
  });

  it('nothing in the matrix changed the session (no cancel, no payment)', async () => {
    const session = await retrieveSession(server.baseUrl, owner.keys.test.secretKey, sessionId);
    expect(session.status).toBe('awaiting_payment');
    expect(session.paidAt).toBeNull();
  });

  it('the publishable key reads the public profile only: the name, the environment and the currencies taken', async () => {
    const response = await call(server.baseUrl, 'GET', '/api/widget/profile', {
      token: owner.keys.test.publishableKey,
    });
    expect(envelopeOf(CheckoutProfileSchema).parse(response.body).data).toEqual({
      merchantName: 'Owner',
      environment: 'test',
      // The service's configured list, with the bounds a session create enforces (docs/protocol.md, Conventions, Money).
      currencies: [
        { currency: 'NGN', minAmount: 100, maxAmount: 10_000_000_000 },
        { currency: 'USD', minAmount: 50, maxAmount: 100_000_000 },
      ],
    });
  });

  it('the widget token route answers the current account while it lives', async () => {
    const response = await call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/accounts`, {
      token: widgetToken,
    });
    expect(response.status).toBe(201);
    expect(envelopeOf(NewAccountResultSchema).parse(response.body).data.virtualAccount.accountNumber).toBe(
      accountNumber,
    );
  });
});

describe('403 rows of spec §7', () => {
  it('an environment parameter other than the key environment is refused', async () => {
    const list = await call(server.baseUrl, 'GET', '/api/widget/sessions?environment=live', {
      token: owner.keys.test.secretKey,
    });
    expectError(list, 403, 'environment_mismatch');
    const retrieve = await call(server.baseUrl, 'GET', `/api/widget/sessions/${sessionId}?environment=live`, {
      token: owner.keys.test.secretKey,
    });
    expectError(retrieve, 403, 'environment_mismatch');
    const same = await call(server.baseUrl, 'GET', '/api/widget/sessions?environment=test', {
      token: owner.keys.test.secretKey,
    });
    expect(same.status).toBe(200);
  });

  it('an environment parameter that is neither test nor live is a validation error', async () => {
    const response = await call(server.baseUrl, 'GET', '/api/widget/sessions?environment=prod', {
      token: owner.keys.test.secretKey,
    });
    const body = expectError(response, 400, 'validation_failed');
    expect(body.errors?.map((error) => error.path)).toEqual(['environment']);
  });

  it('a live key reaches a test session of its own business only as environment_mismatch', async () => {
    const approved = await server.createBusiness({ name: 'Approved', kycApproved: true });
    const testSession = await createSession(server.baseUrl, approved.keys.test.secretKey);
    const response = await call(server.baseUrl, 'GET', `/api/widget/sessions/${testSession.id}`, {
      token: approved.keys.live.secretKey,
    });
    expectError(response, 403, 'environment_mismatch');
  });

  it('a live key with approved KYC works and creates cs_live_ sessions; its test transfers are refused', async () => {
    const approved = await server.createBusiness({ name: 'Live Shop', kycApproved: true });
    const live = await createSession(server.baseUrl, approved.keys.live.secretKey);
    expect(live.environment).toBe('live');
    expect(live.clientSecret).toMatch(/^cs_live_[0-9A-Za-z]{40}$/);
    const opened = await bootstrap(server.baseUrl, live.clientSecret);
    const transfer = await call(server.baseUrl, 'POST', '/api/test/transfers', {
      token: approved.keys.live.secretKey,
      json: { accountNumber: opened.virtualAccount.accountNumber, amount: live.amount },
    });
    expectError(transfer, 403, 'test_mode_only');
  });

  it("a test transfer to another business's account is refused and pays nothing", async () => {
    const response = await call(server.baseUrl, 'POST', '/api/test/transfers', {
      token: other.keys.test.secretKey,
      json: { accountNumber, amount: 500_000 },
    });
    expectError(response, 403, 'forbidden');
    const session = await retrieveSession(server.baseUrl, owner.keys.test.secretKey, sessionId);
    expect(session.status).toBe('awaiting_payment');
  });

  it("a test key cannot pay its own business's live session with simulated money", async () => {
    const approved = await server.createBusiness({ name: 'Both Worlds', kycApproved: true });
    const live = await createSession(server.baseUrl, approved.keys.live.secretKey);
    const opened = await bootstrap(server.baseUrl, live.clientSecret);
    const response = await call(server.baseUrl, 'POST', '/api/test/transfers', {
      token: approved.keys.test.secretKey,
      json: { accountNumber: opened.virtualAccount.accountNumber, amount: live.amount },
    });
    expectError(response, 403, 'environment_mismatch');
    const after = await retrieveSession(server.baseUrl, approved.keys.live.secretKey, live.id);
    expect(after.status).toBe('awaiting_payment');
    expect(after.paidAt).toBeNull();
  });

  it('an unknown session answers 404, not 403', async () => {
    const response = await call(server.baseUrl, 'GET', '/api/widget/sessions/ses_doesnotexist', {
      token: owner.keys.test.secretKey,
    });
    expectError(response, 404, 'not_found');
  });
});
