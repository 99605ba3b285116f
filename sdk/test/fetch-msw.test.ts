import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, ServicePay } from '../src/index.ts';
import { createdSession, fail, ORIGIN, ok, session, TEST_KEY } from '../test-support/fixtures.ts';

// The SDK with an injected `fetch`, intercepted by msw (a mocked network: the point is that a merchant's msw
// setup sees the SDK's requests, which it cannot when the SDK sends with undici's own transport).

const PARAMS = { amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } };
const network = setupServer();

beforeAll(() => network.listen({ onUnhandledRequest: 'error' }));
afterEach(() => network.resetHandlers());
afterAll(() => network.close());

// Read `fetch` at each call, so the one msw installs at listen() is the one used.
const client = () =>
  new ServicePay(TEST_KEY, { baseUrl: ORIGIN, fetch: (url, init) => fetch(url, init), maxRetries: 1 });

describe('an injected fetch, intercepted by msw (mocked network)', () => {
  it('retrieves a session and exposes the request id of the success', async () => {
    network.use(
      http.get(`${ORIGIN}/api/widget/sessions/:id`, ({ params, request }) =>
        request.headers.get('authorization') === `Bearer ${TEST_KEY}`
          ? HttpResponse.json(ok(session({ id: String(params.id) })), {
              headers: { 'request-id': 'req_msw1' },
            })
          : HttpResponse.json(fail(401, 'invalid_api_key'), { status: 401 }),
      ),
    );
    const { data, response } = await client().sessions.retrieve('ses_42').withResponse();
    expect(data.id).toBe('ses_42');
    expect(response.requestId).toBe('req_msw1');
  });

  it('retries a 503 with the same Idempotency-Key and the same body', async () => {
    const seen: { key: string | null; body: unknown }[] = [];
    network.use(
      http.post(`${ORIGIN}/api/widget/sessions`, async ({ request }) => {
        seen.push({ key: request.headers.get('idempotency-key'), body: await request.json() });
        return seen.length === 1
          ? HttpResponse.json(fail(503, 'internal_error'), { status: 503, headers: { 'retry-after': '0' } })
          : HttpResponse.json(ok(createdSession(), 201), { status: 201 });
      }),
    );
    const created = await client().sessions.create(PARAMS);
    expect(created.clientSecret).toBe('cs_test_abc123');
    expect(seen).toHaveLength(2);
    expect(seen[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]?.body).toEqual(PARAMS);
  });

  it('maps an error envelope to its class, code and request id', async () => {
    network.use(
      http.post(`${ORIGIN}/api/widget/sessions/:id/cancel`, () =>
        HttpResponse.json(fail(409, 'session_not_active'), { status: 409 }),
      ),
    );
    const error = await client()
      .sessions.cancel('ses_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ statusCode: 409, code: 'session_not_active', requestId: 'req_409' });
  });

  it('reports a network failure of the fetch as a ConnectionError after its retries', async () => {
    let attempts = 0;
    network.use(
      http.get(`${ORIGIN}/api/widget/sessions/:id`, () => {
        attempts++;
        return HttpResponse.error();
      }),
    );
    const error = await client()
      .sessions.retrieve('ses_1')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ConnectionError', code: 'connection_error', statusCode: null });
    expect(attempts).toBe(2);
  });
});
