import { MockAgent } from 'undici';
import { afterEach, beforeEach } from 'vitest';
import { ServicePay } from '../src/client.ts';
import type { CreatedSession, Session, WebhookEndpoint, WebhookEvent } from '../src/protocol/index.ts';

/** Test keys in the documented format (prefix + 32 base62 characters); they authorise nothing anywhere. */
export const TEST_KEY = `sk_test_${'a'.repeat(32)}`;
export const LIVE_KEY = `sk_live_${'b'.repeat(32)}`;
export const ORIGIN = 'http://api.servicepay.test';

const at = '2025-01-01T12:00:00.000Z';

export const session = (overrides: Partial<Session> = {}): Session => ({
  id: 'ses_1',
  reference: 'order-1',
  status: 'pending',
  environment: 'test',
  amount: 500_000,
  currency: 'NGN',
  payer: { name: 'Ada', email: 'ada@example.com' },
  metadata: {},
  virtualAccount: null,
  lastMismatch: null,
  createdAt: at,
  updatedAt: at,
  expiresAt: at,
  paidAt: null,
  ...overrides,
});

export const createdSession = (overrides: Partial<CreatedSession> = {}): CreatedSession => ({
  ...session(),
  clientSecret: 'cs_test_abc123',
  url: 'http://127.0.0.1:4243/checkout/ses_1#cs_test_abc123',
  ...overrides,
});

export const endpoint = (overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id: 'we_1',
  url: 'https://shop.example.com/hooks',
  events: ['session.successful'],
  description: null,
  enabled: true,
  disabledReason: null,
  environment: 'test',
  createdAt: at,
  updatedAt: at,
  ...overrides,
});

export const event = (overrides: Partial<WebhookEvent> = {}): WebhookEvent => ({
  id: 'evt_1',
  type: 'session.successful',
  environment: 'test',
  createdAt: at,
  data: { session: session({ status: 'successful', paidAt: at }) },
  ...overrides,
});

/** The envelope of a successful response. */
export const ok = <T>(data: T, statusCode = 200) => ({ meta: { statusCode, message: 'OK' }, data });

/** The envelope of an error response. */
export const fail = (statusCode: number, code: string, extra: Record<string, unknown> = {}) => ({
  meta: { statusCode, message: 'Error', code, requestId: `req_${statusCode}` },
  ...extra,
});

export const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * A client on a fresh undici MockAgent for each test of the calling `describe` (no real connection can be
 * made), closed after it; a test that left an interceptor unused fails. Read `api.agent` and `api.client`
 * inside the tests, after the hooks ran.
 */
export function mockedApi(): { agent: MockAgent; client: ServicePay } {
  const api = {} as { agent: MockAgent; client: ServicePay };
  beforeEach(() => {
    api.agent = new MockAgent();
    api.agent.disableNetConnect();
    api.client = new ServicePay(TEST_KEY, { baseUrl: ORIGIN, dispatcher: api.agent });
  });
  afterEach(async () => {
    api.agent.assertNoPendingInterceptors();
    await api.agent.close();
  });
  return api;
}
