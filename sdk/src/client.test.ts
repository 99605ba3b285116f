import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Dispatcher, MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createdSession,
  fail,
  JSON_HEADERS,
  LIVE_KEY,
  mockedApi,
  ORIGIN,
  ok,
  session,
  TEST_KEY,
} from '../test-support/fixtures.ts';
import { ServicePay } from './client.ts';
import {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  type ServicePayError,
  TimeoutError,
} from './errors.ts';
import { VERSION } from './internal/version.ts';

// Waiting between retries is replaced by a recorder: the table below checks the delays, not the clock. The
// tests of aborting a wait switch the real wait back on (`realSleep.on`), under fake timers.
const sleeps = vi.hoisted(() => [] as number[]);
const realSleep = vi.hoisted(() => ({ on: false }));
vi.mock('./internal/sleep.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./internal/sleep.ts')>();
  return {
    sleep: async (ms: number, signal?: AbortSignal) => {
      sleeps.push(ms);
      if (realSleep.on) await actual.sleep(ms, signal);
    },
  };
});

const PARAMS = { amount: 500_000, currency: 'NGN', payer: { name: 'Ada', email: 'ada@example.com' } };

const headerOf = (headers: unknown, name: string): string | null =>
  new Headers(headers as Record<string, string>).get(name);

const rejectionOf = async (promise: Promise<unknown>): Promise<ServicePayError> => {
  try {
    await promise;
  } catch (error) {
    return error as ServicePayError;
  }
  throw new Error('expected the call to reject');
};

describe('new ServicePay(key) refuses what is not a secret key', () => {
  it.each([
    ['a publishable key', `pk_test_${'a'.repeat(32)}`, PermissionError, 'publishable_key_not_allowed'],
    ['a live publishable key', `pk_live_${'a'.repeat(32)}`, PermissionError, 'publishable_key_not_allowed'],
    ['a client secret', 'cs_test_abc123', AuthenticationError, 'client_secret_not_a_credential'],
    ['an empty string', '', AuthenticationError, 'authentication_required'],
    ['something else', 'hello', AuthenticationError, 'invalid_api_key'],
  ])('%s', (_name, key, errorClass, code) => {
    let caught: unknown;
    try {
      new ServicePay(key);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(errorClass);
    expect(caught).toMatchObject({ code, statusCode: null });
  });

  it('says what to use instead of a publishable key', () => {
    expect(() => new ServicePay(`pk_test_${'a'.repeat(32)}`)).toThrow(/sk_test_/);
  });

  it('takes the environment from the key', () => {
    expect(new ServicePay(TEST_KEY).environment).toBe('test');
    expect(new ServicePay(TEST_KEY).livemode).toBe(false);
    expect(new ServicePay(LIVE_KEY).environment).toBe('live');
    expect(new ServicePay(LIVE_KEY).livemode).toBe(true);
  });

  it('refuses nonsense options', () => {
    expect(() => new ServicePay(TEST_KEY, { timeout: 0 })).toThrow(RangeError);
    expect(() => new ServicePay(TEST_KEY, { maxRetries: -1 })).toThrow(RangeError);
    expect(() => new ServicePay(TEST_KEY, { maxRetryAfter: -1 })).toThrow(RangeError);
    expect(() => new ServicePay(TEST_KEY, { baseUrl: 'not a url' })).toThrow(TypeError);
  });
});

describe('ServicePay transport (mocked transport)', () => {
  const api = mockedApi();

  beforeEach(() => {
    sleeps.length = 0;
  });

  it('sends the key, a user api.agent, JSON and an Idempotency-Key on POST', async () => {
    let seen: unknown;
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions', method: 'POST' })
      .reply((options) => {
        seen = options;
        return {
          statusCode: 201,
          data: ok(createdSession(), 201),
          responseOptions: { headers: JSON_HEADERS },
        };
      });
    const created = await api.client.sessions.create(PARAMS);
    expect(created.clientSecret).toBe('cs_test_abc123');
    const { headers, body } = seen as { headers: unknown; body: string };
    expect(headerOf(headers, 'authorization')).toBe(`Bearer ${TEST_KEY}`);
    expect(headerOf(headers, 'content-type')).toBe('application/json');
    expect(headerOf(headers, 'user-agent')).toBe(`servicepay-node/${VERSION} node/${process.version}`);
    expect(headerOf(headers, 'idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(body)).toEqual(PARAMS);
  });

  it("makes a POST's own Idempotency-Key a UUIDv7 of the time it is sent, so later keys sort after earlier ones", async () => {
    const keys: string[] = [];
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions', method: 'POST' })
      .reply((options) => {
        keys.push(headerOf(options.headers, 'idempotency-key') as string);
        return {
          statusCode: 201,
          data: ok(createdSession(), 201),
          responseOptions: { headers: JSON_HEADERS },
        };
      })
      .times(2);
    const before = Date.now();
    await api.client.sessions.create(PARAMS);
    await new Promise((resolve) => setTimeout(resolve, 3));
    await api.client.sessions.create(PARAMS);
    const after = Date.now();
    for (const key of keys) {
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      // The first 48 bits are the milliseconds since the epoch at which the key was made.
      const madeAt = Number.parseInt(key.replace('-', '').slice(0, 12), 16);
      expect(madeAt).toBeGreaterThanOrEqual(before);
      expect(madeAt).toBeLessThanOrEqual(after);
    }
    expect((keys[0] as string) < (keys[1] as string)).toBe(true);
  });

  it('sends no Idempotency-Key and no body on GET', async () => {
    let seen: unknown;
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply((options) => {
        seen = options;
        return { statusCode: 200, data: ok(session()), responseOptions: { headers: JSON_HEADERS } };
      });
    await api.client.sessions.retrieve('ses_1');
    const { headers } = seen as { headers: unknown };
    expect(headerOf(headers, 'idempotency-key')).toBeNull();
    expect(headerOf(headers, 'content-type')).toBeNull();
  });

  it('uses the Idempotency-Key given by the caller', async () => {
    let key: string | null = null;
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions', method: 'POST' })
      .reply((options) => {
        key = headerOf(options.headers, 'idempotency-key');
        return { statusCode: 201, data: ok(createdSession(), 201) };
      });
    await api.client.sessions.create(PARAMS, { idempotencyKey: 'order-1042' });
    expect(key).toBe('order-1042');
  });

  it('keeps one Idempotency-Key across the retries of a POST', async () => {
    const keys: (string | null)[] = [];
    const pool = api.agent.get(ORIGIN);
    for (const status of [503, 500]) {
      pool.intercept({ path: '/api/widget/sessions', method: 'POST' }).reply((options) => {
        keys.push(headerOf(options.headers, 'idempotency-key'));
        return { statusCode: status, data: fail(status, 'internal_error') };
      });
    }
    pool.intercept({ path: '/api/widget/sessions', method: 'POST' }).reply((options) => {
      keys.push(headerOf(options.headers, 'idempotency-key'));
      return { statusCode: 201, data: ok(createdSession(), 201) };
    });
    await api.client.sessions.create(PARAMS);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).not.toBeNull();
  });

  it('gives every POST call its own Idempotency-Key', async () => {
    const keys: (string | null)[] = [];
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions', method: 'POST' })
      .reply((options) => {
        keys.push(headerOf(options.headers, 'idempotency-key'));
        return { statusCode: 201, data: ok(createdSession(), 201) };
      })
      .times(2);
    await api.client.sessions.create(PARAMS);
    await api.client.sessions.create(PARAMS);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('keeps fields the service adds later, and passes a status this SDK does not know', async () => {
    const later = {
      ...session(),
      status: 'refunded',
      addedLater: 'x',
      payer: { ...session().payer, tier: 2 },
    };
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply(200, { ...ok(later), alsoNew: true });
    const retrieved = await api.client.sessions.retrieve('ses_1');
    expect(retrieved).toEqual(later);
    expect(retrieved.status).toBe('refunded');
  });

  it('lists sessions whose status, environment and account fields are newer than this SDK', async () => {
    const newer = session({ id: 'ses_2' });
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions', method: 'GET' })
      .reply(200, {
        ...ok([
          { ...newer, status: 'partially_refunded', environment: 'sandbox', virtualAccount: null },
          session({ id: 'ses_1', status: 'successful' }),
        ]),
        pagination: { hasMore: false, nextCursor: null, total: 2 },
      });
    const page = await api.client.sessions.list();
    expect(page.data.map((s) => [s.id, s.status, s.environment])).toEqual([
      ['ses_2', 'partially_refunded', 'sandbox'],
      ['ses_1', 'successful', 'test'],
    ]);
  });

  it('gives the status, headers and request id of a successful answer with withResponse()', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply(200, ok(session()), { headers: { 'request-id': 'req_ok1', 'ratelimit-remaining': '149' } });
    const { data, response } = await api.client.sessions.retrieve('ses_1').withResponse();
    expect(data).toEqual(session());
    expect(response).toMatchObject({ statusCode: 200, requestId: 'req_ok1' });
    expect(response.headers['ratelimit-remaining']).toBe('149');
  });

  it('gives each page of a list its response', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions', method: 'GET' })
      .reply(
        200,
        { ...ok([session()]), pagination: { hasMore: false, nextCursor: null } },
        {
          headers: { 'request-id': 'req_list1' },
        },
      );
    const { data: page, response } = await api.client.sessions.list().withResponse();
    expect(page.data).toHaveLength(1);
    expect(response.requestId).toBe('req_list1');
    expect(page.response.requestId).toBe('req_list1');
  });

  it('refuses a success body that is not the documented shape', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply(200, ok({ id: 42 }));
    const error = await rejectionOf(api.client.sessions.retrieve('ses_1'));
    expect(error).toBeInstanceOf(APIError);
    expect(error.code).toBe('invalid_response');
  });

  it('refuses a success body that is not JSON', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply(200, '<html>');
    const error = await rejectionOf(api.client.sessions.retrieve('ses_1'));
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ code: 'invalid_response', statusCode: 200 });
  });

  it("takes the request id from the service's Request-Id header when the body is no envelope", async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply(502, '<html>Bad Gateway</html>', { headers: { 'request-id': 'req_fromheader' } });
    const error = await rejectionOf(api.client.sessions.retrieve('ses_1', { maxRetries: 0 }));
    expect(error).toMatchObject({ statusCode: 502, requestId: 'req_fromheader' });
  });

  it('carries status, code, request id and field errors of a 400', async () => {
    const errors = [{ path: 'payer.email', message: 'Invalid email' }];
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions', method: 'POST' })
      .reply(400, fail(400, 'validation_failed', { errors }));
    const error = await rejectionOf(api.client.sessions.create(PARAMS));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ statusCode: 400, code: 'validation_failed', requestId: 'req_400' });
    expect((error as InvalidRequestError).errors).toEqual(errors);
  });

  it('passes a code this SDK does not know through unchanged', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply(403, fail(403, 'brand_new_reason'));
    const error = await rejectionOf(api.client.sessions.retrieve('ses_1'));
    expect(error).toBeInstanceOf(PermissionError);
    expect(error.code).toBe('brand_new_reason');
  });

  it('falls back to X-Request-Id (set by proxies) when the body has none', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply(404, 'Not Found', { headers: { 'x-request-id': 'req_header' } });
    const error = await rejectionOf(api.client.sessions.retrieve('ses_1'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ statusCode: 404, code: 'unknown_error', requestId: 'req_header' });
  });

  it('rejects with the caller’s abort reason and does not retry', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/widget/sessions/ses_1', method: 'GET' })
      .reply(200, ok(session()))
      .delay(500);
    const controller = new AbortController();
    const reason = new Error('stop');
    setTimeout(() => controller.abort(reason), 20);
    await expect(api.client.sessions.retrieve('ses_1', { signal: controller.signal })).rejects.toBe(reason);
    expect(sleeps).toEqual([]);
  });
});

type Reply = { status: number; headers?: Record<string, string> } | 'network-error';
interface RetryCase {
  name: string;
  replies: Reply[];
  maxRetries?: number;
  maxRetryAfter?: number;
  /** What the call ends with: success, or the error class and code. */
  outcome:
    | 'ok'
    | { errorClass: abstract new (...args: never[]) => Error; code: string; retryAfter?: number | null };
  /** The waits between attempts; `backoff` means "an exponential delay with jitter" for that retry. */
  waits: (number | 'backoff')[];
}

const codeFor = (status: number): string =>
  ({
    400: 'validation_failed',
    401: 'invalid_api_key',
    403: 'forbidden',
    404: 'not_found',
    409: 'idempotency_key_reused',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    422: 'validation_failed',
    429: 'rate_limited',
    500: 'internal_error',
    502: 'internal_error',
    503: 'internal_error',
    504: 'internal_error',
  })[status] ?? 'internal_error';

// The retry table runs with `Date` frozen at this instant, so a date-valued Retry-After means a fixed wait.
const FROZEN_NOW = Date.parse('2026-11-21T12:00:00.000Z');
const inFourSeconds = new Date(FROZEN_NOW + 4_000).toUTCString();
const inHalfAMinute = new Date(FROZEN_NOW + 30_000).toUTCString();

const retryCases: RetryCase[] = [
  {
    name: '500 then 200 retries once',
    replies: [{ status: 500 }, { status: 200 }],
    outcome: 'ok',
    waits: ['backoff'],
  },
  {
    name: '502, 503 then 200 retries twice with growing backoff',
    replies: [{ status: 502 }, { status: 503 }, { status: 200 }],
    outcome: 'ok',
    waits: ['backoff', 'backoff'],
  },
  {
    name: '504 three times gives up after maxRetries',
    replies: [{ status: 504 }, { status: 504 }, { status: 504 }],
    outcome: { errorClass: APIError, code: 'internal_error' },
    waits: ['backoff', 'backoff'],
  },
  {
    name: '429 with Retry-After seconds waits exactly that',
    replies: [{ status: 429, headers: { 'retry-after': '2' } }, { status: 200 }],
    outcome: 'ok',
    waits: [2000],
  },
  {
    name: '429 with Retry-After as an HTTP date waits until then',
    replies: [{ status: 429, headers: { 'retry-after': inFourSeconds } }, { status: 200 }],
    outcome: 'ok',
    waits: [4_000],
  },
  {
    name: '429 with a Retry-After date past the 5 s cap is not waited for',
    replies: [{ status: 429, headers: { 'retry-after': inHalfAMinute } }],
    outcome: { errorClass: RateLimitError, code: 'rate_limited', retryAfter: 30 },
    waits: [],
  },
  {
    name: '429 with Retry-After 6 (just over the 5 s cap) throws at once with retryAfter',
    replies: [{ status: 429, headers: { 'retry-after': '6' } }],
    outcome: { errorClass: RateLimitError, code: 'rate_limited', retryAfter: 6 },
    waits: [],
  },
  {
    name: 'maxRetryAfter 30 000 waits out a 20 s Retry-After',
    replies: [{ status: 429, headers: { 'retry-after': '20' } }, { status: 200 }],
    maxRetryAfter: 30_000,
    outcome: 'ok',
    waits: [20_000],
  },
  {
    name: 'maxRetryAfter 0 never waits for a Retry-After',
    replies: [{ status: 503, headers: { 'retry-after': '1' } }],
    maxRetryAfter: 0,
    outcome: { errorClass: APIError, code: 'internal_error' },
    waits: [],
  },
  {
    name: '429 without Retry-After backs off',
    replies: [{ status: 429 }, { status: 200 }],
    outcome: 'ok',
    waits: ['backoff'],
  },
  {
    name: '429 every time ends in RateLimitError with retryAfter',
    replies: [
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 429, headers: { 'retry-after': '7' } },
    ],
    outcome: { errorClass: RateLimitError, code: 'rate_limited', retryAfter: 7 },
    waits: [1000, 1000],
  },
  {
    name: '429 asking for an hour is not waited for',
    replies: [{ status: 429, headers: { 'retry-after': '3600' } }],
    outcome: { errorClass: RateLimitError, code: 'rate_limited', retryAfter: 3600 },
    waits: [],
  },
  {
    name: 'a network error then 200 retries',
    replies: ['network-error', { status: 200 }],
    outcome: 'ok',
    waits: ['backoff'],
  },
  {
    name: 'network errors every time end in ConnectionError',
    replies: ['network-error', 'network-error', 'network-error'],
    outcome: { errorClass: ConnectionError, code: 'connection_error' },
    waits: ['backoff', 'backoff'],
  },
  {
    name: 'maxRetries 0 never retries a 500',
    replies: [{ status: 500 }],
    maxRetries: 0,
    outcome: { errorClass: APIError, code: 'internal_error' },
    waits: [],
  },
  {
    name: 'maxRetries 4 retries four times',
    replies: [{ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }, { status: 200 }],
    maxRetries: 4,
    outcome: 'ok',
    waits: ['backoff', 'backoff', 'backoff', 'backoff'],
  },
  ...(
    [
      [400, InvalidRequestError],
      [401, AuthenticationError],
      [403, PermissionError],
      [404, NotFoundError],
      [409, ConflictError],
      [413, InvalidRequestError],
      [415, InvalidRequestError],
      [422, InvalidRequestError],
    ] as const
  ).map(
    ([status, errorClass]): RetryCase => ({
      name: `${status} is never retried`,
      replies: [{ status }],
      outcome: { errorClass, code: codeFor(status) },
      waits: [],
    }),
  ),
];

describe('retries (mocked transport)', () => {
  let agent: MockAgent;

  beforeEach(() => {
    sleeps.length = 0;
    agent = new MockAgent();
    agent.disableNetConnect();
    vi.useFakeTimers({ toFake: ['Date'], now: FROZEN_NOW });
  });

  afterEach(async () => {
    vi.useRealTimers();
    await agent.close();
  });

  it.each(retryCases)('$name', async ({ replies, maxRetries, maxRetryAfter, outcome, waits }) => {
    const options = {
      ...(maxRetries === undefined ? {} : { maxRetries }),
      ...(maxRetryAfter === undefined ? {} : { maxRetryAfter }),
    };
    const client = new ServicePay(TEST_KEY, { baseUrl: ORIGIN, dispatcher: agent, ...options });
    const pool = agent.get(ORIGIN);
    let attempts = 0;
    for (const reply of replies) {
      const interceptor = pool.intercept({ path: '/api/widget/sessions', method: 'POST' });
      if (reply === 'network-error') {
        interceptor.replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
        continue;
      }
      interceptor.reply(() => {
        attempts++;
        const data =
          reply.status === 200 ? ok(createdSession(), 201) : fail(reply.status, codeFor(reply.status));
        return {
          statusCode: reply.status === 200 ? 201 : reply.status,
          data,
          responseOptions: { headers: reply.headers ?? {} },
        };
      });
    }
    const call = client.sessions.create(PARAMS);
    if (outcome === 'ok') {
      await expect(call).resolves.toMatchObject({ id: 'ses_1' });
    } else {
      const error = await rejectionOf(call);
      expect(error).toBeInstanceOf(outcome.errorClass);
      expect(error.code).toBe(outcome.code);
      if ('retryAfter' in outcome) expect((error as RateLimitError).retryAfter).toBe(outcome.retryAfter);
    }
    agent.assertNoPendingInterceptors();
    expect(attempts).toBe(replies.filter((reply) => reply !== 'network-error').length);
    expect(sleeps).toHaveLength(waits.length);
    waits.forEach((wait, retry) => {
      const actual = sleeps[retry] ?? Number.NaN;
      if (wait === 'backoff') {
        const base = Math.min(500 * 2 ** retry, 8000);
        expect(actual).toBeGreaterThanOrEqual(base * 0.75);
        expect(actual).toBeLessThanOrEqual(base);
      } else {
        expect(Math.abs(actual - wait)).toBeLessThanOrEqual(1000);
      }
    });
  });
});

describe('timeouts (loopback server that stops answering)', () => {
  let server: Server;
  let baseUrl: string;
  let hits = 0;
  /** What the server does with each request; by default, nothing at all. */
  let respond: (res: ServerResponse) => void;

  beforeEach(async () => {
    hits = 0;
    sleeps.length = 0;
    respond = () => {};
    server = createServer((_req, res) => {
      hits++;
      respond(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each<[string, (res: ServerResponse) => void]>([
    ['sends nothing', () => {}],
    [
      'stops sending its body after the headers',
      (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"meta":{"statusCode":200'); // and never the rest
      },
    ],
  ])('throws TimeoutError after `timeout` ms when the server %s, retrying first', async (_what, answer) => {
    respond = answer;
    const client = new ServicePay(TEST_KEY, { baseUrl, timeout: 100, maxRetries: 1 });
    const started = performance.now();
    const error = await rejectionOf(client.sessions.retrieve('ses_1'));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ code: 'timeout', statusCode: null });
    expect(hits).toBe(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await client.close();
  });

  it('lets one call override the timeout', async () => {
    const client = new ServicePay(TEST_KEY, { baseUrl, timeout: 60_000, maxRetries: 0 });
    const error = await rejectionOf(client.sessions.retrieve('ses_1', { timeout: 50 }));
    expect(error.code).toBe('timeout');
    await client.close();
  });
});

describe('reading the answer (loopback server)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** A server that answers every request with `respond`; its address. */
  const serve = async (respond: Parameters<typeof createServer>[1]): Promise<string> => {
    const listening = createServer(respond);
    server = listening;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  };

  it('reads a body sent in pieces whole, a character split across two pieces included', async () => {
    const text = JSON.stringify(ok(session({ payer: { name: 'Zoë Ndiaye', email: 'zoe@example.com' } })));
    const bytes = Buffer.from(text, 'utf8');
    const split = bytes.indexOf(0xc3) + 1; // between the two bytes of "ë"
    const baseUrl = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_pieces' });
      res.write(bytes.subarray(0, split));
      setTimeout(() => res.end(bytes.subarray(split)), 20);
    });
    const client = new ServicePay(TEST_KEY, { baseUrl });
    const { data, response } = await client.sessions.retrieve('ses_1').withResponse();
    expect(data.payer.name).toBe('Zoë Ndiaye');
    expect(response).toMatchObject({ statusCode: 200, requestId: 'req_pieces' });
    await client.close();
  });

  it('reads the final answer after an informational 103 a proxy sent first, with its own status and headers', async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeEarlyHints({ link: '</widget.js>; rel=preload; as=script' });
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_after_hints' });
      res.end(JSON.stringify(ok(session())));
    });
    const client = new ServicePay(TEST_KEY, { baseUrl });
    const { data, response } = await client.sessions.retrieve('ses_1').withResponse();
    expect(data.id).toBe(session().id);
    expect(response).toMatchObject({ statusCode: 200, requestId: 'req_after_hints' });
    expect(response.headers.link).toBeUndefined();
    await client.close();
  });

  it('reads a body that starts with a UTF-8 byte-order mark, as a proxy may re-encode it', async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(ok(session())))]));
    });
    const client = new ServicePay(TEST_KEY, { baseUrl });
    await expect(client.sessions.retrieve('ses_1')).resolves.toMatchObject({ id: session().id });
    await client.close();
  });

  it("ends a call whose body is arriving when the caller's signal aborts, with its reason", async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"meta":');
    });
    const client = new ServicePay(TEST_KEY, { baseUrl });
    const controller = new AbortController();
    const reason = new Error('the payer left');
    setTimeout(() => controller.abort(reason), 50);
    await expect(client.sessions.retrieve('ses_1', { signal: controller.signal })).rejects.toBe(reason);
    await client.close();
  });
});

describe('a connection that never opens (stand-in dispatcher: no real socket can be held half-open here)', () => {
  /** Takes every request and never puts it on a connection, as a pool whose connect hangs would. */
  class NeverConnects extends Dispatcher {
    requests = 0;
    override dispatch(): boolean {
      this.requests++;
      return true;
    }
  }

  it('ends the call at its timeout, retrying first, though the request never reached a connection', async () => {
    const dispatcher = new NeverConnects();
    const client = new ServicePay(TEST_KEY, { baseUrl: ORIGIN, dispatcher, timeout: 50, maxRetries: 1 });
    const error = await rejectionOf(client.sessions.retrieve('ses_1'));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', statusCode: null });
    expect(dispatcher.requests).toBe(2);
  });

  it("ends the call when the caller's signal aborts, with its reason", async () => {
    const dispatcher = new NeverConnects();
    const client = new ServicePay(TEST_KEY, { baseUrl: ORIGIN, dispatcher });
    const controller = new AbortController();
    const reason = new Error('the payer left');
    setTimeout(() => controller.abort(reason), 20);
    await expect(client.sessions.retrieve('ses_1', { signal: controller.signal })).rejects.toBe(reason);
    expect(dispatcher.requests).toBe(1);
  });
});

describe('connection errors (loopback, nothing listening)', () => {
  it('throws ConnectionError with the network error as cause', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const client = new ServicePay(TEST_KEY, { baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 });
    const error = await rejectionOf(client.sessions.retrieve('ses_1'));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).not.toBeInstanceOf(TimeoutError);
    expect(error.code).toBe('connection_error');
    expect(error.cause).toMatchObject({ code: 'ECONNREFUSED' });
    await client.close();
  });
});

describe('a caller who gives up is not kept waiting (real waits under fake timers)', () => {
  // The clock never moves in these tests: a call that slept out its Retry-After would never settle, so a
  // settled call proves the abort ended the wait itself.
  beforeEach(() => {
    sleeps.length = 0;
    realSleep.on = true;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });

  afterEach(() => {
    realSleep.on = false;
    vi.useRealTimers();
  });

  const rateLimited = (seconds: string) =>
    vi.fn(async () =>
      Response.json(fail(429, 'rate_limited'), { status: 429, headers: { 'retry-after': seconds } }),
    );

  const untilWaiting = async () => {
    while (sleeps.length === 0) await new Promise((resolve) => setImmediate(resolve));
  };

  it('an AbortSignal ends a 4 s Retry-After wait at once, with its reason', async () => {
    const fetch = rateLimited('4');
    const client = new ServicePay(TEST_KEY, { baseUrl: ORIGIN, fetch });
    const controller = new AbortController();
    const reason = new Error('the shopper left');
    const call = client.sessions.retrieve('ses_1', { signal: controller.signal });
    await untilWaiting();
    expect(sleeps).toEqual([4000]);
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('an AbortSignal ends a backoff wait after a 503 at once', async () => {
    const fetch = vi.fn(async () => Response.json(fail(503, 'internal_error'), { status: 503 }));
    const client = new ServicePay(TEST_KEY, { baseUrl: ORIGIN, fetch });
    const controller = new AbortController();
    const call = client.sessions.create(PARAMS, { signal: controller.signal });
    await untilWaiting();
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const fetch = rateLimited('1');
    const client = new ServicePay(TEST_KEY, { baseUrl: ORIGIN, fetch });
    await expect(client.sessions.retrieve('ses_1', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(fetch).not.toHaveBeenCalled();
  });
});

describe('the environment (SERVICEPAY_SECRET_KEY, SERVICEPAY_API_URL)', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('reads the key and the address when they are not passed', async () => {
    vi.stubEnv('SERVICEPAY_SECRET_KEY', LIVE_KEY);
    vi.stubEnv('SERVICEPAY_API_URL', 'http://api.from-env.test/');
    const fetch = vi.fn(async (_url: string, _init: RequestInit) => Response.json(ok(session())));
    const client = new ServicePay(undefined, { fetch });
    expect(client.environment).toBe('live');
    await client.sessions.retrieve('ses_1');
    const [url, init] = fetch.mock.calls[0] ?? [];
    expect(url).toBe('http://api.from-env.test/api/widget/sessions/ses_1');
    expect(headerOf(init?.headers, 'authorization')).toBe(`Bearer ${LIVE_KEY}`);
  });

  it('prefers what is passed to what the environment says', () => {
    vi.stubEnv('SERVICEPAY_SECRET_KEY', LIVE_KEY);
    expect(new ServicePay(TEST_KEY).environment).toBe('test');
  });

  it('names the variable when neither gives a key', () => {
    vi.stubEnv('SERVICEPAY_SECRET_KEY', '');
    let caught: unknown;
    try {
      new ServicePay();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AuthenticationError);
    expect(caught).toMatchObject({ code: 'authentication_required' });
    expect(String((caught as Error).message)).toContain('SERVICEPAY_SECRET_KEY');
  });
});
